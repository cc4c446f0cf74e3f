"""What the data layer says to the user: :class:`DataError` for input it refuses, the
validation report's notes (:class:`ValidationNote`) for what it accepted or repaired, and the
row descriptions every message uses (row numbers count the first data row as 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


class DataError(ValueError):
    """A problem with the user's data, phrased for the person who uploaded it."""


@dataclass(frozen=True)
class ValidationNote:
    """One entry of the validation report: what was found and what was done about it."""

    level: str  # "info" or "warning"
    message: str


# --------------------------------------------------------------------------- row wording


def describe_rows(mask: np.ndarray, limit: int = 5) -> str:
    """``'3 rows (rows 4, 18, 43)'`` for a boolean mask; rows are counted from 1."""
    positions = np.flatnonzero(mask) + 1
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

