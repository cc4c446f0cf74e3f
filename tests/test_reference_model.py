"""Tests of the reference-model workflow (core.data.reference_model)."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from core.data import census_demo, demo
from core.data.audit_data import AuditData
from core.data.problems import DataError
from core.data.reference_estimators import REFERENCE_MODELS
from core.data.reference_model import ReferenceModelResult, train_reference_model
from core.data.reference_split import stratified_split

CENSUS_FEATURES = list(census_demo.CENSUS_FEATURES)


@pytest.fixture(scope="module")
def census_raw() -> pd.DataFrame:
    """The census demo as a raw table: outcome and features, no predictions."""
    return demo.demo_frame("census").drop(columns=["p_default"])


def small_table(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """A binary table with a numeric, a text and a boolean feature, and an extra column."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    colour = rng.choice(np.array(["red", "green", "blue"], dtype=object), size=n)
    flag = rng.random(n) < 0.5
    logit = 1.5 * x + (colour == "red") - 0.5 * flag
    return pd.DataFrame({
        "x": x, "colour": colour, "flag": flag, "note": [f"row {i}" for i in range(n)],
        "outcome": (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int64),
    })


def three_class_table(n: int = 600, seed: int = 1, labels=("alpha", "beta", "gamma")):
    rng = np.random.default_rng(seed)
    cls = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    centres = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0]])
    xy = centres[cls] + rng.standard_normal((n, 2))
    return pd.DataFrame({"a": xy[:, 0], "b": xy[:, 1], "kind": np.asarray(labels)[cls]})


# --------------------------------------------------------------------------- errors


def test_reference_models_are_named():
    assert set(REFERENCE_MODELS) == {"logistic", "random_forest", "random_forest_default",
                                     "gradient_boosting"}
    assert all(isinstance(label, str) and label for label in REFERENCE_MODELS.values())


@pytest.mark.parametrize(
    ("change", "arguments", "phrases"),
    [
        (None, {"label": "missing_label"}, ["'missing_label'", "not in the table"]),
        (None, {"model_features": ["x", "nope"]}, ["'nope'", "not in the table"]),
        (None, {"model": "svm"}, ["'svm'", "logistic", "random_forest", "gradient_boosting"]),
        (None, {"model_features": []}, ["at least one model feature"]),
        (None, {"model_features": ["x", "outcome"]}, ["'outcome'", "label"]),
        (None, {"fractions": (0.5, 0.5, 0.0)}, ["fractions", "add up to 1"]),
        ("single_class", {}, ["'outcome'", "only one class", "'1'"]),
        ("label_missing", {}, ["'outcome'", "7 rows"]),
        ("feature_missing", {}, ["'x'", "4 missing", "Impute", "drop those rows"]),
        ("feature_typo", {}, ["'x'", "2 rows", "'n/a'"]),
        ("few_rows", {}, ["59 rows", "at least 60"]),
        ("rare_class", {}, ["'outcome'", "'2' (2 rows)", "stratified"]),
    ],
)
def test_every_problem_raises_a_data_error_naming_the_column(change, arguments, phrases):
    table = small_table()
    if change == "single_class":
        table["outcome"] = 1
    elif change == "label_missing":
        table["outcome"] = table["outcome"].astype(float)
        table.loc[[3, 10, 20, 30, 40, 50, 60], "outcome"] = np.nan
    elif change == "feature_missing":
        table.loc[[1, 2, 3, 4], "x"] = np.nan
    elif change == "feature_typo":
        table["x"] = table["x"].astype(object)
        table.loc[[8, 9], "x"] = "n/a"
    elif change == "few_rows":
        table = table.iloc[:59]
    elif change == "rare_class":
        table.loc[[0, 1], "outcome"] = 2
    kwargs = {"label": "outcome", "model_features": ["x", "colour", "flag"], **arguments}
    with pytest.raises(DataError) as info:
        train_reference_model(table, **kwargs)
    message = str(info.value)
    for phrase in phrases:
        assert phrase in message, message


def test_output_column_clashing_with_a_feature_is_an_error():
    table = small_table().rename(columns={"x": "split"})
    with pytest.raises(DataError, match="'split' is needed .* but is a model feature"):
        train_reference_model(table, "outcome", ["split", "colour"])


