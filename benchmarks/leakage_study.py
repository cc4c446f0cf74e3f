"""How often the leakage screen flags a legitimate column, and how often it misses a leak.

    .venv/bin/python -m benchmarks.leakage_study [--reps 200] [--sizes 100,300,1000,3000]

The reference-model workflow grades the evidence that a column holds the outcome
(:mod:`core.data.leakage`), on the training rows:

* *certain* — a single-feature AUC of at least 0.98, or one class confined to values at most
  10% of the other rows take;
* *likely* — the AUC's one-sided 95% lower bound (Hanley & McNeil) at least 0.85, or the
  rows where the column is filled in (or missing) of one class beyond doubt (Wilson's lower
  bound of the share at least 80%, for a class of at most 60% of the rows); a name recorded
  after the outcome is the third rule, which a simulation cannot measure.

Each repetition draws a fresh training part of n rows (binary label, 45% positives, as
COMPAS's ``two_year_recid``) and one column of a known kind:

* legitimate — a numeric column, normal in each class with the classes' means d' apart
  (binormal AUC Φ(d'/√2) = 0.70 … 0.99); the same column cut into 10 quantile levels as text
  (a categorical column, AUC slightly lower); a numeric column filled in for a random 20% of
  the rows and as predictive there (AUC 0.80);
* leaks — the label copied with a share q of rows flipped (AUC 1 − q); a superset of the
  outcome (COMPAS's ``is_recid``: 1 for every positive and for a share c of the negatives,
  AUC 1 − c/2); a text column filled in only for those rows (``r_charge_degree``); a field
  filled in for 24% of the positives and 2% of the negatives (``vr_charge_degree``, AUC 0.61).

The table gives, per n, the share of repetitions flagged *certain*, and *certain or likely*,
± its binomial standard error √(r(1 − r)/R); the rule-by-rule shares are in the last columns
at the largest n. A legitimate column whose AUC is below 0.85 must be flagged in at most 5% of
the parts (the likely rule is a one-sided test of AUC ≥ 0.85 at level 5%); one above 0.85 is
graded *likely* by design — few honest predictors of the outcomes audited here are that strong
alone — and the user adds it back by hand, with a warning on every page.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy.stats import norm

from core.data.leakage import CONFINED_SHARE, LEAK_AUC, LIKELY_AUC
from core.data.leakage_statistics import (
    auc_lower_bound,
    confined_share,
    one_class_presence,
    single_feature_auc,
)

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


def sparse(auc: float, filled: float = 0.2) -> Generator:
    """A legitimate column filled in for a random share of the rows (missing elsewhere)."""
    numeric = binormal(auc)

    def draw(y, rng):
        x = numeric(y, rng).to_numpy()
        return pd.Series(np.where(rng.random(y.size) < filled, x, np.nan))
    return draw


def one_class_field(positive: float = 0.24, negative: float = 0.02) -> Generator:
    """Filled in for a share of the positives and a few negatives (``vr_charge_degree``)."""
    def draw(y, rng):
        filled = rng.random(y.size) < np.where(y == 1, positive, negative)
        return pd.Series(np.where(filled, rng.choice(["(F3)", "(M1)"], y.size), None))
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
    *[("legitimate, numeric", f"{a:.2f}", a, binormal(a)) for a in (0.70, 0.80, 0.83, 0.85,
                                                                    0.90, 0.95, 0.97, 0.98,
                                                                    0.99)],
    ("legitimate, filled in for 20%", "0.80 there", 0.8, sparse(0.8)),
    *[("legitimate, 10 levels", f"≈{a:.2f}", a, binned(a)) for a in (0.90, 0.95, 0.97)],
    *[("leak: label copy, q flipped", f"{1 - q:.3f}", 1 - q, flipped_copy(q))
      for q in (0.0, 0.01, 0.02)],
    *[("leak: superset, share c", f"{1 - c / 2:.3f}", 1 - c / 2, superset(c))
      for c in (0.03, 0.05, 0.08, 0.12, 0.20)],
    ("leak: recorded after, c = 0.08", f"{1 - 0.04:.3f}", 0.96, after_outcome(0.08)),
    ("leak: filled in for 24% / 2%", "0.610", 0.61, one_class_field()),
]


def flags(column: pd.Series, y: np.ndarray) -> tuple[bool, bool, bool, bool]:
    """(AUC ≥ 0.98, confined; AUC's lower bound ≥ 0.85, one-class field) on one part."""
    auc = single_feature_auc(column, y)
    return (auc >= LEAK_AUC, confined_share(column, y)[0] <= CONFINED_SHARE,
            auc_lower_bound(auc, y) >= LIKELY_AUC, one_class_presence(column, y)[1] is not None)


def _share(hits: np.ndarray, reps: int) -> str:
    rate = hits.mean()
    return f"{rate:.3f} ± {np.sqrt(rate * (1 - rate) / reps):.3f}"


def run(sizes: list[int], reps: int) -> pd.DataFrame:
    rows = []
    for name, auc_text, _, draw in SETTINGS:
        row = {"column": name, "AUC": auc_text}
        for n in sizes:
            rng = np.random.default_rng(n)
            hits = np.array([flags(draw(y, rng), y) for y in
                             ((rng.random(n) < POSITIVE_SHARE).astype(np.int64)
                              for _ in range(reps))])
            row[f"certain, n = {n:,}"] = _share(hits[:, :2].any(axis=1), reps)
            row[f"any, n = {n:,}"] = _share(hits.any(axis=1), reps)
            if n == sizes[-1]:
                for j, rule in enumerate(("AUC ≥ 0.98", "confined", "AUC bound ≥ 0.85",
                                          "one-class field")):
                    row[rule] = f"{hits[:, j].mean():.3f}"
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
    print(f"Share of {args.reps} training parts in which the column is flagged certain (AUC "
          f"≥ {LEAK_AUC} or a class confined to ≤ {CONFINED_SHARE:.0%} of the other rows), and "
          f"certain or likely (AUC's lower bound ≥ {LIKELY_AUC}, or a one-class field)\n")
    print("| " + " | ".join(table.columns) + " |")
    print("|---|---|" + "---:|" * (table.shape[1] - 2))
    for record in table.itertuples(index=False):
        print("| " + " | ".join(str(v) for v in record) + " |")
    print(f"\n{time.perf_counter() - start:.0f} s in all.")


if __name__ == "__main__":
    main()
