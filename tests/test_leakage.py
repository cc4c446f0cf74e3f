"""The leakage screen of the reference-model workflow (issue 20): columns that separate the
label by themselves, identifiers and dates are left out of the default model features, each
with a sentence; chosen anyway, they train with a warning naming the column and its AUC."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from core.data.leakage import (
    CONFINED_SHARE,
    LEAK_AUC,
    confined_share,
    looks_like_dates,
    looks_like_identifier,
    screen_features,
    single_feature_auc,
)
from core.data.problems import DataError
from core.data.reference_model import default_model_features, train_reference_model
from tests.realdata_tables import compas_like_frame, german_credit_like_frame

#: Columns of the COMPAS-shaped table that are the outcome in another form.
COMPAS_LEAKS = {"event", "is_recid", "r_charge_degree", "r_days_from_arrest", "r_charge_desc"}


# --------------------------------------------------------------------------- statistics


def test_numeric_auc_is_the_mann_whitney_auc_either_way_round() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    x = rng.normal(size=400) + 1.2 * y
    reference = roc_auc_score(y, x)
    assert single_feature_auc(pd.Series(x), y) == pytest.approx(reference, abs=1e-12)
    assert single_feature_auc(pd.Series(-x), y) == pytest.approx(reference, abs=1e-12)
    # missing values are placed below or above all others, whichever separates better
    with_missing = np.where(y == 1, np.nan, x)
    assert single_feature_auc(pd.Series(with_missing), y) == pytest.approx(1.0)


def test_categorical_auc_is_cross_fitted_so_many_small_levels_separate_nothing() -> None:
    """In-sample shares of 400 singleton levels would give AUC 1; cross-fitted ones about ½
    (their standard error under no information is √((n₀+n₁+1)/(12 n₀ n₁)) ≈ 0.029)."""
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 400)
    singletons = pd.Series([f"case {i}" for i in range(400)])
    se = np.sqrt((400 + 1) / (12 * (y == 0).sum() * (y == 1).sum()))
    assert abs(single_feature_auc(singletons, y) - 0.5) < 4 * se
    copy = pd.Series(np.where(y == 1, "yes", "no"))
    assert single_feature_auc(copy, y) == pytest.approx(1.0)


def test_multiclass_auc_is_hand_and_tills_mean_over_pairs() -> None:
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 600)
    assert single_feature_auc(pd.Series(y.astype(float)), y) == pytest.approx(1.0)
    x = rng.normal(size=600) + y
    pairs = []
    for i, j in ((0, 1), (0, 2), (1, 2)):
        rows = (y == i) | (y == j)
        a = roc_auc_score(y[rows] == j, x[rows])
        pairs.append(max(a, 1 - a))
    assert single_feature_auc(pd.Series(x), y) == pytest.approx(np.mean(pairs), abs=1e-12)


def test_a_column_implied_by_the_label_is_confined() -> None:
    """is_recid: 1 for every positive and for 8% of the negatives."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 2000)
    superset = np.where(y == 1, 1, (rng.random(2000) < 0.08).astype(int))
    share, which = confined_share(pd.Series(superset), y)
    negatives = superset[y == 0]
    assert which == 1 and share == pytest.approx(negatives.mean())
    # filled in only after the outcome: missing for the others, any value for the positives
    after = pd.Series(np.where(superset == 1, rng.choice(["(F3)", "(M1)"], 2000), None))
    assert confined_share(after, y)[0] == pytest.approx(negatives.mean())
    # strong legitimate features are not: their classes' ranges overlap (AUC 0.92 and 0.98)
    assert confined_share(pd.Series(rng.normal(size=2000) + 2.0 * y), y)[0] > 0.5
    assert confined_share(pd.Series(rng.normal(size=2000) + 3.0 * y), y)[0] > 2 * CONFINED_SHARE


def test_identifiers_and_dates() -> None:
    n = 200
    assert looks_like_identifier(pd.Series([f"13{i:06d}CF10A" for i in range(n)]))
    assert looks_like_identifier(pd.Series(np.arange(1, n + 1)))
    assert not looks_like_identifier(pd.Series(np.random.default_rng(4).normal(size=n)))
    assert not looks_like_identifier(pd.Series(["a", "b"] * 100))
    assert looks_like_dates(pd.Series(["2013-01-05", "2014-12-31 06:12:00", None] * 10))
    assert looks_like_dates(pd.Series(pd.date_range("2020-01-01", periods=30)))
    assert not looks_like_dates(pd.Series(["Low", "Medium", "High"] * 10))
    assert not looks_like_dates(pd.Series(["(F3)", "(M1)", "0<=X<200"] * 10))


