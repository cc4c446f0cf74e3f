"""The programs outside the virtual environment that the product or its tests call, each with
the Debian package that provides it.

`.ci/run` installs every package named here, the README names them, and a test whose program
is missing is skipped with a reason that names the package (``requires_program``). The test
``tests/test_system_programs.py`` reads the code and fails when a call to a program appears
that this table does not know.
"""

from __future__ import annotations

import shutil

import pytest

#: program → the Debian package that installs it.
PROGRAMS = {
    "chromium": "chromium",            # figure export (kaleido), PDF report, browser tests
    "chromedriver": "chromium-driver",  # installed with Chromium for WebDriver-based tools
}

#: Files whose calls name their program through a variable, and the program it resolves to.
DYNAMIC_CALLS = {
    "core/report/export.py": "chromium",    # shutil.which over CHROMIUM_CANDIDATES
    "core/report/pdf.py": "chromium",       # the browser find_chromium() returned
    "tests/e2e/conftest.py": "chromium",    # Playwright's executable_path, the app server
    "tests/test_cli.py": "python",          # sys.executable: the virtual environment's Python
    "tests/e2e/test_installed_wheel.py": "python",  # build, venv, pip; the new venv's command
    "tests/test_docs.py": "python",         # sys.executable -m sphinx
    "tests/test_app_command.py": "python",  # sys.executable: Streamlit's view of the config
    "tests/test_cluster.py": "python",      # the virtual environment's dask scheduler / worker
    "tests/dask_cluster.py": "python",      # the same, for the tcp:// and tls:// test clusters
    "benchmarks/flake.py": "python",        # sys.executable -m pytest, run after run
    "benchmarks/lce.py": "python",          # sys.executable -m benchmarks.lce pieces-run
    "benchmarks/serve_load.py": "python",   # asyncio.run (no program), the app server
    "benchmarks/monitor_scale.py": "python",  # sys.executable -m core.cli monitor, measured
    "benchmarks/streaming.py": "python",    # the venv's dask scheduler / worker, its CLI
    "benchmarks/slider_latency.py": "chromium",  # Playwright's executable_path, the app server
    "tests/test_architecture.py": "python",  # the venv's lint-imports on a copy of the code
    "tests/test_memory_release.py": "python",  # sys.executable: a fresh heap for the trim test
    "tests/system_programs.py": "chromium",  # requires_program: shutil.which of a PROGRAMS key
}


def missing_reason(program: str) -> str:
    """The skip reason of a test that needs ``program``: what is missing and how to install it."""
    packages = " ".join(sorted({PROGRAMS[program]} | ({"chromium-driver"}
                                                      if program == "chromium" else set())))
    return f"'{program}' is not installed: apt-get install {packages} (CI does)"


def requires_program(program: str):
    """Skip a test when ``program`` is not on the PATH, naming its Debian package."""
    return pytest.mark.skipif(shutil.which(program) is None, reason=missing_reason(program))
