"""The recalibrator contract, its base classes and the input checks every method shares.

A recalibrator maps a model's predicted probabilities to new ones that are (more nearly)
calibrated. Every method here follows one two-call contract (DESIGN.md, STYLE.md lesson 1)::

    r = make_recalibrator("temperature", **params)
    r.fit(probs, y, features=None, groups=None) -> r
    r.predict(probs, features=None, groups=None) -> ndarray   # the shape of probs, on the simplex

``probs`` is ``(n,)`` = P(y = 1) for a binary problem or ``(n, m)`` rows on the simplex, ``y``
integer labels ``0..m-1``; ``features`` ``(n, d)`` numeric audit features (the local methods),
``groups`` ``(n,)`` group labels or ``(n, k)`` group columns (the group methods). Parameters
live in ``__init__``; what ``fit`` learns is stored in attributes ending in ``_``.

:class:`RecalibratorBase` validates at the two public entries (with
:mod:`core.data.validation`) and hands the methods a checked ``(n, m)`` probability matrix; it
puts the result back in the caller's layout and on the simplex. Methods defined for binary
problems only (Platt, beta, histogram, isotonic, BBQ, scaling–binning, Venn–Abers,
multicalibration) reach multiclass problems through :class:`OneVsRest`: one copy per class on
``(p_k, 1[y = k])``, the outputs renormalised to sum to 1 (Zadrozny & Elkan 2002).
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from core.data.validation import (
    check_features,
    check_probs,
    check_probs_labels,
    n_classes,
    normalize_rows,
    probability_matrix,
    same_shape_as,
)

Progress = Callable[[float, str], None]

#: Fewest calibration rows any method is fitted on.
MIN_FIT_ROWS = 2
#: Guard against division by zero. (Logarithms of probabilities use a bound fitted from the
#: data instead: :func:`core.data.validation.resolvable_bound`.)
EPS = 1e-12

BINARY = "binary"
MULTICLASS = "multiclass"


# --------------------------------------------------------------------------- the protocol


@runtime_checkable
class Recalibrator(Protocol):
    """What every recalibrator offers (scikit-learn's habit: ``fit`` returns ``self``)."""

    def fit(self, probs: ArrayLike, y: ArrayLike, features: ArrayLike | None = None,
            groups: ArrayLike | None = None) -> Recalibrator: ...

    def predict(self, probs: ArrayLike, features: ArrayLike | None = None,
                groups: ArrayLike | None = None) -> np.ndarray: ...


# --------------------------------------------------------------------------- input checks


def check_groups(groups: ArrayLike | pd.DataFrame | None, n: int) -> np.ndarray:
    """Group labels as an ``(n, k)`` array of strings, one column per group attribute
    (an ``(n,)`` array is one attribute); see :func:`join_groups` for one label per row."""
    if groups is None:
        raise ValueError("This method needs group labels: pass groups (one label per row, or "
                         "one column per group attribute).")
    if isinstance(groups, pd.DataFrame):
        frame = groups.reset_index(drop=True)
    else:
        values = np.asarray(groups, dtype=object)
        if values.ndim not in (1, 2):
            raise ValueError("groups must be one label per row, or a table with one column "
                             f"per group attribute; it has {values.ndim} dimensions.")
        frame = pd.DataFrame(values.reshape(values.shape[0], -1))
    if frame.shape[0] != n:
        raise ValueError(f"groups has {frame.shape[0]} rows but there are {n} predictions; "
                         "give one group label per row.")
    if frame.shape[1] == 0:
        raise ValueError("groups has no columns: map at least one group attribute.")
    missing = frame.isna().to_numpy().any(axis=1)
    if missing.any():
        raise ValueError(f"groups has missing labels in {int(missing.sum())} rows (first in "
                         f"row {int(np.argmax(missing))}); fill them, e.g. with '(missing)'.")
    return frame.astype(str).to_numpy(dtype=str)


def join_groups(G: np.ndarray) -> np.ndarray:
    """One label per row: the row's levels of every group attribute joined by ``" | "``
    (the intersection of the attributes)."""
    labels = G[:, 0].astype(object)
    for column in range(1, G.shape[1]):
        labels = labels + " | " + G[:, column].astype(object)
    return labels.astype(str)


def check_needed_features(features: ArrayLike | None, n: int, method: str) -> np.ndarray:
    """``(n, d)`` audit features with ``d ≥ 1`` for a method that needs them."""
    if features is None:
        raise ValueError(f"{method} needs audit features: pass features (one row per "
                         "prediction).")
    matrix = check_features(features, n, "features")
    if matrix.shape[1] == 0:
        raise ValueError(f"{method} needs at least one audit feature column.")
    return matrix


# --------------------------------------------------------------------------- the base class


class RecalibratorBase(ABC):
    """Validation at ``fit``/``predict``; subclasses implement ``_fit``/``_predict`` on an
    ``(n, m)`` matrix ``P`` (rows on the simplex), labels ``y`` and the checked extras."""

    #: Display name used in messages.
    title: ClassVar[str] = "This method"
    #: What the method needs beyond probabilities: "features" and/or "groups".
    needs: ClassVar[tuple[str, ...]] = ()
    #: Binary-only methods reach multiclass problems through OneVsRest.
    binary_only: ClassVar[bool] = False
    #: Multiclass-only methods reject binary problems.
    multiclass_only: ClassVar[bool] = False

    # ---------------------------------------------------------------- public entries

    def fit(self, probs: ArrayLike, y: ArrayLike, features: ArrayLike | None = None,
            groups: ArrayLike | None = None) -> RecalibratorBase:
        """Learn the map on calibration rows; returns ``self``.

        Parameters
        ----------
        probs : array
            ``(n,)`` P(y = 1) or ``(n, m)`` rows on the simplex.
        y : array
            ``(n,)`` integer labels ``0..m-1``.
        features : array, optional
            ``(n, d)`` audit features (methods that need them).
        groups : array or DataFrame, optional
            ``(n,)`` group labels or ``(n, k)`` group attributes (methods that need them).

        Returns
        -------
        self
        """
        p, labels = check_probs_labels(probs, y)
        n, m = p.shape[0], n_classes(p)
        if n < MIN_FIT_ROWS:
            raise ValueError(f"{self.title} needs at least {MIN_FIT_ROWS} calibration rows; "
                             f"got {n}.")
        if self.multiclass_only and m == 2:
            raise ValueError(f"{self.title} is for multiclass problems (3 or more classes); "
                             "this one is binary. Use Platt, temperature or beta scaling.")
        X, g = self._extras(features, groups, n)
        P = probability_matrix(p)
        if self.binary_only and m > 2:
            self.ovr_ = OneVsRest(self).fit_matrix(P, labels, X, g)
        else:
            self.ovr_ = None
            self._fit(P, labels, X, g)
        self.n_classes_ = m
        return self

    def predict(self, probs: ArrayLike, features: ArrayLike | None = None,
                groups: ArrayLike | None = None) -> np.ndarray:
        """Recalibrated probabilities of new rows.

        Parameters
        ----------
        probs, features, groups
            As in :meth:`fit`, for the new rows.

        Returns
        -------
        ndarray
            The shape of ``probs``: ``(n,)`` P(y = 1) in [0, 1], or ``(n, m)`` rows on the
            simplex.
        """
        if not hasattr(self, "n_classes_"):
            raise ValueError(f"{self.title} is not fitted yet: call fit on the calibration "
                             "rows first.")
        p = check_probs(probs)
        if n_classes(p) != self.n_classes_:
            raise ValueError(f"{self.title} was fitted on {self.n_classes_} classes; these "
                             f"probabilities have {n_classes(p)}.")
        X, g = self._extras(features, groups, p.shape[0])
        P = probability_matrix(p)
        out = self.ovr_.predict_matrix(P, X, g) if self.ovr_ is not None else \
            self._predict(P, X, g)
        return same_shape_as(finish(out), p)

    def predict_matrix(self, P: np.ndarray, X: np.ndarray | None,
                       g: np.ndarray | None) -> np.ndarray:
        """Unchecked ``(n, m)`` prediction for wrappers that validated already."""
        return finish(self._predict(P, X, g))

    def fit_matrix(self, P: np.ndarray, y: np.ndarray, X: np.ndarray | None,
                   g: np.ndarray | None) -> RecalibratorBase:
        """Unchecked fit on an ``(n, m)`` matrix, for wrappers that validated already."""
        self.ovr_ = None
        self._fit(P, y, X, g)
        self.n_classes_ = P.shape[1]
        return self

    # ---------------------------------------------------------------- for subclasses

    @abstractmethod
    def _fit(self, P: np.ndarray, y: np.ndarray, X: np.ndarray | None,
             g: np.ndarray | None) -> None: ...

    @abstractmethod
    def _predict(self, P: np.ndarray, X: np.ndarray | None, g: np.ndarray | None
                 ) -> np.ndarray: ...

    def _extras(self, features: ArrayLike | None, groups: ArrayLike | None, n: int
                ) -> tuple[np.ndarray | None, np.ndarray | None]:
        X = check_needed_features(features, n, self.title) if "features" in self.needs \
            else None
        g = check_groups(groups, n) if "groups" in self.needs else None
        return X, g

    def clone(self) -> RecalibratorBase:
        """An unfitted copy with the same parameters."""
        fresh = copy.copy(self)
        fresh.__dict__ = {k: copy.deepcopy(v) for k, v in self.__dict__.items()
                          if not k.endswith("_")}
        return fresh

    def get_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if not k.endswith("_")}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


