"""``calibration-atlas credal``: the Ensembles page's three credal-set tests
(:func:`core.ensembles.compare_ensemble`) from a terminal, written as JSON and CSV."""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd

from core.cli.options import check_member_count, column_list, whole_number
from core.cli.progress import ProgressBar
from core.data.audit_data import AuditData
from core.data.readers import read_table
from core.data.validation import check_fraction
from core.ensembles import ESTIMATORS, NULLS
from core.ensembles.summary import (
    ENSEMBLE_ROWS,
    CredalComparison,
    CredalSettings,
    compare_ensemble,
    tested_rows,
)
from core.report.schema import credal_record, csv_text, indented_json, jsonable
from core.stattests.result import p_text

CREDAL_EPILOG = f"""\
examples:
  calibration-atlas credal ensemble.csv --label y --member p_net --member p_forest \\
      --member p_boost --features age,income
  calibration-atlas credal landcover.csv --label cover --member a_water,a_forest,a_urban \\
      --member b_water,b_forest,b_urban --features lat,lon --null refit --out credal-2026-11

each --member names one member's columns: P(y = 1) for a binary label, one probability per
class (in class order) otherwise. Tests whether some convex combination of the members,
with weights lambda(x) learned from the features, is calibrated (Juergens et al.,
Algorithm 1), beside the plain mean and Mortier et al.'s sampled weights; on at most
{ENSEMBLE_ROWS:,} rows (a seeded sample). Writes DIR/credal.json, DIR/credal.csv and
DIR/credal-weights.csv. Exit status: 0 success, 2 bad input, 1 the files could not be
written."""



def add_credal_command(commands) -> None:
    credal = commands.add_parser(
        "credal", help="test whether some convex combination of ensemble members is calibrated",
        description="The credal-set calibration test with instance-dependent weights.",
        epilog=CREDAL_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    credal.add_argument("data", metavar="DATA", type=Path,
                        help="CSV, TSV or Parquet file, one row per instance; "
                             "example: ensemble.csv")
    credal.add_argument("--label", metavar="COL", required=True,
                        help="column of the observed class; example: --label y")
    credal.add_argument("--member", metavar="COL[,COL...]", type=column_list, action="append",
                        required=True, dest="members",
                        help="one ensemble member's probability column(s); give it once per "
                             "member, at least twice; example: --member p_net --member p_tree")
    credal.add_argument("--features", metavar="COL,...", type=column_list, default=(),
                        help="features the weights lambda(x) may depend on (none: one "
                             "constant combination); example: --features age,income")
    credal.add_argument("--estimator", default="ce2", choices=tuple(ESTIMATORS),
                        help="calibration-error estimator (default ce2); "
                             "example: --estimator cekl")
    credal.add_argument("--null", default="bootstrap", choices=NULLS,
                        help="null distribution: Algorithm 1's bootstrap (default), test rows "
                             "kept, or refit (lambda(x) learned again in every resample: "
                             "B more network fits, the level holds when lambda(x) is learned "
                             "from few rows); example: --null refit")
    credal.add_argument("--resamples", metavar="B", type=whole_number(1), default=100,
                        help="resamples of each test's null (default 100); "
                             "example: --resamples 200")
    credal.add_argument("--alpha", metavar="A", type=float, default=0.05,
                        help="significance level of the verdicts (default 0.05); "
                             "example: --alpha 0.01")
    credal.add_argument("--seed", metavar="S", type=whole_number(0), default=0,
                        help="seed of the split, the weight network and the resampling "
                             "(default 0); example: --seed 7")
    credal.add_argument(
        "--out", metavar="DIR", default=Path("calibration-atlas-credal"), type=Path,
        help="folder for the results, created if needed (default: ./calibration-atlas-credal); "
             "example: --out credal-2026-11")



def load_credal(options: argparse.Namespace) -> AuditData:
    """The validated table of ``credal``'s options, in one pass of the data layer.

    The audit container needs a prediction besides the members and lets a column play one
    role only, so the first member is read as that prediction and the others as members
    (each message names its column and rows); the container returned holds all the members
    and, as its prediction, their mean (the tests do not use it; the file is untouched).
    """
    table = read_table(options.data).frame
    members = options.members
    check_member_count(members)
    first = list(members[0])
    probs = {"prob": first[0]} if len(first) == 1 else {"probs": first}
    checked = AuditData.from_frame(table, label=options.label, **probs,
                                   features=list(options.features), members=members[1:],
                                   name=options.data.name)
    every = np.concatenate([checked.probs[:, None, :], checked.members], axis=1)
    derived = checked.with_probs(every.mean(axis=1), members=every,
                                 member_names=(", ".join(first), *checked.member_names))
    return dataclasses.replace(derived, mapping=dataclasses.replace(
        checked.mapping, members=tuple(tuple(m) for m in members)))


def credal_files(comparison: CredalComparison, data: AuditData, tested: np.ndarray,
                 out: Path) -> list[Path]:
    """Write the comparison: ``credal.csv`` (one row per test), ``credal.json`` (the report's
    credal record, :func:`core.report.schema.credal_record`: members, features, settings,
    verdict, per test its entry — statistic, p-values, null hypothesis, parameters, null
    statistics — with its label, the null used and its verdict, the learned weights per
    member) and ``credal-weights.csv`` (the learned λ(x) and
    combination on each test row, by row of the table), escaped and NaN-safe as the report's
    files are (:mod:`core.report.schema`). ``tested`` are the rows of ``data`` the tests saw
    (:func:`core.ensembles.summary.tested_rows`)."""
    learned = comparison.results["learned"]
    document = {"data": data.name, "rows": data.n, **credal_record(comparison),
                "tested_rows": tested.size}
    weights = pd.DataFrame(learned.weights, columns=[f"weight[{name}]"
                                                     for name in data.member_names])
    combined = pd.DataFrame(learned.combined, columns=[f"combined[{c}]" for c in data.classes])
    rows = pd.DataFrame({"row": tested[learned.rows] + 1})
    out.mkdir(parents=True, exist_ok=True)
    files = {"credal.csv": csv_text(comparison.table()),
             "credal.json": indented_json(jsonable(document)),
             "credal-weights.csv": csv_text(pd.concat([rows, weights, combined], axis=1))}
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    return [out / name for name in files]


def run_credal(options: argparse.Namespace, stream: TextIO) -> int:
    """The ``credal`` command: load, test with a progress bar, print the table, write files."""
    start = time.perf_counter()
    data = load_credal(options)
    settings = CredalSettings(estimator=options.estimator, n_resamples=options.resamples,
                              alpha=check_fraction("--alpha", options.alpha), seed=options.seed,
                              null=options.null)
    members = tuple(range(len(data.member_names)))
    bar = ProgressBar(stream, "credal")
    try:
        comparison = compare_ensemble(data, members, options.features, settings, progress=bar)
    finally:
        bar.close()
    tested = tested_rows(data)
    paths = credal_files(comparison, data, tested, options.out)
    table = comparison.table()
    for row in table.itertuples():
        stream.write(f"{row.test}: {row.estimator} = {row.statistic:.4g}, "
                     f"{p_text(row.p_value, settings.n_resamples)} ({row.verdict} at alpha = "
                     f"{settings.alpha})\n")
    sample = "" if tested.size == data.n else f" (a seeded sample of {tested.size:,} rows)"
    stream.write(f"Tested {data.n:,} rows of {data.name}{sample}: wrote {len(paths)} files "
                 f"to {options.out} in {time.perf_counter() - start:.1f} s.\n")
    return 0

