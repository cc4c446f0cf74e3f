"""``calibration-atlas``: the audit without the app, from a terminal.

::

    calibration-atlas audit DATA --label COL (--prob COL | --probs COL,COL,...) [--logits]
        [--features COL,...] [--groups COL,...] [--split COL] [--out DIR]
        [--formats png,svg,pdf,html] [--resamples B] [--seed S] [--alpha A]
        [--error-rate fwer|fdr] [--slice-depth 1|2|3] [--fail-on local|slices|any]
        [--member COL[,COL...] ...] [--stream] [--sample-rows N]
        [--dask ADDRESS | --engine NAME]
    calibration-atlas demo [--out DIR] [--dask ADDRESS | --engine NAME]
    calibration-atlas credal DATA --label COL --member COL[,COL...] --member ...
        [--features COL,...] [--estimator ce2|cekl|skce]
        [--null bootstrap|consistency|refit] [--resamples B] [--alpha A] [--seed S] [--out DIR]
    calibration-atlas compare DATA --label COL (--models COL,COL | --model NAME=COL,... ...)
        [--features COL,...] [--groups COL,...] [--split COL] [--criteria C,...]
        [--fail-on worse] [--alpha A] [--resamples B] [--seed S] [--formats ...] [--out DIR]
    calibration-atlas app [--port N] [--address A] [--sign-in]
    calibration-atlas monitor DATA --time COL --prob COL --label COL [--group COL ...]
        [--period month] [--alpha A] [--challenger COL] [--fail-on alarm] [--out DIR]

``audit`` and ``demo`` write ``DIR/report.html``, ``DIR/report.pdf`` (where Chromium exists),
``DIR/results.json``, ``DIR/figures/*`` and ``DIR/tables/*.csv`` (with ``--member``, the
report includes the credal-set tests). ``credal`` runs the
Ensembles page's three credal-set tests (:func:`core.ensembles.compare_ensemble`) and writes
``DIR/credal.json``, ``DIR/credal.csv`` and ``DIR/credal-weights.csv``. ``compare`` compares
a challenger with a champion on the same rows (:func:`core.compare.compare_audit`) and writes
the Compare models page's sections (:mod:`core.report.comparison`); with ``--fail-on worse``
it exits 1 when the challenger is significantly worse on a compared criterion or slice.
``app`` serves the dashboard of the installed package with Streamlit (:func:`app_command`).
``monitor`` follows calibration over time with anytime-valid alarms
(:mod:`core.report.monitor_command`). The
audit is
:func:`core.audit.run_audit` — the computation the app's pages show — and the report is
:func:`core.report.build_report`. Exit status 0 on success; 2 on bad input, with the sentence
the app would show (the column, the rows, the fix) and no traceback; 1 when writing the
report fails (a full disk, a browser that crashes) — and 1 when ``--fail-on`` names a verdict
that rejects at α (the report is written first), so a CI pipeline can gate a model on its
audit.

A folder of Parquet files, a Parquet file whose audit in memory would exceed the memory
budget (``--memory GB``, default a quarter of this machine's memory, at most 2 GB:
:mod:`core.kernels.memory`), or any Parquet input with ``--stream`` is audited batch by
batch (:func:`core.stream.run_stream_audit`): batches sized to the budget whatever the
file's row groups, the same report, progress per batch, and with ``--dask ADDRESS`` every
row group is one task on the cluster.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd

from core.audit import AuditResult, AuditSettings, default_bootstrap, run_audit
from core.audit import settings_for as audit_settings_for
from core.compare import CRITERIA, CompareSettings, decide
from core.data.audit_data import AuditData
from core.data.demo import DEFAULT_DEMO, DEMOS, load_demo
from core.data.mapping import ColumnMapping
from core.data.problems import DataError
from core.data.readers import read_table
from core.data.stream_sources import open_source
from core.data.validation import check_choice, check_fraction
from core.ensembles import ESTIMATORS, NULLS
from core.ensembles.summary import (
    ENSEMBLE_ROWS,
    CredalComparison,
    CredalSettings,
    compare_ensemble,
    tested_rows,
)
from core.kernels import engine
from core.kernels.declared import connect, declare_cluster, declared_engines
from core.kernels.memory import budget_bytes, default_budget, fits_in_memory
from core.local.slice_discovery import ERROR_RATES
from core.recalibration import RECALIBRATORS, compare, recommend
from core.report import build_report, check_formats, write_report
from core.report.comparison import build_comparison_report
from core.report.export import ExportError, renderer
from core.report.monitor_command import add_monitor_command, run_monitor
from core.report.schema import credal_record, csv_text, indented_json, jsonable
from core.stattests.result import p_text
from core.stream.plan import SAMPLE_ROWS
from core.stream.runner import run_stream_audit

PROG = "calibration-atlas"
DEFAULT_OUT = "calibration-atlas-report"
#: Verdicts --fail-on can gate on.
GATES = ("local", "slices", "any")
BAR_WIDTH = 30
#: Figure files the demo writes.
DEMO_FORMATS = ("png", "svg", "pdf", "html")

DESCRIPTION = """\
Audit a probabilistic classifier's calibration — globally (reliability, ECE with bootstrap
intervals, SKCE and Hosmer–Lemeshow tests) and locally (the KLCE test over a bandwidth grid,
the local calibration bias of every row, MLCE, and the miscalibrated slices of the features
and groups with a controlled error rate) — and write a self-contained report."""

AUDIT_EPILOG = """\
examples:
  calibration-atlas audit predictions.csv --label y --prob p
  calibration-atlas audit scores.parquet --label y --prob score --logits
  calibration-atlas audit landcover.csv --label cover --probs p_water,p_forest,p_urban
  calibration-atlas audit loans.csv --label defaulted --prob p_default \\
      --features age,income,race --groups sex,race --split split \\
      --out audit-2026-11 --formats png,pdf --resamples 1000 --seed 7
  calibration-atlas audit scores.csv --label y --prob p --features age,region \\
      --formats html --fail-on slices          # a CI gate: exit 1 if a slice is flagged
  calibration-atlas audit clicks/ --label clicked --prob p_click --features hour,region \\
      --groups region --dask tcp://10.0.0.5:8786
  calibration-atlas audit ensemble.csv --label y --prob p_mean --features x \\
      --member p_net --member p_tree --member p_boost

