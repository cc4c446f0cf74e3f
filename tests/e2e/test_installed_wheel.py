"""The built wheel alone serves the app (issue 34): no checkout on the path.

The wheel is built from this checkout, installed into a new virtual environment in a
temporary folder (its dependencies from the package index, as ``pip install`` resolves them),
and run from a folder outside the checkout: ``calibration-atlas demo`` writes its report, and
``calibration-atlas app`` answers ``ok`` on its health endpoint and shows the Data page on the
census demo in Chromium, with the packaged logo. Slow (a few minutes: the dependencies are
installed from pip's cache), one run per ``make test``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.e2e.conftest import free_port, requires_chromium, screenshot, wait_healthy

pytestmark = [pytest.mark.slow]

#: Installing the dependencies into the new environment (from pip's cache or the index).
INSTALL_SECONDS = 900


def clean_environment(home: Path) -> dict[str, str]:
    """This environment without anything that would put the checkout on the path."""
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    environment["CALIBRATION_ATLAS_STORE"] = str(home / "tables")
    return environment


#: What a copy of the checkout to build from leaves out: environments, caches, build output
#: (a stale ``build/lib`` would put files deleted since into the wheel).
NOT_BUILT_FROM = shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info",
                                        "__pycache__", "_build", "generated", ".*_cache",
                                        ".hypothesis", ".screenshots")


def build_wheel(folder: Path) -> Path:
    """The wheel of this checkout's files (``python -m build --wheel``), built from a copy in
    ``folder`` so that the checkout gets no build output."""
    source = folder / "source"
    shutil.copytree(ROOT, source, ignore=NOT_BUILT_FROM)
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(folder),
                    str(source)], check=True, capture_output=True, timeout=300)
    (wheel,) = folder.glob("calibration_atlas-*.whl")
    return wheel


def install(python: str, wheel: Path, folder: Path) -> tuple[Path, Path, dict[str, str]]:
    """A new virtual environment of ``python`` in ``folder`` with only ``wheel`` (and its
    dependencies) installed: ``(its bin folder, a working folder outside the checkout, env)``."""
    assert ROOT not in folder.parents
    subprocess.run([python, "-m", "venv", str(folder / "venv")], check=True, timeout=300)
    bin_folder = folder / "venv" / "bin"
    environment = clean_environment(folder)
    done = subprocess.run([str(bin_folder / "python"), "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", "--no-compile", str(wheel)],
                          capture_output=True, text=True, timeout=INSTALL_SECONDS,
                          env=environment, cwd=folder)
    assert done.returncode == 0, done.stderr[-3000:]
    work = folder / "work"
    work.mkdir()
    return bin_folder, work, environment


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    """The wheel in a new environment of this interpreter."""
    return install(sys.executable, wheel, tmp_path_factory.mktemp("wheel"))


def serve_and_check_health(bin_folder: Path, work: Path, environment: dict[str, str]) -> None:
    """``calibration-atlas app`` on a free port answers ``ok`` on its health endpoint."""
    port = free_port()
    log = work / f"app-{port}.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [str(bin_folder / "calibration-atlas"), "app", "--port", str(port),
             "--address", "127.0.0.1"],
            cwd=work, env=environment, stdout=sink, stderr=subprocess.STDOUT)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", process, log)
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_wheel_is_imported_from_the_new_environment(installed) -> None:
    bin_folder, work, environment = installed
    found = subprocess.run(
        [str(bin_folder / "python"), "-c",
         "import core, dashboard, importlib.metadata as m; "
         "print(core.__file__); print(dashboard.__file__); "
         "print(m.version('calibration-atlas'), core.__version__)"],
        capture_output=True, text=True, check=True, cwd=work, env=environment, timeout=120)
    core_file, dashboard_file, versions = found.stdout.split("\n")[:3]
    for path in (core_file, dashboard_file):
        assert "site-packages" in path and str(ROOT) not in path, path
    dashboard = Path(dashboard_file).parent
    for needed in ("app.py", "views/data.py", "assets/logo.png", "assets/klce_null_study.md",
                   ".streamlit/config.toml"):
        assert (dashboard / needed).is_file(), f"the wheel lacks dashboard/{needed}"
    distribution_version, code_version = versions.split()
    assert distribution_version == code_version


def test_the_installed_command_writes_the_demo_report(installed) -> None:
    bin_folder, work, environment = installed
    done = subprocess.run([str(bin_folder / "calibration-atlas"), "demo", "--out", "demo"],
                          capture_output=True, text=True, cwd=work, env=environment,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (work / "demo" / "report.html").is_file()
    assert (work / "demo" / "results.json").is_file()


@requires_chromium
def test_the_installed_app_serves_the_census_demo(installed, page) -> None:
    bin_folder, work, environment = installed
    port = free_port()
    log = work / "app.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [str(bin_folder / "calibration-atlas"), "app", "--port", str(port),
             "--address", "127.0.0.1"],
            cwd=work, env=environment, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, log)
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as response:
            assert response.read().strip() == b"ok"
        page.goto(url)
        page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for(timeout=120_000)
        page.locator("[data-testid='stSidebarLogo'], [data-testid='stHeaderLogo'], "
                     "[data-testid='stLogo']").first.wait_for(state="attached")  # the logo
        assert page.get_by_text("Traceback").count() == 0
        screenshot(page, "installed-wheel-data")
    finally:
        process.terminate()  # the command became Streamlit itself (exec), so this stops it
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert f"serving the dashboard on http://127.0.0.1:{port}" in log.read_text()


#: The oldest and newest Python that ``requires-python`` admits and the classifiers name.
SUPPORTED_PYTHONS = ("3.10", "3.13")


def find_python(version: str) -> str | None:
    """A working ``python<version>``: the one on the PATH if it runs (a pyenv shim of a
    version not selected does not), else pyenv's own copy; None when there is none."""
    candidates = [shutil.which(f"python{version}")]
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += sorted(str(p) for p in root.glob(f"versions/{version}.*/bin/python{version}"))
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "-c", "import sys; print(sys.executable)"],
                               capture_output=True, text=True, timeout=60)
        if probe.returncode == 0:
            return probe.stdout.strip()
    return None


@pytest.mark.pythons
@pytest.mark.parametrize("version", SUPPORTED_PYTHONS)
def test_the_wheel_on_the_oldest_and_newest_python(version: str, wheel, tmp_path) -> None:
    """``make test-pythons``: the wheel installs on that interpreter, writes the demo report
    and serves the app (several minutes each: every dependency is installed for it)."""
    python = find_python(version)
    if python is None:
        pytest.skip(f"no working python{version} on the PATH or under pyenv")
    bin_folder, work, environment = install(python, wheel, tmp_path)
    done = subprocess.run([str(bin_folder / "calibration-atlas"), "demo", "--out", "demo"],
                          capture_output=True, text=True, cwd=work, env=environment,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (work / "demo" / "results.json").is_file()
    serve_and_check_health(bin_folder, work, environment)
