"""The global calibration metrics at n = 10⁶ against the baseline a user would otherwise run.

    .venv/bin/python -m benchmarks.metrics [--n 1000000]

None of the peer libraries for these numbers (relplot for the smooth ECE, statsmodels'
lowess for the ICI, R's rms) is installed in the project's environment, so every baseline is
the straightforward numpy / scikit-learn computation of the same definition, run in this
process on the same data and checked to agree; where a baseline would take minutes it is
timed on a subsample and extrapolated by its linear cost (stated in its row). The ratio is
baseline time / ours (wall clock); "ours cpu" is the process CPU time of one call, which
does not grow when other processes share the cores (it sums all threads). Target (issue 10):
every metric under 1 s at n = 10⁶ except those that resample.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from benchmarks.common import measure
from core import metrics
from core.data.validation import logit, sigmoid
from core.metrics import clinical, decomposition, smooth
from core.stattests import clinical as clinical_tests
from core.stattests import cumulative as cumulative_tests

SUBSAMPLE = 5_000


def direct_smooth_ece(f: np.ndarray, y: np.ndarray, sigma: float, points: int = 400) -> float:
    """smECE_σ by direct kernel sums: every row against every point of a mesh, the reflected
    kernel as a sum over images (t ∓ f − 2k, |k| ≤ 2)."""
    t = np.linspace(0.0, 1.0, points)
    total = np.zeros(points)
    for start in range(0, f.size, 2_000):
        fs, rs = f[start:start + 2_000], (y - f)[start:start + 2_000]
        K = np.zeros((points, fs.size))
        for k in range(-2, 3):
            for image in (fs + 2 * k, 2 * k - fs):
                d = (t[:, None] - image[None, :]) / sigma
                K += np.exp(-0.5 * d * d)
        total += K @ rs
    total /= f.size * math.sqrt(2 * math.pi) * sigma
    return float(np.trapezoid(np.abs(total), t))


def bisected_smooth_ece(f: np.ndarray, y: np.ndarray) -> float:
    """The fixed point by ten bisection steps of the direct sums (the reference code's rule)."""
    low, high = 0.0, 1.0
    for _ in range(10):
        mid = (low + high) / 2
        low, high = (mid, high) if mid < direct_smooth_ece(f, y, mid) else (low, mid)
    return direct_smooth_ece(f, y, high)


def literal_lowess_ici(p: np.ndarray, y: np.ndarray, span: float = 2 / 3) -> float:
    """ICI with lowess fitted over every row (no pooling) at 101 points, then interpolated."""
    order = np.argsort(p)
    x, v = p[order], y[order].astype(float)
    q = int(span * x.size)
    at = np.linspace(x[0], x[-1], 101)
    fitted = np.empty_like(at)
    for j, g in enumerate(at):
        d = np.abs(x - g)
        h = np.partition(d, q - 1)[q - 1]
        w = np.where(d < h, (1 - (d / h) ** 3) ** 3, 0.0)
        sw = w.sum()
        a = (w * x).sum() / sw
        c = (w * (x - a) ** 2).sum() / sw
        fitted[j] = (w * v).sum() / sw + (g - a) * (w * (x - a) * v).sum() / sw / c
    return float(np.mean(np.abs(np.interp(p, at, fitted) - p)))


def sklearn_slope(p: np.ndarray, y: np.ndarray) -> float:
    model = LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000)
    return float(model.fit(logit(p)[:, None], y).coef_[0, 0])


def numpy_spiegelhalter(p: np.ndarray, y: np.ndarray) -> float:
    w = 1 - 2 * p
    return float(np.sum((y - p) * w) / np.sqrt(np.sum(w * w * p * (1 - p))))


def sklearn_murphy(p: np.ndarray, y: np.ndarray) -> float:
    fitted = IsotonicRegression(y_min=0, y_max=1).fit(p, y).predict(p)
    return float(np.mean((p - y) ** 2) - np.mean((fitted - y) ** 2))


