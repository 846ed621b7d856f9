"""The outermost module calls (the model, a loss module), without slowing their submodules.

The recorder times the outermost module calls and reads the batch size from the model's input,
through torch's global forward hooks. A global hook takes *every* module call off
``nn.Module.__call__``'s hook-free fast path, and a GPT's forward is ~55 module calls whose
hook calls only ever found "not outermost". So when an outermost call starts, the pre-hook
takes both global hooks out of torch's dicts and puts a forward hook on that one module
(``always_call``: it also runs when the forward raises), which puts them back when the call
ends: the submodules run as with no monitor. The one-call hook is removed at once, so nothing of
ours stays on the program's modules between calls (it would go into ``torch.save(model)`` and
``copy.deepcopy``). Where torch's dicts cannot be found, or the module takes no forward hook,
the global hooks simply stay: the same results, at the old cost.
"""

from __future__ import annotations

import importlib
from collections import OrderedDict
from typing import Any, Callable, List, Optional


class Outermost:
    """Calls ``enter(module, inputs) -> bool`` at a module call's start (True: an outermost call
    the recorder follows) and ``leave(module, output)`` when that call ends."""

    def __init__(self, torch: Any, enter: Callable[[Any, Any], bool], leave: Callable[[Any, Any], None]) -> None:
        self.torch, self.enter, self.leave = torch, enter, leave
        self.attached = False
        self.handles: List[Any] = []
        self.slots: List[Any] = []  # (torch's dict, our id, our hook) for each global hook
        self.call: Optional[Any] = None  # the module dicts holding the one-call hook, while a call runs
        self.call_id = -1
        # One bound method each, so that what is put back is what torch was given.
        self._pre_hook, self._post_hook, self._done_hook = self._pre, self._post, self._done

    def attach(self) -> None:
        modules = self.torch.nn.modules.module
        self.handles = [
            modules.register_module_forward_pre_hook(self._pre_hook),
            modules.register_module_forward_hook(self._post_hook),
        ]
        self.attached = True
        handle = importlib.import_module("torch.utils.hooks").RemovableHandle(OrderedDict())
        self.call_id = handle.id  # a hook id no one else holds
        slots = []
        for handle, hook in zip(self.handles, (self._pre_hook, self._post_hook)):
            ref = getattr(handle, "hooks_dict_ref", None)
            hooks = ref() if callable(ref) else None
            if not isinstance(hooks, dict) or hooks.get(getattr(handle, "id", None)) is not hook:
                return  # not the torch this was written against: keep the global hooks on
            slots.append((hooks, handle.id, hook))
        self.slots = slots

    def remove(self) -> None:
        """Both global hooks off for good (the recorder keeps this with its hook handles)."""
        self.attached = False
        for handle in self.handles:
            handle.remove()
        self.handles = []

    def _pre(self, module: Any, inputs: Any) -> None:
        if not self.enter(module, inputs) or not self.slots:
            return None
        # What register_forward_hook(prepend=True, always_call=True) does, without a handle per call.
        hooks = getattr(module, "_forward_hooks", None)
        always = getattr(module, "_forward_hooks_always_called", None)
        if not isinstance(hooks, OrderedDict) or not isinstance(always, dict):
            return None  # not an nn.Module as torch makes them: the global post-hook ends the call
        hooks[self.call_id] = self._done_hook
        hooks.move_to_end(self.call_id, last=False)
        always[self.call_id] = True
        self.call = (hooks, always)
        for slot, hook_id, _ in self.slots:
            slot.pop(hook_id, None)
        return None

    def _done(self, module: Any, inputs: Any, output: Any) -> None:
        call, self.call = self.call, None
        if call is not None:
            for hooks in call:
                hooks.pop(self.call_id, None)
        if self.attached:
            for hooks, hook_id, hook in self.slots:
                hooks[hook_id] = hook
        self.leave(module, output)

    def _post(self, module: Any, inputs: Any, output: Any) -> None:
        self.leave(module, output)