# --------------------------------------------------------------------------- binary


def test_binary_census_workflow(census_raw):
    before = census_raw.copy(deep=True)
    start = time.perf_counter()
    result = train_reference_model(census_raw, "defaulted", CENSUS_FEATURES)
    elapsed = time.perf_counter() - start
    assert elapsed < 10.0  # observed ≈ 1 s for the 300-tree forest
    pd.testing.assert_frame_equal(census_raw, before)  # input unchanged

    assert isinstance(result, ReferenceModelResult)
    assert result.model == "random_forest" and result.classes == ("0", "1")
    assert result.n_train == 3_334 and len(result.frame) == 6_666
    assert list(result.frame.columns) == [*[c for c in census_raw.columns if c != "split"],
                                          "p_1", "split"]
    counts = result.frame["split"].value_counts()
    assert counts["calibration"] == 3_333 and counts["test"] == 3_333
    mapping = result.mapping
    assert mapping.label == "defaulted" and mapping.probs == ("p_1",)
    assert mapping.positive == "1" and mapping.split == "split"
    assert mapping.features == () and mapping.groups == ()
    assert result.notes[0] == (
        "Trained a random forest on 3,334 rows; 6,666 rows (calibration 3,333, test 3,333) "
        "carry its predictions."
    )
    assert any("'split' was replaced" in note for note in result.notes)

    data = AuditData.from_mapping(result.frame, mapping)
    assert data.classes == ("0", "1")
    np.testing.assert_array_equal(data.y, result.frame["defaulted"].to_numpy())
    # Calibration in the large on held-out rows: SE of mean(y − p) = sqrt(Σp(1−p))/n ≈ 0.005;
    # a random forest is not exactly calibrated, so allow 0.03.
    assert abs(data.probs[:, 1].mean() - data.y.mean()) < 0.03


@pytest.mark.parametrize("model", list(REFERENCE_MODELS))
def test_every_model_trains_and_predicts_probabilities(model):
    table = small_table(n=400)
    result = train_reference_model(table, "outcome", ["x", "colour", "flag"], model=model)
    assert result.model == model
    p = result.frame["p_1"].to_numpy()
    assert np.all((p >= 0) & (p <= 1))
    data = AuditData.from_mapping(result.frame, result.mapping)
    # Better than chance: mean p among positives exceeds that among negatives.
    assert p[data.y == 1].mean() > p[data.y == 0].mean() + 0.1
    assert result.notes[0].startswith("Trained a")


def test_boolean_and_text_labels_choose_the_larger_value_as_positive():
    table = small_table()
    table["outcome"] = table["outcome"].astype(bool)
    result = train_reference_model(table, "outcome", ["x"], model="logistic")
    assert result.classes == ("False", "True") and result.mapping.probs == ("p_True",)
    assert result.mapping.positive == "True"
    AuditData.from_mapping(result.frame, result.mapping)

    table["outcome"] = np.where(table["outcome"], " yes", "no")
    result = train_reference_model(table, "outcome", ["x"], model="logistic")
    assert result.classes == ("no", "yes") and result.mapping.probs == ("p_yes",)
    data = AuditData.from_mapping(result.frame, result.mapping)
    assert data.classes == ("no", "yes")


def test_missing_categories_become_their_own_level():
    table = small_table()
    table.loc[[5, 6, 7, 8, 9, 10], "colour"] = None
    result = train_reference_model(table, "outcome", ["x", "colour"], model="logistic")
    assert any("'colour'" in note and "(missing)" in note for note in result.notes)
    # The output keeps the original values (missing stays missing); only the model saw a level.
    kept = table[table["note"].isin(result.frame["note"])].reset_index(drop=True)
    pd.testing.assert_series_equal(result.frame["colour"], kept["colour"])


# --------------------------------------------------------------------------- multiclass


