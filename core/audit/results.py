"""What an audit's sections return: frozen results that carry what a caption states."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.audit.settings import AuditSettings
from core.kernels.spec import KernelSpec
from core.local.slice_discovery import SliceDiscovery
from core.stattests.klce_grid import GridTestResult
from core.stattests.result import TestResult


@dataclass(frozen=True)
class ReliabilitySection:
    """What the Reliability page shows.

    Attributes
    ----------
    table : DataFrame
        One row per bin (:func:`core.metrics.reliability_table`).
    metrics : DataFrame
        ``metric, value, ci_low, ci_high, notion, description`` and the rest of the metrics.
    tests : dict of str to TestResult
        The calibration tests that ran.
    groups : dict
        Group attribute → (summary table, reliability table per level).
    notion : str
        The notion of the binned metrics.
    """

    table: pd.DataFrame  # one row per bin (metrics.reliability_table)
    metrics: pd.DataFrame  # metric, value, ci_low, ci_high, notion, description
    tests: dict[str, TestResult]
    groups: dict[str, tuple[pd.DataFrame, dict[str, pd.DataFrame]]]  # attribute → diagnostics
    notion: str


@dataclass(frozen=True)
class LcbSection:
    """What the Local bias section computed.

    Attributes
    ----------
    values : ndarray
        LCB of the evaluated query rows (NaN: no reference neighbours).
    spec : KernelSpec
        The bandwidths used.
    cv_table : DataFrame
        The cross-validation of the bandwidths.
    reference : str
        How reference and query rows were chosen.
    rows : ndarray or None
        Query rows of ``values`` (``None``: all, in order).
    computation : str
        What ran, one sentence.
    exact_seconds : float
        Estimated time of the exact computation.
    method : str
        ``"exact"`` or ``"sampled"``.
    """

    values: np.ndarray  # LCB of the evaluated query rows (NaN: no reference neighbours)
    spec: KernelSpec  # the cross-validated bandwidths
    cv_table: pd.DataFrame
    reference: str  # how reference and query rows were chosen
    rows: np.ndarray | None = None  # query rows of ``values`` (None: all, in order)
    computation: str = "exact"  # what ran, one sentence (LcbEstimate.describe)
    exact_seconds: float = 0.0  # estimated time of the exact computation
    method: str = "exact"  # "exact" or "sampled" (LcbPlan.computation)


@dataclass(frozen=True)
class LceSection:
    """What the LCE landscape section computed.

    Attributes
    ----------
    curve : DataFrame
        ``gamma, mlce, mean_lce, method, error_bound``.
    mlce : float
        MLCE at the settings' γ.
    mce : float
        The binned MCE the curve tends to (top-label, 15 bins).
    map : str
        What the LCE kernel runs on.
    computation : str
        Which computations ran over γ and their worst-case error.
    """

    curve: pd.DataFrame  # gamma, mlce, mean_lce, method, error_bound
    mlce: float  # at settings.gamma
    mce: float  # the binned MCE the curve tends to (top-label, 15 bins)
    map: str  # what the LCE kernel runs on
    computation: str = ""  # which computations ran over γ and their worst-case error


@dataclass(frozen=True)
class StreamInfo:
    """How a streamed audit (:func:`core.stream.run_stream_audit`) read a table larger
    than memory: its source, rows and partitions, the engine, the seeded sample of the
    sections that are not sums over rows, and which numbers came from all rows and which
    from the sample (one phrase each), the class balance of the audited rows and the time of
    each pass.

    Attributes
    ----------
    source : str
        The table read.
    rows : int
        Its rows.
    partitions : int
        Its partitions.
    engine : str
        Where the passes ran.
    sample_rows : int
        Rows of the seeded sample.
    sample_fingerprint : str
        The sample's fingerprint.
    exact : tuple of str
        What came from all rows.
    sampled : tuple of str
        What came from the sample.
    class_balance : DataFrame
        Class counts of the audited rows.
    passes : tuple
        ``(pass, seconds)`` of every pass.
    batch_rows : int
        The most rows of a batch.
    memory_target : int
        The peak (bytes) the batches were sized for.
    memory_budget : int
        The budget (bytes) the plan kept within.
    batching : str
        The plan in words.
    """

    source: str
    rows: int
    partitions: int
    engine: str
    sample_rows: int
    sample_fingerprint: str
    exact: tuple[str, ...]
    sampled: tuple[str, ...]
    class_balance: pd.DataFrame = field(repr=False)
    passes: tuple[tuple[str, float], ...] = ()
    batch_rows: int = 0  # the most rows of a batch (core.kernels.memory.MemoryPlan)
    memory_target: int = 0  # the peak (bytes) the batches were sized for
    memory_budget: int = 0  # the budget (bytes) the plan kept within
    batching: str = ""  # the plan in words (MemoryPlan.describe)

    def describe(self) -> str:
        """One sentence for a report: all rows for the sums, the sample for the rest."""
        return (f"Streamed from {self.source} on {self.engine}"
                f"{f' in {self.batching}' if self.batching else ''}: "
                f"{'; '.join(self.exact)} over all audited rows; "
                f"{'; '.join(self.sampled)} on a seeded sample of {self.sample_rows:,} of the "
                f"{self.rows:,} rows.")


@dataclass(frozen=True)
class AuditResult:
    """What :func:`run_audit` found, with the settings and the rows it used (``stream``: how a
    streamed audit read its table, ``None`` in memory)."""

    settings: AuditSettings
    dataset: str
    fingerprint: str
    rows: int
    part: str
    features: tuple[str, ...]
    reliability: ReliabilitySection
    klce_grid: GridTestResult
    lcb: LcbSection
    lce: LceSection | None
    slices: SliceDiscovery
    notes: tuple[str, ...] = field(default=())
    stream: StreamInfo | None = None