def numpy_kuiper(p: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(p)
    c = np.concatenate([[0.0], np.cumsum(y[order] - p[order]) / p.size])
    return float(c.max() - c.min())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    args = parser.parse_args()
    n = args.n
    rng = np.random.default_rng(0)
    L = rng.normal(-0.5, 1.5, n)
    p = sigmoid(L)
    y = (rng.random(n) < sigmoid(0.8 * L)).astype(np.int64)
    sub = slice(0, SUBSAMPLE)
    print(f"Global calibration metrics, n = {n:,} (binary, slope 0.8 on the logit)")
    print(f"{'metric':<34}{'ours s':>9}{'ours cpu':>9}{'baseline s':>12} {'ratio':>9}  baseline")
    cpu = {}

    def timed(function):
        """``measure`` plus the process CPU time of one more call (insensitive to other
        processes competing for the cores)."""
        result = measure(function)
        start = time.process_time()
        function()
        cpu["last"] = time.process_time() - start
        return result

    def line(name: str, ours: float, base: float | None, what: str) -> None:
        ratio = f"{base / ours:.1f}x" if base is not None else "-"
        base_s = f"{base:.3f}" if base is not None else "-"
        print(f"{name:<34}{ours:>9.3f}{cpu['last']:>9.3f}{base_s:>12} {ratio:>9}  {what}")

    metrics.ece(p[:1000], y[:1000])  # warm-up: imports, BLAS threads
    ours, _, value = timed(lambda: smooth.smooth_ece(p, y))
    start = time.perf_counter()
    reference = bisected_smooth_ece(p[sub], y[sub].astype(float))
    base = (time.perf_counter() - start) * n / SUBSAMPLE
    assert abs(reference - smooth.smooth_ece(p[sub], y[sub])) < 2e-3
    line("smooth ECE (fixed point)", ours, base,
         f"direct kernel sums, 10 bisections; {SUBSAMPLE:,} rows ×{n // SUBSAMPLE}")

    ours, _, value = timed(lambda: clinical.ici(p, y))
    start = time.perf_counter()
    reference = literal_lowess_ici(p[:100_000], y[:100_000])
    base = (time.perf_counter() - start) * n / 100_000
    assert abs(reference - clinical.ici(p[:100_000], y[:100_000])["ici"]) < 1e-4
    line("ICI, E50, E90, Emax (lowess)", ours, base,
         "lowess over every row (numpy); 100,000 rows ×10")

    ours, _, value = timed(lambda: clinical.calibration_slope(p, y))
    base, _, reference = measure(lambda: sklearn_slope(p, y))
    assert abs(reference - value["slope"]) < 1e-4
    line("calibration slope + intercept", ours, base,
         "sklearn LogisticRegression (slope only, lbfgs)")

    ours, _, value = timed(lambda: clinical_tests.cox_test(p, y))
    line("Cox test (LR χ², 2 df)", ours, None, "no peer in the environment")

    ours, _, value = timed(lambda: clinical_tests.spiegelhalter_test(p, y))
    base, _, reference = measure(lambda: numpy_spiegelhalter(p, y))
    assert math.isclose(reference, value.statistic, rel_tol=1e-9)
    line("Spiegelhalter z test", ours, base, "the formula in numpy (no validation)")

    ours, _, value = timed(lambda: decomposition.brier_decomposition(p, y))
    base, _, reference = measure(lambda: sklearn_murphy(p, y))
    assert math.isclose(reference, value.reliability, rel_tol=1e-6, abs_tol=1e-10)
    line("Brier decomposition (CORP)", ours, base, "sklearn IsotonicRegression fit+predict")

    ours, _, value = timed(lambda: decomposition.log_loss_decomposition(p, y))
    line("log-loss calibration/refinement", ours, base, "(same isotonic baseline)")

    ours, _, value = timed(lambda: cumulative_tests.cumulative_test(p, y, "kuiper"))
    base, _, reference = measure(lambda: numpy_kuiper(p, y))
    assert math.isclose(reference, value.parameters["metric"], rel_tol=1e-9)
    line("cumulative Kuiper test", ours, base, "argsort + cumsum (no ties, no p-value)")

    ours, _, _ = timed(lambda: metrics.ace_top_label(p, y))
    line("ACE (top-label)", ours, None, "-")
    ours, _, _ = timed(lambda: metrics.ece(p, y, norm="l2"))
    line("ECE (L2)", ours, None, "-")

    print("\nWith resampling (not held to 1 s):")
    ours, _, _ = timed(lambda: smooth.smooth_reliability(p, y, n_resamples=20))
    line("smooth diagram + band, B = 20", ours, None, "-")


if __name__ == "__main__":
    main()
