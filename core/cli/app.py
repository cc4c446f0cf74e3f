"""``calibration-atlas app``: the dashboard of the installed package, served by Streamlit."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import TextIO

from core.cli.options import PROG, whole_number

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

