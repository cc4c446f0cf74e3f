"""Which test of a difference of two squared calibration errors holds its level: the candidates
weighed for ``core.compare.squared_errors`` (README *Comparing models*), on dense kernel
matrices (n of a few hundred rows; the long study of the test kept is
``benchmarks/compare_study.py --squared-reps``).

    .venv/bin/python -m benchmarks.compare_candidates [--reps 200] [--n 600] [--draws 200]

Statistics: the debiased ECE² (U-statistic over pairs of rows in the same of 15 equal-width
bins, weight (n − 1)/(n_b − 1)) and the KLCE² (Gaussian kernel on prediction and one audit
feature, bandwidths by the median heuristic on the champion), difference D = U_B − U_A with
kernel g_ij = k_B e_Bi e_Bj − k_A e_Ai e_Aj. Candidates, each at α = 0.05:

* ``swap``: paired randomisation test — each row's two predictions swapped with probability ½
  (exact when the two models are exchangeable given the row);
* ``normal``: D over the unbiased variance estimate of a U-statistic (Hoeffding: linear part
  from T₃ = Σ r_i² − Σ g_ij², degenerate part from Σ g_ij², θ² from the 4-fold sum);
* ``wild``: wild bootstrap (Rademacher signs) of the empirically centred kernel — the
  degenerate part alone;
* ``wild + linear``: the wild draws plus an independent normal linear part of variance
  max(v̂, 0), unstudentised;
* ``studentised wild``: t = D/s against the wild world's t* — without a linear part;
* ``studentised wild + linear``: the same with the linear part (variance max(v̂, 0)) in the
  bootstrap world;
* ``… shrunk`` (kept, ``core.compare.squared_errors``): the bootstrap world's linear variance
  ``max(v̂ − sd(v̂*), 0)``, v̂* the linear-variance estimates of the wild draws (its noise
  when there is no linear part).

Scenarios (``core.compare.simulate``): two exchangeable calibrated models; both calibrated of
different sharpness; equally miscalibrated in opposite directions (logit shift ±0.4, and
±0.15: where the linear part is of the order of its noise); and, for power, the challenger
overconfident (temperature 1.5). Rates ± binomial SE.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from core.compare.simulate import exchangeable_pair, opposite_pair, sharpness_pair, worse_pair
from core.kernels.tiles import median_heuristic

ALPHA = 0.05
SCENARIOS = {
    "exchangeable, calibrated": exchangeable_pair,
    "calibrated, different sharpness": sharpness_pair,
    "opposite miscalibration ±0.4": opposite_pair,
    "opposite miscalibration ±0.15": lambda n, seed: opposite_pair(n, seed, 0.15),
    "power: challenger overconfident": worse_pair,
}
CANDIDATES = ("swap", "normal", "wild", "wild + linear", "studentised wild",
              "studentised wild + linear", "studentised wild + linear, shrunk (kept)")


def gaussian(a: np.ndarray, b: np.ndarray, h: float) -> np.ndarray:
    return np.exp(-0.5 * ((a[:, None] - b[None, :]) / h) ** 2)


def bins_of(p: np.ndarray, n_bins: int = 15) -> np.ndarray:
    return np.searchsorted(np.linspace(0, 1, n_bins + 1)[1:-1], p, side="left")


def bin_kernel(bins: np.ndarray) -> np.ndarray:
    n = bins.size
    counts = np.bincount(bins)
    K = (bins[:, None] == bins[None, :]) * ((n - 1) / np.maximum(counts[bins] - 1, 1))[:, None]
    np.fill_diagonal(K, 0.0)
    return K


def off_diagonal(K: np.ndarray, e: np.ndarray) -> np.ndarray:
    H = K * np.outer(e, e)
    np.fill_diagonal(H, 0.0)
    return H


def decomposition_tests(G: np.ndarray, draws: int, rng: np.random.Generator) -> dict[str, float]:
    """Every candidate but the swap test, for the difference kernel G (zero diagonal)."""
    n = G.shape[0]
    pairs = n * (n - 1)
    total, r, squares = G.sum(), G.sum(axis=1), float((G * G).sum())
    D = total / pairs
    t3 = (r * r).sum() - squares
    t4 = total**2 - 4 * (r * r).sum() + 2 * squares
    theta2 = t4 / (n * (n - 1) * (n - 2) * (n - 3))
    zeta1 = t3 / (n * (n - 1) * (n - 2)) - theta2
    zeta2 = squares / pairs - theta2
    v_normal = (4 * (n - 2) * zeta1 + 2 * zeta2) / pairs
    out = {"normal": 2 * stats.norm.sf(abs(D) / np.sqrt(max(v_normal, 1e-300)))}
    linear = max(4 * t3 / pairs**2, 0.0)
    signs = rng.choice([-1.0, 1.0], size=(n, draws))
    a = r / (n - 1)
    Gc = G - a[:, None] - a[None, :] + D
    np.fill_diagonal(Gc, 0.0)
    GE = Gc @ signs
    W = np.einsum("ib,ib->b", signs, GE) / pairs
    out["wild"] = (1 + np.count_nonzero(np.abs(W) >= abs(D))) / (1 + draws)
    if linear > 0:
        tail = (stats.norm.cdf((-abs(D) - W) / np.sqrt(linear))
                + stats.norm.sf((abs(D) - W) / np.sqrt(linear)))
    else:
        tail = (np.abs(W) >= abs(D)).astype(float)
    out["wild + linear"] = (1 + tail.sum()) / (1 + draws)
    centred_squares = float((Gc * Gc).sum())
    v_wild = 2 * centred_squares / pairs**2
    noise = 4 * ((GE * GE).sum(axis=0) - centred_squares) / pairs**2
    world_plain = W / np.sqrt(v_wild + np.maximum(noise, 0))
    t_plain = D / np.sqrt(v_wild + linear)
    out["studentised wild"] = (1 + np.count_nonzero(np.abs(world_plain) >= abs(t_plain))) / (
        1 + draws)
    normal = rng.standard_normal(draws)
    for name, v in (("studentised wild + linear", linear),
                    ("studentised wild + linear, shrunk (kept)", max(linear - noise.std(), 0))):
        world = (W + np.sqrt(v) * normal) / np.sqrt(v_wild + np.maximum(v + noise, 0))
        out[name] = (1 + np.count_nonzero(np.abs(world) >= abs(t_plain))) / (1 + draws)
    return out


def swap_ece(bins_a, bins_b, e_a, e_b, draws, rng, n_bins=15) -> float:
    n = e_a.size

    def ece2(bins: np.ndarray, e: np.ndarray) -> np.ndarray:
        columns = bins.shape[1]
        offsets = (bins + n_bins * np.arange(columns)[None, :]).ravel()
        size = n_bins * columns
        count = np.bincount(offsets, minlength=size).reshape(columns, n_bins)
        s1 = np.bincount(offsets, e.ravel(), minlength=size).reshape(columns, n_bins)
        s2 = np.bincount(offsets, (e * e).ravel(), minlength=size).reshape(columns, n_bins)
        return np.where(count >= 2, (s1 * s1 - s2) / (n * np.maximum(count - 1, 1)), 0).sum(1)

    observed = ece2(bins_b[:, None], e_b[:, None])[0] - ece2(bins_a[:, None], e_a[:, None])[0]
    swap = rng.random((n, draws)) < 0.5
    A = ece2(np.where(swap, bins_b[:, None], bins_a[:, None]),
             np.where(swap, e_b[:, None], e_a[:, None]))
    B = ece2(np.where(swap, bins_a[:, None], bins_b[:, None]),
             np.where(swap, e_a[:, None], e_b[:, None]))
    return (1 + np.count_nonzero(np.abs(B - A) >= abs(observed))) / (1 + draws)


def swap_kernel(KAA, KBB, KAB, e_a, e_b, observed, draws, rng) -> float:
    """The swapped models' U-statistics from the stacked 2n × 2n kernel's blocks."""
    n = e_a.size
    swap = rng.random((n, draws)) < 0.5

    def u(v: np.ndarray, w: np.ndarray) -> np.ndarray:
        q = (np.einsum("ib,ib->b", v, KAA @ v) + 2 * np.einsum("ib,ib->b", v, KAB @ w)
             + np.einsum("ib,ib->b", w, KBB @ w))
        return (q - (v * v).sum(0) - (w * w).sum(0)) / (n * (n - 1))

    ea, eb = e_a[:, None], e_b[:, None]
    d = u(np.where(swap, ea, 0), np.where(swap, 0, eb)) - u(np.where(swap, 0, ea),
                                                            np.where(swap, eb, 0))
    return (1 + np.count_nonzero(np.abs(d) >= abs(observed))) / (1 + draws)


def one(make, n: int, seed: int, draws: int) -> dict[tuple[str, str], float]:
    y, models, X, _ = make(n, seed)
    a, b = models["A"], models["B"]
    e_a, e_b = y - a, y - b
    rng = np.random.default_rng(seed + 99)
    out = {}
    bins_a, bins_b = bins_of(a), bins_of(b)
    G = off_diagonal(bin_kernel(bins_b), e_b) - off_diagonal(bin_kernel(bins_a), e_a)
    out.update({("ECE²", k): p for k, p in decomposition_tests(G, draws, rng).items()})
    out[("ECE²", "swap")] = swap_ece(bins_a, bins_b, e_a, e_b, draws, rng)
    h = median_heuristic(a)
    x = (X[:, 0] - X[:, 0].mean()) / X[:, 0].std()
    Kx = gaussian(x, x, median_heuristic(x))
    KAA, KBB, KAB = gaussian(a, a, h) * Kx, gaussian(b, b, h) * Kx, gaussian(a, b, h) * Kx
    G = off_diagonal(KBB, e_b) - off_diagonal(KAA, e_a)
    out.update({("KLCE²", k): p for k, p in decomposition_tests(G, draws, rng).items()})
    out[("KLCE²", "swap")] = swap_kernel(KAA, KBB, KAB, e_a, e_b, G.sum() / (n * (n - 1)),
                                         draws, rng)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=int, default=600)
    parser.add_argument("--draws", type=int, default=200)
    args = parser.parse_args()
    start = time.perf_counter()
    rates = {}
    for name, make in SCENARIOS.items():
        counts: dict[tuple[str, str], int] = {}
        for seed in range(args.reps):
            for key, p in one(make, args.n, seed, args.draws).items():
                counts[key] = counts.get(key, 0) + (p <= ALPHA)
        rates[name] = {k: v / args.reps for k, v in counts.items()}
    se = np.sqrt(ALPHA * (1 - ALPHA) / args.reps)
    print(f"Rejection rates at α = {ALPHA}, n = {args.n}, B = {args.draws}, {args.reps} data "
          f"sets per scenario (a level's binomial SE at 0.05: {se:.3f})\n")
    print("| statistic | test | " + " | ".join(SCENARIOS) + " |")
    print("|---|---" + "|---:" * len(SCENARIOS) + "|")
    for statistic in ("ECE²", "KLCE²"):
        for test in CANDIDATES:
            cells = " | ".join(f"{rates[s][(statistic, test)]:.3f}" for s in SCENARIOS)
            print(f"| {statistic} | {test} | {cells} |")
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