writes DIR/report.html, DIR/report.pdf (when Chromium exists), DIR/results.json,
DIR/figures/<figure>.<format> and DIR/tables/<table>.csv. A folder of Parquet files (or a
Parquet file too large for the --memory budget, or --stream) is read batch by batch.
Exit status: 0 success, 2 bad input (the message names the column and rows), 1 the report
could not be written or the --fail-on verdict rejects at alpha (the report is written
first)."""

DEMO_EPILOG = f"""\
example:
  calibration-atlas demo --out demo-report

audits the '{DEFAULT_DEMO}' demo ({DEMOS[DEFAULT_DEMO].title}) with the app's default
settings and writes the same files as 'audit'."""


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


def column_list(text: str) -> tuple[str, ...]:
    """``"a, b,c"`` → ``("a", "b", "c")``: comma-separated column names, spaces trimmed."""
    names = tuple(part.strip() for part in text.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(
            f"{text!r} has an empty column name; separate names with single commas, "
            "e.g. age,income,race")
    return names


def whole_number(minimum: int):
    """An argparse type: a whole number of at least ``minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a whole number of at least {minimum}")
        return value
    return parse


def formats_list(text: str) -> tuple[str, ...]:
    """An argparse type: figure formats, comma-separated (``png,svg,pdf,html``)."""
    try:
        return check_formats(column_list(text)) if text.strip() else ()
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).rstrip(".")) from None


def add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", metavar="DIR", default=DEFAULT_OUT, type=Path,
        help=f"folder for the report, created if needed (default: ./{DEFAULT_OUT}); "
             "example: --out audits/loans-2026-11")


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    engines = parser.add_mutually_exclusive_group()
    engines.add_argument(
        "--dask", metavar="ADDRESS",
        help="run the kernel sums on the Dask cluster whose scheduler is at ADDRESS "
             "(tcp://host:8786, or tls://host:8786 with Dask's TLS configuration); if it is "
             "lost mid-run the rest runs here; example: --dask tcp://10.0.0.5:8786")
    engines.add_argument(
        "--engine", metavar="NAME",
        help="a declared engine: threads, gpu, or a cluster named in the operator file "
             "(CALIBRATION_ATLAS_CONFIG) or in CALIBRATION_ATLAS_DASK (default: the declared "
             "default, threads unless one is set); example: --engine lab")


