"""How often the leakage screen flags a legitimate column, and how often it misses a leak.

    .venv/bin/python -m benchmarks.leakage_study [--reps 200] [--sizes 100,300,1000,3000]

The reference-model workflow leaves a column out of the default model features when, on the
training rows, its single-feature AUC is at least 0.98 or one class is confined to values at
most 10% of the other rows take (:mod:`core.data.leakage`). Each repetition draws a fresh
training part of n rows (binary label, 45% positives, as COMPAS's ``two_year_recid``) and one
column of a known kind:

* legitimate — a numeric column, normal in each class with the classes' means d' apart
  (binormal AUC Φ(d'/√2) = 0.90 … 0.99); the same column cut into 10 quantile levels as text
  (a categorical column, AUC slightly lower);
* leaks — the label copied with a share q of rows flipped (AUC 1 − q); a superset of the
  outcome (COMPAS's ``is_recid``: 1 for every positive and for a share c of the negatives,
  AUC 1 − c/2); a text column filled in only for those rows (``r_charge_degree``).

The table gives the share of repetitions flagged (either rule), ± its binomial standard error
√(r(1 − r)/R); the rule-by-rule shares are in the last columns at the largest n.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy.stats import norm

from core.data.leakage import CONFINED_SHARE, LEAK_AUC, confined_share, single_feature_auc

POSITIVE_SHARE = 0.45
Generator = Callable[[np.ndarray, np.random.Generator], pd.Series]


def binormal(auc: float) -> Generator:
    shift = np.sqrt(2.0) * norm.ppf(auc)
    return lambda y, rng: pd.Series(rng.normal(size=y.size) + shift * y)


def binned(auc: float, levels: int = 10) -> Generator:
    numeric = binormal(auc)

    def draw(y, rng):
        x = numeric(y, rng)
        return pd.Series(pd.qcut(x, levels, labels=[f"level {k}" for k in range(levels)])
                         .astype(str))
    return draw


def flipped_copy(q: float) -> Generator:
    return lambda y, rng: pd.Series(np.where(rng.random(y.size) < q, 1 - y, y))


def superset(c: float) -> Generator:
    return lambda y, rng: pd.Series(np.where(y == 1, 1, (rng.random(y.size) < c).astype(int)))


def after_outcome(c: float) -> Generator:
    def draw(y, rng):
        recorded = (y == 1) | (rng.random(y.size) < c)
        return pd.Series(np.where(recorded, rng.choice(["(F3)", "(M1)", "(M2)"], y.size),
                                  None))
    return draw


SETTINGS: list[tuple[str, str, float, Generator]] = [
    *[("legitimate, numeric", f"{a:.2f}", a, binormal(a)) for a in (0.90, 0.95, 0.97, 0.98,
                                                                    0.99)],
    *[("legitimate, 10 levels", f"≈{a:.2f}", a, binned(a)) for a in (0.90, 0.95, 0.97)],
    *[("leak: label copy, q flipped", f"{1 - q:.3f}", 1 - q, flipped_copy(q))
      for q in (0.0, 0.01, 0.02)],
    *[("leak: superset, share c", f"{1 - c / 2:.3f}", 1 - c / 2, superset(c))
      for c in (0.03, 0.05, 0.08, 0.12, 0.20)],
    ("leak: recorded after, c = 0.08", f"{1 - 0.04:.3f}", 0.96, after_outcome(0.08)),
]


def flags(column: pd.Series, y: np.ndarray) -> tuple[bool, bool]:
    """(AUC rule, confinement rule) on one training part."""
    return (single_feature_auc(column, y) >= LEAK_AUC,
            confined_share(column, y)[0] <= CONFINED_SHARE)


def run(sizes: list[int], reps: int) -> pd.DataFrame:
    rows = []
    for name, auc_text, _, draw in SETTINGS:
        row = {"column": name, "AUC": auc_text}
        for n in sizes:
            rng = np.random.default_rng(n)
            hits = np.array([flags(draw(y, rng), y) for y in
                             ((rng.random(n) < POSITIVE_SHARE).astype(np.int64)
                              for _ in range(reps))])
            either = hits.any(axis=1).mean()
            row[f"n = {n:,}"] = f"{either:.3f} ± {np.sqrt(either * (1 - either) / reps):.3f}"
            if n == sizes[-1]:
                row["AUC rule"] = f"{hits[:, 0].mean():.3f}"
                row["confined"] = f"{hits[:, 1].mean():.3f}"
        rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--sizes", default="100,300,1000,3000",
                        help="training rows, comma-separated")
    args = parser.parse_args()
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s]
    except ValueError:
        parser.error("--sizes must be whole numbers separated by commas")
    if args.reps < 1 or not sizes or min(sizes) < 60:
        parser.error("--reps must be at least 1 and every size at least 60")
    start = time.perf_counter()
    table = run(sizes, args.reps)
    print(f"Share of {args.reps} training parts in which the column is flagged (AUC ≥ "
          f"{LEAK_AUC} or a class confined to ≤ {CONFINED_SHARE:.0%} of the other rows)\n")
    print("| " + " | ".join(table.columns) + " |")
    print("|---|---|" + "---:|" * (table.shape[1] - 2))
    for record in table.itertuples(index=False):
        print("| " + " | ".join(str(v) for v in record) + " |")
    print(f"\n{time.perf_counter() - start:.0f} s in all.")


if __name__ == "__main__":
    main()
