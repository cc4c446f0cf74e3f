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


def p_value_floor(n_resamples: int) -> float:
    """``1/(B + 1)``, the smallest p-value of a resampling test with ``B`` resamples.

    Parameters
    ----------
    n_resamples : int
        ``B``.

    Returns
    -------
    float
        The floor (0 for ``B = 0``, a test without resampling).
    """
    return 1.0 / (n_resamples + 1) if n_resamples > 0 else 0.0


def format_p_value(p_value: float, n_resamples: int = 0, digits: int = 4) -> str:
    """The one text of a p-value on every page, report and CLI line.

    At the resampling floor (``p ≤ 1/(B + 1)``: no null draw reached the observed statistic)
    it reads ``"≤ 1/(B+1)"`` with the floor's value (``"≤ 0.005"`` at B = 199), never
    ``"0.0050"`` or ``"0.0000"``; an asymptotic p-value below ``10^-digits`` reads
    ``"< 0.0001"``; otherwise ``digits`` decimals.

    Parameters
    ----------
    p_value : float
        The p-value.
    n_resamples : int
        ``B`` of a resampling test (0: an asymptotic or exact test).
    digits : int
        Decimals shown.

    Returns
    -------
    str
        The text without a "p =" prefix; ``"—"`` for NaN.
    """
    if not np.isfinite(p_value):
        return "—"
    floor = p_value_floor(int(n_resamples))
    if floor > 0 and p_value <= floor * (1 + 1e-9):
        return f"≤ {floor:.2g}"
    if p_value < 10.0**-digits:
        return f"< {10.0**-digits:.{digits}f}"
    return f"{p_value:.{digits}f}"


def p_text(p_value: float, n_resamples: int = 0, digits: int = 4) -> str:
    """``"p = 0.0123"``, ``"p ≤ 0.005"`` or ``"p < 0.0001"`` (:func:`format_p_value`).

    Parameters
    ----------
    p_value : float
        The p-value.
    n_resamples : int
        ``B`` of a resampling test (0 without resampling).
    digits : int
        Decimals shown.

    Returns
    -------
    str
        The text with its "p" prefix.
    """
    text = format_p_value(p_value, n_resamples, digits)
    return f"p {text}" if text[0] in "≤<" else f"p = {text}"


def resampling_result(
    observed: float, null: np.ndarray, method: str, **parameters: object
) -> TestResult:
    return TestResult(
        statistic=float(observed), p_value=resampling_p_value(observed, null), null=null,
        method=method, n_resamples=int(null.size), parameters=dict(parameters),
        p_value_paper=paper_p_value(observed, null),
    )

