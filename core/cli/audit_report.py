"""The audit's report: audit, compare recalibrations, run the credal-set tests, write the
report and gate on ``--fail-on`` — the tail of ``audit``, ``demo`` and a streamed audit."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from core.audit import AuditResult, AuditSettings, audit_verdicts, run_audit
from core.cli.options import PROG
from core.cli.progress import ProgressBar
from core.data.audit_data import AuditData
from core.data.validation import check_choice
from core.ensembles.summary import CredalSettings, compare_ensemble
from core.recalibration import RECALIBRATORS, RECOMMENDATION_RULE, compare
from core.report import build_report, write_report
from core.report.export import renderer

#: The verdicts each ``--fail-on`` gate reads (:func:`core.audit.audit_verdicts`).
GATED = {"local": ("local",), "slices": ("findings",), "any": ("overall", "local", "findings")}


def failed_verdicts(result: AuditResult, fail_on: str | None) -> list[str]:
    """The verdicts named by ``--fail-on`` that fail at the audit's α, one sentence each
    (``key: answer (primary test)``), in the order of :func:`core.audit.audit_verdicts`."""
    if fail_on is None:
        return []
    return [f"{v.key}: {v.answer} ({v.number})" for v in audit_verdicts(result)
            if v.key in GATED[fail_on] and v.status == "fail"]


def verdicts_text(result: AuditResult, comparison=None) -> str:
    """The verdicts as the command prints them: one line each, the status first."""
    lines = [f"Verdicts (alpha = {result.settings.alpha:g}):"]
    lines += [f"  {v.status.upper():<12} {v.question} {v.answer} ({v.number})"
              for v in audit_verdicts(result, comparison)]
    return "\n".join(lines) + "\n"


def check_methods(methods: Sequence[str]) -> tuple[str, ...]:
    """The recalibration methods asked for, each a key of the registry."""
    for method in methods:
        check_choice(method, RECALIBRATORS, "recalibration method",
                     f"choose from {', '.join(RECALIBRATORS)}")
    return tuple(methods)


def run(audit: AuditData, settings: AuditSettings, out: Path, formats: Sequence[str],
        stream: TextIO, methods: Sequence[str] = (), fail_on: str | None = None,
        credal_resamples: int = 100) -> int:
    """Audit, compare the recalibration ``methods`` (if any), run the credal-set tests when
    the data has ensemble members, build and write the report; print what was written and
    how long it took. Returns 1 when a ``fail_on`` verdict rejects (:func:`failed_verdicts`),
    else 0."""
    start = time.perf_counter()
    bar = ProgressBar(stream, "audit ")
    try:  # the figure browser was started before the table was read (run_audit_command)
        result = run_audit(audit, settings, progress=bar)
    finally:
        bar.close()
    return finish(result, audit, settings, out, formats, stream, methods, start, fail_on,
                  credal_resamples)


def finish(result: AuditResult, audit: AuditData, settings: AuditSettings, out: Path,
           formats: Sequence[str], stream: TextIO, methods: Sequence[str],
           start: float, fail_on: str | None = None, credal_resamples: int = 100) -> int:
    """Compare the recalibration ``methods`` on ``audit`` (a streamed audit's seeded sample),
    run the credal-set tests when it has ensemble members, build and write the report, print
    what was written and how long it took; 1 when a ``fail_on`` verdict rejects
    (:func:`failed_verdicts`), else 0."""
    comparison = None
    if methods:
        bar = ProgressBar(stream, "recalibration")
        try:
            comparison = compare(audit, list(methods), features=result.features,
                                 groups=tuple(audit.groups.columns), seed=settings.seed,
                                 gamma=settings.gamma, progress=bar).table
        finally:
            bar.close()
    credal = None
    if audit.members is not None:
        bar = ProgressBar(stream, "credal")
        try:
            credal = compare_ensemble(
                audit, tuple(range(len(audit.member_names))), result.features,
                CredalSettings(n_resamples=credal_resamples, alpha=settings.alpha,
                               seed=settings.seed), progress=bar)
        finally:
            bar.close()
    audited = time.perf_counter() - start
    bar = ProgressBar(stream, "report")
    try:
        report = build_report(result, audit, comparison=comparison, formats=formats,
                              progress=bar, credal=credal, shared_plotly=True)
    finally:
        bar.close()
        renderer().close()  # the figure browser, closed now rather than at interpreter exit
    files = write_report(report, out)
    total = time.perf_counter() - start
    notes = report.notes
    if result.stream is not None and methods:
        notes += (f"The recalibration comparison ran on the seeded sample of "
                  f"{audit.n:,} rows.",)
    for note in notes:
        stream.write(f"note: {note}\n")
    stream.write(verdicts_text(result, comparison))
    if comparison is not None:
        stream.write(f"Recalibration rule: {RECOMMENDATION_RULE}\n")
    steps = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in report.seconds.items())
    stream.write(
        f"Audited {result.rows:,} rows ({result.part}) of {result.dataset}: wrote "
        f"{len(files)} files to {out} in {total:.1f} s (audit {audited:.1f} s; {steps}).\n")
    stream.write(f"Open {out / 'report.html'} for the report.\n")
    failed = failed_verdicts(result, fail_on)
    for sentence in failed:
        stream.write(f"{PROG}: --fail-on {fail_on}: {sentence} at alpha = "
                     f"{settings.alpha:g}.\n")
    return 1 if failed else 0


