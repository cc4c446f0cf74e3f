"""Figures of the Findings page: the slices' gaps with their intervals (a forest plot), the
depth-2 slices as a treemap coloured by gap, one slice's reliability diagram against the rest
of the data, and its local calibration bias against the rest.
"""

from __future__ import annotations

from html import escape

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.figures.palette import GAP_COLOR, OBSERVED_COLOR, PREDICTED_COLOR, with_alpha
from core.local.slice_discovery import SliceDiscovery

#: Colours of a slice's status in the forest plot.
STATUS_COLORS = {"finding": GAP_COLOR, "listed under a finding": PREDICTED_COLOR,
                 "not flagged": "#7f8c8d"}
#: Diverging colour scale of gaps: blue where the model overestimates, red where it
#: underestimates the rate.
GAP_SCALE = [[0.0, "#2166ac"], [0.5, "#f7f7f7"], [1.0, "#b2182b"]]


def slice_status(table: pd.DataFrame) -> pd.Series:
    """``finding``, ``listed under a finding`` or ``not flagged``, row by row."""
    status = np.where(table["finding"], "finding",
                      np.where(table["significant"], "listed under a finding", "not flagged"))
    return pd.Series(status, index=table.index)


def slice_forest_figure(table: pd.DataFrame, max_rows: int = 25,
                        interval: str = "simultaneous 95% interval") -> go.Figure:
    """Gap (observed − predicted) of the first ``max_rows`` slices of a slice table (most
    significant first) with their intervals, coloured by status; the zero line is perfect
    calibration on the slice.

    Parameters
    ----------
    table : pandas.DataFrame
        A slice table (``SliceDiscovery.findings`` or ``.table``).
    max_rows : int, default 25
        Slices drawn at most.
    interval : str
        The interval's name, for the axis title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    shown = table.head(max_rows).iloc[::-1]
    labels = shown["slice"]
    if table["class"].nunique() > 1:  # one row per slice and class: name the class
        labels = labels + " (" + shown["class"].astype(str) + ")"
    labels = labels.map(escape)  # user-named levels: plotly reads a few HTML tags in text
    status = slice_status(shown)
    figure = go.Figure()
    for name, color in STATUS_COLORS.items():
        part = status == name
        if not part.any():
            continue
        rows = shown[part]
        figure.add_scatter(
            x=rows["gap"], y=labels[part], mode="markers", name=name,
            marker=dict(color=color, size=9, symbol="diamond"),
            error_x=dict(type="data", symmetric=False, array=rows["ci_high"] - rows["gap"],
                         arrayminus=rows["gap"] - rows["ci_low"], color=color, thickness=1.6),
            customdata=rows[["rows", "ci_low", "ci_high", "p_adjusted"]].to_numpy(),
            hovertemplate=("%{y}<br>gap %{x:+.3f} [%{customdata[1]:+.3f}, "
                           "%{customdata[2]:+.3f}]<br>%{customdata[0]:,} rows · adjusted p "
                           "%{customdata[3]:.3g}<extra></extra>"),
        )
    figure.add_vline(x=0, line=dict(color="#2c3e50", width=1, dash="dash"))
    figure.update_layout(
        height=max(320, 26 * len(shown) + 120), margin=dict(l=10, r=10, t=40, b=10),
        xaxis=dict(title=f"gap: observed rate − mean prediction ({interval})", zeroline=False),
        yaxis=dict(title="", automargin=True, type="category", categoryorder="array",
                   categoryarray=list(labels)),  # the most significant on top
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0),
    )
    return figure


#: How the treemap sizes and orders its tiles (the figure's title and the page's caption).
TREEMAP_RULE = ("Tile area: the outcomes the model misses in the slice, rows × |gap|; colour: "
                "the gap; flagged slices (★, black outline) come first in each group.")
#: Outline of a flagged tile (colour, width) and of the others.
FLAGGED_LINE = ("#1b2733", 3.0)
UNFLAGGED_LINE = ("#ffffff", 1.0)


def slice_treemap_figure(discovery: SliceDiscovery, class_name: str | None = None) -> go.Figure:
    """The deepest slices tested (pairs of columns by default), grouped by the columns they
    combine and coloured by gap. A tile's area is rows × ``|gap|``, the outcomes the model
    misses in the slice (``TREEMAP_RULE``): a small slice with a large gap is not hidden
    behind large calibrated ones, and a slice without a gap has no area. Flagged slices are
    starred, outlined and placed first in their group (groups holding a flagged slice
    first). ``class_name`` picks the class of a multiclass family (default: the first).

    Parameters
    ----------
    discovery : SliceDiscovery
        What :func:`core.local.discover_slices` returned.
    class_name : str, optional
        The class of a multiclass family.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    family = discovery.family
    table = discovery.table
    class_name = class_name if class_name is not None else discovery.classes[0]
    rows = table[table["class"] == class_name].set_index("slice")
    depth = max((s.depth for s in family.slices), default=0)
    groups: dict[str, list[int]] = {}
    for k, piece in enumerate(family.slices):
        if piece.depth == depth and depth > 0:
            block = escape(" × ".join(c.feature for c in piece.conditions))
            groups.setdefault(block, []).append(k)
    tiles = []  # (block, k, flagged, missed outcomes) of every slice drawn
    for block, members in groups.items():
        for k in members:
            row = rows.loc[family.slices[k].name]
            tiles.append((block, k, bool(row["significant"]),
                          float(family.sizes[k]) * abs(float(row["gap"]))))
    # flagged first, then the most missed outcomes: plotly lays the tiles out in this order
    tiles.sort(key=lambda t: (not t[2], -t[3]))
    order = list(dict.fromkeys(t[0] for t in tiles))
    ids, parents, labels, values, colors, texts, custom, lines = [], [], [], [], [], [], [], []
    for block in order:
        members = [t for t in tiles if t[0] == block]
        sizes = family.sizes[[t[1] for t in members]]
        gaps = rows.loc[[family.slices[t[1]].name for t in members], "gap"].to_numpy()
        flagged = sum(t[2] for t in members)
        ids.append(block)
        parents.append("all")
        labels.append(block)
        values.append(sum(t[3] for t in members))
        colors.append(float(np.average(gaps, weights=sizes)) if sizes.sum() else 0.0)
        texts.append(f"{flagged} flagged" if flagged else "")
        custom.append([int(sizes.sum()), "group"])
        lines.append(FLAGGED_LINE if flagged else UNFLAGGED_LINE)
        for _, k, is_flagged, missed in members:
            name = family.slices[k].name
            row = rows.loc[name]
            ids.append(f"{block}/{escape(name)}")
            parents.append(block)
            labels.append("<br>".join(escape(c.label) for c in family.slices[k].conditions)
                          + (" ★" if is_flagged else ""))
            values.append(missed)
            colors.append(float(row["gap"]))
            texts.append(f"{row['gap']:+.3f}")
            custom.append([int(family.sizes[k]), "flagged" if is_flagged else "not flagged"])
            lines.append(FLAGGED_LINE if is_flagged else UNFLAGGED_LINE)
    reach = max(0.05, float(np.nanmax(np.abs(colors))) if colors else 0.05)
    figure = go.Figure(go.Treemap(
        ids=["all", *ids], parents=["", *parents], labels=["all slices", *labels],
        values=[sum(values[i] for i, p in enumerate(parents) if p == "all"), *values],
        text=["", *texts], branchvalues="total", sort=False,
        customdata=[[int(sum(c[0] for c, p in zip(custom, parents, strict=True)
                             if p == "all")), "all"], *custom],
        marker=dict(colors=[0.0, *colors], colorscale=GAP_SCALE, cmin=-reach, cmax=reach,
                    colorbar=dict(title="gap"),
                    line=dict(color=["#ffffff", *(c for c, _ in lines)],
                              width=[1.0, *(w for _, w in lines)])),
        texttemplate="%{label}<br>%{text}", hovertemplate=(
            "%{label}<br>%{customdata[0]:,} rows · gap %{color:+.3f} · %{customdata[1]}"
            "<br>tile area: %{value:,.1f} outcomes missed (rows × |gap|)<extra></extra>"),
        root_color="#f0f3f6",
    ))
    figure.update_layout(height=560, margin=dict(l=10, r=10, t=40, b=10),
                         title=dict(text=TREEMAP_RULE, font=dict(size=12)))
    return figure


