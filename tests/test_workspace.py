"""Stored tables: unguessable tokens, no path outside the store, retention, Forget, and a new
session given the token gets the table, its mapping and its settings back."""

from __future__ import annotations

import os
import time

import pytest
from streamlit.testing.v1 import AppTest

from core.data.mapping import ColumnMapping
from core.data.problems import DataError, ValidationNote
from core.data.readers import check_limits
from dashboard.workspace import Recipe, TableStore, valid_token
from tests.conftest import APP, upload_frame

MAPPING = ColumnMapping(label="y", probs=("p",), features=("age", "sex"), groups=("sex",))


def upload_recipe() -> Recipe:
    return Recipe("upload", "audit.csv", "upload: audit.csv", MAPPING,
                  upload_frame().to_csv(index=False).encode())


def test_tokens_are_random_files_private_and_paths_unreachable(tmp_path) -> None:
    store = TableStore(tmp_path / "tables")
    first, second = store.save(upload_recipe(), {}), store.save(upload_recipe(), {})
    assert first != second and valid_token(first)  # the same data, another token
    folder = tmp_path / "tables" / first
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert {oct(f.stat().st_mode & 0o777) for f in folder.iterdir()} == {"0o600"}
    assert store.load(first).recipe == upload_recipe()
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "meta.json").write_text('{"kind": "demo", "name": "census"}')
    for token in ("../secret", "..", "", first[:-1], first + "x", "a/b" * 15, None, 7,
                  "../" * 14 + "etc"):
        assert store.load(token) is None and not store.forget(token)
    assert (tmp_path / "secret" / "meta.json").exists()


def test_retention_and_count_limit_and_forget(tmp_path) -> None:
    store = TableStore(tmp_path, retention_days=1, max_tables=2)
    old = store.save(upload_recipe(), {})
    stale = time.time() - 2 * 86_400
    os.utime(tmp_path / old / "meta.json", (stale, stale))
    a = store.save(upload_recipe(), {})
    assert store.load(old) is None and store.load(a) is not None  # older than a day: gone
    b = store.save(upload_recipe(), {})
    os.utime(tmp_path / a / "meta.json", (time.time() - 60, time.time() - 60))
    c = store.save(upload_recipe(), {})
    assert store.load(a) is None  # the least recently used beyond two tables
    assert store.forget(b) and store.load(b) is None and store.load(c) is not None


def test_a_raw_upload_is_kept_alone_and_beside_the_active_table(tmp_path) -> None:
    """Issue 29: a raw upload (no probability column) is stored with its token at upload time;
    activating a table later under the same token keeps it, and its pre-validation notes."""
    store = TableStore(tmp_path)
    raw = upload_frame().drop(columns=["p"]).to_csv(index=False).encode()
    token = store.save_raw("raw.csv", raw, {"widgets": {"ref_seed_x": 3}})
    stored = store.load(token)
    assert stored.recipe is None and stored.raw == ("raw.csv", raw)
    assert stored.settings["widgets"]["ref_seed_x"] == 3
    assert oct((tmp_path / token / "raw").stat().st_mode & 0o777) == "0o600"
    notes = (ValidationNote("warning", "Model feature 'event' …", "leakage"),)
    recipe = Recipe.derived(upload_frame(), MAPPING, "title", "reference model: t", notes)
    assert store.save(recipe, {}, token) == token
    stored = store.load(token)
    assert stored.raw == ("raw.csv", raw) and stored.recipe.validation_notes() == notes
    assert store.forget(token) and store.load(token) is None


def test_limits_are_checked_before_parsing() -> None:
    text = upload_frame(n=300).to_csv(index=False).encode()
    check_limits(text, "a.csv", max_megabytes=1, max_rows=300)
    with pytest.raises(DataError, match="has about 300 rows; this server takes at most 299"):
        check_limits(text, "a.csv", max_megabytes=1, max_rows=299)
    with pytest.raises(DataError, match=r"has 0\.0 MB; this server takes files of at most 0"):
        check_limits(text, "a.csv", max_megabytes=1e-9, max_rows=10**6)


def test_a_new_session_with_the_token_gets_table_mapping_and_settings_back(
        tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CALIBRATION_ATLAS_STORE", str(tmp_path))
    token = TableStore(tmp_path).save(upload_recipe(), {
        "widgets": {"rel_bins": 22, "trust_features": ["age"]}, "engine": "threads"})
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["table"] = token
    at.run()
    assert not at.exception, at.exception
    audit = at.session_state["active_audit"]
    assert (audit.name, audit.n, audit.mapping) == ("audit.csv", 120, MAPPING)
    assert at.title[0].value == "Overview"  # a link to a stored table lands on the verdicts
    assert at.session_state["rel_bins"] == 22
    at.switch_page("views/reliability.py").run()
    assert next(s for s in at.slider if s.key == "rel_bins").value == 22
    forget = next(b for b in at.sidebar.button if b.key == "forget_table_after")
    forget.click().run()
    assert not at.exception, at.exception
    assert at.session_state["active_audit"].n == 10_000  # the demo again
    assert "table" not in at.query_params and not (tmp_path / token).exists()


def test_a_session_without_the_token_or_with_a_wrong_one_gets_the_demo(tmp_path,
                                                                       monkeypatch) -> None:
    monkeypatch.setenv("CALIBRATION_ATLAS_STORE", str(tmp_path))
    TableStore(tmp_path).save(upload_recipe(), {})
    for query in ({}, {"table": "A" * 43}, {"table": "../../etc/passwd"}):
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.query_params.update(query)
        at.run()
        assert at.session_state["active_audit"].n == 10_000
        assert at.title[0].value == "Data"  # nothing stored to show: the Data page
        if query:
            assert "not stored on this server" in " ".join(w.value for w in at.sidebar.warning)


def stored_widgets(folder, token: str) -> dict:
    return TableStore(folder).load(token).settings.get("widgets", {})


def test_the_store_holds_each_runs_widget_values_when_the_run_ends(tmp_path,
                                                                   monkeypatch) -> None:
    """A widget first drawn in a run has its value only once the page drew it: the write at
    the run's end stores it, with no later run needed (the store never lags the page)."""
    monkeypatch.setenv("CALIBRATION_ATLAS_STORE", str(tmp_path))
    token = TableStore(tmp_path).save(upload_recipe(), {})
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["table"] = token
    at.run()
    assert "rel_bins" not in stored_widgets(tmp_path, token)
    at.switch_page("views/reliability.py").run()
    assert not at.exception, at.exception
    assert stored_widgets(tmp_path, token)["rel_bins"] == 15  # drawn this run, stored by it
    next(s for s in at.slider if s.key == "rel_bins").set_value(21).run()
    assert stored_widgets(tmp_path, token)["rel_bins"] == 21
