"""AppTest matrix (issue 14): every page of the app with every demo and with uploaded tables at
the edges, and the real-table workflow (COMPAS- and German-credit-shaped files through the
reference model). No page may raise, nor fail behind the page guard; pages may say what is
missing.

The pages are read from ``pages()`` in dashboard/app.py, so a page added there is covered
without touching this file. The combinations are the parametrize ids
(``pytest tests/test_app_matrix.py --collect-only -q`` lists them), e.g.
``test_page_survives[upload-multiclass-20-lce_landscape]``.

Datasets are built once per process (``functools.cache``); the edge tables are a few hundred
rows. Each dataset arrives as an upload does: the table is written to CSV, read back with
``core.data.readers.read_table`` and validated with ``AuditData.from_mapping``.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import pytest
from streamlit.testing.v1 import AppTest

from core.data.audit_data import AuditData
from core.data.demo import DEMOS
from core.data.readers import read_table
from core.data.reference_model import train_reference_model
from dashboard.guard import FAILURE_PREFIX
from dashboard.state import cached_demo, set_active
from tests.app_pages import PageRef, choose_model_features, discover_pages
from tests.conftest import APP
from tests.realdata_tables import (
    COMPAS_AUDIT_FEATURES,
    COMPAS_MODEL_FEATURES,
    EDGE_KINDS,
    GERMAN_AUDIT_FEATURES,
    GERMAN_MODEL_FEATURES,
    compas_like_frame,
    edge_table,
    german_credit_like_frame,
)

TIMEOUT = 300


PAGES = discover_pages()


# --------------------------------------------------------------------------- datasets


def uploaded(frame, mapping, name: str) -> AuditData:
    """The table as the upload tab sees it: CSV bytes → read_table → from_mapping."""
    table = read_table(frame.to_csv(index=False).encode(), name)
    return AuditData.from_mapping(table.frame, mapping, name=name)


def reference_audit(frame, name: str, model_features, audit_features, groups,
                    model: str = "random_forest") -> AuditData:
    """A raw table through the reference-model workflow, as the Data page runs it."""
    table = read_table(frame.to_csv(index=False).encode(), name)
    label = "two_year_recid" if "two_year_recid" in table.frame.columns else "class"
    result = train_reference_model(table.frame, label, model_features, model=model, seed=0)
    mapping = replace(result.mapping, features=tuple(audit_features), groups=tuple(groups))
    return AuditData.from_mapping(result.frame, mapping, name=name)


DATASETS = {
    **{f"demo-{key}": (lambda key=key: cached_demo(key)) for key in DEMOS},
    **{f"upload-{kind}": (lambda kind=kind: uploaded(*edge_table(kind), f"{kind}.csv"))
       for kind in EDGE_KINDS},
    "compas-reference-forest": lambda: reference_audit(
        compas_like_frame(), "compas-scores-two-years.csv", COMPAS_MODEL_FEATURES,
        COMPAS_AUDIT_FEATURES, ("race", "sex")),
    "german-credit-reference-logistic": lambda: reference_audit(
        german_credit_like_frame(), "german_credit.csv", GERMAN_MODEL_FEATURES,
        GERMAN_AUDIT_FEATURES, ("personal_status",), model="logistic"),
}


@cache
def dataset(name: str) -> AuditData:
    return DATASETS[name]()


def assert_clean(at: AppTest, page: PageRef) -> None:
    """No exception, no page-guard message, and the page drew its title."""
    assert not at.exception, at.exception
    failures = [e.value for e in at.error if e.value.startswith(FAILURE_PREFIX)]
    assert not failures, failures
    assert at.title and at.title[0].value.startswith(page.title), [t.value for t in at.title]


def visit(audit: AuditData, source: str, page: PageRef) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    set_active(audit, source, session=at.session_state)
    at.switch_page(page.path)
    at.run()
    return at


def page_id(page: PageRef) -> str:
    return page.path.rsplit("/", 1)[-1].removesuffix(".py")


def test_pages_are_discovered_from_app_py() -> None:
    paths = [p.path for p in PAGES]
    assert paths[0] == "views/data.py" and "views/lce_landscape.py" in paths
    assert len(set(paths)) == len(paths) >= 5


@pytest.mark.parametrize("page", PAGES, ids=page_id)
@pytest.mark.parametrize("name", list(DATASETS))
def test_page_survives(name: str, page: PageRef) -> None:
    at = visit(dataset(name), name, page)
    assert_clean(at, page)


# --------------------------------------------------------------------------- what pages say


def test_lce_landscape_with_one_feature_draws_lce_against_it() -> None:
    # issue 14, found 2: the ensemble demo has one audit feature; PCA to 2-D raised
    page = next(p for p in PAGES if p.path.endswith("lce_landscape.py"))
    at = visit(dataset("demo-ensemble"), "demo-ensemble", page)
    assert_clean(at, page)
    assert "lce_method" not in [r.key for r in at.radio]  # nothing to embed, no choice
    assert any("the LCE is drawn against it" in c.value for c in at.caption)
    assert any("computed on 'x' z-scored" in c.value for c in at.caption)


def test_lce_landscape_without_features_says_what_to_map() -> None:
    page = next(p for p in PAGES if p.path.endswith("lce_landscape.py"))
    at = visit(dataset("upload-no-features"), "no features", page)
    assert_clean(at, page)
    assert "Map audit features on the Data page" in at.warning[0].value


def test_lce_landscape_tsne_on_too_few_distinct_rows_says_so() -> None:
    # two binary categorical features give 4 distinct vectors: t-SNE needs 5
    page = next(p for p in PAGES if p.path.endswith("lce_landscape.py"))
    audit = dataset("upload-categorical-only")
    at = visit(audit, "categorical", page)
    at.multiselect(key="lce_features").set_value(["sex"]).run()
    at.radio(key="lce_method").set_value("tsne").run()
    assert_clean(at, page)
    assert any("distinct values" in w.value for w in at.warning), [w.value for w in at.warning]


# --------------------------------------------------------------------------- real tables, by hand


def upload_and_train(name: str, content: bytes, model_features, audit_features, groups,
                     model: str, seed: int) -> AppTest:
    """The Data page as a user drives it: upload, then train a reference model on the file."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    at.file_uploader(key="upload_file").set_value((name, content, "text/csv"))
    at.run()
    assert not at.exception, at.exception
    source = f"uploaded: {name}"
    upload_key = at.session_state["uploaded_table_key"]  # reference-form keys carry it

    def form(widget: str) -> str:
        return f"ref_{widget}_{upload_key}"

    assert at.selectbox(key=form("source")).value == source  # issue 20: the upload's the default
    label = at.selectbox(key=form(f"label_{source}")).value
    choose_model_features(at, source, label, model_features)
    at.multiselect(key=form(f"audit_{source}")).set_value(list(audit_features))
    at.multiselect(key=form(f"groups_{source}")).set_value(list(groups))
    at.selectbox(key=form("model")).set_value(model)
    at.number_input(key=form("seed")).set_value(seed)
    at.button(key=form("train")).click()
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.mark.parametrize(
    "table", ["compas-scores-two-years", "german-credit"])
