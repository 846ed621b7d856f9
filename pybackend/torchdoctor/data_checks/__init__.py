"""Data checks: look at what a Dataset or DataLoader hands the model (issue 18, ``docs/data.md``).

``torchdoctor check data FILE::NAME`` samples each split boundedly (``thresholds.py``) with the
global RNG state saved and restored (``rng.py``), reduces the draws (``sampling.py``, ``reduce.py``)
and runs one module per job: ``values`` (NaN/Inf, blank or constant samples over several draws),
``normalisation``, ``layout`` (NHWC against the model's first conv, dtypes), ``labels``
(histogram, imbalance, out-of-range), ``duplicates`` (within and across splits), ``drift``
(mean/std shift and a two-sample KS), ``tabular`` (strings that hold numbers, missing, constant
columns, id overlap), ``sequences`` (token ids past the embedding, padding share) and ``shuffling``
(an unshuffled training DataLoader over data stored class by class; ``loader_source`` finds its line).

Two sides, like ``checks/``. Backend side, torch- and numpy-free, imported by the CLI: ``cli``,
``jobs`` (the worker subprocess, reusing ``checks``' process tree, guard and streams), ``ended``
(a worker that crashed or hung, read from the notes and stacks ``watch`` keeps), ``report``
(text), ``findings``, ``thresholds`` and ``loader_errors``. Worker side, run in the user's interpreter by ``worker``:
everything else; numpy at module level (never imported by the backend side), torch inside
functions only.
May import: the standard library, ``torchdoctor.spelling``, ``torchdoctor.checks`` (its job control
and the user-module loader); never ``server``, ``lint`` or ``diagnosis``.
"""
