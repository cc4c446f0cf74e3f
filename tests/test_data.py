"""AuditData.from_frame: every accepted input form and every DataError case."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.data.audit_data import AuditData
from core.data.mapping import ColumnMapping
from core.data.problems import DataError, describe_rows
from core.data.table import summarise_columns


def binary_frame(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, n)
    return pd.DataFrame({
        "y": (rng.random(n) < p).astype(int),
        "p": p,
        "age": rng.integers(18, 90, n),
        "race": rng.choice(["Black", "White", "Asian"], n),
        "split": rng.choice(["calibration", "test"], n),
    })


def multiclass_frame(n: int = 60, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet([1.0, 1.0, 1.0], n)
    frame = pd.DataFrame(probs, columns=["p_cat", "p_dog", "p_bird"])
    frame["label"] = np.array(["cat", "dog", "bird"])[[rng.choice(3, p=row) for row in probs]]
    frame["x"] = rng.normal(size=n)
    return frame


# --------------------------------------------------------------------------- accepted forms


def test_binary_single_column() -> None:
    df = binary_frame()
    audit = AuditData.from_frame(df, label="y", prob="p", features=["age", "race"],
                                 groups=["race"], split="split")
    assert audit.n == 60 and audit.is_binary and audit.classes == ("0", "1")
    np.testing.assert_allclose(audit.positive_probs, df["p"])
    np.testing.assert_allclose(audit.probs.sum(axis=1), 1.0)
    np.testing.assert_array_equal(audit.y, df["y"])
    assert audit.feature_names == ("age", "race=Asian", "race=Black", "race=White")
    assert audit.X.shape == (60, 4)
    np.testing.assert_array_equal(audit.X[:, 1:].sum(axis=1), 1.0)
    assert set(audit.split) <= {"calibration", "test"}
    assert any("one-hot" in note.message for note in audit.report)


def test_binary_two_columns_equals_one_column() -> None:
    df = binary_frame()
    df["p0"] = 1 - df["p"]
    one = AuditData.from_frame(df, label="y", prob="p")
    two = AuditData.from_frame(df, label="y", probs=["p0", "p"])
    np.testing.assert_allclose(one.probs, two.probs)
    np.testing.assert_array_equal(one.y, two.y)


def test_binary_positive_class_swaps_columns() -> None:
    df = binary_frame().rename(columns={"p": "p1"})
    df["p0"] = 1 - df["p1"]
    swapped = AuditData.from_frame(df, label="y", probs=["p1", "p0"], positive="0")
    # Columns are matched to labels by name (p1 ↔ 1), then ordered (negative, positive).
    assert swapped.classes == ("1", "0")
    np.testing.assert_array_equal(swapped.y, 1 - df["y"])
    np.testing.assert_allclose(swapped.positive_probs, df["p0"])


def test_binary_string_labels_with_positive_guessed_from_column_name() -> None:
    df = binary_frame()
    df["outcome"] = np.where(df["y"] == 1, "default", "repaid")
    df = df.rename(columns={"p": "p_default"})
    audit = AuditData.from_frame(df, label="outcome", prob="p_default")
    assert audit.classes == ("repaid", "default")
    np.testing.assert_array_equal(audit.y, df["y"])


def test_binary_string_labels_need_positive_when_ambiguous() -> None:
    df = binary_frame()
    df["outcome"] = np.where(df["y"] == 1, "A", "B")
    with pytest.raises(DataError, match="positive class"):
        AuditData.from_frame(df, label="outcome", prob="p")
    audit = AuditData.from_frame(df, label="outcome", prob="p", positive="A")
    np.testing.assert_array_equal(audit.y, df["y"])


def test_boolean_and_yes_no_labels() -> None:
    df = binary_frame()
    df["flag"] = df["y"].astype(bool)
    df["answer"] = np.where(df["y"] == 1, "yes", "no")
    for label in ("flag", "answer"):
        np.testing.assert_array_equal(AuditData.from_frame(df, label=label, prob="p").y, df["y"])


def test_binary_logits_are_sigmoided() -> None:
    df = binary_frame()
    df["z"] = np.log(df["p"] / (1 - df["p"]))
    audit = AuditData.from_frame(df, label="y", prob="z", logits=True)
    np.testing.assert_allclose(audit.positive_probs, df["p"], rtol=1e-12)


def test_multiclass_string_labels_map_by_column_name() -> None:
    df = multiclass_frame()
    audit = AuditData.from_frame(df, label="label", probs=["p_cat", "p_dog", "p_bird"],
                                 features=["x"])
    assert audit.classes == ("cat", "dog", "bird")
    expected = df["label"].map({"cat": 0, "dog": 1, "bird": 2}).to_numpy()
    np.testing.assert_array_equal(audit.y, expected)


def test_multiclass_integer_labels_map_by_position() -> None:
    df = multiclass_frame()
    df["k"] = df["label"].map({"cat": 0, "dog": 1, "bird": 2})
    audit = AuditData.from_frame(df, label="k", probs=["p_cat", "p_dog", "p_bird"])
    np.testing.assert_array_equal(audit.y, df["k"])


def test_multiclass_logits_are_softmaxed() -> None:
    df = multiclass_frame()
    logits = np.log(df[["p_cat", "p_dog", "p_bird"]].to_numpy()) + 3.0  # shift is irrelevant
    frame = pd.DataFrame(logits, columns=["z_cat", "z_dog", "z_bird"])
    frame["label"] = df["label"]
    audit = AuditData.from_frame(frame, label="label", probs=["z_cat", "z_dog", "z_bird"],
                                 logits=True)
    np.testing.assert_allclose(audit.probs, df[["p_cat", "p_dog", "p_bird"]], rtol=1e-10)


def test_from_mapping_matches_from_frame() -> None:
    df = binary_frame()
    mapping = ColumnMapping(label="y", probs=("p",), features=("age",), groups=("race",))
    a = AuditData.from_mapping(df, mapping)
    b = AuditData.from_frame(df, **mapping.as_kwargs())
    assert a.fingerprint == b.fingerprint


def test_input_frame_is_never_modified() -> None:
    df = binary_frame()
    df.loc[0, "p"] = 1.0 + 5e-7  # will be clipped in the container, not in the frame
    before = df.copy(deep=True)
    AuditData.from_frame(df, label="y", prob="p", features=["age", "race"], groups=["race"])
    pd.testing.assert_frame_equal(df, before)


def test_subset_split_and_fingerprint() -> None:
    audit = AuditData.from_frame(binary_frame(), label="y", prob="p", features=["age"],
                                 groups=["race"], split="split")
    test = audit.split_part("test")
    assert test.n == int((audit.split == "test").sum())
    assert set(test.split) == {"test"}
    assert test.fingerprint != audit.fingerprint
    assert audit.subset(np.arange(audit.n)).fingerprint == audit.fingerprint


def test_to_frame_and_class_balance() -> None:
    audit = AuditData.from_frame(multiclass_frame(), label="label",
                                 probs=["p_cat", "p_dog", "p_bird"], features=["x"])
    frame = audit.to_frame()
    assert list(frame.columns[:4]) == ["label", "p_cat", "p_dog", "p_bird"]
    balance = audit.class_balance()
    assert balance["count"].sum() == audit.n
    np.testing.assert_allclose(balance["mean predicted probability"].sum(), 1.0)
    numeric, categorical = summarise_columns(frame)
    assert list(numeric["column"]) == ["p_cat", "p_dog", "p_bird", "feature: x"]
    assert list(categorical["column"]) == ["label"]
    assert categorical["levels"].iloc[0] == 3
    np.testing.assert_allclose(numeric["mean"].iloc[0], frame["p_cat"].mean())


def test_ensemble_members() -> None:
    df = binary_frame()
    df["m1"] = np.clip(df["p"] + 0.05, 0, 1)
    df["m2"] = np.clip(df["p"] - 0.05, 0, 1)
    audit = AuditData.from_frame(df, label="y", prob="p", members=["m1", "m2"])
    assert audit.members.shape == (60, 2, 2)
    np.testing.assert_allclose(audit.members[:, 0, 1], df["m1"])


# --------------------------------------------------------------------------- repairs, reported


def test_tiny_overshoot_is_clipped_and_reported() -> None:
    df = binary_frame()
    df.loc[3, "p"] = 1.0 + 1e-7
    df.loc[7, "p"] = -5e-7
    audit = AuditData.from_frame(df, label="y", prob="p")
    assert audit.positive_probs.max() <= 1.0 and audit.positive_probs.min() >= 0.0
    messages = " ".join(note.message for note in audit.report)
    assert "clipped" in messages and "2 rows (rows 4, 8)" in messages


def test_rows_summing_nearly_to_one_are_renormalised_and_reported() -> None:
    df = multiclass_frame()
    df.loc[2, "p_cat"] += 5e-4
    audit = AuditData.from_frame(df, label="label", probs=["p_cat", "p_dog", "p_bird"])
    np.testing.assert_allclose(audit.probs.sum(axis=1), 1.0, atol=1e-12)
    assert any("renormalised" in n.message and "row 3" in n.message for n in audit.report)


def test_missing_categorical_feature_becomes_a_level_and_is_reported() -> None:
    df = binary_frame()
    df["race"] = df["race"].astype(object)
    df.loc[[1, 2], "race"] = None
    audit = AuditData.from_frame(df, label="y", prob="p", features=["race"])
    assert "race=(missing)" in audit.feature_names
    assert any("(missing)" in n.message for n in audit.report)


# --------------------------------------------------------------------------- every DataError


def expect_error(df: pd.DataFrame, *fragments: str, **mapping) -> str:
    with pytest.raises(DataError) as info:
        AuditData.from_frame(df, **mapping)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_missing_column_names_it_and_suggests() -> None:
    expect_error(binary_frame(), "'pp'", "Did you mean 'p'", label="y", prob="pp")
    expect_error(binary_frame(), "'lbl'", "(label)", label="lbl", prob="p")
    expect_error(binary_frame(), "'income'", label="y", prob="p", features=["income"])


def test_non_numeric_probabilities() -> None:
    df = binary_frame()
    df["p"] = df["p"].astype(object)
    df.loc[4, "p"] = "0,5"
    expect_error(df, "'p'", "1 row (row 5)", "'0,5'", "decimal", label="y", prob="p")


def test_nan_and_inf_are_counted() -> None:
    df = binary_frame()
    df.loc[[0, 9], "p"] = np.nan
    df.loc[20, "p"] = np.inf
    expect_error(df, "'p'", "3 rows (rows 1, 10, 21)", label="y", prob="p")


def test_probabilities_outside_unit_interval() -> None:
    df = binary_frame()
    df.loc[5, "p"] = 1.2
    expect_error(df, "'p'", "between 0 and 1", "1 row (row 6)", "logits", label="y", prob="p")


def test_rows_not_summing_to_one() -> None:
    df = multiclass_frame()
    df.loc[[3, 4], "p_dog"] += 0.2
    expect_error(df, "sum to 1", "2 rows (rows 4, 5)", "row 4 sums to", label="label",
                 probs=["p_cat", "p_dog", "p_bird"])


def test_labels_not_matching_probability_columns() -> None:
    df = multiclass_frame()
    df.loc[0, "label"] = "fish"
    expect_error(df, "'fish'", "'p_fish'", label="label", probs=["p_cat", "p_dog", "p_bird"])
    df = binary_frame()
    df.loc[0, "y"] = 2
    expect_error(df, "3 distinct values", "one probability column", label="y", prob="p")


def test_single_class_present() -> None:
    df = binary_frame()
    df["y"] = 1
    expect_error(df, "only one class", "'1'", label="y", prob="p")
    df = multiclass_frame()
    df["label"] = "dog"
    expect_error(df, "only one class", "'dog'", label="label", probs=["p_cat", "p_dog", "p_bird"])


def test_fewer_than_twenty_rows() -> None:
    expect_error(binary_frame(n=19), "only 19 rows", "at least 20", label="y", prob="p")


def test_empty_table() -> None:
    expect_error(binary_frame().iloc[:0], "no rows", label="y", prob="p")


def test_duplicate_column_names() -> None:
    df = binary_frame()
    df.columns = ["y", "p", "age", "age", "split"]
    # issue 14: refused only when the ambiguous name is mapped to a role
    expect_error(df, "more than one column named 'age'", label="y", prob="p", features=["age"])


def test_missing_labels() -> None:
    df = binary_frame()
    df["y"] = df["y"].astype(float)
    df.loc[[2, 3], "y"] = np.nan
    expect_error(df, "'y'", "2 rows (rows 3, 4)", label="y", prob="p")


def test_missing_numeric_feature() -> None:
    df = binary_frame()
    df["age"] = df["age"].astype(float)
    df.loc[11, "age"] = np.nan
    expect_error(df, "'age'", "audit feature", "row 12", label="y", prob="p", features=["age"])


def test_too_many_categorical_levels() -> None:
    df = binary_frame(n=80)
    df["id"] = [f"person-{i}" for i in range(80)]
    expect_error(df, "'id'", "80 distinct values", label="y", prob="p", features=["id"])
    df["income"] = np.random.default_rng(0).lognormal(10, 1, 80)
    expect_error(df, "'income'", "numeric", label="y", prob="p", groups=["income"])


def test_bad_split_values() -> None:
    df = binary_frame()
    df["split"] = df["split"].astype(object)
    df.loc[0, "split"] = "dev-set"
    expect_error(df, "'dev-set'", "row 1", label="y", prob="p", split="split")


def test_column_used_twice() -> None:
    expect_error(binary_frame(), "both as the label and as an audit feature",
                 label="y", prob="p", features=["y"])


def test_probability_columns_given_twice_or_not_at_all() -> None:
    with pytest.raises(DataError):
        AuditData.from_frame(binary_frame(), label="y")
    with pytest.raises(DataError):
        AuditData.from_frame(binary_frame(), label="y", prob="p", probs=["p"])


def test_member_with_wrong_number_of_columns() -> None:
    df = multiclass_frame()
    df["m1_cat"], df["m1_dog"] = df["p_cat"], 1 - df["p_cat"]
    expect_error(df, "one probability column per class", label="label",
                 probs=["p_cat", "p_dog", "p_bird"], members=[["m1_cat", "m1_dog"]])


def test_describe_rows_wording() -> None:
    mask = np.zeros(10, dtype=bool)
    mask[[0, 2, 3, 5, 6, 8]] = True
    assert describe_rows(mask) == "6 rows (rows 1, 3, 4, 6, 7, …)"
    assert describe_rows(mask[:1]) == "1 row (row 1)"


def test_feature_matrix_selects_encoded_columns() -> None:
    audit = AuditData.from_frame(binary_frame(), label="y", prob="p", features=["age", "race"])
    np.testing.assert_array_equal(audit.feature_matrix(["race"]), audit.X[:, 1:])
    np.testing.assert_array_equal(audit.feature_matrix(["age"]), audit.X[:, :1])
    assert audit.feature_matrix([]).shape == (audit.n, 0)
