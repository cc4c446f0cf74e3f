"""The distribution functions of :mod:`core.data.distributions` are scipy.stats's, to the
bit, over their domains and at the ends of the supports."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from core.data import distributions as D

RNG = np.random.default_rng(7)
PROBABILITIES = np.concatenate([RNG.uniform(size=2000), RNG.uniform(size=200) * 1e-12,
                                [0.0, 1.0, 0.5, 1e-300, 1.0 - 1e-16, np.nan]])
POINTS = np.concatenate([RNG.normal(size=2000) * 6.0, [0.0, -0.0, np.inf, -np.inf, np.nan]])


def _same(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_normal_functions_are_scipy_stats() -> None:
    _same(D.norm_ppf(PROBABILITIES), stats.norm.ppf(PROBABILITIES))
    _same(D.norm_isf(PROBABILITIES), stats.norm.isf(PROBABILITIES))
    _same(D.norm_sf(POINTS), stats.norm.sf(POINTS))
    assert D.norm_ppf(0.975) == stats.norm.ppf(0.975)  # scalars stay scalars
    _same(D.norm_ppf([0.025, 0.975]), stats.norm.ppf([0.025, 0.975]))


@pytest.mark.parametrize("df", [1, 2, 3.5, 9, 30, 1e6])
def test_t_and_chi2_tails_are_scipy_stats(df: float) -> None:
    _same(D.t_sf(POINTS, df), stats.t.sf(POINTS, df))
    _same(D.t_isf(PROBABILITIES, df), stats.t.isf(PROBABILITIES, df))
    _same(D.chi2_sf(np.abs(POINTS) * 10.0, df), stats.chi2.sf(np.abs(POINTS) * 10.0, df))
    _same(D.chi2_sf([-1.0, 0.0], df), stats.chi2.sf([-1.0, 0.0], df))  # below the support


def test_beta_quantiles_are_scipy_stats() -> None:
    # the Jeffreys and Clopper–Pearson intervals' shapes: k + ½ and n − k + ½, k and n − k + 1
    a = np.concatenate([RNG.uniform(0.5, 5000.0, 2000), [0.5, 1.0, 3.0]])
    b = np.concatenate([RNG.uniform(0.5, 5000.0, 2000), [0.5, 1.0, 4.0]])
    for q in (0.0, 0.025, 0.5, 0.975, 1.0):
        _same(D.beta_ppf(q, a, b), stats.beta.ppf(q, a, b))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-3, 3) | st.floats(-2.0, 2.0), min_size=1, max_size=40))
def test_average_ranks_are_rankdata(values: list[float]) -> None:
    _same(D.average_ranks(values), stats.rankdata(values))
    with_nan = np.append(np.asarray(values, dtype=float), np.nan)
    _same(D.average_ranks(with_nan), stats.rankdata(with_nan))