def build_parser() -> argparse.ArgumentParser:
    """The ``calibration-atlas`` argument parser with its ``audit`` and ``demo`` commands."""
    parser = argparse.ArgumentParser(
        prog=PROG, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="run 'calibration-atlas audit --help', 'calibration-atlas demo --help', "
               "'calibration-atlas credal --help', 'calibration-atlas compare --help', "
               "'calibration-atlas monitor --help' or 'calibration-atlas app --help' for the "
               "options and examples of each command.")
    commands = parser.add_subparsers(dest="command",
                                     metavar="{audit,demo,credal,compare,monitor,app}",
                                     required=True)

    audit = commands.add_parser(
        "audit", help="audit a table of labels and predicted probabilities",
        description=DESCRIPTION, epilog=AUDIT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    audit.add_argument("data", metavar="DATA", type=Path,
                       help="CSV, TSV or Parquet file, one row per prediction, or a folder of "
                            "Parquet files (streamed); example: predictions.csv")
    audit.add_argument("--label", metavar="COL", required=True,
                       help="column of the observed class; example: --label defaulted")
    probs = audit.add_mutually_exclusive_group(required=True)
    probs.add_argument("--prob", metavar="COL",
                       help="binary model: the column of P(y = positive class); "
                            "example: --prob p_default")
    probs.add_argument("--probs", metavar="COL,COL,...", type=column_list,
                       help="one probability column per class, in class order (name them "
                            "after the classes); example: --probs p_cat,p_dog,p_bird")
    audit.add_argument("--logits", action="store_true",
                       help="the probability columns hold logits or scores (sigmoid / "
                            "softmax is applied); example: --prob score --logits")
    audit.add_argument("--features", metavar="COL,...", type=column_list, default=(),
                       help="audit features of the local tests (numeric or categorical); "
                            "example: --features age,income,race")
    audit.add_argument("--groups", metavar="COL,...", type=column_list, default=(),
                       help="group attributes for per-group diagnostics and subgroups (at "
                            "most 50 levels each); example: --groups sex,race")
    audit.add_argument("--split", metavar="COL",
                       help="column with train / calibration / test per row; the test split "
                            "is audited, LCB learns from the calibration split; "
                            "example: --split split")
    add_output_options(audit)
    audit.add_argument("--formats", metavar="png,svg,pdf,html", type=formats_list,
                       default=("png", "svg", "pdf", "html"),
                       help="figure files to write into DIR/figures (default: all four; "
                            "without Chromium only html); example: --formats png,svg")
    audit.add_argument("--resamples", metavar="B", type=whole_number(1),
                       help="resamples of every resampling step: bootstrap intervals, the "
                            "SKCE test and the KLCE grid (default: the app's 200, 500 and "
                            "200); example: --resamples 1000")
    audit.add_argument("--recalibrate", metavar="METHOD,...", type=column_list, default=(),
                       help="recalibration methods to compare (fitted on the calibration "
                            "split, scored on the test split; without a split a stratified "
                            "seeded one is made) for the report's recalibration section; "
                            f"choices: {', '.join(RECALIBRATORS)}; "
                            "example: --recalibrate temperature,isotonic,lore")
    audit.add_argument("--memory", metavar="GB", type=memory_budget, default=None,
                       help="memory the audit may use, in GB (default: a quarter of this "
                            "machine's memory, at most 2): a Parquet table whose audit in "
                            "memory would need more is streamed, in batches sized to it; "
                            "example: --memory 1.5")
    audit.add_argument("--stream", action="store_true",
                       help="read the table batch by batch (batches sized to --memory, "
                            "whatever the Parquet row groups), for tables larger than memory; "
                            "automatic for a folder and for a Parquet file too large for the "
                            "--memory budget. Sums over rows "
                            "are exact, the kernel tests use random features, the rest runs "
                            "on a seeded sample; with --dask, every partition is one task on "
                            "the cluster; example: --stream")
    audit.add_argument("--sample-rows", metavar="N", type=whole_number(1000),
                       default=SAMPLE_ROWS,
                       help="rows of the seeded sample of a streamed audit (smooth and curve "
                            f"metrics, LCB, LCE, figures; default {SAMPLE_ROWS:,}); "
                            "example: --sample-rows 500000")
    audit.add_argument("--seed", metavar="S", type=whole_number(0), default=0,
                       help="seed of the bootstrap, the resampling tests, the embedding and the "
                            "trend bands, for a reproducible report "
                            "(default 0); example: --seed 7")
    audit.add_argument("--alpha", metavar="A", type=float, default=0.05,
                       help="level of every verdict: the tests and the slice findings' error "
                            "rate (default 0.05); example: --alpha 0.01")
    audit.add_argument("--error-rate", choices=ERROR_RATES, default="fwer",
                       help="what the slice findings control: fwer, the chance of any false "
                            "finding (default), or fdr, the expected share of false findings; "
                            "example: --error-rate fdr")
    audit.add_argument("--slice-depth", type=int, choices=(1, 2, 3), default=2,
                       help="most features and groups combined in one slice (default 2: "
                            "pairs); example: --slice-depth 3")
    audit.add_argument("--fail-on", choices=GATES, default=None,
                       help="exit with status 1 (after writing the report) when this verdict "
                            "rejects at alpha: local (the aggregated KLCE test), slices (any "
                            "slice flagged) or any (those two or the global SKCE test); "
                            "example: --fail-on slices")
    audit.add_argument("--member", metavar="COL[,COL...]", type=column_list, action="append",
                       default=[], dest="members",
                       help="an ensemble member's probability column(s), once per member (at "
                            "least two): the report gets the credal-set test of the Ensembles "
                            "page (learned lambda(x) over --features, the mean, sampled "
                            "weights; Algorithm 1's null, B = --resamples or 100); example: "
                            "--member p_net --member p_tree")

    demo = commands.add_parser(
        "demo", help=f"audit the '{DEFAULT_DEMO}' demo data and write its report",
        description=DESCRIPTION, epilog=DEMO_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_output_options(demo)
    add_credal_command(commands)
    add_compare_command(commands)
    for command in (audit, demo, commands.choices["credal"], commands.choices["compare"]):
        add_engine_options(command)
    add_monitor_command(commands, add_output_options)  # core/report/monitor_command.py
    add_app_command(commands)
    return parser


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


COMPARE_EPILOG = f"""\
examples:
  calibration-atlas compare loans.csv --label defaulted --models p_prod,p_new \\
      --features age,income,race --groups sex,race --split split --fail-on worse
  calibration-atlas compare landcover.csv --label cover \\
      --model prod=a_water,a_forest,a_urban --model new=b_water,b_forest,b_urban

the first model is the champion (A), the second the challenger (B); differences are B - A
and every criterion is a loss (lower is better). Criteria: {', '.join(CRITERIA)}. The test
split is compared when --split is given. Writes DIR/report.html, DIR/report.pdf (when
Chromium exists), DIR/results.json, DIR/figures/* and DIR/tables/comparison*.csv.
Exit status: 0 success, 2 bad input, 1 the challenger is significantly worse (with
--fail-on worse) or the report could not be written."""


def model_option(text: str) -> tuple[str, tuple[str, ...]]:
    """An argparse type: ``NAME=COL[,COL...]``, one model's name and its column(s)."""
    name, sep, columns = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} is not NAME=COL[,COL...]; example: --model new=p_new, or "
            "--model new=b_cat,b_dog for one column per class")
    return name.strip(), column_list(columns)


