"""The ``ensemble`` demo (:mod:`core.data.demo`): five ensemble members whose
instance-dependent convex combination is the truth (credal-set calibration test paper, §4 and
App. E.1); the plain ensemble mean is locally miscalibrated.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import softmax

from core.data.demo_draws import bernoulli_draws, half_split

#: Seed of the published demo table (chosen as :data:`core.data.census_demo.CENSUS_SEED` is).
ENSEMBLE_SEED = 3
ENSEMBLE_N = 3_000
ENSEMBLE_MEMBERS = 5
#: RBF length scale of the members' Gaussian-process paths on x in [0, 5].
ENSEMBLE_LENGTH_SCALE = 0.8
#: Random Fourier features per member path.
ENSEMBLE_FOURIER = 200
#: Members are min-max scaled into [floor, 1 - floor] instead of the paper's [0, 1].
ENSEMBLE_FLOOR = 0.03
#: Width of the Gaussian weight bumps: log λ_k(x) = -(x - c_k)²/(2ω²) + const.
ENSEMBLE_WEIGHT_WIDTH = 0.6
ENSEMBLE_X_MAX = 5.0


def _gp_paths(
    x: np.ndarray, omega: np.ndarray, phase: np.ndarray, amplitude: np.ndarray
) -> np.ndarray:
    """K Gaussian-process sample paths at x by random Fourier features, shape (K, len(x)).

    ``f_k(x) = sqrt(2/J) Σ_j a_kj cos(ω_kj x + b_kj)`` with ``a ~ N(0, 1)``,
    ``ω ~ N(0, 1/ℓ²)``, ``b ~ U(0, 2π)`` approximates a GP with kernel ``exp(-(x-x')²/(2ℓ²))``.
    """
    angles = omega[:, :, None] * x[None, None, :] + phase[:, :, None]
    return np.sqrt(2.0 / omega.shape[1]) * np.einsum("kj,kjn->kn", amplitude, np.cos(angles))


def ensemble_weights(x: np.ndarray, n_members: int) -> np.ndarray:
    """Instance-dependent convex weights λ(x), shape (n, K), rows on the simplex.

    ``λ_k(x) ∝ exp(-(x - c_k)²/(2ω²))`` with centres ``c_k`` evenly spaced on [0.5, 4.5] and
    ``ω = ENSEMBLE_WEIGHT_WIDTH``: the log-weights are degree-2 polynomials in x (the paper
    uses scaled degree-2 polynomials), and member k dominates near ``c_k``.
    """
    centres = np.linspace(0.5, ENSEMBLE_X_MAX - 0.5, n_members)
    scores = -((x[:, None] - centres[None, :]) ** 2) / (2.0 * ENSEMBLE_WEIGHT_WIDTH**2)
    return softmax(scores, axis=1)


def ensemble_simulation(
    n: int = ENSEMBLE_N,
    n_members: int = ENSEMBLE_MEMBERS,
    seed: int = ENSEMBLE_SEED,
    include_truth: bool = False,
) -> pd.DataFrame:
    """Binary ensemble whose truth is an instance-dependent convex combination of its members.

    Follows the binary setting of the credal-set calibration test paper (§4.1, App. E.1):
    ``x ~ U[0, 5]``; each member's P(y = 1) is a Gaussian-process path with an RBF kernel,
    min-max scaled (over a 501-point grid of [0, 5]) into [0.03, 0.97] — the paper scales into
    [0, 1], which would put exact zeros and ones into the table. The truth is
    ``p*(x) = Σ_k λ_k(x) f_k(x)`` with :func:`ensemble_weights`, and ``y ~ Bernoulli(p*)``.

    Columns: ``x``, ``y``, ``member_1..member_K``, ``p_mean`` (the plain average of the
    members) and ``split`` (calibration / test halves). With ``include_truth`` also ``p_true``
    and ``weight_1..weight_K`` (for validation code; the demo table omits them).
    """
    if n < 1 or n_members < 2:
        raise ValueError(f"Need n >= 1 and at least 2 members, got n={n}, K={n_members}.")
    rng = np.random.default_rng(seed)
    shape = (n_members, ENSEMBLE_FOURIER)
    omega = rng.standard_normal(shape) / ENSEMBLE_LENGTH_SCALE
    phase = rng.uniform(0.0, 2.0 * np.pi, size=shape)
    amplitude = rng.standard_normal(shape)
    grid = _gp_paths(np.linspace(0.0, ENSEMBLE_X_MAX, 501), omega, phase, amplitude)
    low, high = grid.min(axis=1, keepdims=True), grid.max(axis=1, keepdims=True)

    x = rng.uniform(0.0, ENSEMBLE_X_MAX, size=n)
    unit = np.clip((_gp_paths(x, omega, phase, amplitude) - low) / (high - low), 0.0, 1.0)
    members = (ENSEMBLE_FLOOR + (1.0 - 2.0 * ENSEMBLE_FLOOR) * unit).T
    weights = ensemble_weights(x, n_members)
    truth = np.sum(weights * members, axis=1)
    y = bernoulli_draws(truth, rng)

    frame = pd.DataFrame({"x": x, "y": y})
    for k in range(n_members):
        frame[f"member_{k + 1}"] = members[:, k]
    frame["p_mean"] = members.mean(axis=1)
    frame["split"] = half_split(n, rng)
    if include_truth:
        frame["p_true"] = truth
        for k in range(n_members):
            frame[f"weight_{k + 1}"] = weights[:, k]
    return frame