def test_real_table_from_upload_to_every_page_without_editing(table: str) -> None:
    if table == "compas-scores-two-years":
        at = upload_and_train(
            "compas-scores-two-years.csv", compas_like_frame().to_csv(index=False).encode(),
            COMPAS_MODEL_FEATURES, COMPAS_AUDIT_FEATURES, ("race", "sex"),
            model="random_forest_default", seed=7)
        notes = " ".join(i.value for i in at.info)
        assert "more than one column named 'decile_score'" in notes
        assert "with scikit-learn's default settings" in notes and "seed 7" in notes
        report = " ".join(n.message for n in at.session_state["active_audit"].report)
        assert "seed 7" in report  # the validation report keeps what was done
    else:
        at = upload_and_train(
            "german_credit.csv", german_credit_like_frame().to_csv(index=False).encode(),
            GERMAN_MODEL_FEATURES, GERMAN_AUDIT_FEATURES, ("personal_status",),
            model="logistic", seed=0)
    assert any("rows passed validation" in s.value for s in at.success)
    audit = at.session_state["active_audit"]
    assert audit.split is not None and audit.feature_frame.shape[1] == 3
    for page in PAGES[1:]:
        at.switch_page(page.path)
        at.run()
        assert_clean(at, page)
        assert at.session_state["active_audit"] is audit
        if table == "compas-scores-two-years" and page.path.endswith("trust.py"):
            # the paper's finding: the overfit forest is not locally calibrated over the
            # demographics (on this generated table p = 0.005 at B = 200, the smallest possible)
            assert "the aggregated KLCE test rejects" in " ".join(e.value for e in at.error)


