"""The memory an audit may use, and what follows from it: whether a table is audited in
memory or streamed, and how many rows a streamed batch holds.

A streamed pass (:func:`core.kernels.engine.map_partitions`) holds
:func:`core.kernels.engine.in_flight` batches at a time — one running on each worker and one
read ahead for each — and the arrays a batch's rows need are dominated by the Poisson
bootstrap: ``B`` weights a row (:func:`core.kernels.resampling.row_poisson_weights`: the
uniforms, their indices and the weights, float64 each, and a weighted copy in the binned
sums), so a row costs about

    row_bytes = 32·(B + 1) + 16·(K + 1) + ROW_OVERHEAD_BYTES

bytes (K the bins; :data:`ROW_OVERHEAD_BYTES` the row's decoded columns, its frame and the
decoding's temporaries). The random features are walked in chunks of
:data:`core.kernels.rff.CHUNK_ROWS` rows whatever the batch, so each worker adds a fixed
``CHUNK_ROWS·(8·3·(B_test + 1) + 4·2·D)`` (the chunk's resampled residual columns and its
features). The plan (:func:`batch_plan`) chooses the largest batch — a multiple of
``CHUNK_ROWS``, at most :data:`MAX_BATCH_ROWS` — for which

    peak = BASE_BYTES + workers·chunk_bytes + in_flight·batch_rows·row_bytes

stays within the budget, and says both numbers (rows a batch, the peak aimed at).
:data:`BASE_BYTES` is the process, its libraries and the seeded sample's sections, measured.

The budget is the user's (``calibration-atlas audit --memory GB``) or, by default, a quarter
of this machine's memory, at most :data:`DEFAULT_CAP_BYTES` (:func:`default_budget`). An
audit in memory needs about :data:`IN_MEMORY_ROW_BYTES` a row (the table, its decoded
arrays, the bootstrap and the figures' inputs, measured); a table whose estimate exceeds the
budget is streamed (:func:`fits_in_memory`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from core.kernels.rff import CHUNK_ROWS  # batches are multiples of the chunks

GIB = 1 << 30
#: The largest batch: beyond it a pass is no faster, and fewer batches than workers would
#: idle a worker on small tables.
MAX_BATCH_ROWS = 32 * CHUNK_ROWS
#: The default budget's share of this machine's memory, and its cap.
DEFAULT_SHARE, DEFAULT_CAP_BYTES = 0.25, 2 * GIB
#: A streamed audit's memory besides its batches: the interpreter and its libraries, the
#: seeded sample and the in-memory sections computed on it (LCB, the LCE, the slices' null).
BASE_BYTES = 900 * 2**20
#: A row's decoded columns, its frame and the decoding's temporaries, in a batch.
ROW_OVERHEAD_BYTES = 1500
#: An audit in memory, the whole process, per row (10⁶ rows: about 1.2 GB).
IN_MEMORY_ROW_BYTES = 1200
#: The smallest budget a user may give (GB).
MIN_BUDGET_GB = 0.25


def machine_memory() -> int:
    """This machine's physical memory in bytes (``os.sysconf``; 8 GiB where it cannot
    say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return 8 * GIB


def default_budget() -> int:
    """The budget when none is given: :data:`DEFAULT_SHARE` of :func:`machine_memory`, at
    most :data:`DEFAULT_CAP_BYTES` (bytes)."""
    return int(min(DEFAULT_SHARE * machine_memory(), DEFAULT_CAP_BYTES))


def budget_bytes(gigabytes: float | str | None) -> int:
    """The budget of ``--memory GB`` in bytes (``None``: :func:`default_budget`).

    Raises
    ------
    ValueError
        With a sentence, when ``gigabytes`` is not a number of GB between
        :data:`MIN_BUDGET_GB` and this machine's memory.
    """
    if gigabytes is None:
        return default_budget()
    try:
        value = float(gigabytes)
    except (TypeError, ValueError):
        raise ValueError(f"The memory budget must be a number of gigabytes, e.g. --memory 2 "
                         f"or --memory 1.5, not '{gigabytes}'.") from None
    total = machine_memory() / GIB
    if not value >= MIN_BUDGET_GB:  # also NaN
        raise ValueError(f"A memory budget of {gigabytes} GB is too small: give at least "
                         f"{MIN_BUDGET_GB:g} GB (e.g. --memory 2).")
    if value > total:
        raise ValueError(f"A memory budget of {value:g} GB is more than this machine's "
                         f"{total:.1f} GB of memory; give at most {total:.1f} (e.g. "
                         f"--memory {max(MIN_BUDGET_GB, round(total / 4, 1)):g}).")
    return int(value * GIB)


