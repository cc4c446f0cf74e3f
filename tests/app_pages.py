"""The pages of the app, read from ``PAGES`` in dashboard/app.py (shared by the AppTest
matrix and the browser tests, so a page added there is covered without touching them)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tests.conftest import APP


@dataclass(frozen=True)
class PageRef:
    path: str  # relative to dashboard/, as AppTest.switch_page takes it
    title: str


def discover_pages() -> tuple[PageRef, ...]:
    """The ``st.Page(HERE / "views" / "x.py", title=...)`` entries of ``PAGES`` in app.py."""
    tree = ast.parse(APP.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "PAGES" for t in node.targets):
            return tuple(_page(call) for call in node.value.elts)
    raise AssertionError("dashboard/app.py has no PAGES list")


def _page(call: ast.Call) -> PageRef:
    parts: list[str] = []
    node = call.args[0]
    while isinstance(node, ast.BinOp):  # HERE / "views" / "x.py"
        parts.insert(0, node.right.value)
        node = node.left
    title = next(k.value.value for k in call.keywords if k.arg == "title")
    return PageRef("/".join(parts), title)
