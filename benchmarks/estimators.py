"""Calibration-estimator risk and selection (Gruber & Bach) at n = 1,000 / 5,000 / 10,000.

    .venv/bin/python -m benchmarks.estimators [--sizes 1000 5000 10000] [--notions ...]

Data: the paper's §5.1 simulation (P ~ Dir(0.04·1₅), y ~ P, f = softmax(0.3 log P)).

Part 1, the risk of eq. 20 for the simulation's h_θ (θ = 1) given as a plain callable: the
tiled U-statistic of :func:`core.estimators.risk` (1,024-row tiles), the same h as a
:class:`~core.estimators.Bilinear` (Gram-matrix identity, no pairs), and a dense baseline that
builds the n × n target and prediction matrices. Ratios are baseline / ours; peak memory is
what ``tracemalloc`` saw during the call — O(tile² + n) for the tiles, O(n²) for the baseline.

Part 2, :func:`core.estimators.select` (5 folds, 20% test, the paper's grids, kernel fits on
at most 2,000 rows) per notion: wall time and peak memory. The baseline is the kkr/ukkr
eigendecomposition by ``numpy.linalg.eigh`` of the dense 2,000-row training kernel, against
the pivoted-Cholesky eigendecomposition the estimators use (both with one BLAS thread, as
``select`` runs them).
"""

from __future__ import annotations

import argparse

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.common import measure, row
from core import estimators
from core.data.validation import softmax
from core.estimators.functions import KernelEigen, _rbf
from core.estimators.risk import notion_inputs

WIDTHS = (10, 11, 11, 11, 11, 11, 9, 9)


def simulation(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    P = np.maximum(rng.dirichlet(np.full(5, 0.04), n), 1e-300)
    P /= P.sum(axis=1, keepdims=True)
    y = np.minimum((P.cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1), 4)
    return softmax(0.3 * np.log(P)), y


def residual(P: np.ndarray) -> np.ndarray:
    return P - softmax(10.0 / 3.0 * np.log(P))


def h_plain(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    return residual(P) @ residual(Q).T


def dense_risk(probs: np.ndarray, y: np.ndarray) -> float:
    """Eq. 20 with the n × n matrices T and H in memory."""
    P, D = notion_inputs(probs, y, "canonical")
    E = (D @ D.T - h_plain(P, P)) ** 2
    np.fill_diagonal(E, 0.0)
    n = P.shape[0]
    return float(E.sum() / (n * (n - 1)))


def part_risk(sizes: list[int]) -> None:
    print("Part 1 — risk of eq. 20 (canonical, h_θ with θ = 1)")
    print(row("n", "dense s", "tiled s", "gram s", "dense MiB", "tiled MiB", "t ratio",
              "MiB ratio", widths=WIDTHS))
    bilinear = estimators.Bilinear(residual)
    for n in sizes:
        probs, y = simulation(n)
        t_dense, m_dense, r_dense = measure(lambda: dense_risk(probs, y))  # noqa: B023
        t_tiled, m_tiled, r_tiled = measure(
            lambda: estimators.risk(h_plain, probs, y, notion="canonical"))  # noqa: B023
        t_gram, _, r_gram = measure(
            lambda: estimators.risk(bilinear, probs, y, notion="canonical"))  # noqa: B023
        assert abs(r_tiled - r_dense) < 1e-10 * r_dense and abs(r_gram - r_dense) < 1e-9 * r_dense
        print(row(f"{n:,}", f"{t_dense:.3f}", f"{t_tiled:.3f}", f"{t_gram:.4f}",
                  f"{m_dense:.1f}", f"{m_tiled:.1f}", f"{t_dense / t_tiled:.2f}",
                  f"{m_dense / m_tiled:.1f}", widths=WIDTHS))


def part_select(sizes: list[int], notions: list[str]) -> None:
    print("\nPart 2 — select(): 5 folds, 20% test, paper grids, kernel fits ≤ 2,000 rows")
    print(row("n", "notion", "select s", "peak MiB", "selected", "CE² est.", widths=(10, 11,
                                                                                      10, 10, 10,
                                                                                      10)))
    for n in sizes:
        probs, y = simulation(n)
        for notion in notions:
            seconds, peak, selection = measure(
                lambda: estimators.select(probs, y, notion=notion))  # noqa: B023
            best = selection.table.loc[selection.table["selected"]].iloc[0]
            print(row(f"{n:,}", notion, f"{seconds:.1f}", f"{peak:.0f}", best["estimator"],
                      f"{best['ce2']:.4f}", widths=(10, 11, 10, 10, 10, 10)))
    print("\nkkr/ukkr eigendecomposition of 2,000 training rows (canonical)")
    probs, y = simulation(2000)
    points, D = notion_inputs(probs, y, "canonical")
    with threadpool_limits(limits=1, user_api="blas"):  # as select() runs them
        t_eigh, m_eigh, _ = measure(lambda: np.linalg.eigh(_rbf(points, points)))
        t_piv, m_piv, eigen = measure(lambda: KernelEigen.fit(points, D))
    print(f"dense eigh: {t_eigh:.2f} s, {m_eigh:.0f} MiB; pivoted Cholesky + SVD: "
          f"{t_piv:.3f} s, {m_piv:.1f} MiB (rank {eigen.values.size}); ratio "
          f"{t_eigh / t_piv:.0f}× time, {m_eigh / m_piv:.0f}× memory")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 10000])
    parser.add_argument("--notions", nargs="+", default=["top-label", "canonical"])
    args = parser.parse_args()
    part_risk(args.sizes)
    part_select(args.sizes, args.notions)


if __name__ == "__main__":
    main()
