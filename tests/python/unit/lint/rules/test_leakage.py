"""TD011: preprocessing fitted before the train/test split."""

import pytest

from support.lint import hits

HEADER = "from sklearn.model_selection import train_test_split\nfrom sklearn.preprocessing import StandardScaler, OneHotEncoder, LabelEncoder\n"


def test_fit_transform_then_split_the_result():
    text = HEADER + "scaler = StandardScaler()\nXs = scaler.fit_transform(X)\na, b, c, d = train_test_split(Xs, y)\n"
    assert hits(text) == [("TD011", 4)]


def test_fit_then_transform_then_split():
    text = HEADER + "enc = OneHotEncoder()\nenc.fit(X)\nX2 = enc.transform(X)\nparts = train_test_split(X2, y)\n"
    assert hits(text) == [("TD011", 4)]


def test_inline_constructor_and_module_alias():
    text = (
        "import sklearn.preprocessing as pp\nimport sklearn.model_selection as ms\n"
        "Z = pp.MinMaxScaler().fit_transform(X)\nsplit = ms.train_test_split(Z, y)\n"
    )
    assert hits(text) == [("TD011", 3)]


@pytest.mark.parametrize(
    "body",
    [
        "a, b, c, d = train_test_split(X, y)\ns = StandardScaler()\na = s.fit_transform(a)\nb = s.transform(b)\n",
        "s = StandardScaler()\ns.fit(X_train)\nparts = train_test_split(X, y)\n",
        "y2 = LabelEncoder().fit_transform(y)\nparts = train_test_split(X, y2)\n",
    ],
)
def test_split_first_or_unrelated_data_or_label_encoding_is_fine(body):
    assert hits(HEADER + body) == []


def test_fit_in_one_function_split_in_another_is_not_linked():
    text = (
        HEADER
        + "def prep(X):\n    return StandardScaler().fit_transform(X)\n\ndef split(X, y):\n    return train_test_split(X, y)\n"
    )
    assert hits(text) == []
