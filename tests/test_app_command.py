"""``calibration-atlas app``: the Streamlit command it runs, its defaults and its errors
(issue 34). The wheel installed in a fresh environment is served in
``tests/e2e/test_installed_wheel.py``."""

from __future__ import annotations

import sys

import pytest

from core.cli import app, entry
from tests.conftest import APP


def command_for(*arguments: str) -> tuple[list[str], dict[str, str]]:
    return app.app_command(entry.build_parser().parse_args(["app", *arguments]))


def test_defaults_serve_this_machine_only_on_8501(monkeypatch) -> None:
    monkeypatch.delenv("CALIBRATION_ATLAS_SIGN_IN", raising=False)
    argv, environment = command_for()
    assert argv[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert argv[4] == str(APP)  # the package's own dashboard/app.py
    assert argv[5:] == ["--server.port", "8501", "--server.address", "localhost"]
    assert "CALIBRATION_ATLAS_SIGN_IN" not in environment


def test_port_address_and_sign_in_pass_through() -> None:
    argv, environment = command_for("--port", "8600", "--address", "0.0.0.0", "--sign-in")
    assert argv[5:] == ["--server.port", "8600", "--server.address", "0.0.0.0"]
    assert environment["CALIBRATION_ATLAS_SIGN_IN"] == "1"


@pytest.mark.parametrize("port", ["0", "65536", "http"])
def test_a_bad_port_is_a_usage_error(port: str, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        entry.build_parser().parse_args(["app", "--port", port])
    assert stop.value.code == 2
    assert "--port" in capsys.readouterr().err


def test_the_packaged_defaults_sit_beside_the_app() -> None:
    script = app.app_script()
    assert (script.parent / ".streamlit" / "config.toml").is_file()
    assert (script.parent / "assets" / "logo.png").is_file()


def test_a_missing_dashboard_is_one_sentence(monkeypatch, capsys) -> None:
    monkeypatch.setattr(app.importlib.util, "find_spec", lambda name: None)
    assert entry.main(["app"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("calibration-atlas: error: ") and "Traceback" not in err


def test_streamlit_reads_the_packaged_defaults_from_any_folder(tmp_path) -> None:
    """``streamlit run`` of the package's app takes ``dashboard/.streamlit/config.toml`` as the
    script's own configuration, whatever folder it runs in (no checkout beside it)."""
    import subprocess

    probe = (
        "from streamlit import config; "
        f"config._main_script_path = {str(APP)!r}; "  # what `streamlit run APP` sets
        "config.get_config_options(force_reparse=True); "
        "print(config.get_option('server.maxUploadSize'), "
        "config.get_option('client.showErrorDetails'), "
        "config.get_option('browser.gatherUsageStats'))")
    shown = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                           text=True, check=True, timeout=120)
    assert shown.stdout.split() == ["500", "none", "False"], shown.stdout
