"""The leakage screen of the reference-model workflow (issues 20 and 29): columns that separate
the label by themselves (certain), that likely hold it (a name recorded after the outcome, a
strong AUC beyond doubt, a field filled in for one class only), identifiers of every type,
dates and other models' scores are left out of the default model features, each with a
sentence; chosen anyway, they train with a warning naming the column; a model that reads the
outcome as a whole is named by the whole-model check."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from core.data.column_kinds import after_outcome_name, looks_like_dates, looks_like_identifier
from core.data.leakage import CONFINED_SHARE, LEAK_AUC, LIKELY_AUC, screen_features
from core.data.leakage_statistics import (
    auc_lower_bound,
    confined_share,
    hanley_mcneil_se,
    one_class_presence,
    single_feature_auc,
)
from core.data.problems import DataError
from core.data.reference_model import default_model_features, train_reference_model
from tests.realdata_tables import compas_like_frame, german_credit_like_frame

#: Columns of the COMPAS-shaped table that certainly are the outcome in another form ...
COMPAS_LEAKS = {"is_recid", "r_charge_degree", "r_days_from_arrest", "r_charge_desc"}
#: ... and those that likely are, or are recorded after it (issue 29: the real file's traps).
COMPAS_SUSPECTS = {"event", "end", "is_violent_recid", "vr_charge_degree", "vr_charge_desc"}
#: COMPAS's own scores.
COMPAS_SCORES = {"decile_score", "score_text", "v_decile_score", "v_score_text"}


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


def test_the_compas_stand_in_carries_the_real_files_traps() -> None:
    """The single-feature AUCs against two_year_recid on all rows of ProPublica's file
    (issue 29) within ±0.05, a numeric id with gaps, 7,158 names in 7,214 rows, the scores."""
    frame = compas_like_frame()
    y = frame["two_year_recid"].to_numpy()
    assert len(frame) == 7_214 and abs(y.mean() - 0.451) < 0.02  # 45.1% reoffended
    real = {"event": 0.884, "end": 0.928, "is_violent_recid": 0.61, "vr_charge_degree": 0.61,
            "name": 0.478}
    for column, auc in real.items():
        assert abs(single_feature_auc(frame[column], y) - auc) <= 0.05, column
    assert single_feature_auc(frame["is_recid"], y) >= 0.96
    assert abs((frame["event"].to_numpy() == y).mean() - 0.89) < 0.02  # equal in 89% of rows
    ids = frame["id"].to_numpy()
    assert ids[:2].tolist() == [1, 2] or ids[1] > 2  # starts at 1
    assert np.all(np.diff(ids) > 0) and ids[-1] > len(frame)  # unique, increasing, with gaps
    assert frame["name"].nunique() == 7_158
    for column in COMPAS_SCORES:
        assert column in frame.columns


def test_compas_defaults_grade_the_evidence_and_leave_out_every_trap() -> None:
    screen = default_model_features(compas_like_frame(), "two_year_recid")
    reasons = {item.column: item.reason for item in screen.left_out}
    assert {c for c, r in reasons.items() if r == "leak"} == COMPAS_LEAKS
    assert {c for c, r in reasons.items() if r == "suspect"} == COMPAS_SUSPECTS
    assert {c for c, r in reasons.items() if r == "score"} == COMPAS_SCORES
    assert screen.auc["is_recid"] < LEAK_AUC  # caught by confinement, not by its AUC
    # identifiers of every type, the first reason that applies speaking: 'name' is no leak
    assert {"id", "name", "c_case_number", "r_case_number"} <= {
        c for c, r in reasons.items() if r == "identifier"}
    assert {"dob", "c_jail_in", "r_offense_date", "screening_date"} <= {
        c for c, r in reasons.items() if r == "date"}
    assert {"sex", "age", "race", "priors_count", "juv_fel_count", "c_charge_degree"} <= \
        set(screen.kept)
    assert not set(screen.kept) & set(reasons)
    by_column = {item.column: item for item in screen.left_out}
    assert by_column["event"].grade == "likely" and by_column["is_recid"].grade == "certain"
    assert by_column["id"].grade is None
    assert "named like information recorded when or after the outcome" in \
        by_column["end"].sentence
    assert "shares the word 'recid'" in by_column["is_violent_recid"].sentence
    assert "takes 7,158 different values in 7,214 rows: an identifier" in \
        by_column["name"].sentence
    assert "another model's output" in by_column["decile_score"].sentence
    recid = by_column["is_recid"]
    assert "'1'" in recid.sentence and "of the other rows" in recid.sentence


def test_likely_rules_one_by_one() -> None:
    label = "two_year_recid"
    for column in ("event", "end", "outcome", "days_to_arrest", "paid_after", "jail_out",
                   "r_charge_degree", "vr_offense", "is_violent_recid", "followUp"):
        assert after_outcome_name(column, label), column
    for column in ("age", "priors_count", "start", "sex", "c_charge_degree", "days_b_arrest",
                   "juv_fel_count", "event_count_before"):
        assert after_outcome_name(column, label) is None, column
    # r_ / vr_ columns speak only beside a label about recidivism; a shared word always
    assert after_outcome_name("r_score", "defaulted") is None
    assert after_outcome_name("default_date", "defaulted") is None  # 'default' ≠ 'defaulted'
    assert after_outcome_name("loan_defaulted_amount", "defaulted")
    # a field filled in (almost) only for one class, beyond doubt
    rng = np.random.default_rng(6)
    y = (rng.random(3000) < 0.45).astype(int)
    only_positive = pd.Series(np.where(rng.random(3000) < np.where(y == 1, 0.24, 0.01), 1.0,
                                       np.nan))
    share, which, present = one_class_presence(only_positive, y)
    assert which == 1 and present and share > 0.9
    mixed = pd.Series(np.where(rng.random(3000) < 0.2, 1.0, np.nan))
    assert one_class_presence(mixed, y)[1] is None


def test_the_strong_auc_rule_is_a_one_sided_test_at_5_percent() -> None:
    """Hanley & McNeil's SE matches the simulated spread of the AUC; the lower bound flags a
    legitimate column at AUC 0.85 in about 5% of training parts (bounded repetitions:
    300 parts, 5% ± 3 SE = ± 0.038)."""
    rng = np.random.default_rng(7)
    shift = np.sqrt(2.0) * 1.0364333894937898  # binormal AUC Φ(d/√2) = 0.85
    aucs, flags = [], []
    for _ in range(300):
        y = (rng.random(300) < 0.45).astype(int)
        x = pd.Series(rng.normal(size=300) + shift * y)
        auc = single_feature_auc(x, y)
        aucs.append(auc)
        flags.append(auc_lower_bound(auc, y) >= LIKELY_AUC)
    se = hanley_mcneil_se(0.85, 135, 165)
    assert abs(np.std(aucs) / se - 1) < 0.2  # the SD of 300 draws is within ±12% (2 SE)
    rate = np.mean(flags)
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 300)


def test_identifiers_of_every_type() -> None:
    n = 400
    rng = np.random.default_rng(8)
    ids = np.sort(rng.choice(np.arange(1, 3 * n), n, replace=False))
    assert looks_like_identifier(pd.Series(ids, name="id"))  # increasing with gaps
    assert looks_like_identifier(pd.Series(rng.permutation(ids), name="client_id"))  # a key
    # a unique whole-number measurement in no order is not one
    assert not looks_like_identifier(pd.Series(rng.permutation(ids), name="amount"))
    names = pd.Series([f"person {i}" for i in range(n)])
    names[:10] = names[10:20].to_numpy()  # 390 distinct of 400: near-unique
    assert looks_like_identifier(names)
    assert not looks_like_identifier(pd.Series(rng.choice([f"l{i}" for i in range(300)], n)))


def test_a_near_unique_text_column_is_never_a_leak() -> None:
    """Confinement of a text column with more than 50 levels reads only presence: a name
    confines its one row, which said nothing (issue 29: 'name' reported as a leak)."""
    rng = np.random.default_rng(9)
    y = (rng.random(1000) < 0.45).astype(int)
    names = pd.Series([f"p{i}" for i in range(1000)])
    assert confined_share(names, y)[0] == 1.0
    filled_for_positives = pd.Series(np.where(y == 1, [f"c{i}" for i in range(1000)], None))
    assert confined_share(filled_for_positives, y)[0] == 0.0


@pytest.mark.parametrize("frame, label", [
    (german_credit_like_frame(), "class"),
    (compas_like_frame()[["sex", "age", "race", "priors_count", "c_charge_degree",
                          "juv_fel_count", "two_year_recid"]],
     "two_year_recid"),
])
def test_tables_without_leaks_keep_every_usable_column(frame, label) -> None:
    screen = default_model_features(frame, label)
    assert screen.leaks() == () and screen.suspects() == ()
    assert set(screen.kept) == set(frame.columns) - {label}


def test_training_on_the_defaults_audits_a_model_that_did_not_see_the_outcome() -> None:
    result = train_reference_model(compas_like_frame(), "two_year_recid",
                                   model="random_forest_default")
    assert not set(result.features) & (COMPAS_LEAKS | COMPAS_SUSPECTS | COMPAS_SCORES)
    assert result.warnings == () and result.check.warning is None
    assert "No model feature separates 'two_year_recid' by itself" in result.notes[-1]
    test = result.frame[result.frame["split"] == "test"]
    # the outcome columns gave AUC 0.999; the paper's features about 0.7 (SE about 0.01)
    assert roc_auc_score(test["two_year_recid"], test["p_1"]) < 0.8


def test_a_leak_chosen_anyway_trains_with_a_warning_that_names_it() -> None:
    result = train_reference_model(compas_like_frame(), "two_year_recid",
                                   ["age", "priors_count", "is_recid", "event", "name"], seed=3)
    assert len(result.warnings) == 4  # three columns and the whole model
    assert result.warnings[0].startswith("Model feature 'is_recid' takes, in every training "
                                         "row where 'two_year_recid' is '1'")
    assert "trained on it anyway" in result.warnings[0]
    assert result.warnings[1].startswith("Model feature 'event' is named like information "
                                         "recorded when or after the outcome")
    assert "'name' takes 7,158 different values" in result.warnings[2]


def test_the_whole_model_check_names_the_columns_that_carry_the_outcome() -> None:
    """With 'event' and 'end' added by hand the forest reaches a test AUC far above the same
    model without them; their removal lowers the AUC on the calibration rows most."""
    from core.data.outcome_check import AUC_MARGIN

    frame = compas_like_frame()
    features = ["sex", "age", "race", "priors_count", "juv_fel_count", "event", "end"]
    result = train_reference_model(frame, "two_year_recid", features)
    check = result.check
    assert check.flagged == ("event", "end")
    assert check.test_auc - check.baseline_auc >= AUC_MARGIN
    assert check.importance[0][0] in ("event", "end")
    assert check.warning in result.warnings
    assert "without 'event', 'end'" in check.warning and "Removing 'e" in check.warning


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


def test_a_model_too_good_to_be_true_is_named_even_without_a_flagged_column() -> None:
    """Five columns of AUC ≈ 0.8 each pass the screen; together they separate the label
    (test AUC > 0.95): the check says so and names the columns that carry it most."""
    from core.data.outcome_check import HIGH_AUC

    rng = np.random.default_rng(10)
    n = 1_500
    y = (rng.random(n) < 0.45).astype(int)
    frame = pd.DataFrame({f"x{k}": rng.normal(size=n) + 1.2 * y for k in range(5)})
    frame["y"] = y
    screen = default_model_features(frame, "y")
    assert set(screen.kept) == {f"x{k}" for k in range(5)} and not screen.flagged()
    result = train_reference_model(frame, "y", model="logistic")
    assert result.check.test_auc >= HIGH_AUC and result.check.baseline_auc is None
    assert "higher than real prediction problems of this kind usually allow" in \
        result.check.warning
    assert len(result.check.importance) == 5 and "Removing 'x" in result.check.warning