class BinaryRecalibrator(RecalibratorBase):
    """A method defined on P(y = 1): subclasses implement ``_fit_binary(p, t, X, g)`` and
    ``_predict_binary(p, X, g)`` on ``(n,)`` arrays; multiclass goes through OneVsRest."""

    binary_only = True

    def _fit(self, P, y, X, g) -> None:
        self._fit_binary(P[:, 1], (y == 1).astype(np.float64), X, g)

    def _predict(self, P, X, g) -> np.ndarray:
        q = np.clip(self._predict_binary(P[:, 1], X, g), 0.0, 1.0)
        return np.column_stack([1.0 - q, q])

    @abstractmethod
    def _fit_binary(self, p: np.ndarray, t: np.ndarray, X: np.ndarray | None,
                    g: np.ndarray | None) -> None: ...

    @abstractmethod
    def _predict_binary(self, p: np.ndarray, X: np.ndarray | None, g: np.ndarray | None
                        ) -> np.ndarray: ...


class OneVsRest:
    """A binary method applied per class to ``(p_k, 1[y = k])``; rows renormalised.

    ``q_k = g_k(p_k)``, then ``q / Σ_k q_k`` (a row whose calibrated values are all 0 gets
    the uniform distribution). Zadrozny & Elkan (2002).
    """

    def __init__(self, template: RecalibratorBase) -> None:
        self.template = template

    def fit_matrix(self, P: np.ndarray, y: np.ndarray, X: np.ndarray | None,
                   g: np.ndarray | None) -> OneVsRest:
        self.models_ = []
        for k in range(P.shape[1]):
            binary = np.column_stack([1.0 - P[:, k], P[:, k]])
            model = self.template.clone()
            self.models_.append(model.fit_matrix(binary, (y == k).astype(np.int64), X, g))
        return self

    def predict_matrix(self, P: np.ndarray, X: np.ndarray | None, g: np.ndarray | None
                       ) -> np.ndarray:
        columns = [model.predict_matrix(np.column_stack([1.0 - P[:, k], P[:, k]]), X, g)[:, 1]
                   for k, model in enumerate(self.models_)]
        return normalize_rows(np.column_stack(columns))


