"""Property test over every registered method: extreme inputs give finite probabilities on
the simplex, or a ValueError with a sentence — never another exception."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.recalibration import RECALIBRATORS, make_recalibrator

EXTREMES = (0.0, 1.0, 0.5, 1e-300, 1 - 1e-16)


@st.composite
def problems(draw):
    """Tiny calibration sets with probabilities exactly 0 and 1, constant predictions, one
    class only, and (multiclass) one-hot rows."""
    n = draw(st.integers(2, 12))
    m = draw(st.sampled_from([2, 2, 3]))
    kind = draw(st.sampled_from(["extreme", "constant", "random", "one-class"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if kind == "extreme":
        p = rng.choice(EXTREMES, size=n)
    elif kind == "constant":
        p = np.full(n, draw(st.sampled_from(EXTREMES)))
    else:
        p = rng.uniform(size=n)
    if m == 2:
        probs = p
    else:
        probs = np.column_stack([p, (1 - p) * 0.3, (1 - p) * 0.7])
        if kind == "extreme":
            probs = np.eye(3)[rng.integers(0, 3, n)]
    y = np.zeros(n, dtype=np.int64) if kind == "one-class" else rng.integers(0, m, n)
    features = rng.choice([0.0, 1.0, 1e6], size=(n, 2)) if draw(st.booleans()) \
        else np.zeros((n, 2))
    groups = rng.choice(["a", "b"], size=n)
    new = probs[::-1].copy()
    return probs, y, features, groups, new


@pytest.mark.parametrize("name", sorted(RECALIBRATORS))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems())
def test_outputs_are_probabilities_or_a_clear_error(name: str, problem) -> None:
    probs, y, features, groups, new = problem
    model = make_recalibrator(name)
    try:
        model.fit(probs, y, features=features, groups=groups)
        out = model.predict(new, features=features[::-1], groups=groups[::-1])
    except ValueError as err:
        message = str(err)
        assert message[0].isupper() and message.rstrip().endswith((".", ")")), message
        assert "bug" not in message, message
        return
    assert out.shape == new.shape
    assert np.isfinite(out).all() and (out >= 0).all() and (out <= 1).all()
    if out.ndim == 2:
        np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-9)
