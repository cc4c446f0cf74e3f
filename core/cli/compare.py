"""``calibration-atlas compare``: a challenger against a champion on the same rows
(:func:`core.compare.compare_audit`), reported and gated with ``--fail-on worse``."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TextIO

from core.cli.options import PROG, column_list, formats_list, whole_number
from core.cli.progress import ProgressBar
from core.compare import CRITERIA, CompareSettings, decide
from core.data.audit_data import AuditData
from core.data.readers import read_table
from core.data.validation import check_fraction
from core.report import write_report
from core.report.comparison import build_comparison_report
from core.report.export import renderer

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

