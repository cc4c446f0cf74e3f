"""The order that sorts an array, computed once for the same values (private to ``core``).

An audit sorts the same confidences many times: the equal-mass bins of the metrics table and
of its bootstrap, the Hosmer–Lemeshow groups, the cumulative differences, the extended
metrics' resamples — about a dozen sorts of a million values, 0.1 to 0.3 s each, of three
or four distinct vectors. :func:`sort_order` keeps the last few orders of large arrays under
a digest of their values and the sort kind, so a second request with the same values (often
another array holding them) is answered without sorting, and so are values that a kept order
(or its reverse) sorts strictly — with no ties the sorting order is unique, whatever the kind.
The answer is what ``numpy.argsort`` returns for those values and that kind (numpy's sorts are
deterministic), read-only.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

#: Arrays with fewer values are sorted every time (cheaper than their digest and bookkeeping).
KEPT_FROM = 100_000
#: Orders kept (the most recently used; 8 MB each at 10⁶ rows).
KEPT = 6

_KEPT: OrderedDict[tuple, np.ndarray] = OrderedDict()
_LOCK = threading.Lock()


def sort_order(values: np.ndarray, kind: str | None = None) -> np.ndarray:
    """``numpy.argsort(values, kind=kind)`` of a 1-D array, read-only, from the kept orders
    when the same values were sorted with the same kind recently (module doc).

    Parameters
    ----------
    values : numpy.ndarray
        A 1-D array.
    kind : str, optional
        numpy's sort kind (``None``: its default).

    Returns
    -------
    numpy.ndarray
        The indices that sort ``values``.
    """
    if values.ndim != 1 or values.size < KEPT_FROM:
        return np.argsort(values, kind=kind)
    digest = hashlib.sha1(np.ascontiguousarray(values)).digest()
    key = (digest, values.dtype.str, values.size, kind)
    with _LOCK:
        order = _KEPT.get(key)
        if order is not None:
            _KEPT.move_to_end(key)
            return order
    with _LOCK:
        known = [kept for (_, _, size, _), kept in _KEPT.items() if size == values.size]
    order = _known_strict_order(values, known)
    if order is None:
        order = np.argsort(values, kind=kind)
        order.flags.writeable = False
    with _LOCK:
        _KEPT[key] = order
        while len(_KEPT) > KEPT:
            _KEPT.popitem(last=False)
    return order


def _known_strict_order(values: np.ndarray, known: list[np.ndarray]) -> np.ndarray | None:
    """A kept order of other values (the same confidences sorted with another kind, or
    ``1 − p`` after ``p``), or its reverse, under which ``values`` increase strictly — then
    it is the only order that sorts them, whatever the kind; ``None`` when there is none
    (tied values: each kind orders ties its own way)."""
    for order in known:
        for candidate in (order, order[::-1]):
            head = values[candidate[:64]]
            if not (head[1:] > head[:-1]).all():
                continue
            ordered = values[candidate]
            if (ordered[1:] > ordered[:-1]).all():
                found = np.ascontiguousarray(candidate)
                found.flags.writeable = False
                return found
    return None
