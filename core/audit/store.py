"""Where a section comes from: computed, or found in a cache under its settings.

A *section* is a function ``section(data, settings, progress=None, store=None)`` of the audited
rows (an :class:`~core.data.audit_data.AuditData`) and a frozen settings object, returning a
frozen result. The pages, the report and the command line all ask a :class:`SectionStore` for
it. This class computes it; the app's store (``dashboard.cache``) keeps each result under
:func:`section_key` — the section, the data's fingerprint and the settings the section reads —
so the Export page's report finds exactly what the pages computed, whatever widget showed it.
A section made of pieces asks its ``store`` for each piece in turn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Progress = Callable[[float, str], None]


def reads(*names: str) -> Callable:
    """Mark a section as reading only the settings ``names``: its key keeps those and sets
    the rest to their defaults (:meth:`core.audit.settings.ReliabilitySettings.keeping`), so
    a change of another setting finds it cached."""
    def mark(section: Callable) -> Callable:
        section.reads = names
        return section
    return mark


def section_key(section: Callable, data: Any, settings: Any) -> tuple:
    """``(module, name, data fingerprint, settings read)``: what a cache keeps a section
    under. The settings are a frozen, hashable value."""
    names = getattr(section, "reads", None)
    kept = settings if names is None else settings.keeping(*names)
    return section.__module__, section.__qualname__, data.fingerprint, kept


class SectionStore:
    """Computes every section it is asked for; a subclass may answer from a cache."""

    def section(self, section: Callable, data: Any, settings: Any,
                progress: Progress | None = None) -> Any:
        """``section(data, settings)``, with this store for its pieces."""
        return section(data, settings, progress=progress, store=self)
