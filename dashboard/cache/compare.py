"""Cached wrapper for the Compare models page: the comparison is memoised per process on the
dataset's fingerprint and the frozen :class:`core.compare.CompareSettings`, with progress."""

from __future__ import annotations

from collections.abc import Callable

from core.compare import CompareSettings, ComparisonResult
from core.data import AuditData
from dashboard.cache.memo import ProcessMemo

_COMPARISONS = ProcessMemo(limit=8)


def comparison(audit: AuditData, settings: CompareSettings,
               progress: Callable[[float, str], None] | None = None) -> ComparisonResult:
    # the fingerprint covers every prediction set of the table and which one is audited
    return _COMPARISONS.get((audit.fingerprint, settings), lambda: settings.run(audit, progress))
