"""TD011 through the splits it first missed: rows taken with an index array cut in two
(``X[train_idx]`` / ``X[test_idx]``, ``X[perm[:n]]`` / ``X[perm[n:]]``), windows a loop appends
to a list that is then converted and sliced, and a table column scaled and written back. A
series cut into its inputs and last step (``s[:-1]`` / ``s[-1:]``) is no train/test split.
Each with a healthy neighbour that must stay silent."""

from __future__ import annotations

import pytest

from support.lint import hits

HEAD = (
    "import numpy as np\nimport pandas as pd\nimport torch\n"
    "from sklearn.model_selection import train_test_split\nfrom sklearn.preprocessing import MinMaxScaler\n"
)


def code_lines(*lines: str) -> str:
    return "".join(line + "\n" for line in lines)


NORMALISE = "feats = np.load('feats.npy')\nfeats = (feats - feats.mean(axis=0)) / feats.std(axis=0)\n"


@pytest.mark.parametrize(
    "split",
    [
        # a shuffled index cut in two, then rows taken with each part
        "order = np.random.permutation(len(feats))\ncut = int(0.75 * len(feats))\n"
        "fit_rows, held_rows = order[:cut], order[cut:]\nfit_x, held_x = feats[fit_rows], feats[held_rows]\n",
        # the same with the slices written inline, one part per line
        "order = torch.randperm(len(feats))\nfit_x = feats[order[:300]]\nheld_x = feats[order[300:]]\n",
        # row numbers split by train_test_split
        "fit_rows, held_rows = train_test_split(np.arange(len(feats)), test_size=0.25)\n"
        "fit_x = feats[fit_rows]\nheld_x = feats[held_rows]\n",
    ],
)
def test_normalised_then_split_through_an_index_array(split):
    assert hits(HEAD + NORMALISE + split, "TD011") == [("TD011", 7)]


def test_the_training_rows_of_an_index_split_normalised_with_the_whole_array():
    text = HEAD + code_lines(
        "feats = np.load('feats.npy')",
        "order = np.random.permutation(len(feats))",
        "fit_rows, held_rows = order[:400], order[400:]",
        "fit_x, held_x = feats[fit_rows], feats[held_rows]",
        "fit_x = (fit_x - feats.mean(axis=0)) / feats.std(axis=0)",
    )
    assert hits(text, "TD011") == [("TD011", 10)]


WINDOWS_BY_HAND = """
series = np.loadtxt("load.csv")
series = (series - series.mean()) / series.std()
seqs, nexts = [], []
for t in range(len(series) - 24):
    seqs.append(series[t : t + 24])
    nexts.append(series[t + 24])
seqs, nexts = np.array(seqs), np.array(nexts)
seqs_t = torch.tensor(seqs).float()
fit_x, held_x = seqs_t[:700], seqs_t[700:]
"""

WINDOWS_FROM_A_SCALED_COLUMN = """
table = pd.read_csv("load.csv")
table["kw"] = MinMaxScaler().fit_transform(table[["kw"]])
seqs = []
for t in range(len(table) - 24):
    seqs.append(table.kw[t : t + 24])
seqs = np.array(seqs)
n_fit = int(0.8 * len(seqs))
fit_x, held_x = seqs[:n_fit], seqs[n_fit:]
"""


@pytest.mark.parametrize(("text", "line"), [(WINDOWS_BY_HAND, 8), (WINDOWS_FROM_A_SCALED_COLUMN, 8)])
def test_windows_a_loop_appends_then_sliced(text, line):
    assert hits(HEAD + text, "TD011") == [("TD011", line)]


def test_a_column_scaled_and_written_back_then_the_table_split():
    text = HEAD + code_lines(
        "table = pd.read_csv('load.csv')",
        "table['kw'] = MinMaxScaler().fit_transform(table[['kw']])",
        "fit_df, held_df = table[:800], table[800:]",
    )
    assert hits(text, "TD011") == [("TD011", 7)]


@pytest.mark.parametrize(
    "text",
    [
        # index split first, statistics of the training rows
        code_lines(
            "feats = np.load('feats.npy')",
            "order = np.random.permutation(len(feats))",
            "fit_rows, held_rows = order[:400], order[400:]",
            "fit_x, held_x = feats[fit_rows], feats[held_rows]",
            "mu, sd = fit_x.mean(axis=0), fit_x.std(axis=0)",
            "fit_x, held_x = (fit_x - mu) / sd, (held_x - mu) / sd",
        ),
        # shuffled mini-batches of normalised data: a batch is no held-out part
        NORMALISE
        + code_lines(
            "order = torch.randperm(len(feats))",
            "for start in range(0, len(feats), 32):",
            "    batch = feats[order[start : start + 32]]",
            "preview = feats[order[:32]]",
        ),
        # windows cut first, then normalised with the training windows' statistics
        code_lines(
            "series = np.loadtxt('load.csv')",
            "seqs = []",
            "for t in range(len(series) - 24):",
            "    seqs.append(series[t : t + 24])",
            "seqs = np.array(seqs)",
            "fit_x, held_x = seqs[:700], seqs[700:]",
            "fit_x, held_x = (fit_x - fit_x.mean()) / fit_x.std(), (held_x - fit_x.mean()) / fit_x.std()",
        ),
        # a column scaled with the training rows' fit, written back, then the table split
        code_lines(
            "table = pd.read_csv('load.csv')",
            "scaler = MinMaxScaler().fit(table[['kw']][:800])",
            "table['kw'] = scaler.transform(table[['kw']])",
            "fit_df, held_df = table[:800], table[800:]",
        ),
        # a normalised series cut into its inputs and its last step
        code_lines(
            "series = np.loadtxt('load.csv')",
            "series = (series - series.mean()) / series.std()",
            "inputs = torch.tensor(series[:-1])",
            "last = torch.tensor(series[-1:])",
        ),
    ],
)
def test_healthy_neighbours_are_silent(text):
    assert hits(HEAD + text, "TD011") == []


