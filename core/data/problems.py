"""What the data layer says to the user: :class:`DataError` for input it refuses, the
validation report's notes (:class:`ValidationNote`) for what it accepted or repaired, and the
row descriptions every message uses (row numbers count the first data row as 1).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

#: Rows before the table part being checked: a streamed table is validated partition by
#: partition, and its messages name rows of the whole table (:func:`rows_from`).
_ROW_OFFSET: ContextVar[int] = ContextVar("calibration_atlas_row_offset", default=0)


class DataError(ValueError):
    """A problem with the user's data, phrased for the person who uploaded it.

    Parameters
    ----------
    message : str
        One sentence naming the column or rows at fault and the fix.
    """


@dataclass(frozen=True)
class ValidationNote:
    """One entry of the validation report: what was found and what was done about it.

    ``level`` is ``"info"`` or ``"warning"``; ``topic`` ``"leakage"`` marks a warning that a
    reference model learned from a column the leakage screen flags (or reads the outcome as a
    whole), which every page of the table shows (:mod:`core.data.leakage`).

    Attributes
    ----------
    level : {"info", "warning"}
        How serious it is.
    message : str
        The sentence shown in the validation report.
    topic : str
        ``"leakage"`` for a leakage warning shown on every page, else empty.
    """

    level: str
    message: str
    topic: str = ""


# --------------------------------------------------------------------------- row wording


@contextmanager
def rows_from(offset: int) -> Iterator[None]:
    """Within the block, :func:`describe_rows` counts a mask's first row as row
    ``offset + 1``: the checks of one partition of a streamed table name rows of the table."""
    token = _ROW_OFFSET.set(int(offset))
    try:
        yield
    finally:
        _ROW_OFFSET.reset(token)


def row_offset() -> int:
    """The table's rows before the current partition (0 outside :func:`rows_from`)."""
    return _ROW_OFFSET.get()


def describe_rows(mask: np.ndarray, limit: int = 5) -> str:
    """``'3 rows (rows 4, 18, 43)'`` for a boolean mask; rows are counted from 1 (from the
    partition's first row of the table inside :func:`rows_from`).

    Parameters
    ----------
    mask : array_like of bool
        ``(n,)``, True at the rows to name.
    limit : int, default 5
        Most row numbers listed.

    Returns
    -------
    str
    """
    positions = np.flatnonzero(mask) + 1 + _ROW_OFFSET.get()
    count = positions.size
    shown = ", ".join(str(p) for p in positions[:limit])
    more = ", …" if count > limit else ""
    noun = "row" if count == 1 else "rows"
    return f"{count:,} {noun} ({noun} {shown}{more})"


def quote_list(values: Sequence, limit: int = 8) -> str:
    items = [f"'{v}'" for v in list(values)[:limit]]
    if len(values) > limit:
        items.append(f"… ({len(values) - limit} more)")
    return ", ".join(items)

