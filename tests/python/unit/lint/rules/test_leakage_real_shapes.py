"""TD011 on the shapes real training scripts give the leak: row slices with a column index,
the test rows first, scaled series cut into windows by a helper, in-place normalisation, the
parts normalised with the whole array's statistics after the split, a scaler fitted on the
whole array (or on the parts put back together) after it, and DataFrame columns scaled in
place. And the healthy neighbours of each, which must stay silent."""

from __future__ import annotations

import pytest

from support.lint import hits

NP = "import numpy as np\nimport torch\n"
SK = NP + "from sklearn.model_selection import train_test_split\nfrom sklearn.preprocessing import StandardScaler\n"


@pytest.mark.parametrize(
    ("body", "line"),
    [
        # toy data normalised, then rows cut with a column index (x[:n, :] / x[n:, :])
        (
            "pts = np.random.uniform(-1, 1, size=(200, 2))\npts = (pts - pts.mean(axis=0)) / pts.std(axis=0)\n"
            "n_fit = 150\nfit_x = torch.tensor(pts[:n_fit, :])\nheld_x = torch.tensor(pts[n_fit:, :])\n",
            6,
        ),
        # a series table with its first rows kept for testing (waves[k:, ...] / waves[:k, ...])
        (
            "waves = np.load('waves.npy')\nwaves = (waves - np.mean(waves)) / np.std(waves)\n"
            "inp = torch.from_numpy(waves[4:, :-1])\nheld = torch.from_numpy(waves[:4, :-1])\n",
            6,
        ),
        # normalised in place, then train_test_split
        (
            "feats = np.load('f.npy')\nfeats -= feats.mean(axis=0)\nfeats /= feats.std(axis=0)\nparts = train_test_split(feats)\n",
            6,
        ),
        # normalised, converted to a tensor, then sliced
        (
            "feats = np.load('f.npy')\nfeats = (feats - feats.min()) / (feats.max() - feats.min())\n"
            "feats = torch.tensor(feats).float()\na, b = feats[:90], feats[90:]\n",
            6,
        ),
    ],
)
def test_normalised_by_hand_then_split(body, line):
    assert hits(SK + body, "TD011") == [("TD011", line)]


WINDOWS = """
closes = np.loadtxt("closes.csv")
scaler = StandardScaler()
closes_scaled = scaler.fit_transform(closes.reshape(-1, 1))


def windows(series, width):
    xs, ys = [], []
    for i in range(len(series) - width):
        xs.append(series[i : i + width])
        ys.append(series[i + width])
    return np.array(xs), np.array(ys)


X, y = windows(closes_scaled, 30)
cut = int(0.8 * len(X))
X_fit, y_fit = X[:cut], y[:cut]
X_held, y_held = X[cut:], y[cut:]
"""


def test_a_scaled_series_cut_into_windows_by_a_helper_then_sliced():
    assert hits(SK + WINDOWS, "TD011") == [("TD011", 8)]  # at the fit


def test_a_scaler_fitted_on_the_training_rows_of_the_series_is_fine():
    healthy = WINDOWS.replace("closes_scaled = scaler.fit_transform(closes.reshape(-1, 1))", "cut0 = 700")
    healthy = healthy.replace(
        "X, y = windows(closes_scaled, 30)",
        "scaler.fit(closes[:cut0].reshape(-1, 1))\nX, y = windows(scaler.transform(closes.reshape(-1, 1)), 30)",
    )
    assert hits(SK + healthy, "TD011") == []


SPLIT = "X = np.load('x.npy')\ny = np.load('y.npy')\nX_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2)\n"


