"""The documentation site builds with no warning, and its API reference is complete (issue 34).

``sphinx-build -n -W --keep-going`` (nitpicky: every cross-reference must resolve, a docstring
that does not parse fails) into a temporary folder, once for this module; then every name in
every face's ``__all__`` must have its entry in the generated reference. No network: the build
uses no intersphinx.
"""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from api_faces import faces, top_modules  # noqa: E402  (the docs' own extension)

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-n", "-W", "--keep-going", "-q",
         "-d", str(out / "doctrees"), str(ROOT / "docs"), str(out / "html")],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, f"the docs build warned or failed:\n{done.stderr[-6000:]}"
    return out / "html"


def test_every_face_and_top_module_has_a_page(built: Path) -> None:
    for name in [*faces(), *top_modules()]:
        assert (built / "api" / "generated" / f"{name}.html").is_file(), name
    assert "core.metrics" in faces() and "core.audit" in faces()


def test_every_public_name_of_every_face_is_documented(built: Path) -> None:
    missing = []
    for face in faces():
        page = (built / "api" / "generated" / f"{face}.html").read_text(encoding="utf-8")
        anchors = set(re.findall(r'id="([^"]+)"', page))
        module = importlib.import_module(face)
        for name in module.__all__:
            value = getattr(module, name)
            wanted = f"module-{value.__name__}" if inspect.ismodule(value) else f"{face}.{name}"
            if wanted not in anchors:
                missing.append(f"{face}.{name}")
    assert not missing, f"names in __all__ without an API entry: {missing}"


def test_the_report_schema_and_the_studies_are_in_the_site(built: Path) -> None:
    assert (built / "report-schema.html").is_file()
    studies = sorted(p.stem for p in (ROOT / "docs" / "studies").glob("*.md"))
    assert studies, "no study pages"
    for stem in studies:
        assert (built / "studies" / f"{stem}.html").is_file(), stem


def public_objects() -> list[tuple[str, object]]:
    """``(public name, object)`` of every function and class in a face's ``__all__``, once."""
    seen, found = set(), []
    for face in faces():
        module = importlib.import_module(face)
        for name in module.__all__:
            value = getattr(module, name)
            if (inspect.isfunction(value) or inspect.isclass(value)) and id(value) not in seen:
                seen.add(id(value))
                found.append((f"{face}.{name}", value))
    return found


def test_every_public_function_documents_its_parameters_in_numpydoc() -> None:
    """numpydoc's own checks: no parameter left out (PR01), none unknown (PR02)."""
    from numpydoc.validate import validate

    problems = []
    for public, value in public_objects():
        if not inspect.isfunction(value):
            continue
        result = validate(f"{value.__module__}.{value.__qualname__}")
        problems += [f"{public}: {code} {message}" for code, message in result["errors"]
                     if code in ("PR01", "PR02")]
    assert not problems, "\n".join(problems)


def test_every_public_class_documents_its_attributes_or_parameters() -> None:
    from numpydoc.docscrape import ClassDoc

    missing = [public for public, value in public_objects()
               if inspect.isclass(value) and not getattr(value, "_is_protocol", False)
               and not (ClassDoc(value)["Attributes"] or ClassDoc(value)["Parameters"])]
    assert not missing, f"classes without an Attributes or Parameters section: {missing}"
