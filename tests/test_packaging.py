"""The installed distribution: ``import core`` must resolve to this checkout's package, and
``core`` stays free of Streamlit so the library and the command line run without it."""

from __future__ import annotations

import ast
from importlib import metadata
from pathlib import Path

import core
import dashboard
from tests.conftest import ROOT


def test_import_core_resolves_inside_this_distribution() -> None:
    # An installed copy elsewhere (or a stale wheel) would shadow the code under test.
    assert Path(core.__file__).resolve().parent == ROOT / "core"
    assert Path(dashboard.__file__).resolve().parent == ROOT / "dashboard"
    assert metadata.distribution("calibration-atlas").version == core.__version__


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_core_never_imports_streamlit() -> None:
    offenders = [p.relative_to(ROOT) for p in (ROOT / "core").rglob("*.py")
                 if "streamlit" in imported_modules(p)]
    assert not offenders, offenders


def test_console_script_points_at_the_command_line() -> None:
    from core import cli

    scripts = {e.name: e for e in metadata.entry_points(group="console_scripts")
               if e.dist is not None and e.dist.name == "calibration-atlas"}
    assert scripts["calibration-atlas"].value == "core.cli:command"
    assert scripts["calibration-atlas"].load() is cli.command
