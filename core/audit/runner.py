"""The whole audit: every section at one :class:`~core.audit.settings.AuditSettings`, as the
report and the command line need it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.audit.findings import slice_section
from core.audit.landscape import lce_section
from core.audit.local_bias import lcb_section
from core.audit.reliability import (
    binned_table,
    extended_rows,
    group_tables,
    reliability_section,
    resolved,
    summary_metrics,
    test_results,
)
from core.audit.results import AuditResult
from core.audit.rows import audit_part, feature_columns, slice_names
from core.audit.settings import AuditSettings
from core.audit.store import OnceStore, Progress, SectionStore
from core.audit.trust import trust_section
from core.data.audit_data import AuditData
from core.kernels import engine
from core.kernels.engine import CoreShare, in_threads, machine_workers, sharing


@dataclass(frozen=True)
class Piece:
    """One section of the audit, computed as ``store.section(section, data, settings)``;
    ``share`` is its expected part of the audit's work (the progress bar's weight)."""

    share: float
    title: str
    section: Callable
    data: AuditData
    settings: Any


def pieces_on_two_threads(compute: Callable[[int], object], count: int,
                          tick: Callable[[], None]) -> list:
    """``[compute(k) for k in range(count)]`` on two threads sharing this machine's cores,
    each taking the next piece in order when it is free."""
    share, lock, next_piece, values = CoreShare(2), threading.Lock(), [0], [None] * count

    def worker(_: int) -> None:
        with sharing(share):
            while True:
                with lock:
                    k = next_piece[0]
                    next_piece[0] += 1
                if k >= count:
                    break
                values[k] = compute(k)
        share.finish()

    in_threads(worker, [0, 1], n_jobs=min(2, machine_workers()), tick=tick)
    return values


def run_audit(audit: AuditData, settings: AuditSettings | None = None,
              progress: Progress | None = None,
              store: SectionStore | None = None) -> AuditResult:
    """Compute every page's numbers for ``audit`` at ``settings`` (default: the pages').

    Parameters
    ----------
    audit : AuditData
        The validated data.
    settings : AuditSettings, optional
        What to compute; the defaults are the pages' defaults.
    progress : callable, optional
        ``progress(fraction, message)``, called as the sections finish.
    store : SectionStore, optional
        Where each section comes from (default: computed, each once —
        :class:`~core.audit.store.OnceStore`; the app passes its cache, which answers with
        what the pages computed at the same settings).

    Returns
    -------
    AuditResult
        The sections with the settings and the rows they used.
    """
    settings = settings or AuditSettings()
    concurrent = store is None and engine.current().name == "threads"
    store = store or OnceStore()
    data, part = audit_part(audit, settings.part)
    features = feature_columns(audit, settings.features)
    reliability_settings = resolved(data, settings.reliability())
    # (share of the audit's work at 10⁶ rows, what it shows, the section's call), in the
    # order the two threads take them: a long piece that mostly walks memory (the curve
    # metrics' resamples) beside one that mostly computes (the local bias's kernel tiles),
    # then longest first; at 10⁶ rows the threads end within a second
    # (``python -m benchmarks.streaming lanes``)
    pieces = [
        Piece(0.19, "Reliability: extended metrics", extended_rows, data, reliability_settings),
        Piece(0.21, "Local bias", lcb_section, audit, settings.local_bias(features)),
        Piece(0.12, "LCE landscape", lce_section, data, settings.landscape(features)),
        Piece(0.17, "Trust test", trust_section, data, settings.trust(features)),
        Piece(0.14, "Reliability: metrics and intervals", summary_metrics, data,
              reliability_settings),
        Piece(0.10, "Reliability: tests", test_results, data, reliability_settings),
        Piece(0.05, "Findings", slice_section, data,
              settings.findings(slice_names(audit, features))),
        Piece(0.02, "Reliability: groups", group_tables, data, reliability_settings),
        Piece(0.00, "Reliability: bins", binned_table, data, reliability_settings),
    ]
    done, latest = [0.0] * len(pieces), ["Audit: starting…"]

    def tick() -> None:
        if progress is not None:
            progress(sum(piece.share * f for piece, f in zip(pieces, done, strict=True))
                     / sum(piece.share for piece in pieces), latest[0])

    def compute(k: int) -> object:
        piece = pieces[k]

        def report(fraction: float, message: str) -> None:
            done[k], latest[0] = fraction, f"{piece.title}: {message}"
            if not concurrent:
                tick()

        report(0.0, "…")
        value = store.section(piece.section, piece.data, piece.settings, report)
        report(1.0, "done")
        return value

    # On this machine's threads the pieces run two at a time, each taken by the first thread
    # that is free (largest first, so the two threads end close together), sharing the cores
    # (:class:`~core.kernels.engine.CoreShare`: one thread each while both run); an app's
    # cached sections and a cluster or GPU engine run one after the other.
    if concurrent:
        tick()  # the start (0), before a piece reports
        values = pieces_on_two_threads(compute, len(pieces), tick)
    else:
        values = [compute(k) for k in range(len(pieces))]
    computed = {piece.section: value for piece, value in zip(pieces, values, strict=True)}
    slices, bias = computed[slice_section], computed[lcb_section]
    grid, lce = computed[trust_section], computed[lce_section]
    reliability = store.section(reliability_section, data, settings.reliability())
    notes = () if features else ("No audit features are mapped: the KLCE test uses the "
                                 "prediction kernel only and there is no LCE landscape.",)
    if progress is not None:
        progress(1.0, "Audit complete")
    return AuditResult(settings, audit.name, audit.fingerprint, data.n, part, features,
                       reliability, grid, bias, lce, slices, notes)


