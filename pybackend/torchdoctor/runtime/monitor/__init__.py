"""The training monitor (issue 17): loss, learning rate, gradients, step time and memory, per step.

Runs inside the user's program with no change to their code, like the anomaly watch:
:mod:`startup` arms it from ``TORCHDOCTOR_MONITOR`` (debug sessions) or ``torchdoctor run
--monitor``; :mod:`recorder` records one Step per optimizer step into fixed-memory series
(:mod:`series`); :mod:`verdicts` (pure Python, sentences in :mod:`words`) judges them;
:mod:`channel` streams them to the VS Code view; :mod:`report` writes report.json / .html;
:mod:`board` writes TensorBoard event files. Imports nothing from server, checks, lint or
diagnosis. The formats are in ``docs/monitor.md``.
"""
