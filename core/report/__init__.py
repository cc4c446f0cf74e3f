"""Figure export and the audit report (HTML, PDF, JSON) built from one
:func:`~core.audit.run_audit`.

Modules, one concept each:

* :mod:`~core.report.export` — a figure as PNG (scale 2), SVG, PDF (kaleido, one Chromium
  per process) or standalone HTML;
* :mod:`~core.report.charts` — the audit's figures, styled and captioned;
* :mod:`~core.report.summary` — the plain-language findings;
* :mod:`~core.report.provenance` — versions, engine, data fingerprint and user of a report;
* :mod:`~core.report.schema` — the versioned JSON and the CSV tables, escaped against
  spreadsheet formulas (documented in ``docs/report-schema.md``);
* :mod:`~core.report.html` — the self-contained HTML report;
* :mod:`~core.report.pdf` — Chromium's print to PDF of that report.

:mod:`~core.report.building` puts them together: :func:`build_report` (the command line
and the app's Export page call it); :func:`write_report` writes ``report.html``,
``report.pdf``, ``results.json``, ``figures/*`` and ``tables/*.csv`` into a folder.
"""

from core.report.building import Report, build_report, check_formats, render_figures, write_report
from core.report.charts import audit_figures
from core.report.comparison import build_comparison_report
from core.report.export import (
    FORMATS,
    MIME_TYPES,
    ExportError,
    available_formats,
    export_figure,
    static_unavailable_reason,
    zip_archive,
)
from core.report.schema import csv_text

__all__ = [
    "FORMATS",
    "MIME_TYPES",
    "ExportError",
    "Report",
    "audit_figures",
    "available_formats",
    "build_comparison_report",
    "build_report",
    "check_formats",
    "csv_text",
    "export_figure",
    "render_figures",
    "static_unavailable_reason",
    "write_report",
    "zip_archive",
]
