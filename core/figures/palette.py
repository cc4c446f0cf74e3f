"""The colours the figures share: observed and predicted, bands, gaps, groups and methods.
"""

from __future__ import annotations

OBSERVED_COLOR = "#1f5f8b"
PREDICTED_COLOR = "#f4b942"
BAND_COLOR = "rgba(31, 95, 139, 0.13)"
GAP_COLOR = "#c0392b"


# --------------------------------------------------------------------------- local calibration

GROUP_COLORS = ("#1f5f8b", "#d1495b", "#edae49", "#00798c", "#6a4c93", "#66a182", "#8d6a9f",
                "#2e4057")


def with_alpha(hex_color: str | None, alpha: float) -> str:
    hex_color = (hex_color or OBSERVED_COLOR).lstrip("#")
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r}, {g}, {b}, {alpha})"


# --------------------------------------------------------------------------- recalibration

METHOD_COLORS = ("#7f8c8d", "#1f5f8b", "#d1495b", "#edae49", "#00798c", "#6a4c93", "#66a182",
                 "#8d6a9f", "#2e4057", "#c0392b", "#16a085", "#e67e22", "#34495e", "#9b59b6",
                 "#27ae60", "#b9770e", "#5d6d7e")

