"""The audit report built from one :func:`~core.audit.run_audit`: its figures in every
format, the HTML, PDF, JSON and CSV tables (:func:`build_report`), written to a folder
(:func:`write_report`)."""


from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from core.audit.results import AuditResult
from core.data.audit_data import AuditData
from core.data.validation import check_choice
from core.ensembles.summary import CredalComparison
from core.report.charts import (
    DRAWING_ORDER,
    REPORT_PAGES,
    AuditFigure,
    audit_figures,
    page_figures,
    slug,
    unique_keys,
)
from core.report.export import (
    FORMATS,
    PLOTLY_FILE,
    ExportError,
    export_figure,
    renderer,
    static_unavailable_reason,
)
from core.report.html import pio_plotlyjs, report_html
from core.report.pdf import html_to_pdf
from core.report.schema import csv_text, report_json, result_tables

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Report:
    """Everything a report consists of, in memory.

    ``figures`` maps a figure's key to its files by format; ``tables`` a table's file stem to
    its CSV text; ``pdf`` is ``None`` where no Chromium exists; ``notes`` says what was left
    out and why; ``seconds`` how long each step took.

    Attributes
    ----------
    html : str
        The self-contained HTML report.
    json : str
        ``results.json``.
    pdf : bytes or None
        The PDF, where Chromium exists.
    figures : dict
        Figure key → format → content.
    tables : dict of str to str
        CSV text by file stem.
    notes : tuple of str
        What was left out, and why.
    seconds : dict of str to float
        Time of each step.
    assets : dict of str to bytes
        Shared files (``plotly.min.js``).
    """

    html: str
    json: str
    pdf: bytes | None
    figures: dict[str, dict[str, bytes]]
    tables: dict[str, str]
    notes: tuple[str, ...] = ()
    seconds: dict[str, float] = field(default_factory=dict)
    assets: dict[str, bytes] = field(default_factory=dict)  # figures/<name>: plotly.js


def check_formats(formats: Sequence[str]) -> tuple[str, ...]:
    """Figure formats, each one of :data:`~core.report.export.FORMATS`, duplicates dropped.

    Parameters
    ----------
    formats : sequence of str
        Asked for.

    Returns
    -------
    tuple of str

    Raises
    ------
    ValueError
        An unknown format, naming the choices.
    """
    checked = []
    for fmt in formats:
        check_choice(str(fmt).strip().lower(), FORMATS, "figure format",
                     "choose from png, svg, pdf and html")
        if fmt not in checked:
            checked.append(str(fmt).strip().lower())
    return tuple(checked)


def render_figures(figures: Sequence[AuditFigure], formats: Sequence[str],
                   progress: Progress | None = None, shared_plotly: bool = False,
                   drawn: dict[str, dict[str, bytes]] | None = None
                   ) -> tuple[dict[str, dict[str, bytes]], tuple[str, ...]]:
    """Every figure in every format this machine can make; static formats are skipped, with
    a note saying why, where no Chromium exists (``shared_plotly``: HTML figures load
    plotly.js from one file beside them; ``drawn``: files already made, figure key → format
    → content, taken instead of drawn again).

    Parameters
    ----------
    figures : sequence of AuditFigure
        The figures.
    formats : sequence of str
        Formats asked for.
    progress : callable, optional
        ``progress(fraction, message)``.
    shared_plotly : bool, default False
        HTML figures load plotly.js from one shared file.
    drawn : dict, optional
        Files already made.

    Returns
    -------
    files : dict
        Figure key → format → content.
    notes : tuple of str
        What was skipped, and why.
    """
    formats = check_formats(formats)
    reason = static_unavailable_reason()
    usable = [f for f in formats if f == "html" or reason is None]
    notes = (reason,) if reason and len(usable) < len(formats) else ()
    drawn = drawn or {}
    jobs = [(item, fmt) for item in figures for fmt in usable]

    def draw(job: tuple[AuditFigure, str]) -> bytes:
        item, fmt = job
        made = drawn.get(item.key, {})  # a PNG or PDF is made from the figure's SVG, if drawn
        return made.get(fmt) or \
            export_figure(item.figure, fmt, item.title, shared_plotly, svg=made.get("svg"))

    # two at a time: this process prepares (and re-encodes) one figure while the browser
    # draws the other (measured 0.6 s faster for the 9 figures of a 10⁶-row audit)
    files: dict[str, dict[str, bytes]] = {item.key: {} for item in figures}
    with ThreadPoolExecutor(2) as pool:
        for k, ((item, fmt), content) in enumerate(zip(jobs, pool.map(draw, jobs),
                                                       strict=True)):
            if progress is not None:
                progress(k / max(1, len(jobs)), f"Figure {item.title} ({fmt.upper()})…")
            files[item.key][fmt] = content
    return files, notes


