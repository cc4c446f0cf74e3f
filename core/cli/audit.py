"""``calibration-atlas audit``: a table of labels and predicted probabilities, audited and
reported (in memory, or batch by batch: :mod:`core.cli.streamed`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from core.audit import AuditSettings
from core.audit import settings_for as audit_settings_for
from core.audit.settings import SAMPLE_ROWS
from core.cli.audit_report import check_methods, run
from core.cli.options import (
    add_output_options,
    check_member_count,
    column_list,
    formats_list,
    memory_budget,
    option_settings,
    whole_number,
)
from core.cli.streamed import run_streamed, should_stream
from core.data.audit_data import AuditData
from core.data.readers import read_table
from core.local.slice_discovery import ERROR_RATES
from core.recalibration import RECALIBRATORS
from core.report.export import renderer

#: Verdicts --fail-on can gate on.
GATES = ("local", "slices", "any")

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



def add_audit_command(commands) -> argparse.ArgumentParser:
    """The ``audit`` subcommand and its options (the engine options are added by the caller)."""
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
    return audit


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


def audit_settings_from_options(options: argparse.Namespace, audit: AuditData) -> AuditSettings:
    """The audit settings: the app's defaults for data of this size (the Export page's,
    :func:`core.audit.settings_for`) and the options'
    (:func:`core.cli.options.option_settings`)."""
    return audit_settings_for(audit, option_settings(options))


def run_audit_command(options: argparse.Namespace, stream: TextIO) -> int:
    """The ``audit`` command: streamed (:func:`core.cli.streamed.should_stream`) or in memory,
    audited, reported; the exit status."""
    streamed = should_stream(options)
    methods = check_methods(getattr(options, "recalibrate", ()))
    if streamed:
        renderer().warm_up()  # the figure browser starts while the first batches are read
        if options.members:
            raise ValueError(
                "--member cannot be used with a streamed table (a folder, a "
                "Parquet file too large for the --memory budget or --stream): "
                "the credal-set tests refit weights on the rows in memory; run "
                "'calibration-atlas credal' on a sample of the table instead.")
        return run_streamed(options, methods, stream)
    audit = load_audit(options)
    # the figure browser starts with the audit, not while the table is read: its start holds
    # the interpreter for a moment, which the single thread reading the table then waits for
    # (measured on a 10⁶-row table: 0.8 s less in all, the median of 7 pairs of runs)
    renderer().warm_up()
    settings = audit_settings_from_options(options, audit)
    return run(audit, settings, options.out, options.formats, stream, methods,
               getattr(options, "fail_on", None), getattr(options, "resamples", None) or 100)
