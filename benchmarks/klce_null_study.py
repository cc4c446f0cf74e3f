"""Size and power of every KLCE null, measured in one run (the evidence behind the default).

    .venv/bin/python -m benchmarks.klce_null_study [--reps 300] [--resamples 200]

Settings (I-trustworthy §4 and App. A.2; VALIDATION.md):

* size, paper Type-I: x ~ N(0,1), p = sigmoid(−1 + 0.5x), y ~ Bernoulli(p), prediction
  kernel only (feature kernel ≡ 1), N = 50, widths w ∈ {0.01, 0.5, 0.99} with
  k = exp(−(p−p')²/w²), i.e. σ_p = w/√2;
* size, a calibrated model with two audit features: x1, x2 ~ N(0,1), p = sigmoid(x1 − x2/2),
  N = 300, median-heuristic bandwidths;
* power, paper Type-II: x ∈ R^10 standard normal, y ~ Bernoulli(sigmoid(Σx)), model
  sigmoid(Σ_{i<10} x_i), N = 500, with the paper's bandwidths (σ = 5/√2 on p and on x, raw
  features) and with the median heuristic (standardised features);
* power against a purely global miscalibration (what centring gives up): the two-feature
  model with the truth shifted by +0.4 on the logit scale, N = 300, median heuristic.

For every repetition all nulls are computed from one residual matrix (their columns side by
side) in one tile-engine pass. Rejection at p ≤ 0.05 with p = (1 + #{null ≥ T})/(1 + B). The
binomial standard error of a rate r over R repetitions is √(r(1−r)/R).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import expit

from core.klce import STUDIED_NULLS, kernel_inputs, p_values_of_nulls

ALPHA = 0.05


def rejection_rates(draw, reps: int, resamples: int, bandwidths: tuple, standardize: bool,
                    seed: int, nulls: tuple[str, ...] = STUDIED_NULLS) -> dict[str, float]:
    """Share of repetitions each null rejects at ALPHA; ``draw(rng) -> (p, y, X)``."""
    rng = np.random.default_rng(seed)
    rejected = dict.fromkeys(nulls, 0)
    for _ in range(reps):
        p, y, X = draw(rng)
        inputs = kernel_inputs(p, y, X, *bandwidths, standardize=standardize)
        for null, p_value in p_values_of_nulls(inputs, nulls, resamples, rng).items():
            rejected[null] += p_value <= ALPHA
    return {null: count / reps for null, count in rejected.items()}


def type_one_paper(rng: np.random.Generator):
    x = rng.standard_normal(50)
    p = expit(-1.0 + 0.5 * x)
    return p, (rng.random(50) < p).astype(int), None


def calibrated_two_features(rng: np.random.Generator):
    X = rng.standard_normal((300, 2))
    p = expit(X[:, 0] - 0.5 * X[:, 1])
    return p, (rng.random(300) < p).astype(int), X


def global_offset(rng: np.random.Generator):
    """Miscalibrated only globally: the truth is the model shifted by 0.4 on the logit scale."""
    X = rng.standard_normal((300, 2))
    logit = X[:, 0] - 0.5 * X[:, 1]
    return expit(logit), (rng.random(300) < expit(logit + 0.4)).astype(int), X


def type_two_paper(rng: np.random.Generator, n: int = 500, d: int = 10):
    X = rng.standard_normal((n, d))
    y = (rng.random(n) < expit(X.sum(axis=1))).astype(int)
    return expit(X[:, :-1].sum(axis=1)), y, X


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--markdown", help="also write the table as Markdown to this file")
    args = parser.parse_args()
    paper_sigma = 5.0 / np.sqrt(2.0)
    settings = [
        ("size: Type-I paper, N=50, w=0.01", type_one_paper, (0.01 / np.sqrt(2), np.inf), True),
        ("size: Type-I paper, N=50, w=0.5", type_one_paper, (0.5 / np.sqrt(2), np.inf), True),
        ("size: Type-I paper, N=50, w=0.99", type_one_paper, (0.99 / np.sqrt(2), np.inf), True),
        ("size: calibrated, 2 features, N=300", calibrated_two_features, (None, None), True),
        ("power: Type-II, N=500, d=10, paper σ", type_two_paper, (paper_sigma, paper_sigma),
         False),
        ("power: Type-II, N=500, d=10, median", type_two_paper, (None, None), True),
        ("power: logit offset 0.4 only, N=300", global_offset, (None, None), True),
    ]
    print(f"KLCE nulls: rejection rate at α = {ALPHA}, {args.reps} repetitions, "
          f"B = {args.resamples}")
    width = max(len(s[0]) for s in settings)
    print(" " * width + "".join(f"{null:>22}" for null in STUDIED_NULLS))
    table = []
    for seed, (name, draw, bandwidths, standardize) in enumerate(settings):
        start = time.perf_counter()
        rates = rejection_rates(draw, args.reps, args.resamples, bandwidths, standardize, seed)
        table.append((name, rates))
        cells = "".join(f"{rates[null]:>22.3f}" for null in STUDIED_NULLS)
        print(f"{name:<{width}}{cells}   ({time.perf_counter() - start:.0f} s)", flush=True)
    se = np.sqrt(ALPHA * (1 - ALPHA) / args.reps)
    half = np.sqrt(0.25 / args.reps)
    footer = (f"Rejection rates at α = {ALPHA} over {args.reps} repetitions, B = "
              f"{args.resamples}; binomial SE of a rate near {ALPHA}: {se:.3f}, near 0.5: "
              f"{half:.3f}.")
    print(footer)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as sink:
            sink.write(markdown_table(table, footer))


def markdown_table(table: list[tuple[str, dict[str, float]]], footer: str) -> str:
    """The study's rows as a Markdown table (written to the docs by ``--markdown``)."""
    lines = ["| setting | " + " | ".join(STUDIED_NULLS) + " |",
             "|---|" + "---:|" * len(STUDIED_NULLS)]
    for name, rates in table:
        lines.append(f"| {name} | " + " | ".join(f"{rates[n]:.3f}" for n in STUDIED_NULLS)
                     + " |")
    return "\n".join(lines) + f"\n\n{footer} Generated by `python -m benchmarks.klce_null_study`.\n"


if __name__ == "__main__":
    main()
