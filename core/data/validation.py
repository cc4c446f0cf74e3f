"""One input toolkit for every public function of ``core``: checks, conversions, the simplex.

Every public function validates its arguments once, at its entry, with these helpers, and
trusts them inside (scikit-learn's ``utils.validation``; CalibrationErrors.jl's ``unsafe_``
naming for helpers that skip checks). A failed check raises :class:`ValueError` with a sentence
a non-programmer understands: what is wrong, where (the argument, the first row, counted from
0 as numpy does), and what is allowed. :class:`core.data.problems.DataError` is reserved for the
user's table and counts rows from 1.

Conventions (DESIGN.md): ``probs`` is ``(n,)`` = P(y = 1) for a binary problem or ``(n, m)``
rows on the simplex; ``y`` holds integer labels ``0..m-1``; ``X`` is ``(n, d)`` numeric audit
features. An ``(n, 2)`` matrix is a binary problem too.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

#: Probabilities this far outside [0, 1] are rounding and are clipped; beyond it they are wrong.
PROB_TOL = 1e-9
#: Largest deviation of a matrix row sum from 1 that the checks accept.
SUM_TOL = 1e-5


# --------------------------------------------------------------------------- settings


def check_choice(value: object, choices: Sequence[object], noun: str,
                 hint: str | None = None) -> object:
    """``value`` if it is one of ``choices``, else ``ValueError("Unknown {noun} {value!r};
    {hint}.")`` — the one wording of every "unknown option" message. ``hint`` defaults to
    ``"choose one of 'a', 'b', …"``."""
    if value in choices:
        return value
    if hint is None:
        hint = "choose one of " + ", ".join(repr(c) for c in choices)
    raise ValueError(f"Unknown {noun} {value!r}; {hint}.")


def is_whole(value: object) -> bool:
    """True for Python and numpy integers (not for booleans)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_count(name: str, value: int, minimum: int) -> int:
    """``value`` as an int, or a ValueError unless it is a whole number ≥ ``minimum``."""
    if not is_whole(value) or value < minimum:
        raise ValueError(f"{name} must be a whole number of at least {minimum}, not {value!r}.")
    return int(value)


def check_seed(seed: object) -> int | None:
    """A seed for ``numpy.random.default_rng``: a whole number ≥ 0 or ``None``."""
    if seed is None:
        return None
    if not is_whole(seed) or seed < 0:
        raise ValueError(f"The seed must be a whole number of at least 0, not {seed!r}.")
    return int(seed)


def check_positive(name: str, value: object, allow_inf: bool = False) -> float:
    """``value`` as a float > 0 (``inf`` only with ``allow_inf``), else a ValueError."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a positive number, not {value!r}.") from err
    if np.isnan(number) or number <= 0 or (np.isinf(number) and not allow_inf):
        allowed = "a positive number (or inf)" if allow_inf else "a positive finite number"
        raise ValueError(f"{name} must be {allowed}, not {value!r}.")
    return number


def check_fraction(name: str, value: object) -> float:
    """``value`` as a float strictly between 0 and 1, else a ValueError."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a number between 0 and 1, not {value!r}.") from err
    if not 0.0 < number < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1, not {value!r}.")
    return number


# --------------------------------------------------------------------------- probabilities


