"""A split's draw that never returns, under a time budget (worker side).

The budget (``budget.py``) is checked between samples, so a ``__getitem__`` or a DataLoader's next
batch that never returns would hold the check, and with it a program paused in the debugger,
forever. Under a budget each split is therefore drawn in a daemon thread (``draw``); the calling
thread waits past the split's stop plus ``budget.GRACE`` seconds while the current call (a sample,
a loader's batch) has run less than ``SLOWER`` times the slowest call seen (a loader's first batch:
the budget more, for its workers' start), and never past twice the budget (``_wait``). When the draw
is still running then, the check gives up on it: what that split drew so far is kept and checked like a split the
budget cut short, the draw is named (split, sample or batch, the line it is stuck on), no more of
the user's code is called (the other splits are not drawn: they may wait on what the stuck call
holds), and the global RNG states are put back as they were before the split.

Python cannot stop a thread. In a paused program the stuck call keeps running in the background
(it stops touching the check's data, calling the user's code and writing notes once it returns:
``guard.Guard``, ``watch.abandon_thread``). A draw that raises in its thread is drawn again in
the calling thread (``_again``): a dataset may hold objects that work only in the thread that made
them. The data-check worker (CLI, CodeLens) does not draw in threads (``budget.threads``): it
draws in its main thread, watched by a thread that gives up by the same rule, finishes the check
on what was drawn, sends it and ends the process (``_watched``, ``on_give_up``); a check's redraw
(``bounded_list``) is not watched there: the process's time limit ends it.
"""

from __future__ import annotations

import _thread
import os
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Optional, Tuple

from . import budget, rng, watch
from . import findings as F
from .errors import SampleError
from .guard import Abandoned, Guard
from .loader_errors import drawing_words, is_user_file, short_path
from .sampling import Draws, bind, draw, is_loader

SLOWER = 3.0  # a call is given up on past the split's stop once it took this many times the slowest seen

KIND = F.STUCK


@dataclass
class Stuck:
    split: str
    note: dict  # the drawing thread's last note (watch.py): stage, index, batch
    waited: float  # seconds from the split's start to giving up
    idle: float  # of those, seconds the stuck call had run
    frames: list  # the stuck thread's stack, outermost first (traceback.FrameSummary)
    drawn: int  # samples of the split drawn before it


_found: list = []  # Stuck of the current check (reset by ``reset``)
_running: list = []  # threads given up on, in this process, that may still run


def reset() -> None:
    _found.clear()


def found() -> list:
    return list(_found)


def gave_up_on(split: str) -> bool:
    """A draw of ``split`` was given up on in the current check."""
    return any(s.split == split for s in _found)


def left_running() -> bool:
    """A draw given up on may still be running in this process (the worker then ends itself)."""
    return any(t.is_alive() for t in _running)


_sender: list = []  # the data-check worker's "send this result and end the process" (on_give_up)


def on_give_up(send: Callable[[dict], None]) -> None:
    """In the data-check worker: a split's draw is watched from a thread (``_watched``); given up on,
    the check's result is finished there and handed to ``send``, which ends the process."""
    _sender[:] = [send]


def draw_bounded(
    name: str,
    obj: Any,
    max_samples: int,
    max_batches: int,
    gallery: int,
    raw: bool,
    then: Optional[Callable[[Draws], dict]] = None,
) -> Draws:
    """``sampling.draw`` of one split; under a budget in a daemon thread, given up on at the
    split's stop plus ``budget.GRACE`` (then the samples drawn so far; see the module docstring).
    In the data-check worker (no threads for draws): drawn here, watched by a thread that finishes
    the check with ``then(draws so far)`` and hands it to ``on_give_up``'s sender."""
    args = (max_samples, max_batches, gallery, raw)
    if budget.active() and not budget.threads() and _sender and then is not None:
        return _watched(name, obj, args, then)
    if not budget.active() or not budget.threads():
        return draw(name, obj, *args)
    thread, guard, box, states, started = _in_thread(
        f"drawing {name}", lambda guard: draw(name, obj, *args, guard=guard)
    )
    if thread.is_alive():
        return _give_up(name, obj, thread, guard, states, started)
    if "error" in box:
        return _again(name, obj, args, box["error"])
    return box["value"]


def _in_thread(label: str, work: Callable[[Guard], Any]) -> Tuple[threading.Thread, Guard, dict, dict, float]:
    """``work(guard)`` in a daemon thread that sees torch as the caller does, waited for as the budget
    says (``_wait``): the thread, its guard, ``{"value"|"error": ...}``, the RNG states to put back
    if it is given up on (it then leaves them alone) and when it started."""
    guard, box = Guard(), dict[str, Any]()
    states = rng.states()
    like_caller = _caller_state()

    def run() -> None:
        try:
            like_caller()
            box["value"] = work(guard)
        except Abandoned:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, which raises it
            box["error"] = exc

    started = time.perf_counter()
    thread = threading.Thread(target=run, name=f"torchdoctor data check: {label}", daemon=True)
    thread.start()
    _wait(thread, guard)
    return thread, guard, box, states, started


