"""Gruber & Bach §5.1 (VALIDATION.md) and the selection against a known calibration error.

Both are Monte-Carlo checks over seeds; each tolerance is stated where it is used.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import expit, logit

from core import estimators
from core.data.validation import softmax
from core.metrics.binned import accuracy, ece

pytestmark = pytest.mark.slow

THETAS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0)
SEEDS = 30


def paper_simulation(seed: int, n: int = 500) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P ~ Dir(0.04·1₅), y ~ P, model f = softmax(0.3 log P) (§5.1)."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(5, 0.04), n)
    P = np.maximum(P, 1e-300)  # Dir(0.04) underflows to exact zeros; keep log P finite
    P /= P.sum(axis=1, keepdims=True)
    y = np.minimum((P.cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1), 4)
    return P, softmax(0.3 * np.log(P)), y


def h_theta(theta: float):
    """h_θ(p, p') = ⟨p − softmax((10/3)θ log p), p' − softmax((10/3)θ log p')⟩."""
    def residual(P: np.ndarray) -> np.ndarray:
        return P - softmax(10.0 / 3.0 * theta * np.log(P))

    def h(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
        return residual(P) @ residual(Q).T

    return h


def test_paper_simulation_risk_is_minimised_at_the_true_temperature() -> None:
    risks = np.empty((SEEDS, len(THETAS)))
    accuracies, cce = np.empty(SEEDS), np.empty(SEEDS)
    for s in range(SEEDS):
        P, f, y = paper_simulation(s)
        risks[s] = [estimators.risk(h_theta(t), f, y, notion="canonical", tile_size=200)
                    for t in THETAS]
        accuracies[s] = accuracy(f, y)
        cce[s] = np.sqrt(np.sum((f - P) ** 2, axis=1).mean())  # P(Y | f) = P: f is 1-to-1
    mean = risks.mean(axis=0)
    assert THETAS[int(np.argmin(mean))] == 1.0
    # θ = 1 beats each neighbour in the paired per-seed differences by > 3 standard errors
    for j in (THETAS.index(0.75), THETAS.index(1.25)):
        diff = risks[:, j] - risks[:, THETAS.index(1.0)]
        assert diff.mean() > 3 * diff.std(ddof=1) / np.sqrt(SEEDS)
    # the paper's values (2 significant digits, ±5e-5 rounding) within 3 standard errors of
    # the mean over seeds
    se = risks.std(axis=0, ddof=1) / np.sqrt(SEEDS)
    for theta, paper in ((1.0, 0.0088), (0.5, 0.0093), (2.0, 0.0095)):
        j = THETAS.index(theta)
        assert abs(mean[j] - paper) < 5e-5 + 3 * se[j], (theta, mean[j], paper)
    # accuracy ≈ 0.90: binomial se √(0.9·0.1/(500·30)) ≈ 0.0024, 3 se plus the paper's
    # rounding to 0.01
    assert abs(accuracies.mean() - 0.90) < 0.005 + 3 * 0.0025
    # true CCE₂ ≈ 0.25 (rounded to 0.01): 3 standard errors over seeds plus rounding
    assert abs(cce.mean() - 0.25) < 0.005 + 3 * cce.std(ddof=1) / np.sqrt(SEEDS)


# --------------------------------------------------------------------------- known truth

SLOPE = 1.4
LOW, HIGH = 0.02, 0.98


def truth_curve(c: np.ndarray) -> np.ndarray:
    """P(y = 1 | p) = sigmoid(1.4 logit p): an underconfident binary model."""
    return expit(SLOPE * logit(c))


def true_tce2() -> float:
    """E[(c − P(correct | c))²] for p ~ U(0.02, 0.98), c = max(p, 1 − p) ~ U(0.5, 0.98).

    The truth curve is symmetric, ``1 − g(1 − p) = g(p)``, so P(correct | c) = g(c).
    """
    return quad(lambda c: (c - truth_curve(c)) ** 2 / (HIGH - 0.5), 0.5, HIGH)[0]


def test_selected_estimate_is_closer_to_the_truth_than_fixed_15_bins() -> None:
    """Over 20 seeds (n = 300): mean |error| of the risk-selected estimator against the
    15-bin estimator through the same pipeline (same test rows, paper §5.2's TCE₂^15-bins),
    and its bias against the 15-bin ECE₂² on all rows (the Reliability page's number)."""
    truth = true_tce2()
    selected, fixed, plug_in = [], [], []
    for s in range(20):
        rng = np.random.default_rng(100 + s)
        p = rng.uniform(LOW, HIGH, 300)
        y = (rng.random(300) < truth_curve(p)).astype(int)
        table = estimators.select(p, y, notion="top-label", seed=s).table
        table = table.set_index("estimator")
        selected.append(table.loc[table["selected"], "ce2"].iloc[0] - truth)
        fixed.append(table.loc["bins-15", "ce2"] - truth)
        plug_in.append(ece(p, y, n_bins=15, norm="l2", notion="top-label") ** 2 - truth)
    selected, fixed, plug_in = map(np.asarray, (selected, fixed, plug_in))
    # paired difference of absolute errors, > 2 standard errors over the 20 seeds
    gain = np.abs(fixed) - np.abs(selected)
    assert gain.mean() > 2 * gain.std(ddof=1) / np.sqrt(gain.size), (gain.mean(), gain.std())
    # the plug-in 15-bin ECE₂² is biased upwards (about Σ_b ȳ_b(1 − ȳ_b)/n); the selected
    # estimate's mean error is smaller in size
    assert plug_in.mean() > 3 * plug_in.std(ddof=1) / np.sqrt(plug_in.size)
    assert abs(selected.mean()) < plug_in.mean()