def add_compare_command(commands) -> None:
    compare_cmd = commands.add_parser(
        "compare", help="compare a challenger model with a champion on the same rows",
        description="Champion against challenger: paired tests of Brier score, log loss, "
                    "ECE², smooth ECE² and KLCE², per group and per slice.",
        epilog=COMPARE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    compare_cmd.add_argument("data", metavar="DATA", type=Path,
                             help="CSV, TSV or Parquet file with both models' predictions; "
                                  "example: loans.csv")
    compare_cmd.add_argument("--label", metavar="COL", required=True,
                             help="column of the observed class; example: --label defaulted")
    models = compare_cmd.add_mutually_exclusive_group(required=True)
    models.add_argument("--models", metavar="COL,COL", type=column_list,
                        help="binary label: the champion's and the challenger's P(y = 1) "
                             "columns, champion first; example: --models p_prod,p_new")
    models.add_argument("--model", metavar="NAME=COL[,COL...]", type=model_option,
                        action="append", dest="named_models",
                        help="one model by name with its column(s) (one per class, in "
                             "class order, for a multiclass label); give it twice, champion "
                             "first; example: --model prod=p_prod --model new=p_new")
    compare_cmd.add_argument("--logits", action="store_true",
                             help="the model columns hold logits or scores; "
                                  "example: --models s_prod,s_new --logits")
    compare_cmd.add_argument("--features", metavar="COL,...", type=column_list, default=(),
                             help="audit features: the KLCE kernel and the feature slices; "
                                  "example: --features age,income,race")
    compare_cmd.add_argument("--groups", metavar="COL,...", type=column_list, default=(),
                             help="group attributes compared group by group; "
                                  "example: --groups sex,race")
    compare_cmd.add_argument("--split", metavar="COL",
                             help="column with train / calibration / test per row: the test "
                                  "split is compared; example: --split split")
    compare_cmd.add_argument("--criteria", metavar="C,...", type=column_list, default=CRITERIA,
                             help=f"criteria to compare (default all: {', '.join(CRITERIA)}); "
                                  "example: --criteria brier,log_loss")
    compare_cmd.add_argument("--fail-on", choices=("worse",), dest="fail_on",
                             help="exit 1 when the challenger is significantly worse on any "
                                  "compared criterion, or by Brier score or log loss (when "
                                  "compared) in any group or slice; "
                                  "example: --fail-on worse")
    compare_cmd.add_argument("--alpha", metavar="A", type=float, default=0.05,
                             help="level of every test (default 0.05); example: --alpha 0.01")
    compare_cmd.add_argument("--resamples", metavar="B", type=whole_number(2), default=200,
                             help="wild-bootstrap draws of the ECE², smooth ECE² and KLCE² "
                                  "tests and KLCE test resamples "
                                  "(default 200); example: --resamples 1000")
    compare_cmd.add_argument("--seed", metavar="S", type=whole_number(0), default=0,
                             help="seed of every resampling step (default 0); example: --seed 7")
    compare_cmd.add_argument("--formats", metavar="png,svg,pdf,html", type=formats_list,
                             default=("png", "html"),
                             help="figure files to write into DIR/figures (default png,html; "
                                  "without Chromium only html); example: --formats svg")
    compare_cmd.add_argument(
        "--out", metavar="DIR", default=Path("calibration-atlas-comparison"), type=Path,
        help="folder for the report, created if needed (default: "
             "./calibration-atlas-comparison); example: --out compare-2026-11")


# --------------------------------------------------------------------------- progress


class ProgressBar:
    """A text progress bar on ``stream``: redrawn in place (``\\r``) on a terminal, one line
    per step elsewhere (a log file, a CI job) — per message with ``every_message`` (a
    streamed audit: a line per partition)."""

    def __init__(self, stream: TextIO, label: str, every_message: bool = False) -> None:
        self.stream, self.label, self.every_message = stream, label, every_message
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.last_message = ""
        self.last_fraction = -1.0
        self.drawn = False

    def __call__(self, fraction: float, message: str) -> None:
        fraction = min(max(float(fraction), 0.0), 1.0)
        filled = round(BAR_WIDTH * fraction)
        bar = f"{self.label} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {fraction:4.0%} "
        if self.tty:
            self.stream.write("\r" + (bar + message)[:110].ljust(110))
            self.drawn = True
        elif (message.split(":")[0] != self.last_message.split(":")[0]
              or fraction - self.last_fraction >= 0.1 or fraction == 1.0
              or (self.every_message and message != self.last_message)):
            # a log gets one line per step, or per tenth of the way
            self.stream.write(bar + message + "\n")
            self.last_fraction = fraction
        self.last_message = message
        self.stream.flush()

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False


# --------------------------------------------------------------------------- commands


def check_member_count(members: Sequence[Sequence[str]]) -> None:
    """At least two members, each naming the same number of columns."""
    if len(members) < 2:
        raise ValueError(f"--member was given {len(members)} time(s); a credal set needs at "
                         "least two members (give --member once per member).")
    if len({len(columns) for columns in members}) > 1:
        raise ValueError("Every --member must name the same number of columns (one for a "
                         "binary label, one per class otherwise); got "
                         + ", ".join(",".join(columns) for columns in members) + ".")


def load_audit(options: argparse.Namespace) -> AuditData:
    """The validated data of ``audit``'s options (raises DataError with the user's sentence)."""
    table = read_table(options.data).frame
    probs = {"prob": options.prob} if options.prob else {"probs": list(options.probs)}
    members = getattr(options, "members", [])
    if members:
        check_member_count(members)
    return AuditData.from_frame(
        table, label=options.label, **probs, logits=options.logits,
        features=list(options.features), groups=list(options.groups), split=options.split,
        members=members, name=options.data.name)


def option_settings(options: argparse.Namespace) -> dict:
    """The settings the options give: resamples, seed, α, the slices' error rate and depth."""
    fields = {"seed": getattr(options, "seed", 0),
              "alpha": check_fraction("--alpha", getattr(options, "alpha", 0.05)),
              "error_rate": getattr(options, "error_rate", "fwer"),
              "slice_depth": getattr(options, "slice_depth", 2)}
    resamples = getattr(options, "resamples", None)
    if resamples is not None:
        fields.update(n_bootstrap=resamples, test_resamples=resamples,
                      grid_resamples=resamples, slice_resamples=resamples)
    return fields


def settings_for(options: argparse.Namespace, audit: AuditData) -> AuditSettings:
    """The audit settings: the app's defaults for data of this size (the Export page's,
    :func:`core.audit.settings_for`) and the options' (:func:`option_settings`)."""
    return audit_settings_for(audit, option_settings(options))


def failed_verdicts(result: AuditResult, fail_on: str | None) -> list[str]:
    """The verdicts named by ``--fail-on`` that reject at the audit's α, one sentence each."""
    if fail_on is None:
        return []
    alpha = result.settings.alpha
    failed = []
    consistency = result.reliability.tests["consistency"].p_value
    tests_b = result.reliability.tests["consistency"].n_resamples
    if fail_on == "any" and consistency <= alpha:
        failed.append(f"global: the SKCE consistency test rejects calibration "
                      f"({p_text(consistency, tests_b)})")
    local = result.klce_grid.aggregated.p_value
    if fail_on in ("local", "any") and local <= alpha:
        failed.append(f"local: the aggregated KLCE test rejects local calibration "
                      f"({p_text(local, result.klce_grid.n_resamples)})")
    if fail_on in ("slices", "any") and result.slices.rejects():
        found = result.slices.findings
        first = found.iloc[0]
        floor_b = result.slices.n_resamples if result.slices.error_rate == "fwer" else 0
        failed.append(f"slices: {len(found):,} miscalibrated slice finding(s), the first "
                      f"{first['slice']} (gap {first['gap']:+.3f}, adjusted "
                      f"{p_text(first['p_adjusted'], floor_b)}, "
                      f"{result.slices.error_rate.upper()})")
    return failed


def check_methods(methods: Sequence[str]) -> tuple[str, ...]:
    """The recalibration methods asked for, each a key of the registry."""
    for method in methods:
        check_choice(method, RECALIBRATORS, "recalibration method",
                     f"choose from {', '.join(RECALIBRATORS)}")
    return tuple(methods)


def run(audit: AuditData, settings: AuditSettings, out: Path, formats: Sequence[str],
        stream: TextIO, methods: Sequence[str] = (), fail_on: str | None = None,
        credal_resamples: int = 100) -> int:
    """Audit, compare the recalibration ``methods`` (if any), run the credal-set tests when
    the data has ensemble members, build and write the report; print what was written and
    how long it took. Returns 1 when a ``fail_on`` verdict rejects (:func:`failed_verdicts`),
    else 0."""
    start = time.perf_counter()
    bar = ProgressBar(stream, "audit ")
    try:  # the figure browser starts on the core the first lane of the audit leaves free
        result = run_audit(audit, settings, progress=bar, core_free=renderer().warm_up)
    finally:
        bar.close()
    return finish(result, audit, settings, out, formats, stream, methods, start, fail_on,
                  credal_resamples)


def finish(result: AuditResult, audit: AuditData, settings: AuditSettings, out: Path,
           formats: Sequence[str], stream: TextIO, methods: Sequence[str],
           start: float, fail_on: str | None = None, credal_resamples: int = 100) -> int:
    """Compare the recalibration ``methods`` on ``audit`` (a streamed audit's seeded sample),
    run the credal-set tests when it has ensemble members, build and write the report, print
    what was written and how long it took; 1 when a ``fail_on`` verdict rejects
    (:func:`failed_verdicts`), else 0."""
    comparison = None
    if methods:
        bar = ProgressBar(stream, "recalibration")
        try:
            comparison = compare(audit, list(methods), features=result.features,
                                 groups=tuple(audit.groups.columns), seed=settings.seed,
                                 gamma=settings.gamma, progress=bar).table
        finally:
            bar.close()
    credal = None
    if audit.members is not None:
        bar = ProgressBar(stream, "credal")
        try:
            credal = compare_ensemble(
                audit, tuple(range(len(audit.member_names))), result.features,
                CredalSettings(n_resamples=credal_resamples, alpha=settings.alpha,
                               seed=settings.seed), progress=bar)
        finally:
            bar.close()
    audited = time.perf_counter() - start
    bar = ProgressBar(stream, "report")
    try:
        report = build_report(result, audit, comparison=comparison, formats=formats,
                              progress=bar, credal=credal, shared_plotly=True)
    finally:
        bar.close()
        renderer().close()  # the figure browser, closed now rather than at interpreter exit
    files = write_report(report, out)
    total = time.perf_counter() - start
    notes = report.notes
    if result.stream is not None and methods:
        notes += (f"The recalibration comparison ran on the seeded sample of "
                  f"{audit.n:,} rows.",)
    for note in notes:
        stream.write(f"note: {note}\n")
    if comparison is not None:
        choice = recommend(comparison, settings.alpha)
        stream.write(f"Recalibration: {choice.reason}\nRule: {choice.rule}\n")
    steps = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in report.seconds.items())
    stream.write(
        f"Audited {result.rows:,} rows ({result.part}) of {result.dataset}: wrote "
        f"{len(files)} files to {out} in {total:.1f} s (audit {audited:.1f} s; {steps}).\n")
    stream.write(f"Open {out / 'report.html'} for the report.\n")
    failed = failed_verdicts(result, fail_on)
    for sentence in failed:
        stream.write(f"{PROG}: --fail-on {fail_on}: {sentence} at alpha = "
                     f"{settings.alpha:g}.\n")
    return 1 if failed else 0


