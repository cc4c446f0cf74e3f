"""benchmarks.credal_study: one repetition with the oracle column, and the table it prints."""

from __future__ import annotations

import numpy as np

from benchmarks.credal_study import ORACLE, one_repetition, oracle_p_value, table
from core.ensembles import WEIGHTS, simulate


def test_one_repetition_runs_every_test_and_the_oracle() -> None:
    out = one_repetition(("binary-h0-instance", 0, ("ce2",), 10, "bootstrap", (60, 60, 60), True))
    assert set(out) == {("ce2", w) for w in (*WEIGHTS, ORACLE)}
    for p, seconds in out.values():
        assert 0 < p <= 1 and seconds >= 0


def test_oracle_tests_the_truth_on_the_given_rows() -> None:
    members, y, X, truth = simulate("binary-h0-constant", n=200, seed=1)
    rows = np.arange(100, 200)
    p = oracle_p_value(truth, y, rows, "ce2", 20, "bootstrap", seed=3)
    assert p == oracle_p_value(truth, y, rows, "ce2", 20, "bootstrap", seed=3)
    assert p in {(1 + k) / 21 for k in range(21)}


def test_table_marks_missing_oracle_cells() -> None:
    rows = [{"setting": s, "estimator": "ce2", "weights": w, "rate": 0.1, "reps": 100}
            for s in ("binary-h0-constant", "binary-h1-2") for w in WEIGHTS]
    rows.append({"setting": "binary-h0-constant", "estimator": "ce2", "weights": ORACLE,
                 "rate": 0.05, "reps": 100})
    text = table(rows)
    lines = text.splitlines()
    assert lines[0].endswith("| oracle |")
    assert "| binary-h0-constant | H0,1 | ce2 | 100 | Type I |" in lines[2]
    assert lines[2].endswith("| 0.050 ± 0.022 |")
    assert "| Type II |" in lines[3] and lines[3].endswith("| — |")
    assert "0.900 ± 0.030" in lines[3]