@pytest.mark.parametrize(
    ("after", "line"),
    [
        # np.mean(X) written where np.mean(X_tr) was meant
        ("X_tr = (X_tr - np.mean(X)) / np.std(X)\n", 8),
        # statistics of the whole array, kept in names
        ("mu, sd = X.mean(axis=0), X.std(axis=0)\nX_tr = (X_tr - mu) / sd\n", 8),
        # a scaler fitted on the whole array, used on the parts
        ("sc = StandardScaler().fit(X)\nX_tr = sc.transform(X_tr)\nX_te = sc.transform(X_te)\n", 8),
        # a scaler fitted on the parts put back together
        ("sc = StandardScaler()\nsc.fit(np.concatenate([X_tr, X_te]))\nX_tr = sc.transform(X_tr)\n", 9),
    ],
)
def test_the_whole_array_statistics_used_after_the_split(after, line):
    assert hits(SK + SPLIT + after, "TD011") == [("TD011", line)]


def test_each_part_normalised_with_the_whole_is_its_own_finding():
    after = "X_tr = (X_tr - np.mean(X)) / np.std(X)\nX_te = (X_te - np.mean(X)) / np.std(X)\n"
    assert hits(SK + SPLIT + after, "TD011") == [("TD011", 8), ("TD011", 9)]


def test_dataframe_columns_scaled_in_place_then_the_table_split():
    table = "import pandas as pd\n" + SK + "df = pd.read_csv('cars.csv')\nnum = ['weight', 'power']\n"
    by_hand = table + "df[num] = (df[num] - df[num].mean()) / df[num].std()\ntr, te = train_test_split(df)\n"
    with_scaler = table + "df[num] = StandardScaler().fit_transform(df[num])\ntr, te = train_test_split(df)\n"
    assert hits(by_hand, "TD011") == [("TD011", 8)]
    assert hits(with_scaler, "TD011") == [("TD011", 8)]


@pytest.mark.parametrize(
    "body",
    [
        # the array rebound to another table between the fit and the split (a later chapter)
        "X = np.load('a.npy')\nXs = StandardScaler().fit_transform(X)\nX = np.load('b.npy')\nparts = train_test_split(X)\n",
        # head and tail rows printed, not split
        "X = np.load('a.npy')\nX = (X - X.mean(0)) / X.std(0)\nprint(X[:5], X[-5:])\n",
        # the statistics of the training part, applied to both
        SPLIT + "sc = StandardScaler().fit(X_tr)\nX_tr = sc.transform(X_tr)\nX_te = sc.transform(X_te)\n",
        SPLIT + "X_tr = (X_tr - np.mean(X_tr)) / np.std(X_tr)\n",
        # a validation part split off the training part: X_tr is then the smaller training part
        SPLIT + "X_tr, X_va, y_tr, y_va = train_test_split(X_tr, y_tr)\nX_va = (X_va - X_tr.mean(0)) / X_tr.std(0)\n",
        # the parts put back together for a plot, not for a fit
        SPLIT + "everything = np.concatenate([X_tr, X_te])\nprint(everything.mean())\n",
        # a normalised copy that is not what gets split
        "X = np.load('a.npy')\nX_view = (X - X.mean(0)) / X.std(0)\nparts = train_test_split(X)\n",
        # a loader fitting on the training borders, then cutting its window (Informer-style)
        "def load(df, b1, b2, n_train):\n    sc = StandardScaler()\n    sc.fit(df.values[:n_train])\n"
        "    data = sc.transform(df.values)\n    return data[b1:b2]\n",
    ],
)
def test_healthy_neighbours_are_silent(body):
    assert hits(SK + body, "TD011") == []


def test_a_cross_validation_loop_after_a_holdout_split_is_fine():
    body = (
        SPLIT + "from sklearn.model_selection import KFold\n"
        "for fit_rows, held_rows in KFold(5).split(X):\n"
        "    sc = StandardScaler()\n    sc.fit(X[fit_rows])\n    scored = sc.transform(X[held_rows])\n"
    )
    assert hits(SK + body, "TD011") == []


def test_a_three_way_split_by_slices():
    body = (
        "X = np.load('x.npy')\nX = (X - X.mean(0)) / X.std(0)\nn_tr, n_va = 700, 150\n"
        "X_tr = X[:n_tr]\nX_va = X[n_tr : n_tr + n_va]\nX_te = X[n_tr + n_va :]\n"
    )
    assert hits(SK + body, "TD011") == [("TD011", 6)]