def finish(P: np.ndarray) -> np.ndarray:
    """Rows clipped into [0, 1] and renormalised onto the simplex (a guard against
    round-off; a NaN anywhere is a bug and raises)."""
    if not np.isfinite(P).all():
        raise ValueError("The recalibrated probabilities are not finite; this is a bug in the "
                         "method — please report it with the data.")
    return normalize_rows(np.clip(P, 0.0, 1.0))


# --------------------------------------------------------------------------- top-label helper


def replace_top_label(P: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """Rows with the top-label probability set to ``confidence`` and the other classes
    rescaled to share the rest in their old proportions, the predicted class kept.

    With ``c`` the old top probability, ``q`` the runner-up and ``c'`` the new value, the
    others become ``p_k (1 − c')/(1 − c)``; ``c'`` is first raised, where needed, to
    ``q/(1 − c + q)`` plus a margin of 1e-9, the smallest value at which the predicted class
    (``argmax``, ties to the lowest index) stays the same. A row with ``c = 1`` spreads
    ``1 − c'`` evenly over the other classes.
    """
    n, m = P.shape
    top = np.argmax(P, axis=1)
    rows = np.arange(n)
    c = P[rows, top]
    others = P.copy()
    others[rows, top] = -np.inf
    q = others.max(axis=1)
    floor = np.where(c + q > 0, q / np.maximum(1.0 - c + q, EPS), 0.0) + 1e-9
    new = np.clip(np.maximum(confidence, floor), 0.0, 1.0)
    rest = 1.0 - c
    scale = np.divide(1.0 - new, rest, out=np.zeros(n), where=rest > 0)
    out = P * scale[:, None]
    spread = rest <= 0
    if spread.any():
        out[spread] = ((1.0 - new[spread]) / (m - 1))[:, None]
    out[rows, top] = new
    return out


__all__ = [
    "BINARY", "MULTICLASS", "BinaryRecalibrator", "OneVsRest", "Recalibrator",
    "RecalibratorBase", "check_groups", "check_needed_features", "finish",
    "join_groups", "replace_top_label",
]
