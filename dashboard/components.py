"""Small Streamlit building blocks shared by several pages."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.data import AuditData, ValidationNote
from core.figures import apply_style
from core.kernels import computation_summary as summary
from core.report import (
    MIME_TYPES,
    ExportError,
    available_formats,
    export_figure,
    static_unavailable_reason,
)
from core.stattests import p_text
from dashboard.state import (
    export_file,
    forget_table,
    request_exact,
    set_audited_model,
    set_export_file,
    stored_token,
    take_notice,
)


def dataset_card(audit: AuditData, source: str) -> None:
    """Sidebar summary of the active dataset."""
    st.markdown("**Active dataset**")
    st.markdown(f"{audit.name}")
    st.caption(source)
    kind = "binary" if audit.is_binary else f"{audit.n_classes} classes"
    lines = [f"{audit.n:,} rows · {kind}"]
    if audit.feature_frame.shape[1]:
        lines.append("features: " + ", ".join(audit.feature_frame.columns))
    if audit.groups.shape[1]:
        lines.append("groups: " + ", ".join(audit.groups.columns))
    if len(audit.model_names) > 1:
        lines.append("models: " + ", ".join(audit.model_names))
    if audit.split is not None:
        parts = {p: int((audit.split == p).sum()) for p in ("train", "calibration", "test")}
        lines.append("split: " + ", ".join(f"{k} {v:,}" for k, v in parts.items() if v))
    st.caption("  \n".join(lines))
    leakage = [note for note in audit.report if note.topic == "leakage"]
    if leakage:
        st.warning(f"The reference model behind this table learned from column"
                   f"{'s' if len(leakage) != 1 else ''} that may hold the outcome "
                   f"({len(leakage)} warning{'s' if len(leakage) != 1 else ''} in the Data "
                   "page's validation report): every result here may look better than the "
                   "truth.", icon=":material/warning:")


def stored_table_panel(key: str = "forget_table") -> None:
    """Under the dataset card: whether the table is stored on the server for a reload, and
    the button that deletes it (:mod:`dashboard.workspace`); ``key`` is the button's (the
    card is drawn before and after the page)."""
    notice = take_notice()
    if notice:
        st.warning(notice, icon=":material/history:")
    if stored_token() is None:
        return
    st.caption("Kept on this server with its mapping and settings: the link in the address "
               "bar brings it back after a reload or a restart. Share that link only with "
               "people who may see this table.")
    st.button("Forget this table", key=key, icon=":material/delete:", on_click=forget_table,
              help="Deletes the stored file, its mapping and settings from the server now, "
                   "and goes back to the demo.")


def model_picker(audit: AuditData) -> None:
    """Sidebar choice of the model every page audits, for tables with several prediction sets
    (the Compare models page compares two of them)."""
    names = list(audit.model_names)
    if len(names) < 2:
        return
    key = "audited_model_" + audit.with_model(names[0]).fingerprint  # one key a table
    if st.session_state.get(key) not in names:
        st.session_state[key] = audit.model
    chosen = st.selectbox("Audited model", names, key=key,
                          help="Every page audits this model's predictions; the Compare "
                               "models page compares it with another.")
    if chosen != audit.model:
        set_audited_model(chosen)


def validation_report(notes: tuple[ValidationNote, ...] | list[ValidationNote]) -> None:
    """Show what validation found and repaired; a clean dataset says so."""
    if not notes:
        st.success("All checks passed; nothing had to be repaired.", icon=":material/check:")
        return
    for note in notes:
        if note.level == "warning":
            icon = ":material/warning:" if note.topic == "leakage" else ":material/build:"
            st.warning(note.message, icon=icon)
        else:
            st.info(note.message, icon=":material/info:")


def analysis_part(audit: AuditData, key: str) -> tuple[AuditData, str]:
    """Split selector: the test split by default when the data has one, else all rows."""
    if audit.split is None:
        return audit, "all rows"
    parts = [p for p in ("test", "calibration", "train") if np.any(audit.split == p)]
    options = [*parts, "all rows"]
    part = st.radio("Rows", options, horizontal=True, key=key,
                    help="Audits use held-out rows: the test split by default.")
    return (audit if part == "all rows" else audit.split_part(part)), part


def verdict(p_value: float, alpha: float, reject: str, accept: str, notion: str,
            n_resamples: int = 0) -> None:
    """A plain-language reading of a test at level α (its p-value as
    :func:`core.stattests.result.p_text` writes it: ``p ≤ 1/(B+1)`` at the floor)."""
    text = f"at α = {alpha:g} ({p_text(p_value, n_resamples)}, notion: {notion})."
    if p_value <= alpha:
        st.error(f"{reject} {text}", icon=":material/warning:")
    else:
        st.success(f"{accept} {text}", icon=":material/check_circle:")


def class_picker(audit: AuditData, key: str) -> int | None:
    """Class for one-vs-rest analyses: ``None`` (the positive class) for binary data."""
    if audit.is_binary:
        st.caption(f"Binary: testing P(y = {audit.classes[1]}).")
        return None
    return st.selectbox("Class (one vs rest)", range(audit.n_classes),
                        format_func=lambda i: audit.classes[i], key=key)


def chart(figure: go.Figure, key: str, caption: str = "", title: str = "") -> None:
    """Draw a figure in the project's template with an export control beside it.

    The one-line replacement of ``st.plotly_chart(figure, width="stretch", key=key)``.
    ``caption`` (see :func:`core.figures.style.caption_text`) is drawn under exported figures
    only, so that a file stands on its own; ``title`` names the HTML export.
    """
    st.plotly_chart(apply_style(figure), width="stretch", key=key)
    export_control(figure, key, caption, title)


@st.fragment
def export_control(figure: go.Figure, key: str, caption: str = "", title: str = "") -> None:
    """PNG (scale 2), SVG, PDF or standalone HTML of one figure, in a fragment so that an
    export never reruns the page."""
    formats = available_formats()
    with st.popover("Export", icon=":material/download:"):
        fmt = st.radio("Format", formats, horizontal=True, key=f"{key}_export_format",
                       format_func=str.upper)
        reason = static_unavailable_reason()
        if reason:
            st.caption(reason)
        if st.button("Prepare file", key=f"{key}_export_prepare"):
            with st.spinner(f"Drawing the figure as {fmt.upper()}…"):
                try:
                    data = export_figure(apply_style(figure, caption), fmt, title or key)
                except ExportError as error:
                    st.error(str(error), icon=":material/error:")
                    return
            set_export_file(key, f"{key}.{fmt}", data)
        prepared = export_file(key)
        if prepared is not None and prepared[0] == f"{key}.{fmt}":
            st.download_button(f"Download {prepared[0]}", prepared[1], file_name=prepared[0],
                               mime=MIME_TYPES[fmt], on_click="ignore",
                               key=f"{key}_export_download", icon=":material/download:")


def computation_note(parameters: dict, key: str, fingerprint: str,
                     exact_estimate: float | None = None) -> None:
    """One sentence on which computation ran (:func:`core.kernels.computation.summary`) and, when it
    was an approximation, a button that reruns the page exactly, with its estimated time
    (``exact_estimate``, else the result's ``parameters["exact_seconds"]``)."""
    if exact_estimate is None:
        exact_estimate = parameters.get("exact_seconds", float("nan"))
    if parameters.get("computation", "exact") == "exact":
        st.caption(summary(parameters))
        return
    left, right = st.columns([3, 1])
    left.info(summary(parameters), icon=":material/speed:")
    if right.button(f"Run exact ({about(exact_estimate)} here)", key=f"{key}_exact",
                    help="The exact O(n²) kernel sums through the tile engine (or the "
                         "configured Dask cluster / GPU); the page waits until they finish."):
        request_exact(key, fingerprint)
        st.rerun()


def about(seconds: float) -> str:
    """An estimated duration in words: ``about 40 s``, ``about 12 min``, ``about 3.5 h``."""
    if seconds < 90:
        return f"about {max(seconds, 1):.0f} s"
    if seconds < 90 * 60:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"
