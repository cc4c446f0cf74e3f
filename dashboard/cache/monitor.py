"""Cached wrapper for the Over time page: monitoring is memoised per process on the dataset's
fingerprint (which covers its time column) and the frozen
:class:`core.monitor.MonitorSettings`."""

from __future__ import annotations

from core.data import AuditData
from core.monitor import MonitorResult, MonitorSettings, monitor_audit
from dashboard.cache.memo import ProcessMemo

_MONITORS = ProcessMemo(limit=8)


def monitoring(audit: AuditData, settings: MonitorSettings) -> MonitorResult:
    """:func:`core.monitor.monitor_audit` of ``audit``, once per table and settings."""
    return _MONITORS.get((audit.fingerprint, settings), lambda: monitor_audit(audit, settings))
