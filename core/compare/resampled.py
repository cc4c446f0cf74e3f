"""Paired bootstrap differences of the calibration errors that are not means of per-row
scores: the binned ECE, the smooth ECE and the KLCE².

One set of bootstrap resamples of the rows is drawn (row multiplicities ``w_b``, the generator
of :func:`core.metrics.bootstrap.bootstrap_blocks`), and in every resample *both* models are
evaluated on the same rows — the pairing: a row that is drawn twice counts twice for A and
for B, so what the two models share (the labels, the hard rows) cancels in the difference.
The difference's standard error is the standard deviation of the B resampled differences
``Δ*_b``, and the interval and p-value are the normal ones
(:func:`core.compare.paired.normal_inference`): ``Δ̂ ± z·se``, ``2Φ(−|Δ̂|/se)``.

* **ECE** (Naeini et al. 2015; Guo et al. 2017, eq. 3): ``Σ_b (n_b/n)|ȳ_b − p̄_b|`` over the
  *same* ``n_bins`` equal-width bins ``[0, 1/K), …, [(K−1)/K, 1]`` for both models (quantile
  bins would differ between models); each row falls in the bin of its own model's confidence.
  Every resample's bin sums come from prefix sums (:class:`core.metrics.bootstrap.SortedScore`),
  with no loop over resamples.
* **Smooth ECE** (Błasiok & Nakkiran 2023): each model's σ is its fixed point on the data,
  held in the resamples (as the smooth reliability diagram's band is); one FFT per model and
  resample.
* **KLCE²** (Vashistha & Farahi, eq. 4), both models with the same kernel (the bandwidths of
  ``spec`` resolved on the champion's predictions and audit features). For multiplicities
  ``w`` the resampled U-statistic over pairs of distinct draws is
  ``(Σ_{i,j} w_i w_j K_ij e_i e_j − Σ_i w_i e_i²) / (n(n − 1))``: one tile-engine pass of
  ``diag(Eᵀ K E)`` with columns ``w_b ∘ e`` per model (:func:`core.kernels.tiles.quadratic_forms`).

Validity (measured by ``benchmarks/compare_study.py``, README *Comparing models*): under two
exchangeable models the difference of any of these statistics has mean 0, but where both
models are calibrated the ECE and the smooth ECE are non-smooth at 0 (a sum of |ȳ_b − p̄_b|,
an integral of |r̂|) and the KLCE² of locally calibrated models is a degenerate U-statistic
(its first projection vanishes) — the regimes in which the row bootstrap overstates the
variance. The tests are then conservative, not liberal: at α = 0.05 over 1,000 data sets of
2,000 rows they rejected 0.012 (ECE), 0.001 (smooth ECE) and 0.000 (KLCE², locally calibrated
models; 0.033 when both are equally locally miscalibrated). A difference they report is
real; their power is lower than their nominal level suggests.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.compare.paired import PairedDifference, normal_inference
from core.kernels.spec import KernelInputs
from core.kernels.tiles import quadratic_forms
from core.metrics.binning import ece_from_sums
from core.metrics.bootstrap import SortedScore, bootstrap_blocks
from core.metrics.smooth import smooth_ece_at, smooth_ece_of

#: Largest number of resample columns per tile-engine pass (memory n × columns × 8 bytes).
MAX_COLUMNS = 512

Pair = tuple[np.ndarray, np.ndarray]


def _multiplicities(block: np.ndarray, n: int) -> np.ndarray:
    """Row multiplicities ``(rows, n + 1)`` of a block of resampled index sets (last column 0,
    the padding :meth:`SortedScore.bin_sums` expects)."""
    rows = block.shape[0]
    offsets = (n + 1) * np.arange(rows)[:, None]
    counts = np.bincount((block + offsets).ravel(), minlength=rows * (n + 1))
    return counts.reshape(rows, n + 1).astype(np.float64)


def binned_differences(
    pair_a: Pair, pair_b: Pair, n_bins: int, n_resamples: int, seed: int | None,
    alpha: float, progress: Callable[[float, str], None] | None = None,
) -> dict[str, PairedDifference]:
    """Paired-bootstrap differences B − A of the ECE (shared equal-width bins) and the smooth
    ECE (each model's fixed-point σ) of two (confidence, outcome) pairs on the same rows."""
    n = pair_a[0].shape[0]
    sorted_scores = (SortedScore(*pair_a), SortedScore(*pair_b))
    every_row = np.r_[np.ones(n), 0.0][None, :]
    ece = [float(ece_from_sums(*s.bin_sums(every_row, n_bins, ("uniform",))["uniform"],
                               "l1")[0]) for s in sorted_scores]
    smooth = [smooth_ece_of(*pair) for pair in (pair_a, pair_b)]  # (value, σ) per model
    draws: dict[str, list[np.ndarray]] = {"ece": [], "smooth_ece": []}
    done = 0
    for block in bootstrap_blocks(n, n_resamples, seed):
        weights = _multiplicities(block, n)
        values = [ece_from_sums(*s.bin_sums(weights, n_bins, ("uniform",))["uniform"], "l1")
                  for s in sorted_scores]
        draws["ece"].append(values[1] - values[0])
        smooth_draws = np.array([
            [smooth_ece_at(*pair, sigma, w[:n]) for pair, (_, sigma) in
             zip((pair_a, pair_b), smooth, strict=True)] for w in weights])
        draws["smooth_ece"].append(smooth_draws[:, 1] - smooth_draws[:, 0])
        done += block.shape[0]
        if progress is not None:
            progress(done / n_resamples, "Bootstrapping the ECE differences…")
    result = {}
    for key, (value_a, value_b) in (("ece", ece), ("smooth_ece", [v for v, _ in smooth])):
        resampled = np.concatenate(draws[key])
        variance = float(np.var(resampled, ddof=1))
        result[key] = normal_inference(
            value_a, value_b, value_b - value_a, variance, float(np.sqrt(variance)), alpha,
            f"paired bootstrap of rows (B = {n_resamples}), normal interval",
        )
    return result


def klce_difference(
    inputs_a: KernelInputs, inputs_b: KernelInputs, n_resamples: int, seed: int | None,
    alpha: float,
) -> PairedDifference:
    """Paired-bootstrap difference B − A of the KLCE² of two models on the same rows (module
    docstring); both inputs must share the kernel's bandwidths."""
    n = inputs_a.residuals.shape[0]
    weights = np.concatenate([_multiplicities(block, n)[:, :n]
                              for block in bootstrap_blocks(n, n_resamples, seed)])
    values = []
    for inputs in (inputs_a, inputs_b):
        e = inputs.residuals
        E = np.empty((n, n_resamples + 1))
        E[:, 0] = e
        E[:, 1:] = (weights * e).T
        forms = np.concatenate([
            quadratic_forms(inputs.points, E[:, start:start + MAX_COLUMNS], 1.0)
            for start in range(0, E.shape[1], MAX_COLUMNS)])
        # quadratic_forms removes Σ_i w_i² e_i²; pairs of distinct draws keep Σ (w_i² − w_i) e_i²
        forms[1:] += (weights**2 - weights) @ (e * e)
        values.append(forms / (n * (n - 1)))
    resampled = values[1][1:] - values[0][1:]
    variance = float(np.var(resampled, ddof=1))
    return normal_inference(
        values[0][0], values[1][0], values[1][0] - values[0][0], variance,
        float(np.sqrt(variance)), alpha,
        f"paired bootstrap of rows (B = {n_resamples}), same kernel, normal interval",
    )
