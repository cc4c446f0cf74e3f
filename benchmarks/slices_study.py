"""Error rates of slice discovery: level (FWER), false discovery proportion (FDR), power,
interval coverage, and the census demo's top finding.

    .venv/bin/python -m benchmarks.slices_study [--reps 400] [--resamples 200]
        [--power-resamples 1000] [--parts level,fdr,power,census,overconfident] [--seed 0]

Every repetition draws a fresh data set from :mod:`core.data.slice_simulations` and runs
:func:`core.local.discover_slices` at α = 0.05, depth 2, 4 ranges, in FWER mode (B
consistency resamples; the max-|T| p-values are exact-valid at any B, so the level study may
use B = 200) and in FDR mode (Benjamini–Hochberg on the exact per-slice p-values, which do not
depend on B: it runs with B = 1). Rates are printed with their binomial standard error
√(r(1 − r)/R) (at r = 0, √(α(1 − α)/R) as a scale).

* **level** — calibrated data, four settings: the share of data sets with at least one
  flagged slice (FWER mode, and FDR mode, where under the complete null FDR = FWER), beside
  naive per-slice testing (p ≤ 0.05, unadjusted) and the rule the report used before
  (|z| ≥ 3 "strong evidence") on the same data sets.
* **fdr** — the ``mixture`` setting (three planted cells): the mean false discovery
  proportion (a flagged slice is false when none of its rows is affected), in FDR and FWER
  mode, the share of data sets with any false flag, and the share of planted cells whose own
  slice is flagged.
* **power** — ``planted-2pct`` (2 % of 20,000 rows, gap 0.1; the default B = 1,000, whose
  critical value the intervals use): how often that slice is flagged, and is a finding; the
  simultaneous coverage (every slice's true gap — the mean of
  truth − prediction over its rows — inside its interval at once).
* **census** — the census demo's test split: its top three findings.
* **overconfident** — the ``issue`` setting (5,000 rows, calibrated) with the model's logits
  scaled by 2, as is (its mean prediction falls too) and shifted to keep the mean prediction
  (too low at the bottom of its range, too high at the top, all rows' gap 0): how often
  at least one slice cut on the prediction's quantile
  ranges (:data:`core.local.slice_discovery.PREDICTION_COLUMN`, a slicing dimension by
  default, issue 31) is flagged in FWER mode, how often any slice is, and how often any
  slice is in the family without the prediction's ranges (as before issue 31).

The level part runs :func:`core.local.discover_slices` with its defaults, so the prediction's
quantile ranges are in the family it measures.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from core.data.demo import load_demo
from core.data.slice_simulations import simulate_slices
from core.local import discover_slices
from core.local.slice_discovery import PREDICTION_COLUMN

ALPHA = 0.05
LEVEL_SETTINGS = ("categorical", "issue", "numeric-8", "multiclass-5")


def se(rate: float, reps: int) -> float:
    return math.sqrt(max(rate * (1 - rate), ALPHA * (1 - ALPHA) if rate == 0 else 0) / reps)


def cell(rate: float, reps: int) -> str:
    return f"{rate:.3f} ± {se(rate, reps):.3f}"


def level(reps: int, resamples: int, seed: int) -> None:
    print(f"Level on calibrated data: P(at least one slice flagged), α = {ALPHA}, "
          f"{reps} data sets per setting, FWER with B = {resamples}")
    print(f"{'setting':>14} {'tests':>6} {'FWER mode':>15} {'FDR mode':>15} "
          f"{'naive p ≤ α':>15} {'old |z| ≥ 3':>15} {'s/set':>6}")
    for setting in LEVEL_SETTINGS:
        rng = np.random.default_rng([seed, LEVEL_SETTINGS.index(setting)])
        counts = np.zeros(4)
        tests, start = 0, time.perf_counter()
        for rep in range(reps):
            audit = simulate_slices(setting, rng)
            fwer = discover_slices(audit.probs, audit.y, audit.features,
                                   n_resamples=resamples, seed=rep)
            fdr = discover_slices(audit.probs, audit.y, audit.features, error_rate="fdr",
                                  n_resamples=1, seed=rep)
            table = fwer.table
            counts += [fwer.rejects(), fdr.rejects(), (table["p_value"] <= ALPHA).any(),
                       (table["statistic"].abs() >= 3).any()]
            tests = fwer.n_tested
        rates = counts / reps
        print(f"{setting:>14} {tests:>6} " + " ".join(f"{cell(r, reps):>15}" for r in rates)
              + f" {(time.perf_counter() - start) / reps:6.2f}", flush=True)


def false_flags(result, affected: np.ndarray) -> tuple[int, int]:
    """(flagged slices, flagged slices with no affected row)."""
    flagged = np.flatnonzero(result.table["significant"].to_numpy())
    names = result.table["slice"].to_numpy()
    index = {name: k for k, name in enumerate(result.family.names)}
    false = sum(not affected[result.family.mask(index[names[e]])].any() for e in flagged)
    return flagged.size, false


def fdr_study(reps: int, resamples: int, seed: int) -> None:
    print(f"\nFalse discoveries with planted slices (mixture, n = 20,000, three planted "
          f"cells), {reps} data sets")
    print(f"{'mode':>6} {'mean FDP':>15} {'P(any false)':>15} {'flagged/set':>12} "
          f"{'planted found':>15}")
    rng = np.random.default_rng([seed, 10])
    stats = {"fdr": [], "fwer": []}
    for rep in range(reps):
        audit = simulate_slices("mixture", rng)
        for mode in stats:
            result = discover_slices(audit.probs, audit.y, audit.features, error_rate=mode,
                                     n_resamples=resamples if mode == "fwer" else 1, seed=rep)
            flagged, false = false_flags(result, audit.affected)
            found = _found(result, audit.cells)
            stats[mode].append((false / max(flagged, 1), false > 0, flagged, found))
    for mode, rows in stats.items():
        fdp, any_false, flagged, found = (np.asarray(column, dtype=float)
                                          for column in zip(*rows, strict=True))
        fdp_se = fdp.std(ddof=1) / math.sqrt(reps)
        print(f"{mode:>6} {fdp.mean():>8.3f} ± {fdp_se:.3f} {cell(any_false.mean(), reps):>15} "
              f"{flagged.mean():>12.1f} {found.mean():>15.3f}", flush=True)


def _slice_of(family, cell: np.ndarray) -> int | None:
    """The slice holding exactly the rows of ``cell``, if one was tested."""
    for k in np.flatnonzero(family.sizes == cell.sum()):
        if family.mask(k)[cell].all():
            return int(k)
    return None


def _found(result, cells) -> float:
    """Share of the planted ``cells`` (row masks) whose own slice — the same rows — is
    flagged."""
    flagged = set(result.significant["slice"])
    slices = [_slice_of(result.family, cell) for cell in cells]
    return sum(k is not None and result.family.names[k] in flagged
               for k in slices) / max(1, len(cells))


def power(reps: int, resamples: int, seed: int) -> None:
    print(f"\nPower: planted-2pct (a 2 % slice, gap 0.1, n = 20,000), FWER, B = {resamples}, "
          f"{reps} data sets")
    rng = np.random.default_rng([seed, 20])
    flagged = finding = covered = 0
    tests = 0
    for rep in range(reps):
        audit = simulate_slices("planted-2pct", rng)
        result = discover_slices(audit.probs, audit.y, audit.features, n_resamples=resamples,
                                 seed=rep)
        family = result.family
        k = _slice_of(family, audit.cells[0])
        row = result.table[result.table["slice"] == family.names[k]].iloc[0]
        flagged += bool(row["significant"])
        finding += bool(row["finding"])
        true_gap = family.incidence() @ (audit.truth - audit.probs) / family.sizes
        table = result.table.set_index("slice").loc[family.names]
        covered += bool(np.all((table["ci_low"].to_numpy() <= true_gap + 1e-12)
                               & (true_gap <= table["ci_high"].to_numpy() + 1e-12)))
        tests = result.n_tested
    print(f"{tests} tests; planted slice flagged {cell(flagged / reps, reps)}, a finding "
          f"{cell(finding / reps, reps)}; simultaneous coverage of every slice's true gap "
          f"{cell(covered / reps, reps)} (target ≥ {1 - ALPHA:.2f})", flush=True)


def census(resamples: int) -> None:
    test = load_demo("census").split_part("test")
    frame = test.feature_frame
    result = discover_slices(test.probs, test.y, frame, n_resamples=resamples,
                             class_names=test.classes)
    print(f"\nCensus demo (test split, {test.n:,} rows): {result.n_tested} tests, "
          f"{len(result.findings)} findings; the first three:")
    for _, row in result.findings.head(3).iterrows():
        print(f"  {row['slice']:<32} rows {row['rows']:>5}  gap {row['gap']:+.3f} "
              f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]  adjusted p {row['p_adjusted']:.4f}")


def scaled(probs: np.ndarray, keep_mean: bool) -> np.ndarray:
    """sigmoid(2·logit(p)) — with ``keep_mean`` plus the shift c that keeps the mean
    prediction (found by bisection), so the gaps are only at the ends of the range."""
    logit = np.log(probs) - np.log1p(-probs)
    if not keep_mean:
        return 1.0 / (1.0 + np.exp(-2.0 * logit))
    low, high = -10.0, 10.0
    for _ in range(60):
        shift = (low + high) / 2
        if np.mean(1.0 / (1.0 + np.exp(-(2.0 * logit + shift)))) < probs.mean():
            low = shift
        else:
            high = shift
    return 1.0 / (1.0 + np.exp(-(2.0 * logit + (low + high) / 2)))


def overconfident(reps: int, resamples: int, seed: int) -> None:
    for keep_mean in (False, True):
        overconfident_rates(reps, resamples, seed, keep_mean)


def overconfident_rates(reps: int, resamples: int, seed: int, keep_mean: bool) -> None:
    shift = ", shifted to keep the mean prediction" if keep_mean else ""
    print(f"\nOver-confident model (issue setting, n = 5,000, logits × 2{shift}), {reps} data "
          f"sets, FWER with B = {resamples}")
    rng = np.random.default_rng([seed, 20])
    hits = np.zeros(3)
    start = time.perf_counter()
    for rep in range(reps):
        audit = simulate_slices("issue", rng)
        probs = scaled(audit.probs, keep_mean)
        result = discover_slices(probs, audit.y, audit.features, n_resamples=resamples,
                                 seed=rep)
        flagged = result.table[result.table["significant"]]
        without = discover_slices(probs, audit.y, audit.features, n_resamples=resamples,
                                  seed=rep, prediction_ranges=False)
        hits += [flagged["slice"].str.contains(PREDICTION_COLUMN, regex=False).any(),
                 len(flagged) > 0, without.rejects()]
    rates = hits / reps
    print(f"P(a prediction-range slice flagged) = {cell(rates[0], reps)}; "
          f"P(any slice flagged) = {cell(rates[1], reps)}; without the prediction's "
          f"ranges (the family before issue 31): P(any slice flagged) = "
          f"{cell(rates[2], reps)}; "
          f"{(time.perf_counter() - start) / reps:.2f} s per data set", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--power-resamples", type=int, default=1000)
    parser.add_argument("--parts", default="level,fdr,power,census,overconfident")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    parts = args.parts.split(",")
    start = time.perf_counter()
    if "level" in parts:
        level(args.reps, args.resamples, args.seed)
    if "fdr" in parts:
        fdr_study(args.reps, args.resamples, args.seed)
    if "power" in parts:
        power(args.reps, args.power_resamples, args.seed)
    if "census" in parts:
        census(1000)
    if "overconfident" in parts:
        overconfident(args.reps, args.resamples, args.seed)
    print(f"\n{time.perf_counter() - start:,.0f} s in all")


if __name__ == "__main__":
    main()
