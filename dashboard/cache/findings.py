"""The Findings page's slice discovery, memoised per process (it reports progress into a bar
drawn outside it, which ``st.cache_data`` cannot replay: :class:`ProcessMemo`)."""

from __future__ import annotations

from collections.abc import Callable

from core import audit
from core.audit import AuditSettings
from core.data.audit_data import AuditData
from core.local.slice_discovery import SliceDiscovery
from dashboard.cache.memo import ProcessMemo

_DISCOVERIES = ProcessMemo(limit=16)


def discovery(fingerprint: str, names: tuple[str, ...], settings: AuditSettings,
              data: AuditData, progress: Callable[[float, str], None] | None = None
              ) -> SliceDiscovery:
    """:func:`core.audit.slice_section` of ``data`` (identified by ``fingerprint``)."""
    return _DISCOVERIES.get((fingerprint, names, settings),
                            lambda: audit.slice_section(data, names, settings, progress))