#: Figures of an audit report (a guess, for the progress bar while they are being built).
_EXPECTED_FIGURES = 9


def _built_and_drawn(result: AuditResult, audit: AuditData, progress: Progress
                     ) -> tuple[tuple[AuditFigure, ...], dict[str, bytes]]:
    """The audit's figures (:func:`~core.report.charts.audit_figures`) and their SVG images,
    each figure sent to the browser as soon as its page's figures are built, so that
    building the next ones (the LCB trends' bootstrap, plotly's templates) runs while the
    browser draws."""
    pages: dict[str, list] = {}  # page → its figures with their drawings, in DRAWING_ORDER
    done = 0
    with ThreadPoolExecutor(2) as pool:
        for name, page in zip(DRAWING_ORDER, page_figures(result, audit, DRAWING_ORDER),
                              strict=True):
            pages[name] = [(item, pool.submit(export_figure, item.figure, "svg", item.title))
                           for item in page]
            for item in page:
                done += 1
                progress(min(0.9, done / _EXPECTED_FIGURES), f"Figure {item.title} (SVG)…")
        in_order = [pair for name in REPORT_PAGES for pair in pages[name]]  # the report's order
        figures = tuple(unique_keys([item for item, _ in in_order]))  # keys made unique
        images = {item.key: job.result() for item, (_, job) in zip(figures, in_order,
                                                                   strict=True)}
    progress(1.0, "Figures drawn")
    return figures, images


