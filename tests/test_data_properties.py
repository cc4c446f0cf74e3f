"""Property: whatever table and mapping a user throws at the data layer, the only exception
that comes back is DataError (a message for the user), never a traceback from inside."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.data.audit_data import AuditData
from core.data.problems import DataError
from core.data.readers import read_table

CELL = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=0, max_value=1),
    st.integers(min_value=-3, max_value=3),
    st.sampled_from(["a", "b", "cat", "dog", "", "yes", "no", "0.5", "1,5", "test", "train"]),
    st.booleans(),
    st.none(),
)
NAMES = st.sampled_from(["y", "p", "p_a", "p_b", "x", "g", "split", "label", "z"])


@st.composite
def column(draw, n: int):
    kind = draw(st.sampled_from(["prob", "label", "mixed", "category", "float"]))
    if kind == "prob":
        return draw(st.lists(st.floats(min_value=-0.1, max_value=1.1), min_size=n, max_size=n))
    if kind == "label":
        return draw(st.lists(st.sampled_from([0, 1, 2]), min_size=n, max_size=n))
    if kind == "category":
        return draw(st.lists(st.sampled_from(["a", "b", "cat", "dog"]), min_size=n, max_size=n))
    if kind == "float":
        return draw(st.lists(st.floats(allow_nan=True), min_size=n, max_size=n))
    return draw(st.lists(CELL, min_size=n, max_size=n))


@st.composite
def table_and_mapping(draw):
    n = draw(st.integers(min_value=0, max_value=45))
    names = draw(st.lists(NAMES, min_size=1, max_size=6))  # may repeat: duplicate columns
    frame = pd.DataFrame({i: draw(column(n)) for i in range(len(names))})
    frame.columns = names
    pick = st.sampled_from([*names, "missing_column"])
    mapping = dict(
        label=draw(pick),
        probs=draw(st.lists(pick, min_size=1, max_size=3)),
        logits=draw(st.booleans()),
        positive=draw(st.one_of(st.none(), st.sampled_from(["0", "1", "a", "cat"]))),
        features=draw(st.lists(pick, max_size=3)),
        groups=draw(st.lists(pick, max_size=2)),
        split=draw(st.one_of(st.none(), pick)),
        members=draw(st.lists(st.lists(pick, min_size=1, max_size=2), max_size=2)),
    )
    return frame, mapping


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table_and_mapping())
def test_malformed_tables_raise_only_data_error(case) -> None:
    frame, mapping = case
    before = frame.copy(deep=True)
    try:
        audit = AuditData.from_frame(frame, **mapping)
    except DataError as error:
        assert str(error)  # a non-empty message for the user
    else:
        assert audit.n >= 20
        assert np.all(np.isfinite(audit.probs))
        np.testing.assert_allclose(audit.probs.sum(axis=1), 1.0, atol=1e-9)
        assert audit.probs.min() >= 0.0 and audit.probs.max() <= 1.0
    pd.testing.assert_frame_equal(frame, before)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400), st.sampled_from(["t.csv", "t.tsv", "t.parquet", "t.txt"]))
def test_arbitrary_bytes_raise_only_data_error(content: bytes, name: str) -> None:
    try:
        read_table(content, name)
    except DataError as error:
        assert str(error)


@settings(max_examples=150, deadline=None)
@given(table_and_mapping())
def test_written_and_read_back_tables_raise_only_data_error(case) -> None:
    frame, mapping = case
    try:
        loaded = read_table(frame.to_csv(index=False).encode(), "t.csv")
        AuditData.from_frame(loaded.frame, **mapping)
    except DataError as error:
        assert str(error)
