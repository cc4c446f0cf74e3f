"""core.compare: paired tests of two models on the same rows; the data layer's several
prediction sets; the census demo's challenger; the compare command and its report.

Monte-Carlo checks state their tolerance from the binomial standard error
SE = √(r(1 − r)/R) of a rejection rate r over R data sets, at 3 SE (a false alarm about
once in 700 runs); the long studies are ``benchmarks/compare_study.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core import cli
from core.compare import CRITERIA, compare_audit, compare_models, diebold_mariano
from core.compare.simulate import better_pair, exchangeable_pair, sharpness_pair, worse_pair
from core.compare.slices import slice_differences, slice_family
from core.data import AuditData, DataError, guess_columns, load_demo
from core.report.comparison import comparison_html

ALPHA = 0.05


def binomial_band(rate: float, reps: int, k: float = 3.0) -> float:
    """k binomial standard errors √(r(1 − r)/R) of a rate r over R repetitions."""
    return k * float(np.sqrt(rate * (1 - rate) / reps))


@pytest.fixture(scope="module")
def census():
    return load_demo("census")


@pytest.fixture(scope="module")
def demo_result(census):
    return compare_audit(census, "p_challenger", n_resamples=100)


# --------------------------------------------------------------------------- paired tests


def test_paired_brier_difference_and_variance_equal_numpy() -> None:
    rng = np.random.default_rng(0)
    n = 3_000
    y = (rng.random(n) < 0.3).astype(int)
    pa, pb = rng.uniform(0.01, 0.99, n), rng.uniform(0.01, 0.99, n)
    result = compare_models(y, {"A": pa, "B": pb}, criteria=("brier",))
    row = result.table.set_index("criterion").loc["brier"]
    d = (pb - y) ** 2 - (pa - y) ** 2  # the direct computation
    mean, variance = d.sum() / n, ((d - d.sum() / n) ** 2).sum() / (n - 1)
    assert abs(row["difference"] - mean) <= 1e-12
    assert abs(row["variance"] - variance) <= 1e-12
    assert abs(row["std_error"] - np.sqrt(variance / n)) <= 1e-12
    z = 1.959963984540054
    assert abs(row["ci_low"] - (mean - z * np.sqrt(variance / n))) <= 1e-12
    from scipy.stats import norm
    assert abs(row["p_value"] - 2 * norm.sf(abs(mean) / np.sqrt(variance / n))) <= 1e-12


def test_log_loss_difference_is_clipped_and_multiclass_brier_is_brier_form() -> None:
    y = np.array([0, 1, 2, 0, 1] * 10)
    pa = np.tile([[0.8, 0.1, 0.1], [0.2, 0.6, 0.2], [0.1, 0.1, 0.8], [0.5, 0.25, 0.25],
                  [0.3, 0.4, 0.3]], (10, 1))
    pb = np.tile([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0],
                  [0.3, 0.4, 0.3]], (10, 1))
    table = compare_models(y, {"A": pa, "B": pb}, criteria=("brier", "log_loss")
                           ).table.set_index("criterion")
    onehot = np.eye(3)[y]
    expected = (((pb - onehot) ** 2).sum(1) - ((pa - onehot) ** 2).sum(1)).mean()
    assert table.loc["brier", "difference"] == pytest.approx(expected, abs=1e-12)
    assert np.isfinite(table.loc["log_loss", "value_b"])  # p = 0 on the true class: clipped
    assert table.loc["log_loss", "value_b"] == pytest.approx(
        (-np.log(1e-15) * 10 - np.log(0.4) * 10) / 50, rel=1e-9)  # one row in five: p = 0


def test_identical_models_differ_by_nothing() -> None:
    y, models, X, groups = exchangeable_pair(300, seed=1)
    result = compare_models(y, {"A": models["A"], "B": models["A"].copy()}, X, groups=groups,
                            n_resamples=20)
    assert np.allclose(result.table["difference"], 0.0, atol=1e-15)
    assert (result.table["p_value"] == 1.0).all()
    assert not result.worse() and result.worse_slices().empty


def test_diebold_mariano_level_on_exchangeable_models() -> None:
    """Bounded version of the level study: R = 200 data sets of n = 1,000 rows; the rejection
    rate of each paired score test at α = 0.05 lies within 0.05 ± 3·√(0.05·0.95/200) =
    0.05 ± 0.046."""
    reps, rejected = 200, {"brier": 0, "log_loss": 0}
    for seed in range(reps):
        y, models, _, _ = exchangeable_pair(1_000, seed=seed)
        for criterion in rejected:
            from core.compare.paired import score_rows
            scores = [score_rows(criterion, models[k], y) for k in ("A", "B")]
            rejected[criterion] += diebold_mariano(*scores).p_value <= ALPHA
    for criterion, count in rejected.items():
        assert abs(count / reps - ALPHA) <= binomial_band(ALPHA, reps), (criterion, count)


def test_squared_error_tests_hold_their_level_when_both_models_are_calibrated() -> None:
    """Bounded version of the squared-error level study: R = 240 data sets (n = 300, B = 100),
    half two exchangeable models, half two calibrated models of different sharpness; each
    criterion's rejection rate at α = 0.05 lies within 0.05 ± 3·√(0.05·0.95/240) =
    0.05 ± 0.042 — so neither liberal nor as conservative as the row bootstrap was (0.000 to
    0.012)."""
    reps = 120
    counts = dict.fromkeys(("ece", "smooth_ece", "klce"), 0)
    for make in (exchangeable_pair, sharpness_pair):
        for seed in range(reps):
            y, models, X, _ = make(300, seed)
            table = compare_models(y, models, X, criteria=tuple(counts), n_resamples=100,
                                   seed=seed).table
            for row in table.itertuples():
                counts[row.criterion] += row.p_value <= ALPHA
    for criterion, count in counts.items():
        assert abs(count / (2 * reps) - ALPHA) <= binomial_band(ALPHA, 2 * reps), (
            criterion, count)


def test_squared_error_statistics_are_the_u_statistics_and_agree_with_the_interval() -> None:
    """The ECE² values equal the direct pairs-of-distinct-rows sum per bin (Kumar et al.'s
    debiased squared gap), and p ≤ α exactly when 0 lies outside the bootstrap-t interval
    (up to the resolution 1/(1 + B))."""
    y, models, X, _ = worse_pair(800, seed=2)
    result = compare_models(y, models, X, criteria=("ece", "smooth_ece", "klce"),
                            n_resamples=199, seed=0)
    ece = result.table.set_index("criterion").loc["ece"]
    for key, p in (("value_a", models["A"]), ("value_b", models["B"])):
        b = np.minimum((p * 15).astype(int), 14)  # 15 equal-width bins (p is never on an edge)
        e = y - p
        direct = sum((e[b == k].sum() ** 2 - (e[b == k] ** 2).sum()) / (800 * (np.sum(b == k) - 1))
                     for k in range(15) if np.sum(b == k) >= 2)
        assert ece[key] == pytest.approx(direct, rel=1e-10, abs=1e-15)
    for row in result.table.itertuples():
        outside = row.ci_low > 0 or row.ci_high < 0
        assert outside == (row.p_value <= ALPHA) or abs(row.p_value - ALPHA) <= 1 / 200, row


def test_power_for_a_brier_gap_of_0005_at_n_10000() -> None:
    """R = 20 data sets; the benchmark measures the power (≥ 0.8 required). Here at least
    0.8 − 3·√(0.8·0.2/20) = 0.53 of them must detect the better challenger."""
    reps, detected = 20, 0
    for seed in range(reps):
        y, models, _, _ = better_pair(10_000, seed=seed)
        row = compare_models(y, models, criteria=("brier",)).table.iloc[0]
        detected += row.p_value <= ALPHA and row.difference < 0
    assert detected / reps >= 0.8 - binomial_band(0.8, reps)


def test_slice_family_wise_error_is_bounded() -> None:
    """Max-|T| over overlapping slices and both slice criteria of null differences (R = 60
    data sets, 2 group attributes and one feature): any slice flagged, by Brier score or log
    loss, in at most 0.05 + 3·√(0.05·0.95/60) = 0.134 of them."""
    reps, flagged = 60, 0
    for seed in range(reps):
        y, models, X, groups = exchangeable_pair(1_000, seed=seed)
        result = compare_models(y, models, X, groups=groups, criteria=("brier",), seed=seed)
        flagged += bool((result.slices["p_adjusted"] <= ALPHA).any())  # Brier or log loss
    assert flagged / reps <= ALPHA + binomial_band(ALPHA, reps)


def test_slice_statistics_match_a_direct_computation() -> None:
    rng = np.random.default_rng(3)
    n = 400
    groups = pd.DataFrame({"g": rng.choice(["a", "b"], n)})
    compared = slice_family(groups, None, min_rows=10)
    assert sorted(compared.names) == ["g = a", "g = b"] and compared.kinds == ("group", "group")
    sa, sb = rng.random(n), rng.random(n) + 0.1
    table, critical = slice_differences(compared, {"brier": (sa, sb)}, np.zeros(n),
                                        np.zeros(n), 0.05, seed=0)
    mask = groups["g"].to_numpy() == "a"
    d = (sb - sa)[mask]
    row = table.set_index("slice").loc["g = a"]
    assert row["difference"] == pytest.approx(d.mean(), abs=1e-12)
    se = d.std(ddof=1) / np.sqrt(d.size)
    from scipy import stats
    half = stats.t.isf(stats.norm.sf(critical), d.size - 1)  # the critical tail on t's scale
    assert row["ci_high"] - row["difference"] == pytest.approx(half * se, rel=1e-9)
    assert 1.96 < critical < 2.6  # two disjoint slices: between one test and Bonferroni-ish
    assert row["direction"] == "worse"


# --------------------------------------------------------------------------- the demo


def test_demo_challenger_better_globally_worse_for_the_planted_group(demo_result) -> None:
    table = demo_result.table.set_index("criterion")
    assert list(table.index) == list(CRITERIA)
    for criterion in ("brier", "log_loss"):
        assert table.loc[criterion, "difference"] < 0
        assert table.loc[criterion, "p_value"] <= ALPHA
    worse = demo_result.worse_slices()
    assert "race = Asian" in set(worse["slice"])
    asian = demo_result.groups.set_index(["slice", "criterion"]).loc[("race = Asian", "brier")]
    assert asian["direction"] == "worse" and asian["bias_b"] < -0.1  # overestimated risk
    others = demo_result.groups[demo_result.groups["slice"].str.startswith("race = ")
                                & (demo_result.groups["slice"] != "race = Asian")]
    assert not (others["direction"] == "worse").any()
    assert "race = Asian" in demo_result.verdict and "better on Brier score" in \
        demo_result.verdict
    assert demo_result.n == 5_000  # the test split


def test_verdict_says_what_is_not_established() -> None:
    y, models, X, groups = exchangeable_pair(500, seed=4)
    result = compare_models(y, models, X, groups=groups, n_resamples=30)
    assert "Not established" in result.verdict and "does not prove the two equal" in \
        result.verdict
    none = compare_models(y, models, criteria=("brier",))
    assert "no group or slice was compared" in none.verdict


@pytest.mark.parametrize(("models", "message"), [
    ({"A": np.full(50, 0.5)}, "exactly two"),
    ({"A": np.full(50, 0.5), "B": np.full(49, 0.5)}, "same length|rows|length"),
    ({"A": np.full(50, 0.5), "B": np.full((50, 3), 1 / 3)}, "shape"),
])
def test_bad_models_get_a_sentence(models, message) -> None:
    y = np.arange(50) % 2
    with pytest.raises(ValueError, match=message):
        compare_models(y, models)


def test_bad_arguments_get_a_sentence() -> None:
    y, models, X, _ = exchangeable_pair(100, seed=0)
    with pytest.raises(ValueError, match="criteria"):
        compare_models(y, models, criteria=("accuracy",))
    with pytest.raises(ValueError, match="alpha"):
        compare_models(y, models, alpha=1.5)
    with pytest.raises(ValueError, match="features"):
        compare_models(y, models, X[:10])


# --------------------------------------------------------------------------- data layer


def two_model_table(n: int = 200, seed: int = 0) -> pd.DataFrame:
    y, models, X, groups = exchangeable_pair(n, seed=seed)
    return pd.DataFrame({"y": y, "p_prod": models["A"], "p_new": models["B"], "age": X[:, 0],
                         "race": groups["group"]})


def test_audit_data_holds_several_models_and_switches() -> None:
    frame = two_model_table()
    audit = AuditData.from_frame(frame, label="y", prob="p_prod", models={"p_new": "p_new"},
                                 features=["age"], groups=["race"])
    assert audit.model == "p_prod" and audit.model_names == ("p_prod", "p_new")
    other = audit.with_model("p_new")
    np.testing.assert_array_equal(other.probs[:, 1], frame["p_new"])
    assert other.fingerprint != audit.fingerprint and other.model == "p_new"
    assert other.with_model("p_prod").fingerprint == audit.fingerprint
    replaced = audit.with_probs(audit.probs[::-1].copy())
    assert replaced.model_probs["p_prod"] is replaced.probs  # e.g. recalibrated: compared so
    sub = audit.subset(np.arange(10))
    assert sub.model_probs["p_new"].shape == (10, 2)
    with pytest.raises(ValueError, match="Unknown model"):
        audit.with_model("p_old")
    single = AuditData.from_frame(frame, label="y", prob="p_prod")
    assert single.model_names == ("p_prod",)
    # the other prediction sets are part of the fingerprint (cache keys see them)
    assert single.fingerprint != audit.fingerprint


def test_model_columns_are_validated_with_a_sentence() -> None:
    frame = two_model_table()
    frame.loc[3, "p_new"] = 1.7
    with pytest.raises(DataError, match=r"'p_new'.*model 'p_new'.*row"):
        AuditData.from_frame(frame, label="y", prob="p_prod", models={"p_new": "p_new"})
    with pytest.raises(DataError, match="both named"):
        AuditData.from_frame(two_model_table(), label="y", prob="p_prod",
                             models={"p_prod": "p_new"})
    with pytest.raises(DataError, match="one probability column per class"):
        AuditData.from_frame(two_model_table().assign(q=0.5), label="y", prob="p_prod",
                             models={"new": ["p_new", "age", "q"]})


def test_a_table_without_audit_features_splits() -> None:
    frame = two_model_table().assign(split=["calibration", "test"] * 100)
    audit = AuditData.from_frame(frame, label="y", prob="p_prod", split="split")
    assert audit.X.shape == (200, 0) and audit.split_part("test").n == 100


def test_guess_separates_binary_models() -> None:
    guess = guess_columns(two_model_table())
    assert guess.probs == ("p_prod",) and guess.models == ("p_new",)


# --------------------------------------------------------------------------- CLI and report


def test_compare_command_exit_statuses(tmp_path: Path, capsys, census) -> None:
    from core.data import demo_frame
    path = tmp_path / "census.csv"
    demo_frame("census").to_csv(path, index=False)
    base = ["compare", str(path), "--label", "defaulted", "--models", "p_default,p_challenger",
            "--groups", "sex,race", "--split", "split", "--resamples", "30", "--formats", "",
            "--criteria", "brier,log_loss"]
    assert cli.main([*base, "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert "race = Asian" in err and "Brier score: B - A = -" in err
    # the headline (issue 31): better on average, worse for a group
    assert "Do not promote: better on average, worse for" in err
    document = json.loads((tmp_path / "a" / "results.json").read_text())
    assert document["decision"] == "do not promote"
    assert document["champion"] == "p_default" and document["challenger"] == "p_challenger"
    assert (tmp_path / "a" / "tables" / "comparison_slices.csv").is_file()
    assert cli.main([*base, "--fail-on", "worse", "--out", str(tmp_path / "b")]) == 1
    assert "significantly worse" in capsys.readouterr().err
    bad = ["compare", str(path), "--label", "defaulted", "--out", str(tmp_path / "c")]
    assert cli.main([*bad, "--models", "p_default,p_nope"]) == 2
    assert "p_nope" in capsys.readouterr().err
    assert cli.main([*bad, "--models", "p_default,p_challenger,income"]) == 2
    assert "exactly" in capsys.readouterr().err


def test_report_escapes_model_names(demo_result, census) -> None:
    import dataclasses
    import datetime as dt

    from core.compare import CompareSettings
    hostile = dataclasses.replace(demo_result, challenger="<script>x</script>")
    html = comparison_html(hostile, census, CompareSettings("p_challenger"), [], None,
                           dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc))
    assert "<script>x</script>" not in html and "&lt;script&gt;" in html
