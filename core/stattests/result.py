"""The one result type of every calibration test, and the resampling p-values.

p-values from resampling use ``(1 + #{null ≥ observed}) / (1 + B)`` (DESIGN.md): never 0, and
valid at any B because the observed statistic is exchangeable with the B null draws under
H0. The paper convention ``#{null > observed} / B`` is kept beside it as ``p_value_paper``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class TestResult:
    """Outcome of a calibration test.

    Attributes
    ----------
    statistic
        the observed test statistic.
    p_value
        ``(1 + #{null ≥ statistic}) / (1 + B)`` for resampling tests, else the
        asymptotic or bound p-value.
    null
        the B resampled statistics (empty for tests without resampling).
    method
        which test ran.
    n_resamples
        B (0 without resampling).
    parameters
        everything else needed to reproduce or explain the result.
    p_value_paper
        ``#{null > statistic} / B`` (the convention of the papers' code).
    """

    __test__ = False  # not a pytest test class

    statistic: float
    p_value: float
    null: np.ndarray = field(repr=False)
    method: str
    n_resamples: int
    parameters: Mapping[str, object] = field(default_factory=dict)
    p_value_paper: float | None = None

    def rejects(self, alpha: float = 0.05) -> bool:
        return self.p_value <= alpha


def resampling_p_value(statistic: float, null: np.ndarray) -> float:
    """``(1 + #{null ≥ statistic}) / (1 + B)``.

    Parameters
    ----------
    statistic : float
        The observed statistic.
    null : array_like
        ``(B,)`` resampled statistics.

    Returns
    -------
    float
        The p-value, in ``[1/(1 + B), 1]``.
    """
    return float((1 + np.count_nonzero(null >= statistic)) / (1 + null.size))


def paper_p_value(statistic: float, null: np.ndarray) -> float:
    """``#{null > statistic} / B`` (I-trustworthy eq. 8 as computed in its Algorithm 1).

    Parameters
    ----------
    statistic : float
        The observed statistic.
    null : array_like
        ``(B,)`` resampled statistics.

    Returns
    -------
    float
    """
    return float(np.count_nonzero(null > statistic) / null.size)


def resampling_result(
    observed: float, null: np.ndarray, method: str, **parameters: object
) -> TestResult:
    return TestResult(
        statistic=float(observed), p_value=resampling_p_value(observed, null), null=null,
        method=method, n_resamples=int(null.size), parameters=dict(parameters),
        p_value_paper=paper_p_value(observed, null),
    )

