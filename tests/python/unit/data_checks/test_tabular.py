"""Tables: numbers stored as text, missing values, constant columns, id overlap; from dicts of
columns, row dicts, structured arrays and (when installed) pandas."""

from __future__ import annotations

import numpy as np
import pytest

from support.data_checks import check, kinds


def columns(n=50, **extra):
    cols = {"age": [20.0 + i % 30 for i in range(n)], "score": [float(i * 7 % 13) for i in range(n)]}
    cols.update(extra)
    return cols


def test_text_that_holds_numbers():
    income = [str(30000 + i * 10) for i in range(50)]
    income[7] = "n/a"
    r = check({"train": columns(income=income)})
    assert kinds(r) == ["missing-values", "numbers-as-text"]
    f = next(f for f in r["findings"] if f["kind"] == "numbers-as-text")
    assert f["details"]["column"] == "income" and "'n/a'" in f["message"]


def test_thousands_separators():
    r = check({"train": columns(price=[f"{1000 + i:,}" for i in range(50)])})
    f = next(f for f in r["findings"] if f["kind"] == "numbers-as-text")
    assert "thousands separators" in f["message"]


def test_real_text_is_not_numbers():
    r = check({"train": columns(city=["Madrid", "Lyon", "Oslo", "Porto", "Rome"] * 10)})
    assert r["findings"] == []


def test_missing_and_constant_columns_in_row_dicts():
    rows = [{"a": float(i), "b": None if i % 10 == 0 else float(i), "c": "ES"} for i in range(40)]
    r = check({"train": rows})
    assert kinds(r) == ["constant-column", "missing-values"]
    assert next(f for f in r["findings"] if f["kind"] == "missing-values")["details"]["columns"] == {"b": 4}


def test_structured_array():
    arr = np.array([(i, f"{i}.5", "x") for i in range(30)], dtype=[("n", "i8"), ("v", "U8"), ("k", "U2")])
    assert kinds(check({"train": arr})) == ["constant-column", "numbers-as-text"]


def test_id_overlap_between_splits():
    train = {"user_id": list(range(0, 100)), "x": [float(i % 7) for i in range(100)]}
    test = {"user_id": list(range(90, 120)), "x": [float(i % 5) for i in range(30)]}
    r = check({"train": train, "test": test})
    assert kinds(r) == ["id-overlap"]
    assert r["findings"][0]["indices"] == list(range(10))


def annotations(images, first, seed):
    """COCO-like rows: split by image_id, each row's class in category_id (every class in every split)."""
    rows = [
        {"image_id": first + i, "category_id": 1 + (i * 7 + seed) % 10, "area": float(i % 13)} for i in range(images)
    ]
    return {k: [r[k] for r in rows] for k in rows[0]}


@pytest.mark.parametrize("column", ["category_id", "class_id", "label_id", "cat_id", "target_id", "objectClassId"])
def test_a_class_column_named_like_an_id_is_no_entity(column):
    train, val = annotations(200, 0, 0), annotations(50, 10_000, 1)
    train[column], val[column] = train.pop("category_id"), val.pop("category_id")
    assert check({"train": train, "val": val})["findings"] == []


def test_an_entity_id_beside_a_class_column_still_overlaps():
    train, val = annotations(200, 0, 0), annotations(50, 190, 1)  # images 190..199 in both
    r = check({"train": train, "val": val})
    assert kinds(r) == ["id-overlap"] and r["findings"][0]["details"]["column"] == "image_id"


def test_pandas_object_columns():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": ["1", "2", "3", "?"]})
    assert "numbers-as-text" in kinds(check({"train": df}))


def test_a_healthy_table_is_silent():
    assert check({"train": columns(), "val": columns(20)})["findings"] == []
