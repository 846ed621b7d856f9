"""TD011 and a scaler fitted on the training rows only, then applied to more than it saw: to the
whole array before the rows are cut, or to the held-out part before that part is cut into
validation and test. That is the order the rule asks for, so it stays silent; a scaler fitted
on everything and applied the same way is still the leak."""

from __future__ import annotations

import pytest

from support.lint import hits

HEAD = (
    "import numpy as np\nimport torch\n"
    "from sklearn.model_selection import train_test_split\n"
    "from sklearn.preprocessing import MinMaxScaler, StandardScaler\n"
)


@pytest.mark.parametrize(
    "body",
    [
        # the scaler learns from the first n rows (a slice in the call), then scales all of them
        "feats = np.load('feats.npy')\ncut = int(0.75 * len(feats))\n"
        "sc = StandardScaler().fit(feats[:cut])\nfeats = sc.transform(feats)\n"
        "fit_t, held_t = torch.tensor(feats[:cut]), torch.tensor(feats[cut:])\n",
        # the training rows get a name of their own first
        "table = np.load('table.npy')\nhead = table[:600]\nnorm = StandardScaler()\nnorm.fit(head)\n"
        "table_n = norm.transform(table)\nfit_rows, rest_rows = table_n[:600], table_n[600:]\n",
        # a closing-price series: min/max from the first 80 %, applied to the whole series
        "close = np.loadtxt('close.csv').reshape(-1, 1)\nk = int(len(close) * 0.8)\nmm = MinMaxScaler()\n"
        "mm.fit(close[:k].reshape(-1, 1))\nclose_mm = mm.transform(close)\nearly, late = close_mm[:k], close_mm[k:]\n",
        # a row slice with a column index
        "grid = np.load('grid.npy')\nsc = StandardScaler().fit(grid[:500, :])\ngrid_s = sc.transform(grid)\n"
        "a, b = grid_s[:500, :], grid_s[500:, :]\n",
    ],
)
def test_fitted_on_the_leading_rows_then_applied_to_all_before_the_cut(body):
    assert hits(HEAD + body, "TD011") == []


def test_held_out_part_scaled_with_the_training_fit_then_cut_into_validation_and_test():
    body = (
        "X, y = np.load('X.npy'), np.load('y.npy')\n"
        "X_fit, X_hold, y_fit, y_hold = train_test_split(X, y, test_size=0.4)\n"
        "sc = StandardScaler()\nX_fit_s = sc.fit_transform(X_fit)\nX_hold_s = sc.transform(X_hold)\n"
        "X_val, X_tst = X_hold_s[:200], X_hold_s[200:]\n"
    )
    assert hits(HEAD + body, "TD011") == []


def test_training_frame_passed_to_a_function_then_the_other_frame_cut():
    body = (
        "def prepare(train_df, other_df):\n    sc = StandardScaler().fit(train_df)\n"
        "    other = sc.transform(other_df)\n    return other[:50], other[50:]\n"
    )
    assert hits(HEAD + body, "TD011") == []


@pytest.mark.parametrize(
    ("body", "line"),
    [
        # fitted on the whole array, applied to it, then cut: the leak
        (
            "feats = np.load('feats.npy')\nsc = StandardScaler().fit(feats)\nfeats = sc.transform(feats)\n"
            "fit_t, held_t = feats[:700], feats[700:]\n",
            6,
        ),
        # fitted on the whole array, its transform under another name cut
        (
            "close = np.loadtxt('close.csv').reshape(-1, 1)\nmm = MinMaxScaler()\nmm.fit(close)\n"
            "close_mm = mm.transform(close)\nearly, late = close_mm[:900], close_mm[900:]\n",
            7,
        ),
        # fitted on the training part, then that same part (scaled) cut into train and validation
        (
            "X, y = np.load('X.npy'), np.load('y.npy')\nX_train, X_test, y_train, y_test = train_test_split(X, y)\n"
            "sc = StandardScaler()\nsc.fit(X_train)\nX_train = sc.transform(X_train)\n"
            "X_tr, X_va = X_train[:800], X_train[800:]\n",
            8,
        ),
    ],
)
def test_fitted_on_what_is_cut_later_is_still_the_leak(body, line):
    assert hits(HEAD + body, "TD011") == [("TD011", line)]


@pytest.mark.parametrize(
    "body",
    [
        # the training side of a split of row numbers picks the rows the scaler sees
        "feats = np.load('feats.npy')\nfit_i, hold_i = train_test_split(np.arange(len(feats)), test_size=0.25)\n"
        "sc = StandardScaler().fit(feats[fit_i])\nscaled = sc.transform(feats)\n"
        "a, b = scaled[fit_i], scaled[hold_i]\n",
        # a shuffled order cut in two, the scaler fitted through the first side's name
        "feats = np.load('feats.npy')\norder = np.random.permutation(len(feats))\n"
        "fit_i, hold_i = order[:700], order[700:]\nsc = MinMaxScaler()\nsc.fit(feats[fit_i])\n"
        "scaled = sc.transform(feats)\na, b = scaled[fit_i], scaled[hold_i]\n",
        # the same cut written inside the index
        "feats = np.load('feats.npy')\norder = torch.randperm(len(feats))\n"
        "sc = StandardScaler().fit(feats[order[:700]])\nscaled = sc.transform(feats)\n"
        "a, b = scaled[order[:700]], scaled[order[700:]]\n",
    ],
)
def test_fitted_on_the_rows_an_index_split_picks_then_applied_to_all(body):
    assert hits(HEAD + body, "TD011") == []


def test_fitted_on_all_rows_then_the_index_split_is_still_the_leak():
    body = (
        "feats = np.load('feats.npy')\norder = np.random.permutation(len(feats))\n"
        "fit_i, hold_i = order[:700], order[700:]\nsc = StandardScaler().fit(feats)\n"
        "scaled = sc.transform(feats)\na, b = scaled[fit_i], scaled[hold_i]\n"
    )
    assert hits(HEAD + body, "TD011") == [("TD011", 8)]
