"""Small Streamlit building blocks shared by several pages."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.data import AuditData, ValidationNote


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
    if audit.split is not None:
        parts = {p: int((audit.split == p).sum()) for p in ("train", "calibration", "test")}
        lines.append("split: " + ", ".join(f"{k} {v:,}" for k, v in parts.items() if v))
    st.caption("  \n".join(lines))


def validation_report(notes: tuple[ValidationNote, ...] | list[ValidationNote]) -> None:
    """Show what validation found and repaired; a clean dataset says so."""
    if not notes:
        st.success("All checks passed; nothing had to be repaired.", icon=":material/check:")
        return
    for note in notes:
        if note.level == "warning":
            st.warning(note.message, icon=":material/build:")
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


def verdict(p_value: float, alpha: float, reject: str, accept: str, notion: str) -> None:
    """A plain-language reading of a test at level α."""
    text = f"at α = {alpha:g} (p = {p_value:.4f}, notion: {notion})."
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