def check_probs(probs: ArrayLike) -> np.ndarray:
    """Validated float64 probabilities, ``(n,)`` or ``(n, m)``, clipped into [0, 1].

    Finite, within ``PROB_TOL`` of [0, 1], matrix rows summing to 1 within ``SUM_TOL``.
    """
    try:
        p = np.array(probs, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError("probs must contain numbers (predicted probabilities).") from err
    if p.ndim not in (1, 2):
        raise ValueError(
            "probs must be a 1-D array of P(y=1) for a binary problem or a 2-D array with one "
            f"row of class probabilities per example; this one has {p.ndim} dimensions."
        )
    if p.shape[0] == 0:
        raise ValueError("probs is empty: at least one prediction is needed.")
    if p.ndim == 2 and p.shape[1] < 2:
        raise ValueError(
            "A 2-D probs needs one column per class and at least two classes; "
            f"this one has {p.shape[1]} column."
        )
    finite = np.isfinite(p)
    if not finite.all():
        row = int(np.argwhere(~finite)[0][0])
        raise ValueError(
            f"probs has {int((~finite).sum())} missing or infinite values (first in row {row})."
        )
    outside = (p < -PROB_TOL) | (p > 1.0 + PROB_TOL)
    if outside.any():
        row = int(np.argwhere(outside)[0][0])
        raise ValueError(
            f"Probabilities must lie between 0 and 1; {int(outside.sum())} values do not "
            f"(first in row {row})."
        )
    np.clip(p, 0.0, 1.0, out=p)
    if p.ndim == 2:
        sums = p.sum(axis=1)
        off = np.abs(sums - 1.0) > SUM_TOL
        if off.any():
            row = int(np.argmax(off))
            raise ValueError(
                f"Each row of probs must sum to 1; {int(off.sum())} rows do not "
                f"(row {row} sums to {sums[row]:.6g})."
            )
    return p


def check_labels(y: ArrayLike, n: int, n_classes: int) -> np.ndarray:
    """int64 labels ``0..n_classes-1``, one per row of probs (``n``), else a ValueError."""
    labels = np.asarray(y)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(
            f"y must be a 1-D array with one label per row of probs: probs has {n} rows, "
            f"y has shape {labels.shape}."
        )
    if labels.dtype == bool:
        labels = labels.astype(np.int64)
    if labels.dtype.kind not in "iuf":
        raise ValueError("y must hold integer class labels 0, 1, …, m-1.")
    if labels.dtype.kind == "f":
        bad = ~np.isfinite(labels) | (labels != np.round(labels))
        if bad.any():
            row = int(np.argmax(bad))
            raise ValueError(
                f"y must hold whole-number class labels; row {row} has {labels[row]!r}."
            )
    labels = labels.astype(np.int64)
    bad = (labels < 0) | (labels >= n_classes)
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(
            f"Labels must be integers from 0 to {n_classes - 1} (one per class of probs); "
            f"row {row} has label {labels[row]}."
        )
    return labels


def check_probs_labels(probs: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validated float64 probabilities (``(n,)`` or ``(n, m)``) and int64 labels."""
    p = check_probs(probs)
    return p, check_labels(y, p.shape[0], n_classes(p))


# --------------------------------------------------------------------------- features


def check_features(X: ArrayLike | None, n: int, name: str = "X") -> np.ndarray:
    """Audit features as float64 ``(n, d)``: ``None`` → ``(n, 0)``, a 1-D array → one column;
    finite, one row per prediction."""
    if X is None:
        return np.zeros((n, 0))
    try:
        matrix = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must contain numbers (the audit features).") from err
    if matrix.ndim == 1:
        matrix = matrix[:, None]
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (rows × features); it has "
                         f"{matrix.ndim} dimensions.")
    if matrix.shape[0] != n:
        raise ValueError(f"{name} has {matrix.shape[0]} rows but there are {n} predictions.")
    finite = np.isfinite(matrix)
    if not finite.all():
        row = int(np.argwhere(~finite)[0][0])
        raise ValueError(f"{name} has {int((~finite).sum())} missing or infinite values "
                         f"(first in row {row}).")
    return matrix


# --------------------------------------------------------------------------- the simplex


def is_binary(probs: ArrayLike) -> bool:
    """True for ``(n,)`` probabilities of the positive class or an ``(n, 2)`` matrix.

    Parameters
    ----------
    probs : array_like
        Probabilities.

    Returns
    -------
    bool
    """
    shape = np.shape(probs)
    return len(shape) == 1 or (len(shape) == 2 and shape[1] == 2)


def n_classes(probs: np.ndarray) -> int:
    """m: 2 for ``(n,)`` P(y=1), else the number of columns."""
    return 2 if np.ndim(probs) == 1 else int(np.shape(probs)[1])


def probability_matrix(probs: ArrayLike) -> np.ndarray:
    """``(n,)`` P(y=1) → ``(n, 2)`` rows ``(1 − p, p)``; an ``(n, m)`` matrix as float64."""
    p = np.asarray(probs, dtype=np.float64)
    return np.column_stack([1.0 - p, p]) if p.ndim == 1 else p


def same_shape_as(matrix: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``matrix`` ``(n, m)`` back in the layout of ``like``: column 1 for ``(n,)`` input."""
    return matrix[:, 1] if np.ndim(like) == 1 else matrix


def one_hot(y: np.ndarray, m: int) -> np.ndarray:
    """``(n, m)`` float indicators ``1[y_i = k]``."""
    return (np.asarray(y)[:, None] == np.arange(m)[None, :]).astype(np.float64)


def normalize_rows(matrix: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """Rows clipped below at ``floor`` and divided by their sums (a uniform row where a row
    sums to 0): a matrix on the simplex."""
    P = np.clip(np.asarray(matrix, dtype=np.float64), floor, None)
    sums = P.sum(axis=1, keepdims=True)
    uniform = np.full_like(P, 1.0 / P.shape[1])
    return np.divide(P, sums, out=uniform, where=sums > 0)


def softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax, shifted by the row maximum for numerical stability."""
    z = np.asarray(z, dtype=np.float64)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def sigmoid(z: ArrayLike) -> np.ndarray:
    """Logistic function ``1 / (1 + exp(−z))``, evaluated without overflow."""
    z = np.asarray(z, dtype=np.float64)
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out


def logit(p: ArrayLike, eps: float = 1e-12) -> np.ndarray:
    """``log(p / (1 − p))`` with p clipped into ``[eps, 1 − eps]`` so 0 and 1 stay finite."""
    q = np.clip(np.asarray(p, dtype=np.float64), eps, 1.0 - eps)
    return np.log(q) - np.log1p(-q)


def resolvable_bound(probs: ArrayLike) -> float:
    """How close to 0 or 1 a saturated score is placed before a logarithm: half a step of the
    model's own resolution.

    A score of exactly 0 or 1 (a random forest's unanimous vote, k-NN's k agreeing
    neighbours, naive Bayes' underflow) has an infinite logarithm. Clipping it at a fixed
    1e-12 put such rows at ``logit = ±27.6`` — for a forest of 100 trees, 23 units beyond its
    next score 0.01 (``logit = −4.6``), although the two differ by one vote — where a few of
    them decided every fit on the log scale. The bound is instead what the scores themselves
    resolve: with ``δ`` the smallest positive distance of any score from 0 or 1 (a forest of
    100 trees: δ = 0.01; k-NN with 5 neighbours: δ = 0.2), a score of 0 is read as a vote
    share of 0 out of ``k = 1/δ`` and given the Haldane–Anscombe value ``(0 + ½)/(k + 1)``
    (Haldane 1955; Anscombe 1956, the empirical logit ``log((x + ½)/(k − x + ½))``)::

        ε = δ / (2 (1 + δ))

    so exact 0s and 1s sit half a step beyond the nearest scores (forest: ε = 0.00495,
    logit −5.3; 5-NN: ε = 0.083) — but never closer to 0 or 1 than float64's machine epsilon
    2.2e-16, the smallest distance from 1 a double can hold (as scikit-learn and the beta
    calibration package clip). Scores inside ``[ε, 1 − ε]`` are never moved (ε < δ), so a
    model without saturated scores is fitted exactly as before — including the extreme but
    finite probabilities of an overconfident softmax, which carry its scale. ``probs`` is
    ``(n,)`` P(y = 1) (distances ``p`` and ``1 − p``) or ``(n, m)`` rows on the simplex (their
    entries). Hard 0/1 predictions (no score inside (0, 1)) give δ = 1, ε = 1/4.
    """
    P = np.asarray(probs, dtype=np.float64)
    distances = np.concatenate([P.ravel(), 1.0 - P.ravel()]) if P.ndim == 1 else P.ravel()
    inside = distances[(distances > 0.0) & (distances < 1.0)]
    delta = float(inside.min()) if inside.size else 1.0
    return max(delta / (2.0 * (1.0 + delta)), float(np.finfo(np.float64).eps))
