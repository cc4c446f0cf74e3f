"""Small audit tables and file checks shared by the report, CLI and export-page tests."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pypdfium2 as pdfium

from core.audit import AuditSettings

#: Small resample counts so one audit takes seconds.
FAST = AuditSettings(n_bootstrap=30, test_resamples=60, grid_resamples=30)
#: A hand-made recalibration comparison with the columns of core.recalibration.ranking.
COMPARISON = pd.DataFrame({
    "method": ["uncalibrated", "temperature", "isotonic"],
    "accuracy": [0.71, 0.71, 0.72], "brier": [0.201, 0.190, 0.188],
    "nll": [0.61, 0.57, 0.58], "ece": [0.061, 0.022, 0.015], "mce": [0.15, 0.07, 0.06],
    "mlce": [0.30, 0.21, 0.19], "klce_p": [0.001, 0.004, 0.31],
    "max_group_mce": [0.25, 0.18, 0.12], "fit_seconds": [0.0, 0.01, 0.02],
})


def audit_table(n: int = 400, seed: int = 5) -> pd.DataFrame:
    """A binary audit table with a numeric and a categorical feature, a group attribute and a
    calibration/test split; the model is biased for ``grp == '=c'`` (a level that looks like a
    spreadsheet formula, to test the escaping)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n)
    grp = rng.choice(["a", "b", "=c"], n)
    p = 1 / (1 + np.exp(-(age - 50) / 15))
    truth = np.clip(p + 0.25 * (grp == "=c"), 0, 1)
    return pd.DataFrame({
        "y": (rng.random(n) < truth).astype(int), "p": np.round(p, 6), "age": age,
        "sex": rng.choice(["female", "male"], n), "grp": grp,
        "split": np.where(np.arange(n) % 2 == 0, "calibration", "test"),
    })


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (the file must be a PNG)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def parse_svg(data: bytes) -> ET.Element:
    root = ET.fromstring(data)
    assert root.tag.endswith("svg"), root.tag
    return root


def pdf_pages(pdf: bytes, scale: float = 1.0) -> list[np.ndarray]:
    """Every page of a PDF rendered by PDFium at ``scale``, RGB."""
    document = pdfium.PdfDocument(pdf)
    try:
        return [np.asarray(document[k].render(scale=scale).to_numpy(), dtype=np.uint8)
                for k in range(len(document))]
    finally:
        document.close()


def pdf_page_is_drawn(pdf: Path, folder: Path) -> bool:
    """Render page 1 with PDFium (the ``pypdfium2`` test dependency, no program outside the
    virtual environment) and say whether it holds anything but white. ``folder`` is kept for
    the callers' signature; nothing is written there."""
    assert pdf.read_bytes()[:5] == b"%PDF-"
    document = pdfium.PdfDocument(str(pdf))
    try:
        page = document[0]
        bitmap = page.render(scale=30 / 72, grayscale=True)
        pixels = np.asarray(bitmap.to_numpy(), dtype=np.uint8)
    finally:
        document.close()
    return bool((pixels < 200).mean() > 0.001)
