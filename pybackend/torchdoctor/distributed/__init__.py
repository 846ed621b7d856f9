"""torchrun / DistributedDataParallel jobs: one launch, every rank watched, the first rank named.

- ``launch``: ``torchdoctor run --nproc-per-node N script.py`` starts ``torch.distributed.run``
  with every rank under the anomaly watch, and ends with one line naming the first rank to go
  wrong.
- ``rank_entry``: what each rank runs (``python -m torchdoctor.distributed.rank_entry``): the
  rank's reports carry its rank, its lines start with it, and a rank whose peer stopped first
  says so in one line instead of a collective's traceback.
- ``ranks``: the rank and world size from torchrun's environment.
- ``first``: which rank reported first, from every rank's reports.
"""
