"""The model-comparison report: the Compare models page's sections as one self-contained HTML
file (and PDF where Chromium exists), ``comparison.json`` and CSV tables.

Sections, top to bottom: the verdict, the data and settings, the paired differences with
their intervals and p-values, each model's KLCE test, the overlaid reliability diagrams, the
per-group dumbbell chart and table, and the slices where the challenger is worse. Text is
escaped (:func:`html.escape`), and CSV/JSON cells never start a spreadsheet formula
(:mod:`core.report.schema`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence
from html import escape

import pandas as pd

import core
from core.compare.comparison import CompareSettings, ComparisonResult
from core.compare.decision import decide
from core.data.audit_data import AuditData
from core.figures.compare import differences_figure, dumbbell_figure, reliability_overlay_figure
from core.figures.style import apply_style, caption_text
from core.report.building import Report, render_figures
from core.report.charts import AuditFigure
from core.report.export import ExportError, export_figure, static_unavailable_reason
from core.report.html import STYLE, figure_block, key_value_html, pio_plotlyjs, table_html
from core.report.pdf import html_to_pdf
from core.report.schema import SCHEMA_VERSION, csv_text, indented_json, jsonable

Progress = Callable[[float, str], None]
DIFFERENCE_COLUMNS = ["name", "value_a", "value_b", "difference", "ci_low", "ci_high",
                      "p_value", "method"]
SLICE_COLUMNS = ["slice", "criterion", "rows", "value_a", "value_b", "difference", "ci_low",
                 "ci_high", "p_adjusted", "direction", "bias_a", "bias_b"]


def comparison_figures(result: ComparisonResult) -> list[AuditFigure]:
    """The page's figures, styled, with their caption lines."""
    caption = caption_text(notion=result.parameters.get("notion"), n=result.n,
                           extra=f"{result.champion} (A) vs {result.challenger} (B), "
                                 f"α = {result.alpha:g}")
    figures = [("compare_differences", "Paired differences (B − A)",
                differences_figure(result.table, result.alpha)),
               ("compare_reliability", "Reliability of both models",
                reliability_overlay_figure(result))]
    if not result.groups.empty:
        figures.append(("compare_groups", "Per group: champion → challenger (Brier score)",
                        dumbbell_figure(result, "brier")))
    return [AuditFigure(key, title, apply_style(figure, caption), caption)
            for key, title, figure in figures]


def comparison_tables(result: ComparisonResult) -> dict[str, pd.DataFrame]:
    """The CSV tables: ``comparison`` (one row a criterion), ``comparison_klce`` (each model's
    KLCE test), ``comparison_slices`` (every group and slice)."""
    return {"comparison": result.table, "comparison_klce": result.klce_tests,
            "comparison_slices": result.slices}


