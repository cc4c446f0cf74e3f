"""Level and power of the paired comparison of two models (core.compare), and whether the
census demo's planted group is found.

    .venv/bin/python -m benchmarks.compare_study [--reps 1000] [--power-reps 1000]
        [--demo-seeds 50] [--n 2000] [--resamples 200]
        [--squared-reps 1000] [--squared-side-reps 400]

Squared calibration errors (``--squared-reps``): the level of the ECE², smooth ECE² and KLCE²
difference tests (studentised wild bootstrap, ``core.compare.squared_errors``) in three nulls
— two exchangeable calibrated models (``exchangeable_pair``), two calibrated models of
different sharpness (``sharpness_pair``) and two models equally miscalibrated in opposite
directions (``opposite_pair``; the Brier and log-loss differences are nulls there too) — and
their power against an overconfident challenger (``worse_pair``, temperatures 1.25 and 1.5),
at n rows, B draws, α = 0.05.

Level: two exchangeable calibrated models (``core.compare.simulate.exchangeable_pair``: both
the conditional expectation of the truth given independent information of equal size), at
n rows, every criterion, B resamples, α = 0.05: the rejection rate of each paired test, of
each model's own KLCE test, and the family-wise error of the slice table (any group or slice
flagged, Brier or log loss; counted where the slices are null: the unrelated feature's bins
and random groups), in two settings: an audit feature unrelated to everything (both
models locally calibrated) and the two models' own information as features (both equally
locally miscalibrated). Power: the challenger's Brier score lower by 0.005 in expectation
(``better_pair``) at n = 10,000, Brier and log loss, with the challenger knowing the
champion's information and more (nested) and with the two knowing disjoint things. Demo:
the census simulation regenerated with other seeds; the share of data sets whose Asian
group is flagged as worse, whose global Brier score is significantly better, and the
family-wise error among the other race groups (where the challenger is not worse by
construction — it is better for Black and Hispanic applicants, and equal for the others up
to fitting noise). Every rate with its binomial
standard error √(r(1 − r)/R).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from core.compare import CRITERIA, compare_audit, compare_models
from core.compare.simulate import (
    better_pair,
    exchangeable_pair,
    opposite_pair,
    sharpness_pair,
    worse_pair,
)
from core.data.audit_data import AuditData
from core.data.census_demo import CHALLENGER_GROUP, census_simulation
from core.data.demo import demo_mapping

ALPHA = 0.05


def se(rate: float, reps: int) -> float:
    return float(np.sqrt(max(rate * (1 - rate), ALPHA * (1 - ALPHA) if rate == 0 else 0) / reps))


def cell(rate: float, reps: int) -> str:
    return f"{rate:.3f} ± {se(rate, reps):.3f}"


def level(features: str, reps: int, n: int, resamples: int,
          criteria: tuple[str, ...] = CRITERIA) -> dict[str, float]:
    counts: dict[str, int] = {}
    for rep in range(reps):
        y, models, X, groups = exchangeable_pair(n, seed=rep, features=features)
        result = compare_models(y, models, X, groups=groups, n_resamples=resamples, seed=rep,
                                criteria=criteria)
        for row in result.table.itertuples():
            counts[row.criterion] = counts.get(row.criterion, 0) + (row.p_value <= ALPHA)
        for row in result.klce_tests.itertuples():
            key = f"KLCE test of {row.model}"
            counts[key] = counts.get(key, 0) + (row.p_value <= ALPHA)
        flagged = result.slices["p_adjusted"] <= ALPHA
        counts["slices: any flagged"] = counts.get("slices: any flagged", 0) + bool(flagged.any())
        counts["slices: any worse"] = counts.get("slices: any worse", 0) + bool(
            (result.slices["direction"] == "worse").any())
    return {k: v / reps for k, v in counts.items()}


SQUARED = ("ece", "smooth_ece", "klce")
#: The nulls of the squared-error study and the criteria that are nulls in each.
NULLS = {
    "two exchangeable calibrated models": (exchangeable_pair, CRITERIA),
    "both calibrated, different sharpness": (sharpness_pair, SQUARED),
    "equally miscalibrated, opposite directions": (opposite_pair, CRITERIA),
}


def squared_rates(make, reps: int, n: int, resamples: int, criteria: tuple[str, ...],
                  sign: int = 0) -> dict[str, float]:
    """Share of ``reps`` data sets ``make(n, seed)`` in which each criterion's test rejects at
    α (``sign`` +1: only rejections with the challenger worse)."""
    counts = dict.fromkeys(criteria, 0)
    for rep in range(reps):
        y, models, X, _ = make(n, 20_000 + rep)
        result = compare_models(y, models, X, n_resamples=resamples, seed=rep,
                                criteria=criteria)
        for row in result.table.itertuples():
            counts[row.criterion] += row.p_value <= ALPHA and (sign == 0 or
                                                               sign * row.difference > 0)
    return {k: v / reps for k, v in counts.items()}


def squared_study(reps: int, side_reps: int, n: int, resamples: int) -> None:
    """The first null with ``reps`` data sets, the others and the power with ``side_reps``."""
    start = time.perf_counter()
    counts = {name: reps if k == 0 else side_reps for k, name in enumerate(NULLS)}
    print(f"Squared calibration errors at α = {ALPHA}: n = {n:,}, B = {resamples}, data sets "
          f"per column {', '.join(map(str, counts.values()))} (rate ± binomial SE)\n", flush=True)
    columns = {name: squared_rates(make, counts[name], n, resamples, criteria)
               for name, (make, criteria) in NULLS.items()}
    print("| test | " + " | ".join(NULLS) + " |")
    print("|---" + "|---:" * len(NULLS) + "|")
    for criterion in CRITERIA:
        cells = [cell(columns[name][criterion], counts[name]) if criterion in columns[name]
                 else "— (not a null)" for name in NULLS]
        print(f"| {criterion} | " + " | ".join(cells) + " |")
    print(f"\n({time.perf_counter() - start:.0f} s)\n", flush=True)
    start = time.perf_counter()
    print(f"Power: challenger overconfident (logit × temperature), champion calibrated, "
          f"n = {n:,}, {side_reps} data sets; share rejected with B worse\n", flush=True)
    print("| temperature | " + " | ".join(SQUARED) + " |")
    print("|---:" + "|---:" * len(SQUARED) + "|")
    for temperature in (1.25, 1.5):
        rates = squared_rates(lambda n_, seed, t=temperature: worse_pair(n_, seed, t),
                              side_reps, n, resamples, SQUARED, sign=1)
        print(f"| {temperature} | " + " | ".join(cell(rates[c], side_reps) for c in SQUARED)
              + " |", flush=True)
    print(f"\n({time.perf_counter() - start:.0f} s)\n")


def power(reps: int, n: int, nested: bool = True) -> dict[str, float]:
    counts = {"brier": 0, "log_loss": 0}
    for rep in range(reps):
        y, models, X, groups = better_pair(n, seed=10_000 + rep, nested=nested)
        result = compare_models(y, models, criteria=("brier", "log_loss"), seed=rep)
        for row in result.table.itertuples():
            counts[row.criterion] += (row.p_value <= ALPHA) and row.difference < 0
    return {k: v / reps for k, v in counts.items()}


def demo(seeds: int, resamples: int) -> dict[str, float]:
    mapping = demo_mapping("census")
    counts = {"Asian group flagged worse": 0, "global Brier significantly better": 0,
              "another race group flagged worse": 0}
    for seed in range(100, 100 + seeds):
        audit = AuditData.from_mapping(census_simulation(seed=seed), mapping)
        result = compare_audit(audit, "p_challenger", n_resamples=resamples,
                               criteria=("brier", "log_loss"), seed=seed)
        worse = set(result.worse_slices()["slice"])
        counts["Asian group flagged worse"] += f"{CHALLENGER_GROUP[0]} = Asian" in worse
        counts["another race group flagged worse"] += any(
            s.startswith("race = ") and "∧" not in s and s != "race = Asian" for s in worse)
        brier = result.table.set_index("criterion").loc["brier"]
        counts["global Brier significantly better"] += (
            brier.p_value <= ALPHA and brier.difference < 0)
    return {k: v / seeds for k, v in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--power-reps", type=int, default=1000)
    parser.add_argument("--demo-seeds", type=int, default=50)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--squared-reps", type=int, default=0,
                        help="data sets of the squared-error study's exchangeable null (0: skip)")
    parser.add_argument("--squared-side-reps", type=int, default=None,
                        help="data sets of its other nulls and of its power rows (default: as "
                             "--squared-reps)")
    parser.add_argument("--criteria", default=",".join(CRITERIA),
                        help="criteria of the level study (the slices are always compared)")
    args = parser.parse_args()
    criteria = tuple(args.criteria.split(","))

    if args.squared_reps:
        squared_study(args.squared_reps, args.squared_side_reps or args.squared_reps, args.n,
                      args.resamples)
    if args.reps:
        print(f"Level at α = {ALPHA}: two exchangeable calibrated models, n = {args.n:,}, "
              f"B = {args.resamples}, {args.reps} data sets (rate ± binomial SE)\n")
        start = time.perf_counter()
        rates = {f: level(f, args.reps, args.n, args.resamples, criteria)
                 for f in ("independent", "informative")}
        keys = [*CRITERIA, "KLCE test of A", "KLCE test of B", "slices: any flagged",
                "slices: any worse"]
        print("| test | feature unrelated (both locally calibrated) | features = the models' "
              "information (both locally miscalibrated) |")
        print("|---|---:|---:|")
        for key in (k for k in keys if k in rates["independent"]):
            # slices of the informative setting are bins of u and v: there the models truly
            # differ (A knows u), so a flagged slice is a correct finding, not a Type-I error
            other = "— (not a null)" if key.startswith("slices") else \
                cell(rates["informative"][key], args.reps)
            print(f"| {key} | {cell(rates['independent'][key], args.reps)} | {other} |")
        print(f"\n({time.perf_counter() - start:.0f} s)\n")
    for nested in (True, False) if args.power_reps else ():
        start = time.perf_counter()
        rates = power(args.power_reps, 10_000, nested)
        kind = "B knows A's information and more" if nested else "A and B know disjoint things"
        print(f"Power: challenger's Brier score lower by 0.005 ({kind}), n = 10,000, "
              f"{args.power_reps} data sets: Brier {cell(rates['brier'], args.power_reps)}, "
              f"log loss {cell(rates['log_loss'], args.power_reps)} "
              f"({time.perf_counter() - start:.0f} s)\n")
    if args.demo_seeds:
        start = time.perf_counter()
        rates = demo(args.demo_seeds, args.resamples)
        print(f"Census demo regenerated with {args.demo_seeds} other seeds (test split, "
              "Brier and log loss, max-|T| over all slices):")
        for key, value in rates.items():
            print(f"  {key}: {cell(value, args.demo_seeds)}")
        print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
