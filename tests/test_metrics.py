"""core.metrics and core.metrics.intervals: binned metrics against scikit-learn, hand-computed
cases, Monte-Carlo checks of unbiasedness and coverage, the bootstrap, and input errors."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.calibration import calibration_curve

from core import metrics
from core.metrics.binning import SortedGroups, grouped_sums
from core.metrics.bootstrap import SortedScore
from core.metrics.intervals import binomial_interval, jeffreys_interval, wilson_interval

Z95 = 1.959963984540054


# --------------------------------------------------------------------------- data


def calibrated(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """p ~ U(0, 1), y ~ Bernoulli(p): a perfectly calibrated binary model."""
    p = rng.uniform(size=n)
    return p, (rng.random(n) < p).astype(np.int64)


def random_binary(seed: int = 0, n: int = 3000) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.beta(0.7, 0.9, n)
    return p, (rng.random(n) < p ** 1.3).astype(np.int64)


def edge_binary(seed: int = 1, n: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """Confidences sitting on bin edges: 0, ½, 1, the 15-bin uniform edges, and heavy ties."""
    rng = np.random.default_rng(seed)
    values = np.concatenate([[0.0, 0.5, 1.0, 0.25, 0.75], np.linspace(0.0, 1.0, 16)])
    p = rng.choice(values, size=n)
    p[: n // 4] = 1.0  # a quarter of all rows at exactly 1.0
    p[n // 4: n // 3] = 0.0
    rng.shuffle(p)
    return p, (rng.random(n) < p).astype(np.int64)


DATASETS = {"random": random_binary, "edges": edge_binary}


def explicit_counts(conf: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin counts by explicit membership: (lo, hi], with the first bin also holding ≤ lo."""
    counts = []
    for b in range(len(edges) - 1):
        above = conf > edges[b] if b > 0 else np.ones(conf.shape, dtype=bool)
        below = conf <= edges[b + 1] if b < len(edges) - 2 else np.ones(conf.shape, dtype=bool)
        counts.append(int(np.sum(above & below)))
    return np.array(counts)


