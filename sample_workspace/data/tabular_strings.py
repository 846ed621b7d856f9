"""Tabular data with numbers stored as text (seed 003), a missing-value marker and a constant column.

``Customers`` reads a CSV with the ``csv`` module and converts each column that parses as numbers.
One value of ``income`` is ``n/a``, so that column stays strings, and ``__getitem__`` keeps only
the numeric columns: the strongest feature silently disappears. ``country`` is the same in every row.

Try it::

    torchdoctor check data data/tabular_strings.py::Customers

Torch Doctor finds the table in the dataset (``Customers.table``) and reports the text column
whose values parse as numbers, the missing values per column and the constant column. With
pandas the same checks run on a DataFrame (``object`` columns).
"""

import csv
import io

import numpy as np
import torch
from torch.utils.data import Dataset

CSV = "age,income,visits,country,churned\n" + "\n".join(
    f"{20 + (i * 7) % 50},{'n/a' if i == 13 else 30000 + (i * 997) % 40000},{(i * 3) % 11},ES,{int(i % 4 == 0)}"
    for i in range(300)
)


def parse(column):
    """Numbers when every value is one, else the strings as they are."""
    try:
        return [float(v) for v in column]
    except ValueError:
        return column


class Customers(Dataset):
    def __init__(self):
        rows = list(csv.DictReader(io.StringIO(CSV)))
        self.table = {name: parse([r[name] for r in rows]) for name in rows[0]}
        numeric = [n for n, col in self.table.items() if isinstance(col[0], float) and n != "churned"]
        self.x = np.array([self.table[n] for n in numeric], dtype=np.float32).T
        self.x = (self.x - self.x.mean(0)) / self.x.std(0)
        self.y = np.array(self.table["churned"], dtype=np.int64)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, index):
        return torch.from_numpy(self.x[index]), int(self.y[index])
