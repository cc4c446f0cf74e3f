"""Export page: every figure as PNG/SVG/PDF/HTML, and the audit report (HTML, PDF, JSON)."""

from __future__ import annotations

import dataclasses

import streamlit as st

from core.report import (
    MIME_TYPES,
    ExportError,
    available_formats,
    build_report,
    render_figures,
    zip_archive,
)
from core.report import static_unavailable_reason as no_static_reason
from dashboard.access import signed_in_user
from dashboard.cache import diagnostics
from dashboard.state import (
    active_audit,
    credal_comparison,
    export_file,
    recalibration_comparison,
    set_export_file,
)
from dashboard.whole_audit import whole_audit

REPORT_FILES = {"HTML": ("report.html", "html"), "PDF": ("report.pdf", "pdf"),
                "JSON": ("results.json", "json"), "CSV tables": ("tables.zip", "zip")}


def download(slot: str, label: str = "Download") -> None:
    """A download button for the file prepared under ``slot``, if any."""
    prepared = export_file(slot)
    if prepared is not None:
        name, data = prepared
        st.download_button(f"{label} {name}", data, file_name=name,
                           mime=MIME_TYPES[name.rsplit(".", 1)[1]], on_click="ignore",
                           key=f"{slot}_download", icon=":material/download:")


@st.fragment
def figures_panel(figures) -> None:
    st.header("Figures")
    titles = {f.key: f.title for f in figures}
    formats = available_formats()
    left, right = st.columns([3, 2])
    chosen = left.multiselect("Figures", list(titles), default=list(titles),
                              format_func=titles.get, key="export_figures")
    kinds = right.multiselect("Formats", formats, default=[formats[0]], format_func=str.upper,
                              key="export_formats")
    if st.button("Prepare the files", key="export_prepare_figures",
                 disabled=not chosen or not kinds):
        bar = st.progress(0.0, text="Drawing the figures…")
        try:
            files, _ = render_figures([f for f in figures if f.key in chosen], kinds,
                                      progress=lambda f, m: bar.progress(f, text=m))
        except ExportError as error:
            st.error(str(error), icon=":material/error:")
            return
        bar.empty()
        flat = {f"{key}.{fmt}": data for key, by_format in files.items()
                for fmt, data in by_format.items()}
        name, data = next(iter(flat.items())) if len(flat) == 1 else \
            ("figures.zip", zip_archive({f"figures/{k}": v for k, v in flat.items()}))
        set_export_file("export_figure_files", name, data)
    download("export_figure_files")
    st.caption("PNG at twice the figure's size; SVG and PDF are vector graphics; HTML is "
               "interactive with plotly.js inside the file. Each figure carries a caption line "
               "(notion, bandwidths, rows, n).")


@st.fragment
def report_panel(result, audit, figures) -> None:
    st.header("Audit report")
    kinds = [k for k in REPORT_FILES if k != "PDF" or no_static_reason() is None]
    chosen = st.multiselect("Files", kinds, default=kinds, key="export_report_files")
    comparison = recalibration_comparison()
    credal = credal_comparison(audit.fingerprint)
    ensemble = "" if audit.members is None else (
        " and the Ensembles page's credal-set test" if credal is not None else
        " and a note that the credal-set test was not run (open the Ensembles page first)")
    st.caption("Summary of findings, the data's fingerprint, every setting, metric and test, "
               "the local findings, "
               + ("the recalibration comparison" if comparison is not None else
                  "a note that no recalibration comparison was run") + ensemble + ".")
    if st.button("Build the report", type="primary", key="export_build_report",
                 disabled=not chosen):
        bar = st.progress(0.0, text="Building the report…")
        report = build_report(result, audit, comparison, formats=(), pdf="PDF" in chosen,
                              figures=figures, progress=lambda f, m: bar.progress(f, text=m),
                              user=signed_in_user(), credal=credal)
        bar.empty()
        contents = {"HTML": report.html.encode("utf-8"), "PDF": report.pdf,
                    "JSON": report.json.encode("utf-8"),
                    "CSV tables": zip_archive({f"{k}.csv": v.encode("utf-8")
                                               for k, v in report.tables.items()})}
        for kind in chosen:
            if contents[kind] is not None:
                set_export_file(f"export_report_{kind}", REPORT_FILES[kind][0], contents[kind])
        for note in report.notes:
            st.warning(note, icon=":material/info:")
    columns = st.columns(len(REPORT_FILES))
    for column, kind in zip(columns, REPORT_FILES, strict=True):
        if kind in chosen:
            with column:
                download(f"export_report_{kind}")


st.title("Export")
st.caption("Every figure as PNG, SVG, PDF or standalone HTML, and a self-contained audit report "
           "(HTML, PDF, JSON) of the active dataset at the settings of every page. The same "
           "audit runs headless with `calibration-atlas audit`.")
audit = active_audit()
result, differences = whole_audit(audit, key="export_run")
reason = no_static_reason()
if reason:
    st.warning(reason + " The report is written as interactive HTML.", icon=":material/info:")
# the report says which settings two pages chose differently (the audit holds one of each)
result = dataclasses.replace(result, notes=result.notes + differences)
bar = st.progress(1.0, text="Drawing the figures…")
figures = diagnostics.audit_figures(result, audit)
bar.empty()
st.success(f"Audit of {result.rows:,} rows ({result.part}) of {result.dataset}: "
           f"{len(figures)} figures.", icon=":material/check:")
figures_panel(figures)
report_panel(result, audit, figures)