def test_multiclass_with_text_labels():
    table = three_class_table()
    result = train_reference_model(table, "kind", ["a", "b"], model="logistic")
    assert result.classes == ("alpha", "beta", "gamma")
    columns = ["p_alpha", "p_beta", "p_gamma"]
    assert result.mapping.probs == tuple(columns) and result.mapping.positive is None
    np.testing.assert_allclose(result.frame[columns].sum(axis=1), 1.0, atol=1e-12)
    data = AuditData.from_mapping(result.frame, result.mapping)
    assert data.classes == ("alpha", "beta", "gamma")
    expected = result.frame["kind"].map({"alpha": 0, "beta": 1, "gamma": 2}).to_numpy()
    np.testing.assert_array_equal(data.y, expected)
    assert (data.probs.argmax(axis=1) == data.y).mean() > 0.6  # three separated clusters


@pytest.mark.parametrize("labels", [(0, 1, 2), (1, 2, 10)])
def test_multiclass_with_integer_labels(labels):
    table = three_class_table(labels=labels)
    result = train_reference_model(table, "kind", ["a", "b"], model="gradient_boosting")
    assert result.classes == tuple(str(v) for v in labels)  # numeric order, not text order
    data = AuditData.from_mapping(result.frame, result.mapping)
    lookup = {v: i for i, v in enumerate(labels)}
    np.testing.assert_array_equal(data.y, result.frame["kind"].map(lookup).to_numpy())


# --------------------------------------------------------------------------- split


def test_split_is_stratified_within_sampling_error():
    table = three_class_table(n=3_000)
    result = train_reference_model(table, "kind", ["a", "b"], model="logistic", seed=4)
    overall = table["kind"].value_counts(normalize=True)
    split = stratified_split(
        table["kind"].map({"alpha": 0, "beta": 1, "gamma": 2}).to_numpy(), (1 / 3,) * 3, seed=4
    )
    for part in ("train", "calibration", "test"):
        kinds = table["kind"][split == part]
        share = kinds.value_counts(normalize=True)
        for name, pi in overall.items():
            # A simple random sample of size n_s would have SE = sqrt(π(1 − π)/n_s); the
            # stratified split must be far inside 3 SE, in fact within one row per class.
            se = np.sqrt(pi * (1 - pi) / len(kinds))
            assert abs(share[name] - pi) < 3 * se
            assert abs(share[name] - pi) <= 1.0 / len(kinds) + 1e-12
    in_result = result.frame["split"].value_counts()
    assert in_result["calibration"] == (split == "calibration").sum()
    assert in_result["test"] == (split == "test").sum()
    assert result.n_train == (split == "train").sum()


def test_split_fractions_are_respected():
    y = np.repeat([0, 1], [700, 300])
    split = stratified_split(y, (0.6, 0.2, 0.2), seed=0)
    assert [(split == part).sum() for part in ("train", "calibration", "test")] == [600, 200, 200]
    tiny = stratified_split(np.repeat([0, 1], [3, 57]), (0.9, 0.05, 0.05), seed=0)
    for part in ("train", "calibration", "test"):
        assert ((tiny == part) & (np.repeat([0, 1], [3, 57]) == 0)).sum() == 1


def test_seed_reproducibility_and_variation():
    table = small_table(n=500)
    first = train_reference_model(table, "outcome", ["x", "colour"], seed=3)
    second = train_reference_model(table, "outcome", ["x", "colour"], seed=3)
    pd.testing.assert_frame_equal(first.frame, second.frame, check_exact=True)
    assert first.notes == second.notes and first.mapping == second.mapping
    other = train_reference_model(table, "outcome", ["x", "colour"], seed=4)
    assert not first.frame["note"].equals(other.frame["note"])


def test_input_frame_is_never_modified():
    table = small_table()
    table.index = pd.Index(np.arange(len(table)) * 7 + 100)  # a non-default index
    table["split"] = "whatever"
    before = table.copy(deep=True)
    result = train_reference_model(table, "outcome", ["x", "colour", "flag"])
    pd.testing.assert_frame_equal(table, before)
    assert isinstance(result.frame.index, pd.RangeIndex)
    # Rows keep their original order.
    positions = table["note"].str.slice(4).astype(int)
    kept = positions[table["note"].isin(result.frame["note"])].to_numpy()
    np.testing.assert_array_equal(result.frame["note"].str.slice(4).astype(int), kept)