def sklearn_edges(conf: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    return np.percentile(conf, np.linspace(0.0, 1.0, n_bins + 1) * 100)


def literal_quantile_labels(conf: np.ndarray, n_bins: int) -> np.ndarray:
    """The equal-mass tie rule written out with exact fractions (core.metrics.binning.run_sides):
    each run of equal confidences has mid-rank m (0-based, mean of its sorted positions);
    cut j sits at v_j = (n − 1)j/K; a run is above cut j when m > v_j, or m = v_j and
    2j < K (towards the median); a cut with a run exactly on it and 2j = K is dropped. A
    row's bin label is the number of cuts its run is above."""
    from fractions import Fraction

    n = conf.size
    values = sorted(set(conf.tolist()))
    below = {v: int(np.sum(conf < v)) for v in values}
    size = {v: int(np.sum(conf == v)) for v in values}
    mid = {v: Fraction(2 * below[v] + size[v] - 1, 2) for v in values}
    cuts = [Fraction((n - 1) * j, n_bins) for j in range(1, n_bins)]
    dropped = {j for j, v in enumerate(cuts, 1)
               if 2 * j == n_bins and any(m == v for m in mid.values())}
    label = {value: sum(1 for j, v in enumerate(cuts, 1) if j not in dropped
                        and (m > v or (m == v and 2 * j < n_bins)))
             for value, m in mid.items()}
    return np.array([label[c] for c in conf.tolist()])


def literal_quantile_table(conf: np.ndarray, outcome: np.ndarray, n_bins: int
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(count, mean confidence, frequency) of the non-empty bins of the literal rule."""
    labels = literal_quantile_labels(conf, n_bins)
    used = np.unique(labels)
    return (np.array([np.sum(labels == b) for b in used]),
            np.array([conf[labels == b].mean() for b in used]),
            np.array([outcome[labels == b].mean() for b in used]))


def has_ties_off_sklearn(conf: np.ndarray, n_bins: int) -> bool:
    """Whether the tie rule's bins differ from calibration_curve's (ties, or a row exactly on
    a percentile edge at or below the median)."""
    sk = explicit_counts(conf, sklearn_edges(conf, n_bins, "quantile"))
    return not np.array_equal(sk[sk > 0], np.bincount(literal_quantile_labels(conf, n_bins))[
        np.bincount(literal_quantile_labels(conf, n_bins)) > 0])


# --------------------------------------------------------------------------- scikit-learn


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("dataset", sorted(DATASETS))
@pytest.mark.parametrize("n_bins", [5, 15])
def test_reliability_table_matches_calibration_curve(dataset: str, strategy: str,
                                                     n_bins: int) -> None:
    p, y = DATASETS[dataset]()
    table = metrics.reliability_table(p, y, n_bins=n_bins, strategy=strategy, n_resamples=0)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    filled = table[table["count"] > 0]
    if strategy == "quantile" and dataset == "edges":
        # Heavy ties: scikit-learn keeps a tied run below every edge equal to its value, which
        # depends on which class is positive; the tie rule moves runs to their mid-rank's side.
        assert has_ties_off_sklearn(p, n_bins)
        counts, prob_pred, prob_true = literal_quantile_table(p, y, n_bins)
        np.testing.assert_array_equal(filled["count"], counts)
    assert len(filled) == len(prob_true)
    np.testing.assert_allclose(filled["frequency"], prob_true, rtol=0, atol=1e-12)
    np.testing.assert_allclose(filled["mean_confidence"], prob_pred, rtol=0, atol=1e-12)
    np.testing.assert_allclose(filled["gap"], prob_true - prob_pred, rtol=0, atol=1e-12)
    assert table["count"].sum() == len(y)
    if strategy == "quantile" and dataset == "edges":
        return
    counts = explicit_counts(p, sklearn_edges(p, n_bins, strategy))
    np.testing.assert_array_equal(filled["count"], counts[counts > 0])


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("dataset", sorted(DATASETS))
def test_ece_and_mce_recomputed_from_calibration_curve(dataset: str, strategy: str) -> None:
    p, y = DATASETS[dataset]()
    n_bins = 15
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    counts = explicit_counts(p, sklearn_edges(p, n_bins, strategy))
    counts = counts[counts > 0]
    if strategy == "quantile" and dataset == "edges":  # ties: the literal rule, not sklearn's
        counts, prob_pred, prob_true = literal_quantile_table(p, y, n_bins)
    gaps = prob_true - prob_pred
    assert metrics.ece(p, y, n_bins, strategy, "l1") == pytest.approx(
        np.sum(counts * np.abs(gaps)) / len(y), abs=1e-12)
    assert metrics.ece(p, y, n_bins, strategy, "l2") == pytest.approx(
        math.sqrt(np.sum(counts * gaps ** 2) / len(y)), abs=1e-12)
    assert metrics.mce(p, y, n_bins, strategy) == pytest.approx(np.max(np.abs(gaps)), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.sampled_from([0.0, 0.1, 0.2, 1 / 3, 0.5, 0.6, 0.8, 0.9, 1.0]),
                    min_size=1, max_size=60),
    n_bins=st.integers(1, 12),
    strategy=st.sampled_from(["uniform", "quantile"]),
    seed=st.integers(0, 1000),
)
def test_tied_confidences_agree_with_sklearn_or_the_tie_rule(values: list[float], n_bins: int,
                                                            strategy: str, seed: int) -> None:
    p = np.array(values)
    y = (np.random.default_rng(seed).random(p.size) < p).astype(np.int64)
    table = metrics.reliability_table(p, y, n_bins=n_bins, strategy=strategy, n_resamples=0)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    filled = table[table["count"] > 0]
    if strategy == "quantile" and has_ties_off_sklearn(p, n_bins):
        # the tie rule (sklearn's bins depend on which class is positive here)
        counts, prob_pred, prob_true = literal_quantile_table(p, y, n_bins)
        np.testing.assert_array_equal(filled["count"], counts)
    np.testing.assert_allclose(filled["frequency"], prob_true, atol=1e-12)
    np.testing.assert_allclose(filled["mean_confidence"], prob_pred, atol=1e-12)
    if strategy == "quantile":
        assert (table["count"] > 0).all()
        assert table["bin_lower"].iloc[0] == 0.0 and table["bin_upper"].iloc[-1] == 1.0


# --------------------------------------------------------------------------- bin edges


def test_exact_one_lands_in_last_bin_and_zero_in_first() -> None:
    p = np.array([1.0, 1.0, 0.0, 0.5, 0.95])
    y = np.array([1, 0, 0, 1, 1])
    table = metrics.reliability_table(p, y, n_bins=10, n_resamples=0)
    assert table["count"].tolist() == [1, 0, 0, 0, 1, 0, 0, 0, 0, 3]
    assert table["mean_confidence"].iloc[-1] == pytest.approx((1.0 + 1.0 + 0.95) / 3)
    assert table["frequency"].iloc[-1] == pytest.approx(2 / 3)
    # 0.5 is the upper edge of the fifth bin (0.4, 0.5]: right-closed bins.
    assert table["bin_upper"].iloc[4] == 0.5 and table["count"].iloc[4] == 1


def test_empty_bins_are_reported_as_nan_rows() -> None:
    rng = np.random.default_rng(2)
    p = rng.uniform(0.61, 0.69, 200)
    y = (rng.random(200) < p).astype(int)
    table = metrics.reliability_table(p, y, n_bins=10, n_resamples=50)
    assert len(table) == 10
    empty = table["count"] == 0
    assert empty.sum() == 9 and table["count"].iloc[6] == 200
    stat_columns = ["mean_confidence", "frequency", "ci_low", "ci_high", "band_low",
                    "band_high", "gap"]
    assert table.loc[empty, stat_columns].isna().all().all()
    assert table.loc[~empty, stat_columns].notna().all().all()
    np.testing.assert_allclose(table["bin_lower"], np.linspace(0, 1, 11)[:-1])


def test_quantile_bins_with_heavy_ties_are_never_empty() -> None:
    rng = np.random.default_rng(3)
    p = np.concatenate([np.full(900, 0.2), np.full(50, 1.0), rng.uniform(size=50)])
    y = (rng.random(p.size) < p).astype(int)
    table = metrics.reliability_table(p, y, n_bins=15, strategy="quantile", n_resamples=0)
    assert (table["count"] > 0).all()
    assert len(table) < 15
    assert table["count"].sum() == p.size
    assert table["bin_lower"].iloc[0] == 0.0 and table["bin_upper"].iloc[-1] == 1.0
    np.testing.assert_array_equal(table["bin_lower"].iloc[1:], table["bin_upper"].iloc[:-1])


def test_quantile_merges_bins_emptied_by_interpolated_edges() -> None:
    # Three tied values then distinct ones: the linearly interpolated 2nd percentile edge
    # falls strictly between 0.5 and 0.9, so scikit-learn's bin (0.5, 0.713] is empty.
    p = np.array([0.5, 0.5, 0.5] + list(np.linspace(0.9, 0.99, 17)))
    y = np.zeros(p.size, dtype=int)
    raw_counts = explicit_counts(p, sklearn_edges(p, 15, "quantile"))
    assert (raw_counts == 0).any()
    table = metrics.reliability_table(p, y, n_bins=15, strategy="quantile", n_resamples=0)
    assert (table["count"] > 0).all()
    np.testing.assert_array_equal(table["count"], raw_counts[raw_counts > 0])


DYADIC = [0.0, 1.0, 0.5, 0.25, 0.75, 0.125, 0.875, 0.375, 0.625, 0.0625, 0.9375]


@settings(max_examples=150, deadline=None)
@given(
    counts=st.lists(st.integers(0, 40), min_size=len(DYADIC), max_size=len(DYADIC)),
    extra=st.integers(0, 30),
    n_bins=st.integers(1, 16),
    seed=st.integers(0, 10_000),
)
def test_quantile_metrics_do_not_depend_on_which_class_is_positive(
        counts: list[int], extra: int, n_bins: int, seed: int) -> None:
    # Heavy ties (exact 0s and 1s, repeated values) plus a few distinct ones: every quantile
    # metric of (p, y) equals that of (1 − p, 1 − y). Dyadic values keep 1 − p exact, so the
    # flipped data has exactly the mirrored ties.
    rng = np.random.default_rng(seed)
    p = np.concatenate([np.repeat(DYADIC, counts), np.round(rng.uniform(size=extra) * 256) / 256])
    if p.size == 0:
        return
    rng.shuffle(p)
    y = (rng.random(p.size) < p).astype(np.int64)
    flip = (1.0 - p, 1 - y)
    for f in (lambda a, b: metrics.ece(a, b, n_bins, "quantile", "l1"),
              lambda a, b: metrics.ece(a, b, n_bins, "quantile", "l2"),
              lambda a, b: metrics.mce(a, b, n_bins, "quantile"),
              lambda a, b: metrics.ace(a, b, n_bins),
              lambda a, b: metrics.ece_debiased(a, b, n_bins=n_bins, strategy="quantile")):
        assert f(p, y) == pytest.approx(f(*flip), abs=1e-12, nan_ok=True)
    table = metrics.reliability_table(p, y, n_bins=n_bins, strategy="quantile", n_resamples=0)
    mirrored = metrics.reliability_table(*flip, n_bins=n_bins, strategy="quantile",
                                         n_resamples=0)
    assert (table["count"] > 0).all() and len(table) <= n_bins  # never an empty bin
    np.testing.assert_array_equal(table["count"], mirrored["count"].to_numpy()[::-1])
    np.testing.assert_allclose(table["gap"], -mirrored["gap"].to_numpy()[::-1], atol=1e-12)
    # every row lies in its bin by value, with the reported edges
    edges = metrics.bin_edges(p, n_bins, "quantile")
    np.testing.assert_array_equal(np.bincount(metrics.bin_indices(p, edges)), table["count"])
    np.testing.assert_array_equal(  # the literal statement of the rule
        table["count"], np.bincount(literal_quantile_labels(p, n_bins))[
            np.bincount(literal_quantile_labels(p, n_bins)) > 0])


def test_quantile_bootstrap_does_not_depend_on_which_class_is_positive() -> None:
    # The same seed draws the same rows; mirrored data gives mirrored cuts in every resample,
    # so the draws, hence the intervals, are equal (positive notion, quantile bins).
    p, y = edge_binary(n=400)
    keys = ["ECE (L1)", "ECE (L2)", "MCE", "Debiased squared ECE (L2²)", "Brier score"]
    kwargs = dict(n_bins=10, strategy="quantile", n_resamples=80, seed=3, method="percentile")
    a = metrics.metrics_table(p, y, **kwargs).set_index("metric").loc[keys]
    b = metrics.metrics_table(1.0 - p, 1 - y, **kwargs).set_index("metric").loc[keys]
    np.testing.assert_allclose(a[["value", "ci_low", "ci_high"]].to_numpy(dtype=float),
                               b[["value", "ci_low", "ci_high"]].to_numpy(dtype=float),
                               atol=1e-12)


@pytest.mark.parametrize("n, n_bins", [(3000, 15), (3000, 10), (997, 7), (20, 15), (1000, 4)])
def test_quantile_edges_without_ties_are_numpy_percentiles_bit_for_bit(n: int,
                                                                        n_bins: int) -> None:
    # No ties and no row exactly on a percentile edge at or below the median: the edges are
    # numpy.percentile's and the bins scikit-learn's (counts by explicit membership).
    rng = np.random.default_rng(n + n_bins)
    p = rng.beta(0.7, 0.9, n)
    y = (rng.random(n) < p).astype(np.int64)
    levels = np.linspace(0, 1, n_bins + 1)
    assert all((n - 1) * j % n_bins for j in range(1, n_bins) if 2 * j <= n_bins)
    raw = np.percentile(p, levels * 100)
    edges = metrics.bin_edges(p, n_bins, "quantile")
    counts = explicit_counts(p, raw)
    np.testing.assert_array_equal(edges[1:-1], raw[1:-1][counts[:-1] > 0][: edges.size - 2])
    table = metrics.reliability_table(p, y, n_bins=n_bins, strategy="quantile", n_resamples=0)
    np.testing.assert_array_equal(table["count"], counts[counts > 0])
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy="quantile")
    np.testing.assert_allclose(table["frequency"], prob_true, atol=1e-12)


def test_rows_on_percentile_edges_go_towards_the_median() -> None:
    # n = 16, K = 15: every edge is a row (v_j = j). scikit-learn puts each such row in the bin
    # below, so the two lowest rows share a bin (not mirror-symmetric); the rule sends rows on
    # edges below the median up and those above it down: the doubled bin is the middle one.
    p = np.arange(1, 17) / 17
    y = np.zeros(16, dtype=np.int64)
    table = metrics.reliability_table(p, y, n_bins=15, strategy="quantile", n_resamples=0)
    assert table["count"].tolist() == [1] * 7 + [2] + [1] * 7
    edges = metrics.bin_edges(p, 15, "quantile")
    raw = sklearn_edges(p, 15, "quantile")
    # Each edge is numpy's percentile of its cut when that separates the neighbouring rows u
    # and w (u ≤ e < w; a percentile can round an ulp past a row), else their midpoint.
    u = np.concatenate([p[0:7], p[8:15]])
    w = np.concatenate([p[1:8], p[9:16]])
    numpy_edge = raw[1:-1]
    expected = np.where((u <= numpy_edge) & (numpy_edge < w), numpy_edge, (u + w) / 2)
    np.testing.assert_array_equal(edges[1:-1], expected)
    # below the median the row on edge j goes up, so numpy's edge (= that row) never serves
    assert (edges[1:8] < p[1:8]).all() and (edges[1:8] != raw[1:8]).sum() >= 5


# --------------------------------------------------------------------------- hand-computed

# Binary: p = P(y=1).
P_BIN = np.array([0.9, 0.2, 0.6, 0.4])
Y_BIN = np.array([1, 0, 0, 1])
# Three classes; row 3 ties classes 0 and 1 (argmax → class 0).
P_MC = np.array([[0.7, 0.2, 0.1], [0.3, 0.3, 0.4], [0.5, 0.5, 0.0], [0.1, 0.1, 0.8]])
Y_MC = np.array([0, 2, 1, 2])


def test_hand_binary_scores() -> None:
    assert metrics.accuracy(P_BIN, Y_BIN) == pytest.approx(0.5)  # predictions 1, 0, 1, 0
    # (0.1² + 0.2² + 0.6² + 0.6²) / 4
    assert metrics.brier(P_BIN, Y_BIN) == pytest.approx(0.77 / 4)
    # A binary problem gets the binary Brier score whatever the shape of its input.
    matrix = np.column_stack([1 - P_BIN, P_BIN])
    assert metrics.brier(matrix, Y_BIN) == pytest.approx(0.77 / 4)
    expected_nll = -(math.log(0.9) + math.log(0.8) + math.log(0.4) + math.log(0.4)) / 4
    assert metrics.nll(P_BIN, Y_BIN) == pytest.approx(expected_nll)
    assert metrics.nll(matrix, Y_BIN) == pytest.approx(expected_nll)
    assert metrics.accuracy(np.array([0.5]), np.array([0])) == 1.0  # tie → class 0


def test_nll_clips_confident_mistakes() -> None:
    assert metrics.nll(np.array([1.0]), np.array([0])) == pytest.approx(-math.log(1e-15))
    assert metrics.nll(np.array([0.0]), np.array([0]), eps=1e-3) == pytest.approx(0.0)


def test_hand_binary_positive_ece() -> None:
    # Two bins: [0, .5] holds 0.2 (y=0), 0.4 (y=1): conf 0.3, freq 0.5, gap +0.2;
    # (.5, 1] holds 0.9 (y=1), 0.6 (y=0): conf 0.75, freq 0.5, gap −0.25.
    assert metrics.ece(P_BIN, Y_BIN, n_bins=2) == pytest.approx((2 * 0.2 + 2 * 0.25) / 4)
    assert metrics.ece(P_BIN, Y_BIN, n_bins=2, norm="l2") == pytest.approx(
        math.sqrt((2 * 0.2 ** 2 + 2 * 0.25 ** 2) / 4))
    assert metrics.mce(P_BIN, Y_BIN, n_bins=2) == pytest.approx(0.25)
    table = metrics.reliability_table(P_BIN, Y_BIN, n_bins=2, n_resamples=0)
    np.testing.assert_allclose(table["gap"], [0.2, -0.25])
    np.testing.assert_array_equal(table["count"], [2, 2])


def test_hand_multiclass_scores_and_top_label() -> None:
    assert metrics.accuracy(P_MC, Y_MC) == pytest.approx(0.75)
    # Σ_k (p_k − 1[y=k])² per row: 0.14, 0.54, 0.5, 0.06.
    assert metrics.brier(P_MC, Y_MC) == pytest.approx(1.24 / 4)
    assert metrics.nll(P_MC, Y_MC) == pytest.approx(
        -(math.log(0.7) + math.log(0.4) + math.log(0.5) + math.log(0.8)) / 4)
    conf, correct = metrics.confidence_outcome(P_MC, Y_MC)
    np.testing.assert_allclose(conf, [0.7, 0.4, 0.5, 0.8])
    np.testing.assert_array_equal(correct, [1, 1, 0, 1])
    # Top-label, 2 bins: [0, .5] holds 0.4 (✓), 0.5 (✗): gap 0.5 − 0.45 = 0.05;
    # (.5, 1] holds 0.7 (✓), 0.8 (✓): gap 1 − 0.75 = 0.25.
    assert metrics.default_notion(P_MC) == "top-label"
    assert metrics.ece(P_MC, Y_MC, n_bins=2) == pytest.approx((2 * 0.05 + 2 * 0.25) / 4)
    assert metrics.mce(P_MC, Y_MC, n_bins=2) == pytest.approx(0.25)


def test_hand_classwise() -> None:
    # Class 0: [0,.5] {0.3, 0.5, 0.1 | 0,0,0} gap −0.3; (.5,1] {0.7 | 1} gap 0.3 → ECE 0.3.
    # Class 1: [0,.5] {0.2, 0.3, 0.5, 0.1 | 0,0,1,0} gap 0.25 − 0.275 → ECE 0.025.
    # Class 2: [0,.5] {0.1, 0.4, 0.0 | 0,1,0} gap 1/3 − 1/6; (.5,1] {0.8 | 1} gap 0.2
    #          → ECE (3·(1/6) + 0.2)/4 = 0.175.
    assert metrics.ece(P_MC, Y_MC, n_bins=2, notion="classwise") == pytest.approx(
        (0.3 + 0.025 + 0.175) / 3)
    assert metrics.mce(P_MC, Y_MC, n_bins=2, notion="classwise") == pytest.approx(0.3)
    conf, outcome = metrics.confidence_outcome(P_MC, Y_MC, "classwise", class_index=2)
    np.testing.assert_allclose(conf, [0.1, 0.4, 0.0, 0.8])
    np.testing.assert_array_equal(outcome, [0, 1, 0, 1])
    all_conf, all_out = metrics.confidence_outcome(P_MC, Y_MC, "classwise")
    assert all_conf.shape == all_out.shape == (4, 3)
    table = metrics.reliability_table(P_MC, Y_MC, n_bins=2, notion="classwise", class_index=0,
                                      n_resamples=0)
    np.testing.assert_allclose(table["gap"], [-0.3, 0.3])


def test_positive_notion_reads_column_one_of_a_binary_matrix() -> None:
    matrix = np.column_stack([1 - P_BIN, P_BIN])
    assert metrics.default_notion(matrix) == "positive"
    conf, outcome = metrics.confidence_outcome(matrix, Y_BIN)
    np.testing.assert_allclose(conf, P_BIN)
    np.testing.assert_array_equal(outcome, Y_BIN)
    assert metrics.ece(matrix, Y_BIN, n_bins=2) == pytest.approx(metrics.ece(P_BIN, Y_BIN, 2))
    conf, correct = metrics.confidence_outcome(P_BIN, Y_BIN, "top-label")
    np.testing.assert_allclose(conf, [0.9, 0.8, 0.6, 0.6])
    np.testing.assert_array_equal(correct, [1, 1, 0, 0])


def test_hand_ace_and_debiased() -> None:
    p = np.array([0.1, 0.2, 0.7, 0.9])
    y = np.array([0, 1, 1, 1])
    # Class 1, two equal-mass bins {0.1, 0.2 | 0, 1}, {0.7, 0.9 | 1, 1}: |gaps| 0.35, 0.2.
    # Class 0 (1 − p): {0.3, 0.1 | 0, 0}, {0.9, 0.8 | 1, 0}: |gaps| 0.2, 0.35.
    assert metrics.ace(p, y, n_bins=2) == pytest.approx(0.275)
    # Debiased, positive notion, same bins:
    # ½[(0.5 − 0.15)² − 0.5·0.5/1] + ½[(1 − 0.8)² − 0] = ½(−0.1275) + ½(0.04) = −0.04375.
    assert metrics.ece_debiased(p, y, n_bins=2) == pytest.approx(-0.04375)
    assert metrics.ece_debiased_l2(p, y, n_bins=2) == 0.0
    # Ties: with 4 bins only 2 are non-empty per class, and ACE averages those two.
    # Class 1: {0.2 ×3 | 0, 1, 0}: |1/3 − 0.2|; {0.8 | 1}: 0.2. Class 0: {0.2 | 0}: 0.2;
    # {0.8 ×3 | 1, 0, 1}: |2/3 − 0.8|. Every class averages to (2/15 + 0.2)/2 = 1/6.
    assert metrics.ace([0.2, 0.2, 0.2, 0.8], [0, 1, 0, 1], n_bins=4) == pytest.approx(1 / 6)
    # Bins of a single row have no variance estimate and contribute 0.
    assert metrics.ece_debiased(p, y, n_bins=4) == 0.0
    # The plug-in squared ECE on the same bins is the first term alone.
    assert metrics.ece(p, y, 2, "quantile", "l2") ** 2 == pytest.approx(
        0.5 * 0.35 ** 2 + 0.5 * 0.2 ** 2)


# --------------------------------------------------------------------------- Monte Carlo


def test_debiased_squared_ece_is_unbiased_under_calibration() -> None:
    rng = np.random.default_rng(20190910)
    reps, n = 400, 500
    debiased = np.empty(reps)
    plug_in = np.empty(reps)
    for r in range(reps):
        p, y = calibrated(n, rng)
        debiased[r] = metrics.ece_debiased(p, y, n_bins=15, strategy="quantile")
        plug_in[r] = metrics.ece(p, y, 15, "quantile", "l2") ** 2
    # Standard error of a mean of `reps` independent estimates: SE = s / √reps, with s the
    # sample standard deviation (ddof = 1). The true squared error is 0 here.
    se_debiased = debiased.std(ddof=1) / math.sqrt(reps)
    assert abs(debiased.mean()) < 3 * se_debiased
    assert (debiased < 0).any() and (debiased > 0).any()
    se_plug_in = plug_in.std(ddof=1) / math.sqrt(reps)
    assert plug_in.mean() > 3 * se_plug_in  # upward bias ≈ Σ_b ȳ_b(1 − ȳ_b)/n ≈ 15/(6·500)
    assert plug_in.mean() > 10 * abs(debiased.mean())


@pytest.mark.parametrize("interval", ["wilson", "jeffreys"])
def test_frequency_interval_coverage_under_calibration(interval: str) -> None:
    rng = np.random.default_rng(7 if interval == "wilson" else 8)
    reps, n, n_bins = 400, 2000, 10  # ≈ 200 rows per bin
    covered = []
    for _ in range(reps):
        p, y = calibrated(n, rng)
        table = metrics.reliability_table(p, y, n_bins=n_bins, interval=interval,
                                          n_resamples=0)
        table = table[table["count"] > 0]
        # Given the confidences, a calibrated bin's expected frequency is its mean confidence.
        truth = table["mean_confidence"]
        covered.append(((table["ci_low"] <= truth) & (truth <= table["ci_high"])).to_numpy())
    hits = np.concatenate(covered)
    # Binomial standard error of a coverage fraction over N bins: √(0.95·0.05/N).
    tolerance = 3 * math.sqrt(0.95 * 0.05 / hits.size)
    assert abs(hits.mean() - 0.95) < tolerance


def test_consistency_band_holds_the_frequency_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(11)
    reps, n, n_bins = 300, 500, 10
    inclusive, strict = [], []
    for r in range(reps):
        p, y = calibrated(n, rng)
        table = metrics.reliability_table(p, y, n_bins=n_bins, n_resamples=200, seed=r)
        table = table[table["count"] > 0]
        f, low, high = table["frequency"], table["band_low"], table["band_high"]
        inclusive.append(((low <= f) & (f <= high)).to_numpy())
        strict.append(((low < f) & (f < high)).to_numpy())
    inclusive_rate = np.concatenate(inclusive).mean()
    strict_rate = np.concatenate(strict).mean()
    # Binomial standard error over N bins: √(0.95·0.05/N). A bin frequency is discrete, so the
    # central 95% range holds it with probability ≥ 0.95 counting its end points and ≤ 0.95
    # without them; both bounds are checked to within 3 standard errors.
    tolerance = 3 * math.sqrt(0.95 * 0.05 / sum(len(c) for c in inclusive))
    assert inclusive_rate > 0.95 - tolerance
    assert strict_rate < 0.95 + tolerance


def test_consistency_band_matches_binomial_quantiles_for_a_constant_confidence() -> None:
    # All 200 rows at confidence 0.3: the calibrated bin count is Binomial(200, 0.3).
    p = np.full(200, 0.3)
    y = (np.arange(200) < 60).astype(int)
    table = metrics.reliability_table(p, y, n_bins=10, n_resamples=20000, seed=5)
    row = table[table["count"] > 0].iloc[0]
    low = stats.binom.ppf(0.025, 200, 0.3) / 200
    high = stats.binom.ppf(0.975, 200, 0.3) / 200
    assert abs(row["band_low"] - low) <= 1 / 200 + 1e-12
    assert abs(row["band_high"] - high) <= 1 / 200 + 1e-12


def test_band_is_seeded() -> None:
    p, y = random_binary(n=400)
    first = metrics.reliability_table(p, y, n_resamples=100, seed=3)
    again = metrics.reliability_table(p, y, n_resamples=100, seed=3)
    other = metrics.reliability_table(p, y, n_resamples=100, seed=4)
    pd.testing.assert_frame_equal(first, again)
    assert not np.allclose(first["band_low"], other["band_low"], equal_nan=True)


# --------------------------------------------------------------------------- intervals


def test_wilson_interval_known_values() -> None:
    low, high = wilson_interval(5, 10)
    assert (float(low), float(high)) == pytest.approx((0.236593, 0.763407), abs=1e-6)
    low, high = wilson_interval(0, 10)
    assert float(low) == 0.0
    assert float(high) == pytest.approx(Z95 ** 2 / (10 + Z95 ** 2))


def test_jeffreys_interval_endpoint_convention_and_symmetry() -> None:
    k = np.array([0, 1, 5, 9, 10, 0])
    n = np.array([10, 10, 10, 10, 10, 0])
    low, high = jeffreys_interval(k, n)
    assert low[0] == 0.0 and high[4] == 1.0
    assert np.isnan(low[5]) and np.isnan(high[5])
    # Beta(k+½, n−k+½) quantiles are mirror images under k → n − k.
    np.testing.assert_allclose(low[1:4], 1 - high[1:4][::-1])
    assert low[2] == pytest.approx(stats.beta.ppf(0.025, 5.5, 5.5))
    assert ((low[:5] <= k[:5] / 10) & (k[:5] / 10 <= high[:5])).all()


def test_intervals_are_vectorised_and_nan_for_empty_bins() -> None:
    for method in ("wilson", "jeffreys"):
        low, high = binomial_interval(np.array([0, 3, 0]), np.array([5, 7, 0]), method, 0.9)
        assert low.shape == high.shape == (3,)
        assert np.isnan(low[2]) and np.isnan(high[2])
        assert (low[:2] < high[:2]).all()
    with pytest.raises(ValueError, match="between 0 and its number of trials"):
        wilson_interval(6, 5)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        jeffreys_interval(1, 5, level=95)


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_ci_is_reproducible_and_contains_a_smooth_statistic() -> None:
    p, y = random_binary(n=800)
    first = metrics.bootstrap_ci(metrics.brier, p, y, n_resamples=300, seed=5)
    again = metrics.bootstrap_ci(metrics.brier, p, y, n_resamples=300, seed=5)
    other = metrics.bootstrap_ci(metrics.brier, p, y, n_resamples=300, seed=6)
    assert first == again
    assert first != other
    assert first[0] < metrics.brier(p, y) < first[1]


def test_metrics_table_intervals_equal_the_generic_bootstrap() -> None:
    # The vectorised bootstrap must give exactly what recomputing each metric on each
    # resample gives (same seed ⇒ same resamples), quantile edges and ties included.
    p, y = edge_binary(n=300)
    # Percentile intervals compare the draws themselves (basic ones of the debiased ECE also
    # use its plug-in counterpart, which bootstrap_ci does not know).
    table = metrics.metrics_table(p, y, n_bins=10, strategy="quantile", n_resamples=60, seed=9,
                                  method="percentile")
    checks = {
        "ECE (L1)": lambda a, b: metrics.ece(a, b, 10, "quantile", "l1"),
        "MCE": lambda a, b: metrics.mce(a, b, 10, "quantile"),
        "ACE (classwise)": lambda a, b: metrics.ace(a, b, 10),
        "ACE (top-label)": lambda a, b: metrics.ace_top_label(a, b, 10),
        "Debiased squared ECE (L2²)": lambda a, b: metrics.ece_debiased(a, b, 10),
        "Brier score": metrics.brier,
    }
    keys = {name: key for key, name in metrics.METRIC_NAMES.items()}
    for name, statistic in checks.items():
        row = table.set_index("metric").loc[name]
        low, high = metrics.bootstrap_ci(statistic, p, y, n_resamples=60, seed=9,
                                         method="percentile",
                                         bounds=metrics.METRIC_BOUNDS[keys[name]])
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-12), name


def test_resample_quantile_bins_equal_the_bins_of_the_expanded_resample() -> None:
    # The vectorised bootstrap reads each resample's equal-mass cuts off running counts; its
    # per-bin sums must equal those of core.metrics.binning.bin_sums on the expanded resample
    # exactly (counts) and to rounding (sums), ties and rows on edges included.
    from core.metrics.binning import bin_sums

    rng = np.random.default_rng(12)
    for n, n_bins in [(1, 3), (7, 15), (64, 10), (500, 15), (333, 4)]:
        conf = np.round(rng.uniform(size=n), 2)
        conf[: n // 3] = rng.choice([0.0, 1.0, 0.5], n // 3)
        out = (rng.random(n) < conf).astype(float)
        score = SortedScore(conf, out)
        weights = rng.multinomial(n, np.full(n, 1 / n), size=30).astype(float)
        padded = np.column_stack([weights, np.zeros(30)])
        sums = score.bin_sums(padded, n_bins, ("quantile",))["quantile"]
        for r in range(30):
            keep = weights[r].astype(int)
            expected = bin_sums(np.repeat(conf, keep), np.repeat(out, keep), n_bins, "quantile")
            np.testing.assert_array_equal(sums[0][r], expected[0])
            np.testing.assert_allclose(sums[1][r], expected[1], rtol=0, atol=1e-9)
            np.testing.assert_allclose(sums[2][r], expected[2], rtol=0, atol=1e-9)


def test_metrics_table_multiclass_classwise_matches_generic_bootstrap() -> None:
    rng = np.random.default_rng(4)
    probs = np.round(rng.dirichlet([0.5, 0.5, 0.5], 150), 2)
    probs /= probs.sum(axis=1, keepdims=True)
    y = rng.integers(0, 3, 150)
    table = metrics.metrics_table(probs, y, notion="classwise", n_bins=5, n_resamples=40,
                                  seed=2).set_index("metric")
    for name, statistic in {
        "ECE (L2)": lambda a, b: metrics.ece(a, b, 5, "uniform", "l2", "classwise"),
        "MCE": lambda a, b: metrics.mce(a, b, 5, "uniform", "classwise"),
        "NLL": metrics.nll,
    }.items():
        low, high = metrics.bootstrap_ci(statistic, probs, y, n_resamples=40, seed=2)
        assert (table.loc[name, "ci_low"], table.loc[name, "ci_high"]) == pytest.approx(
            (low, high), abs=1e-12), name


@pytest.mark.parametrize("notion", [None, "top-label", "classwise"])
def test_metrics_table_has_all_rows_and_finite_values(notion: str | None) -> None:
    rng = np.random.default_rng(6)
    probs = rng.dirichlet([1, 1, 1, 1], 1000)
    y = (probs.cumsum(axis=1) < rng.random((1000, 1))).sum(axis=1)
    table = metrics.metrics_table(probs, y, notion=notion, n_resamples=200)
    assert list(table.columns) == ["metric", "value", "estimate", "ci_low", "ci_high",
                                   "notion", "description"]
    assert table["metric"].tolist() == list(metrics.METRIC_NAMES.values())
    values = table[["value", "ci_low", "ci_high"]].to_numpy(dtype=float)
    assert np.isfinite(values).all()
    assert (table["ci_low"] <= table["ci_high"]).all()
    assert table.set_index("metric").loc["ACE (classwise)", "notion"] == "classwise"
    assert table.set_index("metric").loc["ACE (top-label)", "notion"] == "top-label"
    assert table.set_index("metric").loc["ECE (L1)", "notion"] == (notion or "top-label")
    point = table.set_index("metric")["value"]
    assert point["Accuracy"] == pytest.approx(metrics.accuracy(probs, y))
    assert point["ECE (L1)"] == pytest.approx(metrics.ece(probs, y, notion=notion))
    assert point["ACE (top-label)"] == pytest.approx(metrics.ace_top_label(probs, y))


def test_metrics_table_without_resamples_leaves_intervals_empty() -> None:
    p, y = random_binary(n=300)
    table = metrics.metrics_table(p, y, n_resamples=0)
    assert table["ci_low"].isna().all() and table["value"].notna().all()
    assert table.set_index("metric").loc["ECE (L1)", "notion"] == "positive"


def test_skce_is_re_exported() -> None:
    from core.metrics.skce_estimate import skce

    assert metrics.skce is skce


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: metrics.ece(np.ones((2, 2, 2)), [0, 1]), "dimensions"),
        (lambda: metrics.ece([0.2, 0.4], [0, 1, 1]), "one label per row"),
        (lambda: metrics.ece([0.2, 1.4], [0, 1]), "between 0 and 1"),
        (lambda: metrics.ece([0.2, np.nan], [0, 1]), "missing or infinite"),
        (lambda: metrics.ece([[0.2, 0.7], [0.5, 0.5]], [0, 1]), "sum to 1"),
        (lambda: metrics.ece([0.2, 0.4], [0, 2]), "from 0 to 1"),
        (lambda: metrics.ece([[0.2, 0.8]], [-1]), "from 0 to 1"),
        (lambda: metrics.ece([0.2, 0.4], [0, 0.5]), "whole-number"),
        (lambda: metrics.ece([0.2, 0.4], ["a", "b"]), "integer class labels"),
        (lambda: metrics.ece([], []), "empty"),
        (lambda: metrics.ece([0.2, 0.4], [0, 1], n_bins=0), "n_bins"),
        (lambda: metrics.ece([0.2, 0.4], [0, 1], n_bins=2.5), "n_bins"),
        (lambda: metrics.ece([0.2, 0.4], [0, 1], strategy="width"), "binning strategy"),
        (lambda: metrics.ece([0.2, 0.4], [0, 1], norm="max"), "norm"),
        (lambda: metrics.ece([0.2, 0.4], [0, 1], notion="marginal"), "notion"),
        (lambda: metrics.ece([0.2, 0.4], [0, 1], notion="canonical"), "kernel SKCE"),
        (lambda: metrics.mce(P_MC, Y_MC, notion="canonical"), "no binned"),
        (lambda: metrics.reliability_table(P_MC, Y_MC, notion="canonical"), "canonical"),
        (lambda: metrics.ece(P_MC, Y_MC, notion="positive"), "binary problems"),
        (lambda: metrics.reliability_table(P_MC, Y_MC, notion="classwise"), "class_index"),
        (lambda: metrics.reliability_table(P_MC, Y_MC, notion="classwise", class_index=3),
         "from 0 to 2"),
        (lambda: metrics.confidence_outcome(P_MC, Y_MC, "top-label", class_index=1),
         "class_index"),
        (lambda: metrics.reliability_table(P_BIN, Y_BIN, interval="wald"), "interval"),
        (lambda: metrics.reliability_table(P_BIN, Y_BIN, level=1.0), "strictly between"),
        (lambda: metrics.reliability_table(P_BIN, Y_BIN, n_resamples=-1), "n_resamples"),
        (lambda: metrics.bootstrap_ci(metrics.brier, P_BIN, Y_BIN, n_resamples=0),
         "n_resamples"),
        (lambda: metrics.metrics_table(P_BIN, Y_BIN, level=0.0), "strictly between"),
        (lambda: metrics.nll(P_BIN, Y_BIN, eps=0.0), "eps"),
        (lambda: metrics.brier(np.ones((3, 1)), [0, 0, 0]), "at least two classes"),
    ],
)
def test_bad_inputs_raise_value_error_with_a_sentence(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_boolean_and_whole_float_labels_are_accepted() -> None:
    assert metrics.brier(P_BIN, Y_BIN.astype(bool)) == metrics.brier(P_BIN, Y_BIN)
    assert metrics.brier(P_BIN, Y_BIN.astype(float)) == metrics.brier(P_BIN, Y_BIN)


def test_basic_and_percentile_bootstrap_intervals() -> None:
    from core.metrics.intervals import bootstrap_interval

    draws = np.arange(1.0, 102.0)  # quantiles 2.5% → 3.5, 97.5% → 98.5
    assert bootstrap_interval(draws, 50.0, method="percentile") == pytest.approx((3.5, 98.5))
    # basic: [2θ̂ − q_hi, 2θ̂ − q_lo]; a biased-up resample distribution moves it down
    assert bootstrap_interval(draws, 50.0) == pytest.approx((1.5, 96.5))
    assert bootstrap_interval(draws, 10.0, bounds=(0.0, 1e9)) == pytest.approx((0.0, 16.5))
    with pytest.raises(ValueError, match="basic"):
        bootstrap_interval(draws, 1.0, method="bca")


def test_basic_interval_corrects_the_upward_bias_of_the_binned_ece() -> None:
    # The plug-in ECE of a calibrated model (true binned error 0) is biased up; its resamples
    # are biased up once more. The percentile interval inherits both biases, the basic one
    # reflects the resample bias back: it lies below the percentile interval and is centred
    # below the plug-in value, towards the true 0.
    rng = np.random.default_rng(21)
    p = rng.uniform(0, 1, 5000)
    y = (rng.random(5000) < p).astype(int)
    basic = metrics.metrics_table(p, y, n_resamples=300, seed=1).set_index("metric")
    percentile = metrics.metrics_table(p, y, n_resamples=300, seed=1,
                                       method="percentile").set_index("metric")
    for name in ("ECE (L1)", "ECE (L2)", "ACE (classwise)", "ACE (top-label)"):
        assert basic.loc[name, "ci_low"] < percentile.loc[name, "ci_low"]
        assert basic.loc[name, "ci_high"] < percentile.loc[name, "ci_high"]
        midpoint = (basic.loc[name, "ci_low"] + basic.loc[name, "ci_high"]) / 2
        assert midpoint < basic.loc[name, "value"]


def test_classwise_l2_ece_is_the_root_mean_square_over_classes() -> None:
    # Kumar et al. (2019): the marginal ℓ2 error is √((1/m) Σ_k ECE₂,k²), so that its square
    # is on the scale of the debiased classwise estimate (the mean of per-class squares).
    rng = np.random.default_rng(31)
    probs = rng.dirichlet([1, 2, 3], 600)
    y = (probs.cumsum(axis=1) < rng.random((600, 1))).sum(axis=1)
    per_class = [metrics.ece(probs[:, k], (y == k).astype(int), 10, "uniform", "l2")
                 for k in range(3)]
    assert metrics.ece(probs, y, 10, "uniform", "l2", "classwise") == pytest.approx(
        np.sqrt(np.mean(np.square(per_class))))
    assert metrics.ece(probs, y, 10, "uniform", "l1", "classwise") == pytest.approx(
        np.mean([metrics.ece(probs[:, k], (y == k).astype(int), 10) for k in range(3)]))


def test_top_label_ace_by_hand_and_beside_the_classwise_one() -> None:
    # Top-label confidences (0.8, 0.8, 0.6, 0.9) with correctness (1, 0, 1, 1), two
    # equal-mass bins: the tied run 0.8 holds sorted positions 1 and 2, mid-rank 1.5 = the
    # median cut's virtual index (n − 1)/2, so that cut is dropped (the tie rule) and one bin
    # holds all four: gap |3/4 − 3.1/4| = 0.025. Three bins (cuts at v = 1 and 2: the run is
    # above the first, below the second): {0.6}, {0.8, 0.8}, {0.9}; gaps |1 − 0.6| = 0.4,
    # |1/2 − 0.8| = 0.3 and |1 − 0.9| = 0.1; ACE_top = their mean.
    probs = np.array([[0.8, 0.2], [0.8, 0.2], [0.4, 0.6], [0.1, 0.9]])
    y = np.array([0, 1, 1, 1])
    assert metrics.ace_top_label(probs, y, n_bins=2) == pytest.approx(0.025)
    assert metrics.ace_top_label(probs, y, n_bins=3) == pytest.approx(0.8 / 3)
    assert metrics.ace_classwise is metrics.ace
    assert metrics.ace(probs, y, n_bins=2) != metrics.ace_top_label(probs, y, n_bins=2)


def test_a_large_bin_takes_the_cornish_fisher_band_of_its_calibrated_count() -> None:
    # 20,000 rows at confidence 0.3 (variance 4,200 ≥ BAND_VARIANCE) and 12,000 rows spread
    # over (0.6, 0.9]: the calibrated counts are Binomial(20,000, 0.3) and a Poisson-binomial;
    # their Cornish–Fisher quantiles match the exact binomial ones to within one count, and
    # 20,000 redraws of the second bin to within their Monte-Carlo error.
    from core.metrics.reliability import BAND_VARIANCE

    rng = np.random.default_rng(0)
    p = np.concatenate([np.full(20_000, 0.3), rng.uniform(0.6, 0.9, 12_000)])
    y = (rng.random(p.size) < p).astype(int)
    table = metrics.reliability_table(p, y, n_bins=2, n_resamples=1000, seed=1)
    first, second = table.iloc[0], table.iloc[1]
    assert BAND_VARIANCE <= 20_000 * 0.3 * 0.7
    low, high = stats.binom.ppf([0.025, 0.975], 20_000, 0.3) / 20_000
    assert abs(first["band_low"] - low) <= 1 / 20_000 + 1e-12
    assert abs(first["band_high"] - high) <= 1 / 20_000 + 1e-12
    q = p[p > 0.5]
    draws = (rng.random((20_000, q.size)) < q).mean(axis=1)
    drawn_low, drawn_high = np.quantile(draws, [0.025, 0.975])
    # the redraws' own quantile has a standard error √(0.025·0.975/20,000)/f ≈ 0.85 count
    # (f ≈ φ(1.96)/σ, σ = √Σc(1 − c) ≈ 44 counts); allowed: three of them and one count for
    # the counts' discreteness
    assert abs(second["band_low"] - drawn_low) <= 3.5 / q.size
    assert abs(second["band_high"] - drawn_high) <= 3.5 / q.size


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=0, max_size=200), st.booleans(),
       st.integers(0, 2**32 - 1))
def test_grouped_sums_are_bincounts(ids: list[int], presort: bool, seed: int) -> None:
    # rows sorted by their group are summed segment by segment (np.add.reduceat), others by
    # np.bincount: the same sums to rounding, empty groups 0, whatever the order
    ids = np.array(sorted(ids) if presort else ids, dtype=np.int64)
    weights = [np.random.default_rng(seed).normal(size=ids.size) * 10.0 ** k for k in (0, 3)]
    for got, w in zip(grouped_sums(ids, weights, 9), weights, strict=True):
        np.testing.assert_allclose(got, np.bincount(ids, w, minlength=9), rtol=1e-12,
                                   atol=1e-12 * (np.abs(w).sum() + 1.0))
        assert got.shape == (9,)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=60), st.integers(0, 2**32 - 1))
def test_sorted_groups_sum_rows_of_weights(ids: list[int], seed: int) -> None:
    # runs found once, then any (k, n) weights summed per group; one row per group (the
    # bootstrap's distinct confidences) is the rows themselves
    for groups in (np.array(sorted(ids)), np.arange(len(ids))):
        size = int(groups[-1]) + 1
        weights = np.random.default_rng(seed).normal(size=(3, groups.size))
        got = SortedGroups(groups, size).sums(weights)
        want = [np.bincount(groups, w, minlength=size) for w in weights]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("ties", [False, True])
def test_sort_order_is_argsort_whatever_was_sorted_before(ties: bool) -> None:
    # a kept order serves other values it sorts strictly (another kind, 1 − p reversed);
    # tied values are sorted by their own kind
    from core.metrics import orders

    rng = np.random.default_rng(int(ties))
    p = rng.uniform(size=orders.KEPT_FROM + 10)
    if ties:
        p = np.round(p, 3)
    for values, kind in ((p, None), (p.copy(), "stable"), (1.0 - p, None),
                         (1.0 - p, "stable"), (p[::-1].copy(), None)):
        got = orders.sort_order(values, kind)
        np.testing.assert_array_equal(got, np.argsort(values, kind=kind))
        assert not got.flags.writeable