# --------------------------------------------------------------------------- controls at the edges

#: Non-default settings per page (widget key → raw value; "last" = the last option), applied
#: one after another on the smallest and the widest edge table. Keys a page does not show for
#: a dataset (a class picker on binary data) are skipped.
CONTROLS = {
    "reliability": [("rel_notion", "last"), ("rel_class", "last"), ("rel_strategy", "quantile"),
                    ("rel_bins", 30), ("rel_interval", "jeffreys"),
                    ("rel_boot_method", "percentile"), ("rel_group", "last")],
    "trust": [("trust_null", "permutation"), ("trust_null", "wild"), ("trust_sigma_x", 1 / 16),
              ("trust_sigma_p", 8.0), ("trust_class", "last"), ("trust_features", [])],
    "local_bias": [("lcb_bw_mode", "manual"), ("lcb_fp", 1 / 16), ("lcb_fx", 8.0),
                   ("lcb_x", "last"), ("lcb_color", "last"), ("lcb_facet", "last"),
                   ("lcb_degree", 5), ("lcb_class", "last"), ("lcb_features", [])],
    "findings": [("find_error", "fdr"), ("find_depth", 3), ("find_ranges", 8), ("find_b", 200),
                 ("find_alpha", 0.01), ("find_notion", "top-label"), ("find_slice", 1),
                 ("find_tree_class", "last"), ("find_columns", "first"),
                 ("find_columns", [])],
    "lce_landscape": [("lce_gamma", 0.01), ("lce_gamma", 10.0), ("lce_signed", False),
                      # UMAP is left out: its first call compiles numba code for ~60 s; the
                      # embedding tests cover it on small tables
                      ("lce_method", "tsne"), ("lce_features", "first")],
}


def widget(at: AppTest, key: str):
    for kind in ("selectbox", "radio", "toggle", "select_slider", "multiselect", "slider"):
        for found in at.get(kind):
            if getattr(found, "key", None) == key:
                return kind, found
    return None, None


def raw_value(kind: str, found, value, audit: AuditData):
    if value == "first":
        return found.value[:1]
    if value != "last":
        return value
    if kind == "selectbox" and found.key.endswith("_class"):
        return audit.n_classes - 1  # class pickers hold class indices
    return found.options[-1]


@pytest.mark.parametrize("page", [p for p in PAGES if page_id(p) in CONTROLS], ids=page_id)
@pytest.mark.parametrize("name", ["upload-20-rows", "upload-multiclass-20"])
def test_page_controls_survive(name: str, page: PageRef) -> None:
    audit = dataset(name)
    at = visit(audit, name, page)
    assert_clean(at, page)
    changed = 0
    for key, value in CONTROLS[page_id(page)]:
        kind, found = widget(at, key)
        if found is None:
            continue
        found.set_value(raw_value(kind, found, value, audit))
        at.run()
        assert_clean(at, page)
        changed += 1
    assert changed >= 4