def _caller_state() -> Callable[[], None]:
    """What makes a draw thread see torch as the calling thread does: grad mode and the default device
    are per thread (a dataset built under ``torch.set_default_device("cuda")`` makes its tensors there)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return lambda: None
    grad = torch.is_grad_enabled()
    device = torch.get_default_device() if hasattr(torch, "get_default_device") else None

    def apply() -> None:
        torch.set_grad_enabled(grad)
        if device is not None and device != torch.get_default_device():
            torch.set_default_device(device)

    return apply


def _allowance(guard: Guard) -> float:
    """Seconds the current call of the user's code may run past the split's stop before it is given up
    on: a few times the slowest call seen, a batch of the slowest sample's cost, and for a loader's
    first batch the budget itself (its worker processes start then)."""
    batch = SLOWER * guard.per_sample * guard.batch_size if not guard._sample else 0.0
    start = (budget.seconds() or 0.0) if not guard._sample and not guard.batches else 0.0
    return max(budget.GRACE, SLOWER * guard.slowest, batch, start)


def _overdue(guard: Guard) -> bool:
    """The current call made no progress for ``_allowance`` past the split's stop plus the grace, or
    the cap (twice the budget plus the grace) is reached."""
    cap = budget.started() + 2 * (budget.seconds() or 0.0) + budget.GRACE
    until = max(budget.deadline() + budget.GRACE, guard.item_started + _allowance(guard))
    return time.perf_counter() >= min(until, cap)


def _watched(name: str, obj: Any, args: tuple[int, int, int, bool], then: Callable[[Draws], dict]) -> Draws:
    """Draw in this (the main) thread; a watchdog thread gives up on it when ``_overdue``: it reads
    this thread's stack, finishes the check on what was drawn (``then``) and sends it; the sender
    ends the process (this thread cannot be stopped)."""
    guard, done, main = Guard(), threading.Event(), threading.current_thread()
    started = time.perf_counter()

    def watchdog() -> None:
        while not done.wait(0.1):
            if not _overdue(guard):
                continue
            with guard.lock:
                if done.is_set():
                    return
                guard.take_pending()  # the row the main thread holds, into the draws
                guard.abandoned = True  # the main thread changes the draws no more (Abandoned)
            _record(name, main, guard, {}, started, None, own=False)
            d = guard.draws if guard.draws is not None else Draws(name, "dataset", obj)
            d.cut = True
            _found[-1].drawn = len(d.indices)
            budget.cut(f"{name}: its draw did not return after {len(d.indices)} samples")
            _sender[0](then(d))
            return

    # _thread, not threading.Thread: Thread.start() waits until the new thread has run, and on a busy
    # machine that wait (the scheduler's, not CPU time) took up to a few ms of a 60 ms check
    _thread.start_new_thread(watchdog, ())
    late = False
    try:
        return draw(name, obj, *args, guard=guard)
    except Abandoned:
        late = True
        raise
    finally:
        with guard.lock:
            late = late or guard.abandoned
            done.set()
        if late:  # the watchdog finishes the check and ends the process
            threading.Event().wait()


def _wait(thread: threading.Thread, guard: Guard) -> None:
    """Join ``thread`` until it ends, or until the call it runs made no progress for ``_allowance``
    past the split's stop plus the grace, or at the cap (twice the budget plus the grace): a healthy
    slow sample or batch is waited for, and the wait never hangs."""
    cap = budget.started() + 2 * (budget.seconds() or 0.0) + budget.GRACE
    while thread.is_alive():
        now = time.perf_counter()
        until = max(budget.deadline() + budget.GRACE, guard.item_started + _allowance(guard))
        if now >= min(until, cap):
            return
        thread.join(max(0.01, min(until, cap, now + 0.25) - now))


def _again(name: str, obj: Any, args: tuple, error: BaseException) -> Draws:
    """The threaded draw raised ``error``. A dataset may hold objects of the thread that made them (a
    sqlite connection), so the failing sample is drawn again here first: raised here too, ``error`` is
    the dataset's; else the split is drawn again in this thread, with a note."""
    if isinstance(error, SampleError):
        ds = obj.dataset if is_loader(obj) else obj
        try:
            ds[error.index]
        except Exception:  # noqa: BLE001 - it fails in this thread too: the dataset's own error
            raise error from None
    d = draw(name, obj, *args)
    d.notes.append(
        f"{name}: drawn in a thread of its own (the time budget's guard against a sample that never returns), "
        f"it raised {type(error).__name__}: {str(error)[:200]}; drawn again in this thread it did not, so it was "
        "drawn here without that guard (its dataset holds objects that work only in the thread that made them, "
        "such as a sqlite connection)"
    )
    return d


