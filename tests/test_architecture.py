"""The house plan (ARCHITECTURE.md) holds: no import cycle, a thin top of ``core``, one public
face per package. The layers themselves are checked by ``lint-imports`` in ``make test``
(the contract is in ``pyproject.toml``); these tests cover what a layers contract cannot."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from tests.conftest import ROOT

CORE = ROOT / "core"


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (the import cycles)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def import_graph() -> dict[str, set[str]]:
    graph = grimp.build_graph("core", "dashboard")
    return {module: {m for m in graph.find_modules_directly_imported_by(module)
                     if m.startswith(("core", "dashboard"))} for module in graph.modules}


def test_tarjan_finds_a_planted_cycle() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        ["a", "b", "c"]]


def test_no_import_cycle_in_core_or_dashboard() -> None:
    graph = import_graph()
    assert len(graph) > 100
    assert strongly_connected(graph) == []


def test_the_top_of_core_is_thin() -> None:
    files = sorted(path.name for path in CORE.glob("*.py"))
    assert len(files) <= 5, files
    assert not [name for name in files if name.startswith("_") and name != "__init__.py"]


def test_every_package_has_a_public_face() -> None:
    for package in sorted(p for p in CORE.iterdir() if (p / "__init__.py").exists()):
        tree = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
        names = [target.id for node in tree.body if isinstance(node, ast.Assign)
                 for target in node.targets if isinstance(target, ast.Name)]
        assert "__all__" in names, f"core/{package.name}/__init__.py has no __all__"
        assert ast.get_docstring(tree), f"core/{package.name}/__init__.py has no docstring"


def test_no_module_is_shadowed_by_a_name_of_its_face() -> None:
    """``core.metrics.skce`` is the function of the DESIGN contract, so no module may be named
    ``skce`` beside it: a face never exports a name equal to one of its submodules (other
    than the submodule itself)."""
    import importlib

    for init in sorted(CORE.rglob("__init__.py")):
        package = ".".join(init.parent.relative_to(ROOT).parts)
        face = importlib.import_module(package)
        submodules = {p.stem for p in init.parent.glob("*.py")} | {
            p.name for p in init.parent.iterdir() if (p / "__init__.py").exists()}
        for name in getattr(face, "__all__", ()):
            value = getattr(face, name)
            assert name not in submodules or getattr(value, "__name__", "").endswith(name), \
                f"{package}.{name} names both a submodule and an exported object"


def test_the_import_contract_is_declared_and_run() -> None:
    config = (ROOT / "pyproject.toml").read_text()
    assert "[tool.importlinter]" in config
    assert 'type = "layers"' in config and 'type = "forbidden"' in config
    assert "lint-imports" in (ROOT / "Makefile").read_text()


def lint_with(tmp_path, path: str, source: str) -> subprocess.CompletedProcess:
    """``lint-imports`` on a copy of the packages with one more module, ``path``."""
    for package in ("core", "dashboard"):
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / path).write_text(source, encoding="utf-8")
    linter = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(linter), "--no-cache"], cwd=tmp_path, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)},
                          timeout=300, check=False)


@pytest.mark.parametrize(("path", "source", "contract"), [
    ("dashboard/probe.py", "from core.data.table import summarise_columns\n",
     "the dashboard enters core only through package faces"),
    ("core/data/probe.py", "import streamlit\n", "core never imports streamlit"),
])
def test_the_contracts_fail_on_a_helper_import_and_on_streamlit_in_core(
        tmp_path, path: str, source: str, contract: str) -> None:
    result = lint_with(tmp_path, path, source)
    assert result.returncode != 0
    assert contract in result.stdout and "BROKEN" in result.stdout.upper()
    assert "probe" in result.stdout
