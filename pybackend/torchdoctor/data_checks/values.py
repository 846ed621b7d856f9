"""NaN/Inf in features or labels; blank or constant samples, over several draws of one index; empty splits."""

from __future__ import annotations

from . import budget, stuck
from . import findings as F
from . import thresholds as T
from .context import Context, Split
from .reduce import is_blank
from .sampling import redraw


def check(ctx: Context) -> list:
    out = []
    for split in ctx.splits:
        out += _empty(split)
        out += _nonfinite(split)
        out += _blank(split)
    return out


def _empty(split: Split) -> list:
    """A split that gave no sample at all: every other check is silent on it, so say it here (an
    empty folder or a loader with drop_last=True and fewer samples than a batch would otherwise PASS)."""
    d = split.draws
    empty = not d.length if d.kind == "table" else not d.indices
    if not empty:
        return []
    how = "its length is 0" if d.length == 0 else f"drawing it ({d.kind}) gave no sample"
    return [
        F.finding(
            F.EMPTY,
            F.ERRORS,
            split.name,
            f"{split.name} is empty: {how}, so training or scoring on it does nothing. Likely cause: a wrong "
            "path or file pattern, a filter that drops every row, or a DataLoader with drop_last=True and fewer "
            "samples than batch_size. Next step: check where the dataset reads its files and what len() gives.",
            source=split.source,
        )
    ]


def _checked(split: Split) -> str:
    """The samples the statistics cover, in words: those of the first sample's shape."""
    s = split.stats
    text = f"{s.sampled} sampled {split.name} samples"
    if s.other_shapes:
        text += f" of shape {list(s.shape)} ({s.other_shapes} more of other shapes were not checked)"
    return text


def _nonfinite(split: Split) -> list:
    s, out = split.stats, []
    if s.nonfinite:
        share = len(s.nonfinite) / max(1, s.sampled)
        out.append(
            F.finding(
                F.NONFINITE,
                F.ERRORS,
                split.name,
                f"{len(s.nonfinite)} of {_checked(split)} ({share:.1%}) hold NaN or Inf "
                f"({s.nonfinite_values} values) in their features. Likely cause: a division by a zero std, log of 0, "
                "or a missing value read as NaN. Next step: open the listed samples, fix the source or filter them; "
                "one NaN in a batch makes the loss NaN.",
                s.nonfinite,
                source=split.source,
                values=s.nonfinite_values,
            )
        )
    if s.label_nonfinite:
        out.append(
            F.finding(
                F.NONFINITE,
                F.ERRORS,
                split.name,
                f"{len(s.label_nonfinite)} {split.name} labels are NaN or Inf. Likely cause: missing targets read as "
                "NaN. Next step: drop those rows or fill the targets before training.",
                s.label_nonfinite,
                source=split.source,
                labels=True,
            )
        )
    return out


def _blank(split: Split) -> list:
    s, d = split.stats, split.draws
    if not s.blank:
        return []
    draws, blank_draws = s.sampled, len(s.blank)
    per_index: dict = {}
    if d.random and d.dataset is not None and d.kind != "loader":
        for i in s.blank[: T.MAX_REDRAWN]:
            if budget.spent():  # the samples not drawn again are judged as a DataLoader's are
                budget.cut(f"{split.name}: {len(per_index)} blank samples were drawn again")
                break
            again = stuck.bounded_list(split.name, len(d.indices), redraw, d.dataset, i, T.REDRAWS, split.name)
            hits = sum(1 for x in again if is_blank(x, s.layout))
            per_index[i] = (hits + 1, T.REDRAWS + 1)
            draws, blank_draws = draws + T.REDRAWS, blank_draws + hits
    sometimes = [i for i, (hits, n) in per_index.items() if hits < n]
    if d.random and (sometimes or not per_index):
        return [_augmentation_finding(split, per_index, blank_draws, draws)]
    return [
        F.finding(
            F.CONSTANT,
            F.WARNING,
            split.name,
            f"{len(s.blank)} of {_checked(split)} are blank (one value, or "
            f"{T.BLANK_SHARE:.0%} of the pixels equal)"
            + (" in every draw" if per_index else "")
            + ". Likely cause: empty or corrupt files, zero-filled placeholders, or a fixed transform that crops "
            "outside the content. Next step: look at the listed samples and remove or fix them.",
            s.blank,
            source=split.source,
        )
    ]


def _augmentation_finding(split: Split, per_index: dict, blank_draws: int, draws: int) -> dict:
    s = split.stats
    worst = sorted(per_index.items(), key=lambda kv: -kv[1][0] / kv[1][1])[:3]
    examples = "; ".join(f"sample {i} was blank in {h} of {n} draws" for i, (h, n) in worst)
    return F.finding(
        F.BLANK_DRAWS,
        F.WARNING,
        split.name,
        f"{blank_draws / draws:.1%} of the draws of {split.name} are blank after the dataset's own transforms "
        f"({blank_draws} of {draws} draws{': ' + examples if examples else ''}); "
        + (
            "the same indices are not blank in other draws, so a random transform blanks them"
            if per_index
            else "the dataset's transforms are random (two draws of one index differ), so one of them likely blanks "
            "these (numbers are positions in the loader's stream)"
        )
        + ". Likely cause: a crop, erasing or affine transform with a "
        "scale or fill that can leave no content (RandomResizedCrop scale, RandomErasing p/scale/value, "
        "brightness 0). Next step: show the listed samples after the transform and narrow its parameters.",
        list(per_index) or s.blank,
        count=len(s.blank),
        source=split.source,
        blankDraws=blank_draws,
        draws=draws,
        perIndex={str(i): list(v) for i, v in per_index.items()},
    )