def bounded_list(split: str, drawn: int, fn: Callable[..., list], *args: Any) -> list:
    """``fn(*args, out=out, guard=guard)`` (``sampling.redraw``, ``sampling.seeded_draws``: user calls
    after the draws), under a budget in a daemon thread given up on at the budget's end plus the
    grace; then what it had drawn. ``drawn``: the split's samples, for the finding's words."""
    out: list = []
    if not budget.active() or not budget.threads():
        return fn(*args, out=out)

    def work(guard: Guard) -> None:
        bind(guard)
        fn(*args, out=out, guard=guard)

    thread, guard, box, states, started = _in_thread(f"drawing {split} again", work)
    if thread.is_alive():
        _record(split, thread, guard, states, started, drawn)
        with guard.lock:
            return list(out)
    if "error" in box:  # raised in the thread: drawn again here (objects of this thread, as in ``_again``)
        return fn(*args, out=[])
    return out


def _give_up(name: str, obj: Any, thread: threading.Thread, guard: Guard, states: dict, started: float) -> Draws:
    _record(name, thread, guard, states, started, None)
    d = guard.draws if guard.draws is not None else Draws(name, "dataset", obj)
    d.cut = True
    _found[-1].drawn = len(d.indices)
    budget.cut(f"{name}: its draw did not return after {len(d.indices)} samples")
    return d


def _record(
    name: str, thread: threading.Thread, guard: Guard, states: dict, started: float, drawn: Any, own: bool = True
) -> None:
    """Give up on ``thread`` (it never changes what it drew again, nor the RNG), and keep why.
    ``own``: a draw thread of ours (else the worker's main thread, watched: the process ends)."""
    guard.abandon()
    if own:
        watch.abandon_thread(thread)  # its notes, cuts and failures are no longer the check's
    idle = time.perf_counter() - guard.item_started
    frame = sys._current_frames().get(thread.ident or -1)
    frames = list(traceback.extract_stack(frame)) if frame is not None else []
    note = watch.current()
    if own:
        rng.restore(states)
    budget.mark_stuck()
    _running.append(thread)
    _found.append(Stuck(name, note, time.perf_counter() - started, idle, frames, drawn or 0))
    watch.idle()


def _stuck_at(frames: list) -> tuple:
    """(words for the innermost frame of the user's code, its {"file", "line"}) or ("", None)."""
    mine = [f for f in frames if is_user_file(f.filename)]
    if not mine:
        return "", None
    f = mine[-1]
    inside = next((g for g in frames[frames.index(f) + 1 :] if not is_user_file(g.filename)), None)
    words = f"stuck at {os.path.basename(f.filename)}:{f.lineno} in {f.name}" + (f" (`{f.line}`)" if f.line else "")
    if inside is not None:
        words += f", inside {short_path(inside.filename)}:{inside.lineno} in {inside.name}"
    return words, {"file": f.filename, "line": f.lineno}


def _what(note: dict) -> str:
    if note.get("stage") == "next-batch":
        return (
            f"waiting for batch {note.get('number', '?')} of the DataLoader (drawn by its worker processes, "
            "whose samples are not seen from here)"
        )
    return drawing_words(note)


def findings(drawn_splits: list, not_drawn: list) -> list:
    """One ERROR finding per draw given up on: the split, what it was drawing, the line it is stuck
    on, what was kept, and what to do."""
    out = []
    for s in _found:
        words, source = _stuck_at(s.frames)
        index = s.note.get("index") if s.note.get("split") in (s.split, "") else None
        others = (
            f" The other splits ({', '.join(not_drawn)}) were not drawn: they could wait on the same thing."
            if not_drawn
            else ""
        )
        where = f": {words}" if words else ""
        if watch.folder() is not None:
            after = "The check's worker process is ended after this report (a thread cannot be stopped)."
        else:
            after = (
                "The stuck call keeps running in a background thread of your program (Python cannot stop a "
                "thread); it no longer changes the check's results when it returns."
            )
        out.append(
            F.finding(
                KIND,
                F.ERRORS,
                s.split,
                f"{s.split}: the draw did not return {_what(s.note)}{where}. The check gave up on it after "
                f"{s.waited:.1f} s, {s.idle:.1f} s of them in that call (past the split's share of the "
                f"{budget.seconds():g} s time budget, a call is waited for {budget.GRACE:g} s and at least "
                f"{SLOWER:g} times the slowest seen, up to twice the budget): the findings are about the {s.drawn} {s.split} samples drawn before it.{others} "
                f"{after} Next step: look at what that line waits for (a lock, a queue, a network or disk read, a "
                "subprocess): give the wait a timeout or make what it waits for available; then draw that sample "
                "in your own process (`dataset[i]`, or `next(iter(loader))`) to see it return.",
                [index] if index is not None else [],
                source=source,
                stage=s.note.get("stage"),
                index=index,
                batch=s.note.get("number") if s.note.get("stage") == "next-batch" else None,
                drawn=s.drawn,
                waitedSeconds=round(s.waited, 3),
                idleSeconds=round(s.idle, 3),
                stack="".join(traceback.format_list(s.frames[-12:])),
            )
        )
    return out