def fits_in_memory(rows: int, budget: int) -> bool:
    """Whether an audit of ``rows`` rows in memory is expected to stay within ``budget``
    bytes (:data:`IN_MEMORY_ROW_BYTES` a row)."""
    return rows * IN_MEMORY_ROW_BYTES <= budget


@dataclass(frozen=True)
class MemoryPlan:
    """How a streamed audit uses its ``budget`` (bytes): batches of ``batch_rows`` rows,
    ``in_flight`` of them at a time, ``row_bytes`` a row, aiming at a peak of ``target``
    bytes."""

    budget: int
    batch_rows: int
    in_flight: int
    row_bytes: int
    target: int

    def describe(self) -> str:
        """``"batches of 65,536 rows (4 at a time, about 3.3 kB a row), aiming at a peak of
        1.8 GB of a 2.0 GB budget"``."""
        return (f"batches of {self.batch_rows:,} rows ({self.in_flight} at a time, about "
                f"{self.row_bytes / 1e3:.1f} kB a row), aiming at a peak of "
                f"{self.target / GIB:.1f} GB of a {self.budget / GIB:.1f} GB budget")


def row_bytes(n_bootstrap: int, n_bins: int) -> int:
    """Bytes a streamed row holds in a batch (module doc)."""
    return 32 * (int(n_bootstrap) + 1) + 16 * (int(n_bins) + 1) + ROW_OVERHEAD_BYTES


def chunk_bytes(test_resamples: int, n_features: int) -> int:
    """Bytes a worker's random-feature chunk holds, whatever the batch (module doc)."""
    return CHUNK_ROWS * (24 * (int(test_resamples) + 1) + 8 * int(n_features))


def batch_plan(budget: int, workers: int, in_flight: int, n_bootstrap: int, n_bins: int,
               test_resamples: int, n_features: int) -> MemoryPlan:
    """The largest batch (a multiple of :data:`CHUNK_ROWS`, at most :data:`MAX_BATCH_ROWS`)
    whose streamed passes keep the peak within ``budget`` bytes (module doc).

    Parameters
    ----------
    budget : int
        Bytes the audit may use (:func:`budget_bytes`).
    workers : int
        Threads running batches.
    in_flight : int
        Batches held at once (:func:`core.kernels.engine.in_flight`).
    n_bootstrap : int
        Poisson bootstrap resamples (a weight per row and resample).
    n_bins : int
        Bins of the binned sums.
    test_resamples : int
        The most resamples of a random-feature test (its chunk's residual columns).
    n_features : int
        The most random features of a map.

    Returns
    -------
    MemoryPlan

    Raises
    ------
    ValueError
        With a sentence naming the budget needed, when even batches of
        :data:`CHUNK_ROWS` rows would not fit.
    """
    per_row = row_bytes(n_bootstrap, n_bins)
    fixed = BASE_BYTES + workers * chunk_bytes(test_resamples, n_features)
    rows = (budget - fixed) // max(1, in_flight * per_row)
    rows = min(MAX_BATCH_ROWS, rows // CHUNK_ROWS * CHUNK_ROWS)
    if rows < CHUNK_ROWS:
        needed = fixed + in_flight * CHUNK_ROWS * per_row
        raise ValueError(
            f"A memory budget of {budget / GIB:.2f} GB is below what a streamed audit needs "
            f"here: about {needed / GIB:.2f} GB ({BASE_BYTES / GIB:.2f} GB for the process and "
            f"the seeded sample, and {in_flight} batches of {CHUNK_ROWS:,} rows at "
            f"{per_row / 1e3:.1f} kB a row with {n_bootstrap} bootstrap resamples). Give "
            f"--memory {needed / GIB + 0.05:.1f} or more, or fewer --resamples.")
    return MemoryPlan(int(budget), int(rows), int(in_flight), int(per_row),
                      int(fixed + in_flight * rows * per_row))
