"""Every program outside the virtual environment that the code calls is installed by `.ci/run`
and named in the README (issue: a suite that passes on a fresh machine).

The calls are found by reading the code: ``subprocess`` calls, ``shutil.which`` and
Playwright's ``executable_path``. A literal program name must be in
:data:`tests.system_programs.PROGRAMS`; a call through a variable must come from a file listed
in :data:`tests.system_programs.DYNAMIC_CALLS` with the program it resolves to.
"""

from __future__ import annotations

import ast
import re

from tests.conftest import ROOT
from tests.system_programs import DYNAMIC_CALLS, PROGRAMS

CALLS = {"run", "Popen", "call", "check_call", "check_output", "which"}
SCANNED = ("core", "dashboard", "tests", "benchmarks")


def program_calls() -> list[tuple[str, int, str | None]]:
    """``(file, line, program or None when named through a variable)`` for every call."""
    found = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            name = path.relative_to(ROOT).as_posix()
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                attr = func.attr if isinstance(func, ast.Attribute) else None
                owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(
                    func.value, ast.Name) else None
                argument = None
                if attr in CALLS and owner in ("subprocess", "shutil") and node.args:
                    argument = node.args[0]
                for keyword in node.keywords:
                    if keyword.arg == "executable_path":
                        argument = keyword.value
                if argument is None:
                    continue
                if isinstance(argument, (ast.List, ast.Tuple)) and argument.elts:
                    argument = argument.elts[0]
                program = argument.value if isinstance(argument, ast.Constant) else None
                found.append((name, node.lineno, program))
    return found


def ci_packages() -> set[str]:
    script = (ROOT / ".ci" / "run").read_text()
    packages = set()
    for line in re.findall(r"apt-get install[^\n]*", script):
        packages |= {word for word in line.split()[2:] if not word.startswith("-")}
    return packages


def test_the_scan_sees_the_known_calls() -> None:
    files = {name for name, _, _ in program_calls()}
    assert {"core/report/pdf.py", "core/report/export.py", "tests/e2e/conftest.py"} <= files


def test_every_program_called_is_known() -> None:
    unknown = [f"{name}:{line} calls {program!r}" for name, line, program in program_calls()
               if program is not None and program not in PROGRAMS]
    assert not unknown, ("programs called but not in tests/system_programs.PROGRAMS (add them "
                         "with their Debian package, install them in .ci/run): " + str(unknown))
    dynamic = sorted({name for name, _, program in program_calls() if program is None})
    assert set(dynamic) <= set(DYNAMIC_CALLS), (
        "calls naming their program through a variable in files not listed in "
        f"DYNAMIC_CALLS: {sorted(set(dynamic) - set(DYNAMIC_CALLS))}")


def test_ci_installs_every_program_and_the_readme_names_it() -> None:
    needed = {PROGRAMS[p] for p in PROGRAMS} | {
        PROGRAMS[p] for p in DYNAMIC_CALLS.values() if p in PROGRAMS}
    installed = ci_packages()
    assert needed <= installed, f".ci/run does not install {sorted(needed - installed)}"
    readme = (ROOT / "README.md").read_text()
    missing = [package for package in needed if f"`{package}`" not in readme]
    assert not missing, f"the README does not name the Debian packages {missing}"


def test_ci_runs_the_readme_test_command() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", script, re.M)
    assert "make test" in (ROOT / "README.md").read_text()
