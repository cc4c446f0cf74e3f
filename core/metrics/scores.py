"""Calibration notions and per-row scores (private to :mod:`core.metrics`, which documents
the notions): which (confidence, outcome) pairs a metric compares, and each row's
correctness, Brier term and log loss. Inputs are already validated.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from core.data.validation import (
    check_choice,
    check_probs_labels,
    is_binary,
    is_whole,
    n_classes,
    one_hot,
    probability_matrix,
)

NOTIONS = ("positive", "top-label", "classwise")


def default_notion(probs: ArrayLike) -> str:
    """``"positive"`` for a binary problem, ``"top-label"`` for a multiclass one.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.

    Returns
    -------
    str
        ``"positive"`` or ``"top-label"``.
    """
    return "positive" if is_binary(probs) else "top-label"


def resolve_notion(notion: str | None, p: np.ndarray) -> str:
    """The notion to use for ``p``: ``None`` → :func:`default_notion`; else checked."""
    if notion is None:
        return default_notion(p)
    if notion == "canonical":
        raise ValueError(
            "The 'canonical' notion compares whole probability vectors and has no binned "
            "estimator; it is measured with the kernel SKCE (core.metrics.skce). For binned "
            "metrics choose 'positive', 'top-label' or 'classwise'."
        )
    check_choice(notion, NOTIONS, "calibration notion",
                 "choose 'positive' (binary problems), 'top-label' or 'classwise'")
    if notion == "positive" and not is_binary(p):
        raise ValueError(
            f"The 'positive' notion is for binary problems; this one has {p.shape[1]} classes. "
            "Use 'top-label' or 'classwise'."
        )
    return notion


def class_outcomes(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``(n, m)`` one-vs-rest outcomes ``1[y_i = k]``."""
    return one_hot(y, n_classes(p))


def confidence_outcome_of(
    p: np.ndarray, y: np.ndarray, notion: str, class_index: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`core.metrics.binned.confidence_outcome` on validated inputs and a resolved notion."""
    if notion != "classwise" and class_index is not None:
        raise ValueError(
            f"class_index picks one class of the 'classwise' notion; the {notion!r} notion has "
            "a single confidence per row, so leave class_index as None."
        )
    if notion == "positive":
        conf = p if p.ndim == 1 else p[:, 1]
        return conf, (y == 1).astype(np.float64)
    P = probability_matrix(p)
    if notion == "top-label":
        pred = np.argmax(P, axis=1)
        return P[np.arange(P.shape[0]), pred], (pred == y).astype(np.float64)
    if class_index is None:
        return P, class_outcomes(p, y)
    m = P.shape[1]
    if not is_whole(class_index) or not 0 <= class_index < m:
        raise ValueError(f"class_index must be a class number from 0 to {m - 1}, not "
                         f"{class_index!r}.")
    return P[:, class_index], (y == class_index).astype(np.float64)


def one_confidence_per_row(probs: ArrayLike, y: ArrayLike, notion: str | None,
                           class_index: int | None, measure: str
                           ) -> tuple[np.ndarray, np.ndarray, str]:
    """The entry check of every measure that compares one confidence per row (smooth ECE,
    ICI, slope, decompositions, cumulative differences): validated ``(confidence, outcome,
    notion)``; the classwise notion needs ``class_index``, and ``measure`` names what asks
    for it in the message."""
    p, labels = check_probs_labels(probs, y)
    notion = resolve_notion(notion, p)
    if notion == "classwise" and class_index is None:
        raise ValueError(f"{measure} compares one confidence per row: with the 'classwise' "
                         f"notion pass class_index (0 to {n_classes(p) - 1}) to choose the "
                         "class.")
    conf, outcome = confidence_outcome_of(p, labels, notion, class_index)
    return conf, outcome, notion


def scores(p: np.ndarray, y: np.ndarray, notion: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (confidence, outcome) pairs a metric averages over: one, or one per class."""
    if notion == "classwise":
        P, outcomes = probability_matrix(p), class_outcomes(p, y)
        return [(P[:, k], outcomes[:, k]) for k in range(P.shape[1])]
    return [confidence_outcome_of(p, y, notion, None)]


# --------------------------------------------------------------------------- per-row scores


def correct(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``1[argmax_k p_ik = y_i]`` per row (argmax ties to the lowest class)."""
    return (np.argmax(probability_matrix(p), axis=1) == y).astype(np.float64)


def brier_rows(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each row's Brier term (binary form for binary problems; see
    :func:`core.metrics.binned.brier`)."""
    if p.ndim == 1:
        return (p - y) ** 2
    if p.shape[1] == 2:  # binary in matrix form: the same binary Brier score
        return (p[:, 1] - (y == 1)) ** 2
    resid = p.copy()
    resid[np.arange(p.shape[0]), y] -= 1.0
    return np.einsum("ij,ij->i", resid, resid)


def nll_rows(p: np.ndarray, y: np.ndarray, eps: float) -> np.ndarray:
    """Each row's ``−log max(p_{i, y_i}, eps)``."""
    p_true = np.where(y == 1, p, 1.0 - p) if p.ndim == 1 else p[np.arange(p.shape[0]), y]
    return -np.log(np.clip(p_true, eps, 1.0))
