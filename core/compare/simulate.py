"""Simulated champion/challenger pairs with a known truth, for the level and power studies of
the paired tests (``benchmarks/compare_study.py``) and their bounded versions in the tests.

The truth is ``q = sigmoid(c + u + v)`` with independent ``u ~ N(0, s_u²)`` and
``v ~ N(0, s_v²)``, and ``y ~ Bernoulli(q)``. A model that sees only u predicts
``E[q | u] = ∫ sigmoid(c + u + t) φ(t; 0, s_v²) dt`` (Gauss–Hermite quadrature, 48 nodes), the
conditional expectation of the truth given what it sees, hence exactly calibrated:
``P(y = 1 | E[q|u]) = E[q|u]``. Its Brier score exceeds the truth's by ``E[Var(q | u)]``.

* :func:`exchangeable_pair`: A sees u, B sees v, ``s_u = s_v``: both calibrated, independent
  noise of equal size, and (A, B) has the same law as (B, A) — the null of every paired test.
  ``features="independent"`` gives an audit feature unrelated to everything (both models are
  then locally calibrated: the degenerate case of the KLCE²); ``"informative"`` gives (u, v)
  (both models miss the other's information, so both are locally miscalibrated over them,
  equally).
* :func:`better_pair`: A sees u, B sees u and v, so B's Brier score is lower by
  ``E[Var(q | u)] − 0``; ``s_v`` is chosen (:func:`brier_gap_scale`) so that the gap is
  ``gap`` exactly, in expectation. With ``nested=False`` the models share nothing: A sees u
  (``s_u = 1``), B sees only v, with ``s_v > 1`` chosen so that
  ``E[Var(q | u)] − E[Var(q | v)] = gap`` — their errors are far less correlated, the harder
  case for a paired test.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import erfinv, expit

INTERCEPT = -0.5
SCALE = 1.0
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(48)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def _expected_truth(seen: np.ndarray, unseen_sd: float) -> np.ndarray:
    """``E[sigmoid(c + seen + t)]`` for ``t ~ N(0, unseen_sd²)`` (Gauss–Hermite)."""
    return expit(INTERCEPT + seen[:, None] + unseen_sd * _NODES[None, :]) @ _WEIGHTS


def _groups(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({"group": rng.choice(np.array(["a", "b", "c", "d"]), size=n),
                         "site": rng.choice(np.array(["north", "south"]), size=n)})


def exchangeable_pair(n: int, seed: int, features: str = "independent"
                      ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray, pd.DataFrame]:
    """``(y, {"A": p_a, "B": p_b}, X, groups)`` of two exchangeable calibrated models."""
    rng = np.random.default_rng(seed)
    u, v = SCALE * rng.standard_normal(n), SCALE * rng.standard_normal(n)
    y = (rng.random(n) < expit(INTERCEPT + u + v)).astype(np.int64)
    models = {"A": _expected_truth(u, SCALE), "B": _expected_truth(v, SCALE)}
    X = rng.standard_normal((n, 1)) if features == "independent" else np.column_stack([u, v])
    return y, models, X, _groups(n, rng)


@lru_cache(maxsize=8)
def brier_gap_scale(gap: float) -> float:
    """``s_v`` with ``E[Var(q | u)] = gap`` for ``s_u = SCALE`` (numerical integration over
    u on a 2,000-point quantile grid, root by Brent's method)."""
    u = SCALE * np.sqrt(2.0) * _erfinv_grid(2_000)

    def excess(sd: float) -> float:
        q = expit(INTERCEPT + u[:, None] + sd * _NODES[None, :])
        return float(np.mean((q**2) @ _WEIGHTS - (q @ _WEIGHTS) ** 2)) - gap

    return float(brentq(excess, 1e-3, 5.0, xtol=1e-10))


def _mean_variance(seen_sd: float, unseen_sd: float) -> float:
    """``E[Var(q | s)]`` for a model that sees ``s ~ N(0, seen_sd²)`` of the truth's logit and
    not the rest, ``N(0, unseen_sd²)``."""
    s = seen_sd * np.sqrt(2.0) * _erfinv_grid(2_000)
    q = expit(INTERCEPT + s[:, None] + unseen_sd * _NODES[None, :])
    return float(np.mean((q**2) @ _WEIGHTS - (q @ _WEIGHTS) ** 2))


@lru_cache(maxsize=8)
def disjoint_gap_scale(gap: float) -> float:
    """``s_v > SCALE`` with ``E[Var(q | u)] − E[Var(q | v)] = gap`` (Brent's method)."""
    return float(brentq(lambda sd: _mean_variance(SCALE, sd) - _mean_variance(sd, SCALE) - gap,
                        SCALE, 5.0, xtol=1e-10))


def _erfinv_grid(m: int) -> np.ndarray:
    """``erfinv`` at m equally spaced probabilities: standard-normal quantiles / √2."""
    return erfinv(2.0 * (np.arange(m) + 0.5) / m - 1.0)


def better_pair(n: int, seed: int, gap: float = 0.005, nested: bool = True
                ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray, pd.DataFrame]:
    """``(y, {"A": p_a, "B": p_b}, X, groups)`` where B's expected Brier score is lower than
    A's by ``gap`` (both calibrated; B knows more, or, not nested, knows other and more)."""
    rng = np.random.default_rng(seed)
    if not nested:
        sd = disjoint_gap_scale(gap)
        u, v = SCALE * rng.standard_normal(n), sd * rng.standard_normal(n)
        y = (rng.random(n) < expit(INTERCEPT + u + v)).astype(np.int64)
        models = {"A": _expected_truth(u, sd), "B": _expected_truth(v, SCALE)}
        return y, models, rng.standard_normal((n, 1)), _groups(n, rng)
    sd = brier_gap_scale(gap)
    u, v = SCALE * rng.standard_normal(n), sd * rng.standard_normal(n)
    truth = expit(INTERCEPT + u + v)
    y = (rng.random(n) < truth).astype(np.int64)
    models = {"A": _expected_truth(u, sd), "B": truth}
    return y, models, rng.standard_normal((n, 1)), _groups(n, rng)
