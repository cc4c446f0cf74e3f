"""The colours the figures share: observed and predicted, bands, gaps, groups and methods.
"""

from __future__ import annotations

from collections.abc import Iterable

OBSERVED_COLOR = "#1f5f8b"
PREDICTED_COLOR = "#f4b942"
BAND_COLOR = "rgba(31, 95, 139, 0.13)"
GAP_COLOR = "#c0392b"


# --------------------------------------------------------------------------- local calibration

#: Groups and ensemble members, in order: the first five are distinct hues (blue, red,
#: yellow, green, purple), so the common case of up to five never shows two near-twins.
GROUP_COLORS = ("#1f5f8b", "#d1495b", "#edae49", "#3f9142", "#6a4c93", "#00798c", "#8d6a9f",
                "#2e4057")


def with_alpha(hex_color: str | None, alpha: float) -> str:
    hex_color = (hex_color or OBSERVED_COLOR).lstrip("#")
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r}, {g}, {b}, {alpha})"


# --------------------------------------------------------------------------- recalibration

#: The uncalibrated model, the baseline every method is compared with.
BASELINE_COLOR = "#7f8c8d"
#: One qualitative palette for the methods (Tableau 20 without its greys: nine strong
#: colours, then their light partners), so that every method of the registry gets its own.
METHOD_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                 "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
                 "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5")


def method_colors(names: Iterable[str], baseline: str = "uncalibrated") -> dict[str, str]:
    """Each method's colour, the same in every chart of a comparison: ``baseline`` grey, the
    others in order from ``METHOD_COLORS`` (distinct up to its 18 colours, then again
    from the start).

    Parameters
    ----------
    names : iterable of str
        The methods, in the comparison's order.
    baseline : str, default "uncalibrated"
        The method drawn in grey.

    Returns
    -------
    dict of str to str
    """
    others = [name for name in dict.fromkeys(names) if name != baseline]
    colors = {name: METHOD_COLORS[k % len(METHOD_COLORS)] for k, name in enumerate(others)}
    return {baseline: BASELINE_COLOR, **colors}
