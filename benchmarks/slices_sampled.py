"""The slice findings of a large in-memory audit by the streamed audit's method: its time
against the exact in-memory method, and its level.

    .venv/bin/python -m benchmarks.slices_sampled time [--rows 1000000] [--rounds 2]
    .venv/bin/python -m benchmarks.slices_sampled audit [--rows 1000000] [--rounds 2]
    .venv/bin/python -m benchmarks.slices_sampled level [--rows 1000000] [--reps 300]
        [--minutes 30] [--resamples 1000] [--start 0]

``time`` draws :func:`core.data.simulations.scale_table` (locally biased: some slices are
flagged) and runs :func:`core.audit.slice_section` at the audit's default settings on it,
the exact in-memory method (:func:`core.local.discover_slices`: B = 1,000 redrawn labels of
every row, exact Poisson-binomial tails) and the sampled one
(:func:`core.local.slice_sampled.sampled_discovery`: sums over all rows, the null on the
seeded sample of :data:`core.audit.settings.SAMPLE_ROWS` rows) alternating in one process,
``--rounds`` times each; it prints each run's CPU seconds (every thread of the process) and
wall seconds, the ratio of the medians, and whether both flag the same slices.

``audit`` times the whole in-memory audit (:func:`core.audit.run_audit`, all rows, default
settings) of the same table with the findings by either method, alternating.

``level`` draws calibrated tables (``scale_table(local_bias=0)``: calibrated, locally too)
of ``--rows`` rows and counts how often the sampled method flags any slice at α = 0.05: FWER
(the max-|T| step-down on the sample's null, as the audit runs it) and FDR (Benjamini–Hochberg
on the same run's Edgeworth p-values), with the binomial standard error √(α(1 − α)/R). It
stops after ``--reps`` tables or ``--minutes``, whichever comes first, and prints the table
of what it finished.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.common import load, print_level_table
from core.audit import AuditSettings, run_audit, slice_names, slice_section
from core.audit import findings as findings_module
from core.audit.settings import SAMPLE_ROWS
from core.data import AuditData
from core.data.mapping import ColumnMapping
from core.data.simulations import SCALE_FEATURES, scale_table
from core.kernels.resampling import row_sample
from core.local.slice_sampled import sampled_discovery
from core.stattests.multiple_testing import benjamini_hochberg

MAPPING = ColumnMapping(label="label", probs=("prob",), features=SCALE_FEATURES,
                        groups=("region",))
ALPHA = 0.05


def timing(rows: int, rounds: int) -> None:
    data = AuditData.from_mapping(scale_table(rows, seed=0), MAPPING)
    settings = AuditSettings(part="all").findings(
        slice_names(data, tuple(data.feature_frame.columns)))
    print(f"slice_section at {rows:,} rows, B = {settings.slice_resamples:,}; {load()}",
          flush=True)
    seconds: dict[str, list[tuple[float, float]]] = {"exact": [], "sampled": []}
    found = {}
    for _ in range(rounds):
        for method, threshold in (("exact", rows), ("sampled", SAMPLE_ROWS)):
            findings_module.SAMPLE_ROWS = threshold
            cpu, wall = time.process_time(), time.perf_counter()
            result = slice_section(data, settings)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            seconds[method].append((cpu, wall))
            found[method] = set(zip(result.findings["slice"], result.findings["class"],
                                    strict=True))
            print(f"  {method:8s} {cpu:6.2f} s CPU, {wall:6.2f} s wall; "
                  f"{len(found[method])} findings; {load()}", flush=True)
    findings_module.SAMPLE_ROWS = SAMPLE_ROWS
    exact = np.median([c for c, _ in seconds["exact"]])
    sampled = np.median([c for c, _ in seconds["sampled"]])
    print(f"median CPU: exact {exact:.2f} s, sampled {sampled:.2f} s, ratio "
          f"{exact / sampled:.2f}×; the same findings: {found['exact'] == found['sampled']}")
    if found["exact"] != found["sampled"]:
        print(f"  only exact: {sorted(found['exact'] - found['sampled'])}")
        print(f"  only sampled: {sorted(found['sampled'] - found['exact'])}")


def whole_audit(rows: int, rounds: int) -> None:
    data = AuditData.from_mapping(scale_table(rows, seed=0), MAPPING)
    print(f"run_audit at {rows:,} rows; {load()}", flush=True)
    for _ in range(rounds):
        for method, threshold in (("exact", rows), ("sampled", SAMPLE_ROWS)):
            findings_module.SAMPLE_ROWS = threshold
            cpu, wall = time.process_time(), time.perf_counter()
            run_audit(data, AuditSettings(part="all"))
            print(f"  findings {method:8s}: audit {time.process_time() - cpu:6.1f} s CPU, "
                  f"{time.perf_counter() - wall:6.1f} s wall; {load()}", flush=True)
    findings_module.SAMPLE_ROWS = SAMPLE_ROWS


def level(rows: int, reps: int, minutes: float, resamples: int, start: int) -> None:
    flagged = {"fwer": 0, "fdr": 0}
    began = time.perf_counter()
    sample_rows = min(rows, SAMPLE_ROWS)
    print(f"n = {rows:,}, null from a seeded sample of {sample_rows:,}, B = {resamples:,}, at "
          f"most {reps} calibrated tables (seeds {start}…) or {minutes:g} min; {load()}",
          flush=True)
    done = 0
    for rep in range(start, start + reps):
        frame = scale_table(rows, seed=40_000 + rep, local_bias=0.0)
        result = sampled_discovery(frame["prob"].to_numpy(), frame["label"].to_numpy(),
                                   frame[list(SCALE_FEATURES)],
                                   row_sample(rows, SAMPLE_ROWS, rep), n_resamples=resamples,
                                   seed=rep)
        flagged["fwer"] += result.rejects()
        flagged["fdr"] += bool((benjamini_hochberg(result.table["p_value"].to_numpy())
                                <= ALPHA).any())
        done += 1
        elapsed = time.perf_counter() - began
        if done % 10 == 0:
            print(f"  {done} tables: FWER {flagged['fwer'] / done:.3f}, FDR "
                  f"{flagged['fdr'] / done:.3f} ({elapsed:.0f} s; {load()})", flush=True)
        if elapsed > 60 * minutes:
            break
    print(f"{result.n_tested} tests ({result.family.describe()})")
    print_level_table(flagged, done, ALPHA)
    print(f"{time.perf_counter() - began:.0f} s in all; {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("part", choices=["time", "audit", "level"])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--start", type=int, default=0)
    args = parser.parse_args()
    if args.part == "time":
        timing(args.rows, args.rounds)
    elif args.part == "audit":
        whole_audit(args.rows, args.rounds)
    else:
        level(args.rows, args.reps, args.minutes, args.resamples, args.start)


if __name__ == "__main__":
    main()
