"""AppTest: the Ensembles page on the ensemble demo and with a dataset that has no members."""

from __future__ import annotations

import numpy as np
from streamlit.testing.v1 import AppTest

from tests.conftest import open_demo_page


def open_page(demo: str) -> AppTest:
    return open_demo_page("ensembles", demo)


def test_ensembles_page_on_the_ensemble_demo() -> None:
    at = open_page("ensemble")
    assert at.title[0].value == "Ensembles"
    assert at.radio(key="ens_source").options == ["active dataset", "ensemble demo"]
    assert at.multiselect(key="ens_members").value == [f"member_{k}" for k in range(1, 6)]
    # the learned test does not reject on the demo (its truth lies inside the credal set)
    assert "Consistent with a calibrated credal set" in " ".join(s.value for s in at.success)
    table = at.dataframe[0].value
    assert list(table["test"]) == ["learned λ(x) (Algorithm 1)", "ensemble mean (Avg. + npbe)",
                                   "constant λ, Dir(1) null (Mortier et al.)"]
    assert table["p_value"].between(0, 1).all()
    headers = [h.value for h in at.header]
    assert "Which member is trusted where" in headers
    assert any("What a calibrated credal set means" in e.label for e in at.expander)
    # another test as the headline, then too few members
    at.selectbox(key="ens_weights").set_value("mean").run()
    assert not at.exception, at.exception
    at.multiselect(key="ens_members").set_value(["member_1"]).run()
    assert not at.exception, at.exception
    assert "at least two members" in " ".join(w.value for w in at.warning)


def test_ensembles_page_without_members_uses_the_demo() -> None:
    at = open_page("census")
    assert at.radio(key="ens_source").options == ["ensemble demo"]
    assert "has no ensemble member columns" in " ".join(i.value for i in at.info)
    assert at.selectbox(key="ens_estimator").value == "ce2"
    at.selectbox(key="ens_estimator").set_value("skce").run()
    assert not at.exception, at.exception
    assert any("SKCE" in c.value for c in at.caption)


def test_large_ensembles_are_tested_on_a_seeded_sample_mapped_back_to_their_rows(
        monkeypatch) -> None:
    from core.ensembles import summary
    from dashboard.state import cached_demo

    data = cached_demo("ensemble")
    monkeypatch.setattr(summary, "ENSEMBLE_ROWS", 300)
    members, y, X = summary.ensemble_inputs(data, (0, 1), tuple(data.feature_frame))
    rows = summary.tested_rows(data)
    assert members.shape[0] == y.size == X.shape[0] == rows.size == 300
    assert np.all(np.diff(rows) > 0) and rows[-1] < data.n
    np.testing.assert_array_equal(y, data.y[rows])
    np.testing.assert_array_equal(members, data.members[rows][:, [0, 1]])
    np.testing.assert_array_equal(rows, summary.tested_rows(data))  # seeded


def test_refit_null_on_the_page(monkeypatch) -> None:
    import core.ensembles
    from core.ensembles import summary

    monkeypatch.setattr(summary, "ENSEMBLE_ROWS", 400)   # 50 refits on 240 rows
    monkeypatch.setattr(core.ensembles, "ENSEMBLE_ROWS", 400)  # the page's sentence
    at = open_demo_page("ensembles", "ensemble",
                        widgets={"ens_null_kind": "refit", "ens_b": 50})
    captions = " ".join(c.value for c in at.caption)
    assert "λ(x) refitted" in captions
    assert "refit null" in " ".join(s.value for s in at.success)
    assert "400 of the 3,000 rows" in " ".join(i.value for i in at.info)
    assert at.dataframe[0].value["p_value"].between(0, 1).all()
    at.selectbox(key="ens_weights").set_value("mean").run()
    assert not at.exception, at.exception
    assert "this test fits no weights to refit" in " ".join(c.value for c in at.caption)


def test_a_learned_rejection_under_algorithm_1_points_to_the_refit_null() -> None:
    import pandas as pd

    from core.data.audit_data import AuditData
    from core.ensembles import simulate
    from dashboard.state import set_active
    from tests.conftest import APP

    members, y, X, _ = simulate("binary-h1-3", n=900, seed=2)   # truth outside the set
    frame = pd.DataFrame({"y": y, "p": members.mean(axis=1), "x": X[:, 0],
                          "m1": members[:, 0], "m2": members[:, 1]})
    data = AuditData.from_frame(frame, label="y", prob="p", features=["x"],
                                members=["m1", "m2"], name="H1 ensemble")
    at = AppTest.from_file(str(APP), default_timeout=300)
    set_active(data, "upload: H1 ensemble", session=at.session_state)
    at.run()
    at.switch_page("views/ensembles.py").run()
    assert not at.exception, at.exception
    assert "the credal-set test rejects" in " ".join(e.value for e in at.error)
    assert "rerun with the null 'the whole procedure again'" in " ".join(
        i.value for i in at.info)
