"""Every Python block of the README and of the documentation's guide runs as written
(issue: one house plan for `core`; issue 34: the examples moved into ``docs/``).

The blocks run in order — the README, then :data:`DOC_PAGES` — in one namespace, as a reader
pasting them into one session would, in a scratch folder holding the ``predictions.csv`` the
examples read (the table of the data format's example: columns ``y, p, age, sex, race``, here
2,000 rows of the census demo). Bash blocks are not run; the CLI tests cover the commands.
"""

from __future__ import annotations

import re

import pytest

from core.data import demo_frame
from tests.conftest import ROOT

BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
#: The pages whose Python blocks run, in reading order (later pages use earlier names).
DOC_PAGES = ("README.md", "docs/getting-started.md", "docs/guide/python.md",
             "docs/guide/large-data.md", "docs/guide/monitoring.md")


def python_blocks(page: str) -> list[str]:
    return BLOCK.findall((ROOT / page).read_text(encoding="utf-8"))


def test_the_readme_and_the_guide_have_python_examples() -> None:
    assert len(python_blocks("README.md")) >= 1
    assert sum(len(python_blocks(page)) for page in DOC_PAGES) >= 6


def test_every_docs_page_with_python_is_run() -> None:
    pages = {path.relative_to(ROOT).as_posix() for path in (ROOT / "docs").rglob("*.md")
             if "_build" not in path.parts and python_blocks(path.relative_to(ROOT).as_posix())}
    assert pages <= set(DOC_PAGES), f"add these pages to DOC_PAGES: {pages - set(DOC_PAGES)}"


@pytest.mark.slow
def test_every_python_block_runs(tmp_path, monkeypatch) -> None:
    census = demo_frame("census")
    table = census.rename(columns={"defaulted": "y", "p_default": "p"})[["y", "p", "age", "sex",
                                                                           "race"]]
    table.head(2_000).to_csv(tmp_path / "predictions.csv", index=False)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme"}
    for page in DOC_PAGES:
        for number, block in enumerate(python_blocks(page), start=1):
            try:
                exec(compile(block, f"{page} python block {number}", "exec"), namespace)
            except Exception as error:  # noqa: BLE001 — name the block that failed
                raise AssertionError(f"{page} python block {number} failed: {error!r}\n"
                                     f"{block}") from error
