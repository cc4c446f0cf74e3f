"""Reported estimates and their intervals (issue 31, item 3): coverage of the 95 % basic
bootstrap intervals of the calibration errors, how often the plug-in value lies outside its
own interval (what the pages showed before) against the reported bias-corrected estimate
(never, by construction), and the mean error of both points against the population value.

    .venv/bin/python -m benchmarks.intervals_study [--reps 100] [--rows 2000]
        [--resamples 200] [--extended-reps 30] [--seed 0]

Each repetition draws a binary table of ``rows`` rows from one model — logits N(0, 1.5²),
labels Bernoulli(sigmoid(logit)), predictions sigmoid(scale·logit) — calibrated
(``scale = 1``) and over-confident (``scale = 2``); the population value of each metric is
its plug-in value on 1,000,000 rows of the same model. Rates carry their binomial standard
error √(r(1 − r)/R).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from core import metrics
from core.metrics.extended import extended_metrics_table

BINNED = ("ECE (L1)", "ECE (L2)", "MCE", "ACE (top-label)", "Debiased squared ECE (L2²)")
EXTENDED = ("Smooth ECE", "ICI", "Brier reliability (REL)", "Log-loss calibration",
            "Cumulative KS (G)", "Cumulative Kuiper (H)")
POPULATION_ROWS = 1_000_000


def draw(rows: int, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    logit = rng.normal(0.0, 1.5, rows)
    y = (rng.random(rows) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)
    return 1.0 / (1.0 + np.exp(-scale * logit)), y


def table(kind: str, p: np.ndarray, y: np.ndarray, resamples: int, seed: int):
    if kind == "binned":
        return metrics.metrics_table(p, y, n_bins=15, n_resamples=resamples, seed=seed)
    return extended_metrics_table(p, y, n_resamples=resamples, seed=seed)


def study(kind: str, names: tuple[str, ...], scale: float, reps: int, rows: int,
          resamples: int, seed: int) -> None:
    p, y = draw(POPULATION_ROWS, scale, seed + 10_000)
    # Every quantity here is ≥ 0; the debiased estimator's population value on 10⁶ rows of a
    # calibrated model is 0 up to its noise (a few 1e-7, either sign), so it is clipped to 0.
    truth = table(kind, p, y, 0, 0).set_index("metric")["value"].clip(lower=0.0)
    counts = {name: np.zeros(3) for name in names}   # covered, value outside, estimate outside
    errors = {name: np.zeros(2) for name in names}   # Σ (value − truth), Σ (estimate − truth)
    began = time.perf_counter()
    for rep in range(reps):
        p, y = draw(rows, scale, seed + rep)
        frame = table(kind, p, y, resamples, rep).set_index("metric")
        for name in names:
            row = frame.loc[name]
            shown = max(row["estimate"], 0.0)
            counts[name] += [row["ci_low"] <= truth[name] <= row["ci_high"],
                             not row["ci_low"] <= row["value"] <= row["ci_high"],
                             not row["ci_low"] <= shown <= row["ci_high"]]
            errors[name] += [row["value"] - truth[name], row["estimate"] - truth[name]]
    model = "calibrated" if scale == 1 else "over-confident"
    print(f"\n{kind} metrics, scale = {scale:g} ({model}), "
          f"n = {rows:,}, B = {resamples}, {reps} data sets, "
          f"{time.perf_counter() - began:.0f} s")
    print("| metric | population value | coverage of the 95 % interval | plug-in value "
          "outside its interval | reported estimate outside | mean error, plug-in | "
          "mean error, estimate |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        rates = counts[name] / reps
        se = np.sqrt(rates * (1 - rates) / reps)
        bias = errors[name] / reps
        print(f"| {name} | {truth[name]:.5f} | {rates[0]:.3f} ± {se[0]:.3f} | "
              f"{rates[1]:.3f} ± {se[1]:.3f} | {rates[2]:.3f} | {bias[0]:+.5f} | "
              f"{bias[1]:+.5f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--extended-reps", type=int, default=30)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    for scale in (1.0, 2.0):
        study("binned", BINNED, scale, options.reps, options.rows, options.resamples,
              options.seed)
        study("extended", EXTENDED, scale, options.extended_reps, options.rows,
              options.resamples, options.seed)


if __name__ == "__main__":
    main()
