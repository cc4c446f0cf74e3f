"""The whole audit: every section at one :class:`~core.audit.settings.AuditSettings`, as the
report and the command line need it."""

from __future__ import annotations

import threading
from collections.abc import Callable

from core.audit.findings import slice_section
from core.audit.landscape import lce_section
from core.audit.local_bias import lcb_bandwidths, lcb_section
from core.audit.reliability import reliability_section
from core.audit.results import AuditResult, ReliabilitySection
from core.audit.rows import audit_part, feature_columns, slice_names
from core.audit.settings import AuditSettings
from core.audit.store import OnceStore, Progress, SectionStore
from core.audit.trust import trust_section
from core.data.audit_data import AuditData
from core.kernels import engine
from core.kernels.engine import CoreShare, in_threads, machine_workers, sharing


def run_audit(audit: AuditData, settings: AuditSettings | None = None,
              progress: Progress | None = None,
              store: SectionStore | None = None,
              core_free: Callable[[], None] | None = None) -> AuditResult:
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
    core_free : callable, optional
        Called once, from a lane's thread, when the lanes run side by side and the first of
        them has finished while the other still runs, so a core is free (the command line
        starts its figure browser then).

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
    # each lane's fraction done, and the latest message (a counter orders them)
    latest = {"reliability": (0.0, 0, "Reliability: metrics, bootstrap intervals and tests…"),
              "local": (0.0, 0, "Trust test: KLCE² over the bandwidth grid…")}
    weights = {"reliability": 0.4, "local": 0.6}
    counter = [0]

    def lane(name: str, start: float, width: float):
        def report(fraction: float, message: str) -> None:
            counter[0] += 1
            latest[name] = (start + width * fraction, counter[0], message)
            if not concurrent:
                tick()
        return report

    def reliability_lane() -> ReliabilitySection:
        done = lane("reliability", 0.0, 1.0)
        if concurrent:
            # LCB's cross-validated bandwidths (about 3 % of the audit), which the local lane
            # reads from the store once its Trust test is done: the lanes end closer together
            done(0.0, "Local bias: cross-validated bandwidths…")
            store.section(lcb_bandwidths, audit, settings.local_bias(features))
        done(0.0, "Reliability: metrics, bootstrap intervals and tests…")
        section = store.section(reliability_section, data, settings.reliability())
        done(1.0, "Reliability: done")
        return section

    def local_lane() -> tuple:
        grid = store.section(trust_section, data, settings.trust(features),
                             lambda f, m: lane("local", 0.0, 0.4)(f, f"Trust test: {m}"))
        lane("local", 0.4, 0.0)(0.0, "Local bias: cross-validated bandwidths and LCB…")
        bias = store.section(lcb_section, audit, settings.local_bias(features))
        slices = store.section(slice_section, data,
                               settings.findings(slice_names(audit, features)),
                               lambda f, m: lane("local", 0.5, 0.15)(f, f"Findings: {m}"))
        lane("local", 0.65, 0.0)(0.0, "LCE landscape: map of the audit features and MLCE "
                                      "over γ…")
        lce = store.section(lce_section, data, settings.landscape(features),
                            lane("local", 0.65, 0.35))
        return grid, bias, slices, lce

    def tick() -> None:
        if progress is not None:
            message = max(latest.values(), key=lambda item: item[1])[2]
            progress(sum(weights[k] * latest[k][0] for k in latest), message)

    # On this machine's threads the Reliability page's numbers and the local pages' run side
    # by side, sharing the cores (:class:`~core.kernels.engine.CoreShare`: one thread each
    # while both run, which measured 1.4 s faster at 10⁶ rows than each lane's pools taking
    # both cores); an app's cached sections and a cluster or GPU engine run one after the
    # other.
    if concurrent:
        tick()  # the start (0), before either lane reports
        share, first_done = CoreShare(2), threading.Lock()

        def run_lane(name: str):
            with sharing(share):
                result = reliability_lane() if name == "reliability" else local_lane()
            if core_free is not None and first_done.acquire(blocking=False):
                core_free()  # the first lane to finish: the other still runs
            return result

        reliability, (grid, bias, slices, lce) = in_threads(
            run_lane, ["reliability", "local"], n_jobs=min(2, machine_workers()), tick=tick)
    else:
        reliability = reliability_lane()
        grid, bias, slices, lce = local_lane()
    notes = () if features else ("No audit features are mapped: the KLCE test uses the "
                                 "prediction kernel only and there is no LCE landscape.",)
    if progress is not None:
        progress(1.0, "Audit complete")
    return AuditResult(settings, audit.name, audit.fingerprint, data.n, part, features,
                       reliability, grid, bias, lce, slices, notes)


