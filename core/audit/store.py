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

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

Progress = Callable[[float, str], None]


_SECTION_DOC = """

    Parameters
    ----------
    {data} : AuditData
        The audited rows{whole}.
    settings : {settings}
        What to compute{reading}.
    progress : callable, optional
        ``progress(fraction, message)`` while it computes.
    store : SectionStore, optional
        Where its pieces come from (default: computed).

    Returns
    -------
    {returns}
"""


def section(settings: type, returns: str, reads: tuple[str, ...] | None = None,
            data: str = "data") -> Callable:
    """Declare a function of ``({data}, settings, progress=None, store=None)`` a section.

    Its docstring gains the Parameters and Returns that every section shares, and, when it
    reads only some settings, the names its cache key keeps (:func:`section_key`): the rest
    are set to their defaults, so a change of another setting finds it cached.

    Parameters
    ----------
    settings : type
        Its settings class.
    returns : str
        Its Returns entry: ``"type: what it holds"``.
    reads : tuple of str, optional
        The settings it reads (default: all of them).
    data : str, default "data"
        The name of its first parameter (``audit`` where a section takes all rows of the
        data and chooses its own).

    Returns
    -------
    callable
        A decorator that marks the function and completes its docstring.
    """
    def mark(function: Callable) -> Callable:
        function.reads = reads
        whole = " (all of them: the section chooses its own)" if data == "audit" else ""
        reading = "" if reads is None else " (it reads " + ", ".join(
            f"``{name}``" for name in reads) + ")"
        kind, _, meaning = returns.partition(": ")
        function.__doc__ = (function.__doc__ or "").rstrip() + _SECTION_DOC.format(
            data=data, whole=whole, settings=settings.__name__, reading=reading,
            returns=f"{kind}\n        {meaning[:1].upper()}{meaning[1:]}.")
        return function
    return mark


def section_key(section: Callable, data: Any, settings: Any) -> tuple:
    """What a cache keeps a section under.

    Parameters
    ----------
    section : callable
        A function declared by :func:`section`.
    data : AuditData
        The rows it is computed on (their fingerprint identifies them).
    settings : frozen dataclass
        Its settings; only those it reads are kept.

    Returns
    -------
    tuple
        ``(module, name, data fingerprint, settings read)``, hashable.
    """
    names = getattr(section, "reads", None)
    kept = settings if names is None else settings.keeping(*names)
    return section.__module__, section.__qualname__, data.fingerprint, kept


class SectionStore:
    """Computes every section it is asked for; a subclass may answer from a cache (the
    app's keeps each under :func:`section_key`).

    Methods
    -------
    section(section, data, settings, progress=None)
        The section's result.

    Attributes
    ----------
    section : callable
        The one method: a section's result (:meth:`section`).
    """

    def section(self, section: Callable, data: Any, settings: Any,
                progress: Progress | None = None) -> Any:
        """``section(data, settings)``, with this store for its pieces.

        Parameters
        ----------
        section : callable
            A function declared by :func:`section`.
        data : AuditData
            The rows to compute it on.
        settings : frozen dataclass
            Its settings.
        progress : callable, optional
            ``progress(fraction, message)`` while it computes.

        Returns
        -------
        object
            What the section returns.
        """
        return section(data, settings, progress=progress, store=self)


class OnceStore(SectionStore):
    """Computes each section once: asked again for a section under the same
    :func:`section_key` (the LCE landscape's feature map, which its curve and its value at γ
    read too), it answers with the result it computed first — or, while another thread
    computes it, waits for that result. The store of one :func:`~core.audit.run_audit` when
    none is given, shared by the audit's lanes (threads). A section's pieces are below it,
    so two threads never wait for each other.

    Methods
    -------
    section(section, data, settings, progress=None)
        The section's result, computed on the first request.

    Attributes
    ----------
    section : callable
        The one method: a section's result, computed once (:meth:`section`).
    """

    def __init__(self) -> None:
        self._kept: dict[tuple, Future] = {}
        self._lock = threading.Lock()

    def section(self, section: Callable, data: Any, settings: Any,
                progress: Progress | None = None) -> Any:
        """:meth:`SectionStore.section`, computed on the first request only.

        Parameters
        ----------
        section : callable
            A function declared by :func:`section`.
        data : AuditData
            The rows to compute it on.
        settings : frozen dataclass
            Its settings.
        progress : callable, optional
            ``progress(fraction, message)`` while it computes (not called when kept).

        Returns
        -------
        object
            What the section returns.
        """
        key = section_key(section, data, settings)
        with self._lock:
            kept = self._kept.get(key)
            if kept is None:
                kept = self._kept[key] = Future()
                computing = True
            else:
                computing = False
        if not computing:
            return kept.result()
        try:
            value = super().section(section, data, settings, progress)
        except BaseException as error:
            with self._lock:
                del self._kept[key]  # not kept: a later request computes it again
            kept.set_exception(error)
            raise
        kept.set_result(value)
        return value