def should_stream(options: argparse.Namespace) -> bool:
    """Whether ``audit`` reads its table batch by batch: asked (``--stream``), a folder, or a
    Parquet file whose audit in memory would exceed the ``--memory`` budget
    (:func:`core.kernels.memory.fits_in_memory`)."""
    if getattr(options, "stream", False) or options.data.is_dir():
        return True
    if options.data.suffix.lower() in (".parquet", ".pq") and options.data.is_file():
        import pyarrow.parquet as pq

        try:
            rows = pq.ParquetFile(options.data).metadata.num_rows
        except Exception:  # noqa: BLE001 — an unreadable file gets read_table's sentence
            return False
        budget = getattr(options, "memory", None)
        return not fits_in_memory(rows, default_budget() if budget is None else budget)
    return False


def memory_budget(text: str) -> int:
    """``--memory GB`` in bytes, or argparse's error with the sentence of
    :func:`core.kernels.memory.budget_bytes`."""
    try:
        return budget_bytes(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def mapping_of(options: argparse.Namespace) -> ColumnMapping:
    """The column roles of ``audit``'s options."""
    return ColumnMapping(label=options.label,
                         probs=(options.prob,) if options.prob else tuple(options.probs),
                         logits=options.logits, features=tuple(options.features),
                         groups=tuple(options.groups), split=options.split)


def run_streamed(options: argparse.Namespace, methods: Sequence[str], stream: TextIO) -> int:
    """The ``audit`` command on a table read partition by partition
    (:func:`core.stream.run_stream_audit`): progress per partition of every pass,
    the time of each pass and this process's peak memory at the end."""
    start = time.perf_counter()
    source = open_source(options.data)
    stream.write(f"Streaming {source.describe()}.\n")
    settings = AuditSettings(**{"n_bootstrap": default_bootstrap(source.n),
                                **option_settings(options)})
    bar = ProgressBar(stream, "audit ", every_message=True)
    try:
        streamed = run_stream_audit(source, mapping_of(options), settings, progress=bar,
                                    sample_rows=options.sample_rows,
                                    memory=getattr(options, "memory", None))
    finally:
        bar.close()
    info = streamed.result.stream
    stream.write(f"Read in {info.batching}.\n")
    stream.write("Passes: " + ", ".join(f"{name} {seconds:.1f} s"
                                        for name, seconds in info.passes) + ".\n")
    stream.write(f"Peak memory of this process: {peak_memory_mib():,.0f} MiB.\n")
    return finish(streamed.result, streamed.sample, settings, options.out, options.formats,
                  stream, methods, start, options.fail_on)


def peak_memory_mib() -> float:
    """This process's peak resident memory (MiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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
    return dataclasses.replace(
        checked, probs=every.mean(axis=1), members=every,
        member_names=(", ".join(first), *checked.member_names),
        mapping=dataclasses.replace(checked.mapping,
                                    members=tuple(tuple(m) for m in members)),
        fingerprint="")  # recomputed for the new contents


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


@contextmanager
def compute_engine(options: argparse.Namespace, stream: TextIO) -> Iterator[None]:
    """Run the block on the engine the options name (``--dask``, ``--engine``), else on the
    declared default; a cluster lost mid-run leaves a note and the rest runs on threads."""
    address, name = getattr(options, "dask", None), getattr(options, "engine", None)
    if address is None and name is None:
        yield
        return
    declared = declare_cluster("command line", address) if address is not None \
        else declared_engines().get(name)
    client = connect(declared) if declared.kind == "dask" else None
    try:
        with engine.use(declared.kind, client=client, fallback=client is not None,
                        label=declared.name if client is not None else "") as chosen:
            stream.write(f"Computing on: {chosen.describe()}\n")
            yield
    finally:
        if client is not None:
            client.close()
        message = engine.take_fallback()
        if message:
            stream.write(f"note: {message}\n")


def load_comparison(options: argparse.Namespace) -> tuple[AuditData, CompareSettings]:
    """The validated table with both models, and the comparison's settings."""
    if options.models is not None:
        if len(options.models) != 2:
            raise ValueError(f"--models names {len(options.models)} column(s); give exactly "
                             "two, champion first: --models p_prod,p_new.")
        named = [(c, (c,)) for c in options.models]
    else:
        named = list(options.named_models)
        if len(named) != 2:
            raise ValueError(f"--model was given {len(named)} time(s); give it exactly twice, "
                             "champion first: --model prod=p_prod --model new=p_new.")
    (champion, columns), (challenger, other) = named
    probs = {"prob": columns[0]} if len(columns) == 1 else {"probs": list(columns)}
    table = read_table(options.data).frame
    audit = AuditData.from_frame(
        table, label=options.label, **probs, logits=options.logits, model=champion,
        models={challenger: other}, features=list(options.features),
        groups=list(options.groups), split=options.split, name=options.data.name)
    unknown = [c for c in options.criteria if c not in CRITERIA]
    if unknown:
        raise ValueError(f"--criteria: unknown {', '.join(unknown)}; choose from "
                         f"{', '.join(CRITERIA)}.")
    settings = CompareSettings(
        challenger=challenger, champion=champion, features=tuple(options.features),
        part="test" if options.split else "all",
        alpha=check_fraction("--alpha", options.alpha), criteria=tuple(options.criteria),
        n_resamples=options.resamples, seed=options.seed)
    return audit, settings


def run_compare(options: argparse.Namespace, stream: TextIO) -> int:
    """The ``compare`` command: compare with a progress bar, print the verdict, write the
    report; 1 with ``--fail-on worse`` when the challenger is significantly worse."""
    start = time.perf_counter()
    audit, settings = load_comparison(options)
    bar = ProgressBar(stream, "compare")
    try:
        result = settings.run(audit, progress=bar)
    finally:
        bar.close()
    bar = ProgressBar(stream, "report ")
    try:
        report = build_comparison_report(result, audit, settings, options.formats,
                                         progress=bar)
    finally:
        bar.close()
        renderer().close()
    files = write_report(report, options.out)
    for row in result.table.itertuples():
        stream.write(f"{row.name}: B - A = {row.difference:+.4g} [{row.ci_low:+.4g}, "
                     f"{row.ci_high:+.4g}], p = {row.p_value:.4g}\n")
    decision = decide(result)
    stream.write(decision.headline + "\n" + "".join(f"  - {r}\n" for r in decision.reasons))
    stream.write(result.verdict + "\n")
    for note in report.notes:
        stream.write(f"note: {note}\n")
    stream.write(f"Compared {result.n:,} rows of {audit.name}: wrote {len(files)} files to "
                 f"{options.out} in {time.perf_counter() - start:.1f} s.\n")
    worse = result.worse()  # the declared criteria: those compared
    slices = result.worse_slices()
    slices = slices[slices["criterion"].isin(settings.criteria)]
    if options.fail_on == "worse" and (worse or not slices.empty):
        where = [*worse, *(f"slice {s}" for s in slices["slice"].unique()[:5])]
        stream.write(f"{PROG}: the challenger '{result.challenger}' is significantly worse "
                     f"({', '.join(where)}); exit status 1 (--fail-on worse).\n")
        return 1
    return 0


APP_EPILOG = """\
examples:
  calibration-atlas app                                  # http://localhost:8501, this machine only
  calibration-atlas app --port 8600
  calibration-atlas app --address 0.0.0.0 --sign-in      # the team's server, sign-in required

serves the dashboard of the installed package with Streamlit, on the demo data until a table
is uploaded. --sign-in refuses every visitor until [auth] is configured in
.streamlit/secrets.toml of the folder the command runs in (see the documentation's "Serving to
a team"); the operator file (CALIBRATION_ATLAS_CONFIG) and CALIBRATION_ATLAS_* variables apply
as with 'make serve'. Streamlit's own options can be set by STREAMLIT_* variables. Stop it with
Ctrl-C."""


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 1–65535."""
    value = whole_number(1)(text)
    if value > 65_535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1 to 65535)")
    return value


def add_app_command(commands) -> None:
    app = commands.add_parser(
        "app", help="serve the dashboard in the browser (Streamlit)",
        description="Serve the Calibration Atlas dashboard from the installed package.",
        epilog=APP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    app.add_argument("--port", metavar="N", type=port_number, default=8501,
                     help="port to listen on (default 8501); example: --port 8600")
    app.add_argument("--address", metavar="A", default="localhost",
                     help="interface to listen on: localhost (default: this machine only), "
                          "0.0.0.0 for every interface, or one address; "
                          "example: --address 0.0.0.0")
    app.add_argument("--sign-in", action="store_true",
                     help="require every visitor to sign in (OpenID Connect, configured in "
                          ".streamlit/secrets.toml's [auth]); example: --sign-in")


def app_script() -> Path:
    """The dashboard's entry script, ``dashboard/app.py``, of the installed package.

    Found without importing ``dashboard`` (the command line sits below the app): its pages,
    assets and Streamlit defaults (``dashboard/.streamlit/config.toml``, read by Streamlit as the
    script's own configuration) come with it.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ValueError
        When the ``dashboard`` package is not installed beside ``core``.
    """
    spec = importlib.util.find_spec("dashboard")
    locations = list(spec.submodule_search_locations or ()) if spec else []
    for location in locations:
        script = Path(location) / "app.py"
        if script.is_file():
            return script
    raise ValueError("the dashboard is not installed beside the library (no dashboard/app.py "
                     "found); reinstall the package: pip install calibration-atlas")


def app_command(options: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
    """The Streamlit command that serves the dashboard, and its environment.

    ``python -m streamlit run dashboard/app.py --server.port N --server.address A``, with the
    interpreter running this command (so the same environment's Streamlit and packages), and
    ``CALIBRATION_ATLAS_SIGN_IN=1`` added to the environment with ``--sign-in``.

    Parameters
    ----------
    options : argparse.Namespace
        The parsed ``app`` command: ``port``, ``address`` and ``sign_in``.

    Returns
    -------
    argv : list of str
        The program and its arguments.
    environment : dict of str to str
        The environment to run it in.
    """
    argv = [sys.executable, "-m", "streamlit", "run", str(app_script()),
            "--server.port", str(options.port), "--server.address", options.address]
    environment = dict(os.environ)
    if options.sign_in:
        environment["CALIBRATION_ATLAS_SIGN_IN"] = "1"
    return argv, environment


def serve_app(options: argparse.Namespace, stream: TextIO) -> int:
    """Replace this process by Streamlit serving the dashboard (:func:`app_command`)."""
    if importlib.util.find_spec("streamlit") is None:
        raise ValueError("Streamlit is not installed in this environment; install the package "
                         "with its dependencies: pip install calibration-atlas")
    argv, environment = app_command(options)
    stream.write(f"{PROG}: serving the dashboard on http://{options.address}:{options.port}"
                 f"{' (sign-in required)' if options.sign_in else ''}; Ctrl-C stops it.\n")
    stream.flush()
    os.execve(argv[0], argv, environment)  # signals reach Streamlit itself; does not return
    return 0  # pragma: no cover


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 success, 2 bad input, 1 failure).

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
    """
    parser = build_parser()
    options = parser.parse_args(argv)  # exits 2 with a usage message on unknown options
    stream = sys.stderr
    if options.command == "app":
        try:
            return serve_app(options, stream)
        except (ValueError, OSError) as error:
            stream.write(f"{PROG}: error: {error}\n")
            return 2
    try:
        if options.command == "monitor":
            return run_monitor(options, stream)
        with compute_engine(options, stream):
            streamed = options.command == "audit" and should_stream(options)
            if options.command == "compare" or streamed:
                renderer().warm_up()  # the figure browser starts while the data is audited
            if options.command == "credal":
                return run_credal(options, stream)
            if options.command == "compare":
                return run_compare(options, stream)
            methods = check_methods(getattr(options, "recalibrate", ()))
            if options.command == "demo":
                audit, settings, formats = load_demo(DEFAULT_DEMO), AuditSettings(), \
                    DEMO_FORMATS
            else:
                if streamed:
                    if options.members:
                        raise ValueError(
                            "--member cannot be used with a streamed table (a folder, a "
                            "Parquet file too large for the --memory budget or --stream): "
                            "the credal-set tests refit weights on the rows in memory; run "
                            "'calibration-atlas credal' on a sample of the table instead.")
                    return run_streamed(options, methods, stream)
                audit = load_audit(options)
                settings, formats = settings_for(options, audit), options.formats
            return run(audit, settings, options.out, formats, stream, methods,
                       getattr(options, "fail_on", None),
                       getattr(options, "resamples", None) or 100)
    except (DataError, ValueError) as error:  # DataError: the user's table
        stream.write(f"{PROG}: error: {error}\n")
        return 2
    except (ExportError, OSError) as error:
        stream.write(f"{PROG}: the report could not be written: {error}\n")
        return 1
    except KeyboardInterrupt:
        stream.write(f"\n{PROG}: interrupted.\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