def comparison_html(result: ComparisonResult, audit: AuditData, settings: CompareSettings,
                    figures: Sequence[AuditFigure], images: dict[str, bytes] | None,
                    created: dt.datetime) -> str:
    """The self-contained HTML document (figures as images, or interactive without them)."""
    blocks = {f.key: figure_block(f, images) for f in figures}
    bad = result.worse_slices()
    level = "problem" if result.worse() or not bad.empty else "ok"
    decision = decide(result)
    klce = table_html(result.klce_tests) if not result.klce_tests.empty else \
        "<p class=\"muted\">The KLCE criterion was not compared.</p>"
    groups = result.groups[SLICE_COLUMNS]
    worse = table_html(bad[SLICE_COLUMNS]) if not bad.empty else (
        f"<p>In none of the {result.slices['slice'].nunique()} groups and slices compared is "
        "the challenger significantly worse.</p>")
    values = {**dataclasses.asdict(settings), "champion": result.champion,
              "rows compared": result.n}
    values.update({k: v for k, v in result.parameters.items() if k not in values})
    settings_pairs = [(k, ", ".join(map(str, v)) or "—" if isinstance(v, tuple) else
                       v if isinstance(v, (int, float, str)) else str(v))
                      for k, v in values.items()]
    script = "" if images is not None else \
        f'<script type="text/javascript">{pio_plotlyjs()}</script>'
    body = "".join([
        f"<h1>Model comparison: {escape(result.challenger)} against "
        f"{escape(result.champion)}</h1>",
        f"<p class=\"meta\">{escape(audit.name)} · created "
        f"{escape(created.strftime('%Y-%m-%d %H:%M UTC'))} by Calibration Atlas "
        f"{escape(core.__version__)} · fingerprint <code>{escape(audit.fingerprint)}</code></p>",
        "<h2>Verdict</h2>",
        f"<p class=\"headline\"><strong>{escape(decision.headline)}</strong></p>",
        "<ul>" + "".join(f"<li>{escape(r)}</li>" for r in decision.reasons) + "</ul>",
        f"<p class=\"caption\">Rule: {escape(decision.rule)}</p>",
        f"<ul class=\"findings\"><li class=\"{level}\">{escape(result.verdict)}</li></ul>",
        "<h2>Settings</h2>", key_value_html(settings_pairs),
        "<h2>Paired differences (challenger − champion)</h2>",
        table_html(result.table[DIFFERENCE_COLUMNS]),
        f"<p class=\"caption\">{1 - result.alpha:.0%} intervals; every criterion is a loss, so "
        "a negative difference favours the challenger.</p>",
        blocks.get("compare_differences", ""),
        "<h3>Each model's KLCE test of local calibration</h3>", klce,
        "<h2>Reliability</h2>", blocks.get("compare_reliability", ""),
        "<h2>Per group</h2>",
        blocks.get("compare_groups", "") + table_html(groups) if not groups.empty else
        "<p class=\"muted\">No group attributes were given.</p>",
        "<h2>Where the challenger is worse</h2>", worse,
        "<p class=\"caption\">Adjusted p-values and simultaneous intervals: max-|T| over every "
        "group and slice compared (family-wise error ≈ α, measured 0.058 at α = 0.05).</p>",
    ])
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Model comparison: {escape(result.challenger)}</title>"
            f"<style>{STYLE}</style>{script}</head><body>{body}</body></html>")


def comparison_json(result: ComparisonResult, audit: AuditData, settings: CompareSettings,
                    created: dt.datetime) -> str:
    document = {
        "schema": "calibration-atlas/model-comparison", "version": SCHEMA_VERSION,
        "created": created.isoformat(), "data": audit.name, "fingerprint": audit.fingerprint,
        "settings": settings, "champion": result.champion, "challenger": result.challenger,
        "rows": result.n, "alpha": result.alpha, "verdict": result.verdict,
        "decision": decide(result).decision, "headline": decide(result).headline,
        "worse_criteria": result.worse(), "parameters": result.parameters,
        "differences": result.table, "klce_tests": result.klce_tests,
        "critical_value": result.critical, "slices": result.slices,
    }
    return indented_json(jsonable(document))


def build_comparison_report(result: ComparisonResult, audit: AuditData,
                            settings: CompareSettings, formats: Sequence[str] = (),
                            pdf: bool = True, progress: Progress | None = None):
    """The comparison report as a :class:`core.report.Report` (``write_report`` writes it:
    ``report.html``, ``report.pdf``, ``results.json`` — here the comparison's JSON —,
    ``figures/*`` and ``tables/*.csv``).

    Parameters
    ----------
    result : ComparisonResult
        The paired comparison.
    audit : AuditData
        The data compared on.
    settings : CompareSettings
        Its settings.
    formats : sequence of str, default ()
        Figure formats to export.
    pdf : bool, default True
        Whether to print the PDF.
    progress : callable, optional
        ``progress(fraction, message)``.
    """
    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(fraction, message)

    figures = comparison_figures(result)
    files, notes = render_figures(figures, formats, lambda f, m: report(0.6 * f, m))
    images = None
    if static_unavailable_reason() is None:
        images = {f.key: files.get(f.key, {}).get("svg") or export_figure(f.figure, "svg")
                  for f in figures}
    created = dt.datetime.now(dt.timezone.utc)
    report(0.7, "Writing the HTML report…")
    html = comparison_html(result, audit, settings, figures, images, created)
    pdf_bytes = None
    if pdf:
        report(0.8, "Printing the report to PDF…")
        try:
            pdf_bytes = html_to_pdf(html)
        except ExportError as error:
            notes += (f"No PDF report: {error}",)
    tables = {name: csv_text(frame) for name, frame in comparison_tables(result).items()}
    report(1.0, "Report ready")
    return Report(html, comparison_json(result, audit, settings, created), pdf_bytes, files,
                  tables, tuple(notes))