# --------------------------------------------------------------------------- the screen


def test_compas_defaults_leave_out_the_outcome_identifiers_and_dates() -> None:
    screen = default_model_features(compas_like_frame(), "two_year_recid")
    reasons = {item.column: item.reason for item in screen.left_out}
    assert {c for c, r in reasons.items() if r == "leak"} == COMPAS_LEAKS
    assert reasons["event"] == "leak" and screen.auc["event"] == pytest.approx(1.0)
    assert screen.auc["is_recid"] < LEAK_AUC  # caught by confinement, not by its AUC
    assert {"id", "name", "c_case_number", "r_case_number"} <= {
        c for c, r in reasons.items() if r == "identifier"}
    assert {"dob", "c_jail_in", "r_offense_date", "screening_date"} <= {
        c for c, r in reasons.items() if r == "date"}
    assert {"sex", "age", "race", "priors_count", "juv_fel_count", "c_charge_degree",
            "decile_score"} <= set(screen.kept)
    assert not set(screen.kept) & set(reasons)
    event = next(item for item in screen.left_out if item.column == "event")
    assert "single-feature AUC 1.000" in event.sentence and "Left out" in event.sentence
    recid = next(item for item in screen.left_out if item.column == "is_recid")
    assert "'1'" in recid.sentence and "8% of the other rows" in recid.sentence


@pytest.mark.parametrize("frame, label", [
    (german_credit_like_frame(), "class"),
    (compas_like_frame()[["sex", "age", "race", "priors_count", "c_charge_degree",
                          "juv_fel_count", "decile_score", "two_year_recid"]],
     "two_year_recid"),
])
def test_tables_without_leaks_keep_every_usable_column(frame, label) -> None:
    screen = default_model_features(frame, label)
    assert screen.leaks() == ()
    assert set(screen.kept) == set(frame.columns) - {label}


def test_training_on_the_defaults_audits_a_model_that_did_not_see_the_outcome() -> None:
    result = train_reference_model(compas_like_frame(), "two_year_recid",
                                   model="random_forest_default")
    assert not set(result.features) & COMPAS_LEAKS and result.warnings == ()
    assert "No model feature separates 'two_year_recid' by itself" in result.notes[-1]
    test = result.frame[result.frame["split"] == "test"]
    # the outcome columns gave AUC 0.999; the paper's features about 0.74 (SE about 0.01)
    assert roc_auc_score(test["two_year_recid"], test["p_1"]) < 0.8


def test_a_leak_chosen_anyway_trains_with_a_warning_that_names_it() -> None:
    result = train_reference_model(compas_like_frame(), "two_year_recid",
                                   ["age", "priors_count", "event", "name"], seed=3)
    assert len(result.warnings) == 2
    assert result.warnings[0].startswith("Model feature 'event' by itself separates "
                                         "'two_year_recid' almost perfectly (single-feature "
                                         "AUC 1.000")
    assert "trained on it anyway" in result.warnings[0]
    assert "'name' differs in every row" in result.warnings[1]


def test_screen_without_labels_and_bad_labels() -> None:
    frame = compas_like_frame()
    screen = screen_features(frame.loc[:, ~frame.columns.duplicated()], "two_year_recid")
    assert "event" in screen.kept and screen.auc == {}  # no labels: no leakage rule
    broken = frame[["age", "sex"]].assign(y=[None] * len(frame))
    with pytest.raises(DataError, match="Label column 'y' is empty"):
        default_model_features(broken, "y")
    with pytest.raises(DataError, match="Column 'outcome' \\(label\\) is not in the table"):
        default_model_features(frame, "outcome")


def test_confinement_needs_enough_rows_of_the_class() -> None:
    """Thirty rows of a class all inside a region that ≤ 10% of the others reach would happen
    by chance with probability at most 0.9³⁰ ≈ 0.04; fewer rows never count."""
    rng = np.random.default_rng(5)
    y = np.r_[np.ones(20, dtype=int), np.zeros(500, dtype=int)]
    rare = pd.Series(np.where(y == 1, "x", rng.choice(["x", "y"], 520, p=[0.05, 0.95])))
    assert confined_share(rare, y) == (1.0, None)
    assert CONFINED_SHARE == 0.10