def slice_reliability_figure(inside: pd.DataFrame, rest: pd.DataFrame | None, name: str,
                             notion: str = "positive") -> go.Figure:
    """Reliability diagrams of a slice and of the rest of the data on one pair of axes, from
    two :func:`core.metrics.reliability_table` tables (bins without rows left out; ``rest``
    ``None`` when the slice holds every row).

    Parameters
    ----------
    inside, rest : pandas.DataFrame
        The reliability tables of the slice and of the other rows (``rest`` may be ``None``).
    name : str
        The slice's name.
    notion : str
        The calibration notion, for the axis titles.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    name = escape(name)
    figure = go.Figure()
    figure.add_scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration",
                       line=dict(color="#7f8c8d", dash="dash", width=1), hoverinfo="skip")
    for table, label, color in ((rest, "rest of the data", OBSERVED_COLOR),
                                (inside, name, GAP_COLOR)):
        if table is None:
            continue
        filled = table[table["count"] > 0]
        figure.add_scatter(
            x=filled["mean_confidence"], y=filled["frequency"], mode="lines+markers",
            name=label, marker=dict(color=color, size=8), line=dict(color=color, width=1.5),
            error_y=dict(type="data", symmetric=False, color=with_alpha(color, 0.7),
                         array=filled["ci_high"] - filled["frequency"],
                         arrayminus=filled["frequency"] - filled["ci_low"]),
            customdata=filled[["count"]].to_numpy(),
            hovertemplate=(f"{label}<br>mean prediction %{{x:.3f}}<br>observed %{{y:.3f}}"
                           "<br>%{customdata[0]:,} rows<extra></extra>"),
        )
    figure.update_layout(
        height=440, margin=dict(l=10, r=10, t=40, b=10),
        xaxis=dict(title=f"mean prediction in the bin ({notion})", range=[0, 1]),
        yaxis=dict(title="observed rate (95% interval)", range=[0, 1]),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0),
    )
    return figure


def slice_lcb_figure(points: pd.DataFrame, x_name: str, name: str,
                     max_points: int = 20_000) -> go.Figure:
    """The local calibration bias of each row against ``x_name``: the slice's rows in colour,
    the others in grey (``points`` has columns ``x_name``, ``lcb`` and boolean ``inside``; at
    most ``max_points`` drawn, a seeded sample), with the mean LCB inside and outside.

    Parameters
    ----------
    points : pandas.DataFrame
        As above.
    x_name : str
        The x-axis column.
    name : str
        The slice's name.
    max_points : int, default 20000
        Points drawn at most.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if len(points) > max_points:
        points = points.sample(max_points, random_state=0)
    name, x_label = escape(name), escape(x_name)
    figure = go.Figure()
    for inside, label, color, size in ((False, "rest of the data", "#95a5a6", 4),
                                       (True, name, GAP_COLOR, 5)):
        part = points[points["inside"] == inside]
        figure.add_scattergl(
            x=part[x_name], y=part["lcb"], mode="markers", name=label,
            marker=dict(color=color, size=size, opacity=0.55 if inside else 0.3),
            hovertemplate=f"{x_label} %{{x}}<br>LCB %{{y:+.3f}}<extra>{label}</extra>",
        )
        if len(part):
            figure.add_hline(y=float(np.nanmean(part["lcb"])),
                             line=dict(color=color, width=2, dash="dot"))
    figure.add_hline(y=0, line=dict(color="#2c3e50", width=1, dash="dash"))
    figure.update_layout(
        height=420, margin=dict(l=10, r=10, t=40, b=10),
        xaxis=dict(title=x_label), yaxis=dict(title="LCB (observed − predicted, local)"),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0),
    )
    return figure