def build_report(result: AuditResult, audit: AuditData, comparison: pd.DataFrame | None = None,
                 formats: Sequence[str] = FORMATS, pdf: bool = True,
                 figures: Sequence[AuditFigure] | None = None,
                 progress: Progress | None = None, user: str | None = None,
                 credal: CredalComparison | None = None,
                 shared_plotly: bool = False) -> Report:
    """The report of ``result``: HTML, PDF (where Chromium exists), JSON, figures, tables.

    Parameters
    ----------
    result : AuditResult
        From :func:`core.audit.run_audit`.
    audit : AuditData
        The data it ran on.
    comparison : pandas.DataFrame, optional
        The recalibration comparison (columns of
        :data:`core.report.schema.COMPARISON_COLUMNS`); ``None``: the section says it was
        not run.
    formats : sequence of str, optional
        Figure files to make (``png``, ``svg``, ``pdf``, ``html``); empty: none.
    pdf : bool, optional
        Print the report to PDF (needs Chromium).
    figures : sequence of AuditFigure, optional
        The figures (default: :func:`~core.report.charts.audit_figures`).
    progress : callable, optional
        ``progress(fraction, message)``.
    user : str, optional
        The signed-in user, recorded in the provenance (:mod:`core.report.provenance`).
    credal : CredalComparison, optional
        The credal-set tests of the ensemble members
        (:func:`core.ensembles.compare_ensemble`); ``None``: data with members get a
        sentence that they were not run.
    shared_plotly : bool, optional
        HTML figures (and an interactive report) load one ``figures/plotly.js`` of the
        report's folder instead of each holding its own copy.

    Returns
    -------
    Report
    """
    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(fraction, message)

    seconds: dict[str, float] = {}
    start = time.perf_counter()
    report(0.0, "Drawing the figures…")
    # the report's own images first: its PDF is printed while the figure files are drawn
    reason = static_unavailable_reason()
    images, html_notes = None, ()
    if figures is None and reason is None:
        figures, images = _built_and_drawn(result, audit, lambda f, m: report(0.3 * f, m))
    elif figures is None:
        figures = audit_figures(result, audit)
    figures = tuple(figures)
    if reason is None and images is None:
        svg, _ = render_figures(figures, ("svg",), lambda f, m: report(0.3 * f, m))
        images = {key: by_format["svg"] for key, by_format in svg.items()}
    created = dt.datetime.now(dt.timezone.utc)
    if reason is not None:
        where = f"figures/{PLOTLY_FILE} of the report's folder" if shared_plotly else "inline"
        html_notes = (f"The HTML report is interactive (plotly.js {where}) because its "
                      "figures could not be drawn as images: " + reason,)
    plotly_src = f"figures/{PLOTLY_FILE}" if shared_plotly and images is None else None
    seconds["images"] = time.perf_counter() - start
    start = time.perf_counter()
    report(0.3, "Writing the HTML report…")
    html = report_html(result, audit, figures, images, comparison, created, user=user,
                       credal=credal, plotly_src=plotly_src)
    seconds["html"] = time.perf_counter() - start

    # Chromium prints the PDF while the figure files are drawn, on a tab of the browser that
    # drew the report's figures (a report without drawn figures: in a process of its own);
    # this process writes the JSON and CSV tables meanwhile (it mostly waits for the browser)
    def tables_text() -> tuple[str, dict[str, str]]:
        return (report_json(result, audit, comparison, created, user=user, credal=credal),
                {slug(name): csv_text(frame)
                 for name, frame in result_tables(result, comparison, credal).items()})

    with ThreadPoolExecutor(2, thread_name_prefix="report-beside") as beside:
        printing = beside.submit(html_to_pdf, html, renderer=renderer() if images else None) \
            if pdf else None
        writing = beside.submit(tables_text)
        start = time.perf_counter()
        drawn = {key: {"svg": image} for key, image in (images or {}).items()}
        files, notes = render_figures(
            figures, formats, progress=lambda f, m: report(0.35 + 0.5 * f, m),
            shared_plotly=shared_plotly, drawn=drawn)
        notes += html_notes
        seconds["figures"] = time.perf_counter() - start
        report(0.85, "Writing the JSON and CSV tables…")
        json_text, tables = writing.result()

        pdf_bytes = None
        if printing is not None:
            start = time.perf_counter()
            report(0.95, "Printing the report to PDF…")
            try:
                pdf_bytes = printing.result()
            except ExportError as error:
                notes += (f"No PDF report: {error}",)
            seconds["pdf"] = time.perf_counter() - start  # left after the figure files
    report(1.0, "Report ready")
    assets = {}
    if shared_plotly and (plotly_src or any("html" in by_format for by_format in files.values())):
        assets[PLOTLY_FILE] = pio_plotlyjs().encode("utf-8")
    return Report(html, json_text, pdf_bytes, files, tables, tuple(notes), seconds, assets)


def write_report(report: Report, folder: str | Path) -> list[Path]:
    """Write ``report.html``, ``report.pdf`` (if any), ``results.json``,
    ``figures/<key>.<format>`` (with ``figures/plotly.min.js`` when the report shares one
    copy of plotly.js) and ``tables/<name>.csv`` into ``folder`` (created if needed).

    Parameters
    ----------
    report : Report
        What :func:`build_report` returned.
    folder : str or pathlib.Path
        Where to write.

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    folder = Path(folder)
    written = []

    def put(path: Path, content: str | bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_bytes(content)
        written.append(path)

    put(folder / "report.html", report.html)
    if report.pdf is not None:
        put(folder / "report.pdf", report.pdf)
    put(folder / "results.json", report.json)
    for name, content in report.assets.items():
        put(folder / "figures" / name, content)
    for key, by_format in report.figures.items():
        for fmt, content in by_format.items():
            put(folder / "figures" / f"{key}.{fmt}", content)
    for name, text in report.tables.items():
        put(folder / "tables" / f"{name}.csv", text)
    return written
