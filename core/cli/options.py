"""The shared parts of the commands' arguments: argparse types, the output and engine
options, the ensemble members' check and the audit settings the options give."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from core.data.validation import check_fraction
from core.kernels.memory import budget_bytes
from core.report import check_formats

PROG = "calibration-atlas"
DEFAULT_OUT = "calibration-atlas-report"


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


def memory_budget(text: str) -> int:
    """``--memory GB`` in bytes, or argparse's error with the sentence of
    :func:`core.kernels.memory.budget_bytes`."""
    try:
        return budget_bytes(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def check_member_count(members: Sequence[Sequence[str]]) -> None:
    """At least two members, each naming the same number of columns."""
    if len(members) < 2:
        raise ValueError(f"--member was given {len(members)} time(s); a credal set needs at "
                         "least two members (give --member once per member).")
    if len({len(columns) for columns in members}) > 1:
        raise ValueError("Every --member must name the same number of columns (one for a "
                         "binary label, one per class otherwise); got "
                         + ", ".join(",".join(columns) for columns in members) + ".")


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