HOLDOUT = "def holdout(rows, frac=0.8):\n    cut = int(frac * len(rows))\n    return rows[:cut], rows[cut:]\n\n"
PARTS = "def parts(feats, labels):\n    return train_test_split(feats, labels, test_size=0.25)\n\n"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # scaled at module level, split by a helper that slices what it is given
        (
            HOLDOUT
            + "feats = np.load('f.npy')\nfeats = MinMaxScaler().fit_transform(feats)\nfit_x, held_x = holdout(feats)\n",
            11,
        ),
        # normalised by hand, split by a helper around train_test_split
        (
            PARTS
            + "feats, labels = np.load('f.npy'), np.load('y.npy')\nfeats -= feats.mean(axis=0)\nsplit = parts(feats, labels)\n",
            10,
        ),
        # inside a function, through a method of the same class
        (
            "class Prep:\n    def holdout(self, rows):\n        return rows[:800], rows[800:]\n\n"
            "    def run(self, feats):\n        feats = MinMaxScaler().fit_transform(feats)\n        return self.holdout(feats)\n",
            11,
        ),
    ],
)
def test_split_in_a_helper_the_fitted_data_is_passed_to(text, line):
    assert hits(HEAD + text, "TD011") == [("TD011", line)]


@pytest.mark.parametrize(
    "text",
    [
        # split by the helper first, scaler fitted on the training part
        HOLDOUT + "feats = np.load('f.npy')\nfit_x, held_x = holdout(feats)\nscaler = MinMaxScaler().fit(fit_x)\n"
        "fit_x, held_x = scaler.transform(fit_x), scaler.transform(held_x)\n",
        # a helper that cuts what it is given into batches, not into train and test
        "def batches(rows):\n    return [rows[i : i + 32] for i in range(0, len(rows), 32)]\n\n"
        "feats = MinMaxScaler().fit_transform(np.load('f.npy'))\nchunks = batches(feats)\n",
        # the scaled data goes to the helper's other parameter, which it does not split
        HOLDOUT.replace("(rows, frac=0.8)", "(rows, extra)")
        + "feats = MinMaxScaler().fit_transform(np.load('f.npy'))\nother = np.load('o.npy')\na, b = holdout(other, feats)\n",
    ],
)
def test_helpers_that_do_not_split_the_fitted_data_are_silent(text):
    assert hits(HEAD + text, "TD011") == []


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # the scaler fitted inside a helper; the caller splits what it returns
        (
            "def scaled(rows):\n    return MinMaxScaler().fit_transform(rows)\n\n"
            "feats = scaled(np.load('f.npy'))\nfit_x, held_x = feats[:800], feats[800:]\n",
            7,
        ),
        # fitted, then the rows transformed and returned
        (
            "def scaled(rows):\n    prep = MinMaxScaler()\n    prep.fit(rows)\n    return prep.transform(rows)\n\n"
            "feats = scaled(np.load('f.npy'))\nparts = train_test_split(feats)\n",
            8,
        ),
        # a loader that normalises by hand and returns the features with the labels
        (
            "def load():\n    feats = np.load('f.npy')\n    feats = (feats - feats.mean(axis=0)) / feats.std(axis=0)\n"
            "    return feats, np.load('y.npy')\n\nx, y = load()\nx_fit, x_held = x[:800], x[800:]\n",
            8,
        ),
    ],
)
def test_normalised_inside_a_helper_then_split_by_the_caller(text, line):
    assert hits(HEAD + text, "TD011") == [("TD011", line)]


@pytest.mark.parametrize(
    "text",
    [
        # the helper scales the training part the caller already split off
        "def scaled(rows):\n    return MinMaxScaler().fit_transform(rows)\n\n"
        "feats = np.load('f.npy')\nfit_x, held_x = feats[:800], feats[800:]\nfit_x = scaled(fit_x)\n",
        # the helper fits on what it is given but returns something else
        "def summary(rows):\n    prep = MinMaxScaler().fit(rows)\n    return prep.data_max_\n\n"
        "top = summary(np.load('f.npy'))\nfirst, rest = top[:3], top[3:]\n",
        # scaled, and only printed: no split
        "def scaled(rows):\n    return MinMaxScaler().fit_transform(rows)\n\n"
        "feats = scaled(np.load('f.npy'))\nprint(feats[:5], feats[-5:])\n",
    ],
)
def test_helpers_whose_scaled_result_is_not_split_are_silent(text):
    assert hits(HEAD + text, "TD011") == []
