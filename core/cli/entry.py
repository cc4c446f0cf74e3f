"""The command line's parser (every command's options) and :func:`main`, which runs one
command and turns its errors into an exit status and one sentence."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence

from core.cli.app import add_app_command, serve_app
from core.cli.audit import DESCRIPTION, add_audit_command, run_audit_command
from core.cli.compare import add_compare_command, run_compare
from core.cli.credal import add_credal_command, run_credal
from core.cli.demo import add_demo_command, run_demo
from core.cli.engines import compute_engine
from core.cli.monitor import add_monitor_command, run_monitor
from core.cli.options import PROG, add_engine_options
from core.data.problems import DataError
from core.report.export import ExportError, renderer


def build_parser() -> argparse.ArgumentParser:
    """The ``calibration-atlas`` argument parser with its commands, in the order of its help."""
    parser = argparse.ArgumentParser(
        prog=PROG, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="run 'calibration-atlas audit --help', 'calibration-atlas demo --help', "
               "'calibration-atlas credal --help', 'calibration-atlas compare --help', "
               "'calibration-atlas monitor --help' or 'calibration-atlas app --help' for the "
               "options and examples of each command.")
    commands = parser.add_subparsers(dest="command",
                                     metavar="{audit,demo,credal,compare,monitor,app}",
                                     required=True)
    audit = add_audit_command(commands)
    demo = add_demo_command(commands)
    add_credal_command(commands)
    add_compare_command(commands)
    for command in (audit, demo, commands.choices["credal"], commands.choices["compare"]):
        add_engine_options(command)
    add_monitor_command(commands)
    add_app_command(commands)
    return parser


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
            if options.command == "credal":
                return run_credal(options, stream)
            if options.command == "compare":
                renderer().warm_up()  # the figure browser starts while the data is audited
                return run_compare(options, stream)
            if options.command == "demo":
                return run_demo(options, stream)
            return run_audit_command(options, stream)
    except (DataError, ValueError) as error:  # DataError: the user's table
        stream.write(f"{PROG}: error: {error}\n")
        return 2
    except (ExportError, OSError) as error:
        stream.write(f"{PROG}: the report could not be written: {error}\n")
        return 1
    except KeyboardInterrupt:
        stream.write(f"\n{PROG}: interrupted.\n")
        return 130


def command() -> None:
    """The ``calibration-atlas`` program: :func:`main` on the process's arguments, then the
    exit with its status.

    Before the exit every object still alive is frozen (``gc.freeze()``), so that the
    interpreter's collections while it shuts down skip the objects of every module the
    command imported — about 0.3 s of the command's end, spent freeing nothing (the process
    is leaving). Exit handlers, threads and files finish as usual. In-process callers (tests,
    notebooks) call :func:`main`, which leaves the collector alone.
    """
    status = main()
    gc.freeze()
    sys.exit(status)
