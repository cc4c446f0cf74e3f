"""The pages of the app, read from ``pages()`` in dashboard/app.py (shared by the AppTest
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
    """The ``st.Page(HERE / "views" / "x.py", title=...)`` entries of the list that
    ``pages()`` in app.py returns."""
    tree = ast.parse(APP.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "pages":
            returned = next(n.value for n in ast.walk(node) if isinstance(n, ast.Return))
            return tuple(_page(call) for call in returned.elts)
    raise AssertionError("dashboard/app.py has no pages() function")


def _page(call: ast.Call) -> PageRef:
    parts: list[str] = []
    node = call.args[0]
    while isinstance(node, ast.BinOp):  # HERE / "views" / "x.py"
        parts.insert(0, node.right.value)
        node = node.left
    title = next(k.value.value for k in call.keywords if k.arg == "title")
    return PageRef("/".join(parts), title)


def model_feature_boxes(at, source: str, label: str) -> dict[str, object]:
    """The Data page's model-feature ticks of the reference form (issue 29: a list of every
    column with its status, not a chip field), by column."""
    try:
        upload_key = at.session_state["uploaded_table_key"]
    except KeyError:
        upload_key = "none"
    prefix, suffix = f"ref_feature_{source}_{label}_", f"_{upload_key}"
    return {str(box.key)[len(prefix):-len(suffix)]: box for box in at.checkbox
            if str(box.key).startswith(prefix) and str(box.key).endswith(suffix)}


def chosen_model_features(at, source: str, label: str) -> list[str]:
    return [c for c, box in model_feature_boxes(at, source, label).items() if box.value]


def choose_model_features(at, source: str, label: str, features) -> None:
    """Tick exactly ``features`` (no run: the caller's next run sends them)."""
    boxes = model_feature_boxes(at, source, label)
    missing = set(features) - set(boxes)
    assert not missing, f"no model-feature tick for {missing}"
    for column, box in boxes.items():
        box.set_value(column in features)


#: Paper references and notation a page's opening leaves to its "How this is computed"
#: expander (issue 31, item 7).
NOTATION = ("eq.", "Lemma", "Appendix", "§", "σ_", "KLCE²", "CE²", "CE₂", "λ(", "max-|T|")


def assert_plain_opening(at) -> None:
    """The page opens with its question in plain words (bold, ending in '?') and what the
    answer means, without notation; the notation is in a collapsed 'How this is computed'
    expander that holds at least one of the folded terms."""
    opening = at.main.markdown[0].value
    assert opening.startswith("**") and "?**" in opening, opening
    assert not [term for term in NOTATION if term in opening], opening
    details = [e for e in at.main.expander if e.label == "How this is computed"]
    assert len(details) == 1 and not details[0].proto.expanded
    folded = " ".join(m.value for m in details[0].markdown)
    assert any(term in folded for term in NOTATION), folded
