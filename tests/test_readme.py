"""Every Python block of the README runs as written (issue: one house plan for `core`).

The blocks run in order in one namespace, as a reader pasting them into one session would, in
a scratch folder holding the ``predictions.csv`` the README's first example reads (the
table of its example: columns ``y, p, age, sex, race``, here 2,000 rows of the census demo).
Bash blocks are not run; the CLI tests cover the commands.
"""

from __future__ import annotations

import re

import pytest

from core.data import demo_frame
from tests.conftest import ROOT

BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def readme_blocks() -> list[str]:
    return BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_readme_has_python_examples() -> None:
    assert len(readme_blocks()) >= 4


@pytest.mark.slow
def test_every_readme_python_block_runs(tmp_path, monkeypatch) -> None:
    census = demo_frame("census")
    table = census.rename(columns={"defaulted": "y", "p_default": "p"})[["y", "p", "age", "sex",
                                                                           "race"]]
    table.head(2_000).to_csv(tmp_path / "predictions.csv", index=False)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme"}
    for number, block in enumerate(readme_blocks(), start=1):
        try:
            exec(compile(block, f"README.md python block {number}", "exec"), namespace)
        except Exception as error:  # noqa: BLE001 — name the block that failed
            raise AssertionError(f"README python block {number} failed: {error!r}\n{block}") \
                from error
