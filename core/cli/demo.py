"""``calibration-atlas demo``: the default demo audited with the app's settings, reported."""

from __future__ import annotations

import argparse
from typing import TextIO

from core.audit import AuditSettings
from core.cli.audit import DESCRIPTION
from core.cli.audit_report import run
from core.cli.options import add_output_options
from core.data.demo import DEFAULT_DEMO, DEMOS, load_demo

#: Figure files the demo writes.
DEMO_FORMATS = ("png", "svg", "pdf", "html")

DEMO_EPILOG = f"""\
example:
  calibration-atlas demo --out demo-report

audits the '{DEFAULT_DEMO}' demo ({DEMOS[DEFAULT_DEMO].title}) with the app's default
settings and writes the same files as 'audit'."""



def add_demo_command(commands) -> argparse.ArgumentParser:
    """The ``demo`` subcommand and its ``--out`` (the engine options are added by the caller)."""
    demo = commands.add_parser(
        "demo", help=f"audit the '{DEFAULT_DEMO}' demo data and write its report",
        description=DESCRIPTION, epilog=DEMO_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_output_options(demo)
    return demo


def run_demo(options: argparse.Namespace, stream: TextIO) -> int:
    """The ``demo`` command: audit the default demo and write its report; the exit status."""
    return run(load_demo(DEFAULT_DEMO), AuditSettings(), options.out, DEMO_FORMATS, stream,
               (), None, 100)
