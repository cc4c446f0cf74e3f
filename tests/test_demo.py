"""Tests of the embedded demo datasets (core.data.demo).

Statistical claims are checked with z-scores whose standard errors are written next to each
test; the demos have fixed seeds, so every check is deterministic, and the thresholds are
chosen so that the claim would hold for almost every seed, not just this one.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, softmax

from core.data import census_demo, demo, ensemble_demo, land_cover_demo
from core.data.audit_data import AuditData
from core.data.mapping import ColumnMapping
from core.stattests.goodness_of_fit import hosmer_lemeshow
from core.stattests.skce import skce_test

EXPECTED_SHAPES = {
    "census": (10_000, 11),
    "itrustworthy": (2_000, 7),
    "multiclass": (6_000, 14),
    "ensemble": (3_000, 9),
    "census-stream": (36_000, 11),
}
AGE_BANDS = [17, 29, 44, 59, 90]  # (17, 29] = 18–29, 30–44, 45–59, 60–90
AGE_BAND_NAMES = ["18-29", "30-44", "45-59", "60-90"]


@pytest.fixture(scope="module")
def frames() -> dict[str, pd.DataFrame]:
    return {key: demo.demo_frame(key) for key in demo.DEMOS}


def binned_ece(p: np.ndarray, y: np.ndarray, n_bins: int = 15) -> float:
    """Equal-width binned ECE: Σ_b (n_b/n)·|mean(p in b) − mean(y in b)|, p = 1 in the last bin."""
    bins = np.minimum((p * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in np.unique(bins):
        inside = bins == b
        total += inside.mean() * abs(p[inside].mean() - y[inside].mean())
    return total


def residual_z(y: np.ndarray, p: np.ndarray) -> float:
    """z of the mean residual under calibration.

    If y_i ~ Bernoulli(p_i) independently, mean(y − p) has mean 0 and standard error
    SE = sqrt(Σ p_i(1 − p_i)) / n, so z = Σ(y_i − p_i) / sqrt(Σ p_i(1 − p_i)).
    """
    return float(np.sum(y - p) / np.sqrt(np.sum(p * (1.0 - p))))


# --------------------------------------------------------------------------- registry


def test_registry_lists_five_demos_with_descriptions():
    assert list(demo.DEMOS) == ["census", "itrustworthy", "multiclass", "ensemble",
                                "census-stream"]
    assert demo.DEFAULT_DEMO == "census"
    for key, spec in demo.DEMOS.items():
        assert spec.key == key
        # a short description without spoilers (2-4 sentences); what was planted apart
        assert spec.title and 150 < len(spec.description) < 700
        assert 2 <= spec.description.count(". ") + 1 <= 4, key
        assert "planted" not in spec.description and len(spec.planted) > 300
        assert "\n" not in spec.description and "\n" not in spec.planted  # one paragraph


def test_unknown_key_lists_the_known_keys():
    for call in (demo.demo_frame, demo.demo_mapping, demo.load_demo):
        with pytest.raises(ValueError) as info:
            call("no-such-demo")
        for key in demo.DEMOS:
            assert key in str(info.value)


@pytest.mark.parametrize("key", list(demo.DEMOS))
def test_demo_has_documented_shape_and_plain_dtypes(frames, key):
    frame = frames[key]
    assert frame.shape == EXPECTED_SHAPES[key]
    assert not frame.isna().to_numpy().any()
    for column, dtype in frame.dtypes.items():
        is_text = pd.api.types.is_string_dtype(dtype) and not isinstance(
            dtype, pd.CategoricalDtype
        )
        assert dtype in (np.dtype("int64"), np.dtype("float64")) or is_text, (column, dtype)
    assert isinstance(frame.index, pd.RangeIndex)


@pytest.mark.parametrize("key", list(demo.DEMOS))
def test_demo_is_reproducible_byte_for_byte(frames, key):
    again = demo.demo_frame(key)
    pd.testing.assert_frame_equal(frames[key], again, check_exact=True)
    first = pd.util.hash_pandas_object(frames[key], index=True).to_numpy()
    second = pd.util.hash_pandas_object(again, index=True).to_numpy()
    assert np.array_equal(first, second)


@pytest.mark.parametrize("key", list(demo.DEMOS))
def test_demo_is_fast(key):
    """The demo is built in under 3 s of this process's CPU time (CPU, not wall time: other
    work on the machine does not count against it)."""
    start = time.process_time()
    demo.load_demo(key)
    assert time.process_time() - start < 3.0


@pytest.mark.parametrize("key", list(demo.DEMOS))
def test_load_demo_builds_the_audit_container(frames, key):
    data = demo.load_demo(key)
    spec, mapping = demo.DEMOS[key], demo.demo_mapping(key)
    assert isinstance(data, AuditData) and isinstance(mapping, ColumnMapping)
    assert data.name == spec.title and data.description == spec.description
    assert data.n == len(frames[key])
    assert data.probs.shape == (data.n, data.n_classes)
    np.testing.assert_allclose(data.probs.sum(axis=1), 1.0, atol=1e-12)
    assert not any(note.level == "warning" for note in data.report)
    if mapping.split:
        assert sorted(set(data.split)) == ["calibration", "test"]
        counts = pd.Series(data.split).value_counts()
        assert abs(counts["calibration"] - counts["test"]) <= 1


# --------------------------------------------------------------------------- itrustworthy


def test_itrustworthy_generator_follows_the_paper():
    frame = demo.itrustworthy_simulation(n=500, d=7, seed=3)
    assert list(frame.columns) == [f"x{i}" for i in range(1, 8)] + ["y", "p"]
    x = frame[[f"x{i}" for i in range(1, 8)]].to_numpy()
    np.testing.assert_array_equal(frame["p"].to_numpy(), expit(x[:, :-1].sum(axis=1)))
    assert set(frame["y"].unique()) <= {0, 1}
    pd.testing.assert_frame_equal(frame, demo.itrustworthy_simulation(n=500, d=7, seed=3))
    assert not frame.equals(demo.itrustworthy_simulation(n=500, d=7, seed=4))
    with pytest.raises(ValueError):
        demo.itrustworthy_simulation(n=10, d=1)


def test_itrustworthy_demo_mapping():
    data = demo.load_demo("itrustworthy")
    assert data.is_binary and data.classes == ("0", "1")
    assert data.feature_names == ("x1", "x2", "x3", "x4", "x5")
    assert data.split is None and data.members is None


def test_itrustworthy_residual_tracks_x5_but_not_x1(frames):
    # c_j = mean(r·x_j), r = y − p, estimates Cov(r, x_j) (E x_j = 0, E r = 0); its standard
    # error is SE_j = sd(r·x_j)/sqrt(n). Population values by Stein's lemma (see
    # itrustworthy_simulation): Cov(r, x5) = E σ'(N(0,5)) = 0.1412,
    # Cov(r, x1) = E σ'(N(0,5)) − E σ'(N(0,4)) = −0.0102.
    frame = frames["itrustworthy"]
    r = (frame["y"] - frame["p"]).to_numpy()
    n = len(frame)
    stats = {}
    for column in ("x1", "x5"):
        products = r * frame[column].to_numpy()
        stats[column] = (products.mean(), products.std(ddof=1) / np.sqrt(n))
    c5, se5 = stats["x5"]
    c1, se1 = stats["x1"]
    assert c5 / se5 > 8  # strongly correlated (observed z ≈ 14)
    assert abs(c1 / se1) < 3  # indistinguishable from 0 at n = 2,000 (observed z ≈ 1)
    assert abs(c5 - 0.1412) < 4 * se5
    assert abs(c1 - (-0.0102)) < 4 * se1


# --------------------------------------------------------------------------- census


def test_census_columns_and_population(frames):
    frame = frames["census"]
    assert list(frame.columns) == [
        "age", "sex", "race", "income", "education", "hours", "region", "defaulted",
        "p_default", "split", "p_challenger",
    ]
    assert frame["age"].between(18, 90).all()
    assert frame["income"].gt(0).all()
    assert frame["education"].between(8, 21).all()
    assert frame["hours"].between(8, 80).all()
    assert set(frame["sex"]) == {"Female", "Male"}
    shares = frame["race"].value_counts(normalize=True)
    assert set(shares.index) == set(census_demo.CENSUS_RACES)
    assert shares["White"] > 0.5 > shares["Hispanic"] > shares["Black"] > shares["Asian"]
    assert set(frame["region"]) == set(census_demo.CENSUS_REGIONS)
    assert frame["p_default"].between(0, 1, inclusive="neither").all()
    assert 0.20 < frame["defaulted"].mean() < 0.40


def test_census_mapping():
    mapping = demo.demo_mapping("census")
    assert mapping.label == "defaulted" and mapping.probs == ("p_default",)
    assert mapping.features == ("age", "sex", "race")  # demographics, as in the COMPAS audit
    assert mapping.groups == ("sex", "race") and mapping.split == "split"
    assert mapping.models == (("p_challenger", ("p_challenger",)),)
    assert mapping.model_names == ("p_default", "p_challenger")


def test_census_model_looks_calibrated_globally(frames):
    test = frames["census"].query("split == 'test'")
    p, y = test["p_default"].to_numpy(), test["defaulted"].to_numpy()
    # Observed ECE ≈ 0.011; the ECE of a perfectly calibrated model at n = 5,000 with 15 bins
    # is itself ≈ 0.01, so 0.03 leaves room for sampling noise only.
    assert binned_ece(p, y) < 0.03
    # Calibration in the large. Out of sample, mean(y − p) varies through the test labels
    # (SE = sqrt(Σ p(1−p))/n ≈ 0.0065 at n = 5,000) and, less, through the intercept fitted on
    # 30,000 training rows (SE ≈ 0.0027): 3 SE of the sum ≈ 0.021 (observed here: 0.0037).
    assert abs(p.mean() - y.mean()) < 0.021
    # The global tests the demo description promises do not reject at 0.05.
    assert skce_test(p, y, n_resamples=300, seed=0).p_value > 0.05
    assert hosmer_lemeshow(p, y).p_value > 0.05


def test_census_model_fails_locally_in_race_by_age_cells(frames):
    frame = frames["census"]
    band = pd.cut(frame["age"], AGE_BANDS, labels=AGE_BAND_NAMES)
    cells = pd.DataFrame({
        "race": frame["race"], "band": band,
        "y": frame["defaulted"], "p": frame["p_default"],
    }).groupby(["race", "band"], observed=True)
    z = {}
    for key, cell in cells:
        if len(cell) >= 200:
            # z = Σ(y − p)/sqrt(Σ p(1 − p)): mean residual over its binomial SE (residual_z).
            z[key] = residual_z(cell["y"].to_numpy(), cell["p"].to_numpy())
    flagged = {key for key, value in z.items() if abs(value) > 4}
    assert len(flagged) >= 2, z
    # The planted interaction: risk underestimated for Black applicants aged 60+ and Hispanic
    # applicants under 30 (observed z ≈ 14 and 8 over both splits); overestimated for Black
    # applicants aged 30–44 (z ≈ −8), whose race effect the model averages with the older ages.
    assert z[("Black", "60-90")] > 4 and z[("Hispanic", "18-29")] > 4
    assert z[("Black", "30-44")] < -4
    # The majority group, whose age shape the model can follow, shows nothing.
    assert all(abs(value) < 3 for (race, _), value in z.items() if race == "White")


def test_census_training_rows_are_not_in_the_table(frames):
    # The model is fitted on 30,000 people generated before the 10,000 audit rows.
    frame = frames["census"]
    assert len(frame) == census_demo.CENSUS_N_AUDIT
    people, _ = census_demo.census_people(
        census_demo.CENSUS_N_TRAIN + census_demo.CENSUS_N_AUDIT,
        np.random.default_rng(census_demo.CENSUS_SEED),
    )
    audit = people.iloc[census_demo.CENSUS_N_TRAIN:].reset_index(drop=True)
    pd.testing.assert_frame_equal(frame[audit.columns], audit)


# --------------------------------------------------------------------------- multiclass


def test_multiclass_columns_and_labels(frames):
    frame = frames["multiclass"]
    prob_columns = [f"p_{c}" for c in land_cover_demo.LAND_COVER]
    assert list(frame.columns) == [
        *land_cover_demo.LAND_FEATURES, "site", "land_cover", *prob_columns, "split",
    ]
    assert set(frame["land_cover"]) == set(land_cover_demo.LAND_COVER)
    assert set(frame["site"]) == set(land_cover_demo.SITES)
    np.testing.assert_allclose(frame[prob_columns].sum(axis=1), 1.0, atol=1e-12)
    data = demo.load_demo("multiclass")
    assert data.classes == land_cover_demo.LAND_COVER
    assert data.feature_names == land_cover_demo.LAND_FEATURES
    assert list(data.groups.columns) == ["site"]
    expected = frame["land_cover"].map({c: i for i, c in enumerate(land_cover_demo.LAND_COVER)})
    np.testing.assert_array_equal(data.y, expected.to_numpy())


def test_multiclass_model_is_overconfident(frames):
    frame = frames["multiclass"]
    probs = frame[[f"p_{c}" for c in land_cover_demo.LAND_COVER]].to_numpy()
    y = frame["land_cover"].map({c: i for i, c in enumerate(land_cover_demo.LAND_COVER)}).to_numpy()
    confidence = probs.max(axis=1).mean()
    correct = probs.argmax(axis=1) == y
    accuracy = correct.mean()
    # SE of the accuracy (a binomial proportion) = sqrt(acc(1 − acc)/n) ≈ 0.005; the gap must
    # exceed 0.05 even after subtracting 4 SE (observed: confidence 0.90, accuracy 0.79).
    se = np.sqrt(accuracy * (1 - accuracy) / len(y))
    assert confidence - accuracy - 4 * se >= 0.05
    # Undoing the sharpening (temperature T = 2.5 on log p) removes the gap to within noise.
    unsharpened = softmax(np.log(probs) / land_cover_demo.LAND_SHARPEN, axis=1)
    gap = unsharpened.max(axis=1).mean() - (unsharpened.argmax(axis=1) == y).mean()
    assert abs(gap) < 4 * se


# --------------------------------------------------------------------------- ensemble


def test_ensemble_columns_and_mapping(frames):
    frame = frames["ensemble"]
    members = [f"member_{k}" for k in range(1, 6)]
    assert list(frame.columns) == ["x", "y", *members, "p_mean", "split"]
    np.testing.assert_allclose(frame["p_mean"], frame[members].mean(axis=1), atol=1e-15)
    assert frame["x"].between(0, 5).all()
    assert frame[members].ge(0.03 - 1e-12).all().all() and frame[members].le(0.97).all().all()
    mapping = demo.demo_mapping("ensemble")
    assert mapping.probs == ("p_mean",)
    assert mapping.members == tuple((m,) for m in members)
    data = demo.load_demo("ensemble")
    assert data.members.shape == (3_000, 5, 2)
    np.testing.assert_allclose(data.members[:, :, 1], frame[members].to_numpy())


def test_ensemble_truth_is_a_calibrated_member_combination(frames):
    full = ensemble_demo.ensemble_simulation(include_truth=True)
    pd.testing.assert_frame_equal(full[frames["ensemble"].columns], frames["ensemble"])
    members = full[[f"member_{k}" for k in range(1, 6)]].to_numpy()
    weights = full[[f"weight_{k}" for k in range(1, 6)]].to_numpy()
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(full["p_true"], np.sum(weights * members, axis=1), atol=1e-15)
    assert (full["p_true"] >= members.min(axis=1)).all()
    assert (full["p_true"] <= members.max(axis=1)).all()
    # Weights vary with x: each member dominates somewhere.
    assert set(weights.argmax(axis=1)) == set(range(5))
    # y ~ Bernoulli(p_true): in every tenth of the x range |z| < 4, z as in residual_z.
    bins = np.minimum((full["x"].to_numpy() / 0.5).astype(int), 9)
    y, truth = full["y"].to_numpy(), full["p_true"].to_numpy()
    for b in range(10):
        assert abs(residual_z(y[bins == b], truth[bins == b])) < 4


def test_ensemble_mean_is_right_on_average_but_locally_miscalibrated(frames):
    frame = frames["ensemble"]
    y, p = frame["y"].to_numpy(), frame["p_mean"].to_numpy()
    assert abs(residual_z(y, p)) < 3  # calibration in the large, z as in residual_z
    bins = np.minimum((frame["x"].to_numpy() / 0.5).astype(int), 9)
    z = [residual_z(y[bins == b], p[bins == b]) for b in range(10)]
    assert sum(abs(value) > 4 for value in z) >= 2, z  # observed: 6 of 10, up to |z| = 17
