"""The paper's simulated settings: inside the credal set under H0, outside under H1."""

from __future__ import annotations

import numpy as np
import pytest

from core.ensembles import SETTINGS, simulate


@pytest.mark.parametrize("setting", [k for k, s in SETTINGS.items() if s.task == "binary"])
def test_binary_settings(setting: str) -> None:
    members, y, X, truth = simulate(setting, n=800, seed=2)
    assert members.shape == (800, 2) and X.shape == (800, 1) and truth.shape == (800,)
    assert ((X >= 0) & (X <= 5)).all()
    assert members[:, 0].min() >= 0.5 and members[:, 0].max() <= 0.7
    assert members[:, 1].min() >= 0.6 and members[:, 1].max() <= 0.8
    low, high = members.min(axis=1), members.max(axis=1)
    inside = (truth >= low - 1e-12) & (truth <= high + 1e-12)
    assert inside.all() if SETTINGS[setting].null_true else not inside.any()
    assert set(np.unique(y)) <= {0, 1}


@pytest.mark.parametrize("setting", [k for k, s in SETTINGS.items() if s.task == "multiclass"])
def test_multiclass_settings(setting: str) -> None:
    members, y, X, truth = simulate(setting, n=500, seed=3)
    assert members.shape == (500, 10, 5) and truth.shape == (500, 5)
    np.testing.assert_allclose(members.sum(axis=2), 1.0)
    np.testing.assert_allclose(truth.sum(axis=1), 1.0)
    assert y.min() >= 0 and y.max() <= 4
    if SETTINGS[setting].null_true:
        return
    # outside: some class probability exceeds every member's at every row
    exceeds = truth[:, :, None] > members.transpose(0, 2, 1).max(axis=2)[:, :, None]
    assert exceeds[:, :, 0].any(axis=1).all()


def test_labels_follow_the_truth() -> None:
    """Binary H0,1 with n = 20,000: the mean label is within 4 binomial standard errors
    (√(p̄(1 − p̄)/n)) of the mean true probability."""
    _, y, _, truth = simulate("binary-h0-constant", n=20_000, seed=4)
    se = np.sqrt(truth.mean() * (1 - truth.mean()) / y.size)
    assert abs(y.mean() - truth.mean()) < 4 * se


def test_reproducible_and_checked() -> None:
    a, b = simulate("multiclass-h0-instance", n=50, seed=7), \
        simulate("multiclass-h0-instance", n=50, seed=7)
    for left, right in zip(a, b, strict=True):
        np.testing.assert_array_equal(left, right)
    with pytest.raises(ValueError, match="Unknown simulation setting"):
        simulate("binary-h2", n=10)
    with pytest.raises(ValueError, match="n must be a whole number"):
        simulate("binary-h1-1", n=0)
