"""Figures of the LCE landscape page: the LCE over an embedding or one feature, its CDF against
the bin's calibration error, and MLCE against γ (Luo et al., Figs. 1–2).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.figures.palette import GAP_COLOR, OBSERVED_COLOR, PREDICTED_COLOR

#: The other bins' points: grey enough to see on white, under the selected bin's.
CONTEXT_COLOR = "#9aa5b1"


def _bin_rows(in_bin: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows outside and inside the selected bin, each a seeded sample of at most
    ``max_points`` (what an LCE chart sends to the browser)."""
    rng = np.random.default_rng(0)
    parts = []
    for rows in (np.flatnonzero(~in_bin), np.flatnonzero(in_bin)):
        parts.append(rng.choice(rows, max_points, replace=False) if rows.size > max_points
                     else rows)
    return parts[0], parts[1]


#: Half-width of the seeded jitter added to the ranked coordinates (a share of the axis).
SPREAD_JITTER = 0.02


def spread_coordinates(coords: np.ndarray, seed: int = 0,
                       jitter: float = SPREAD_JITTER) -> np.ndarray:
    """Each column of ``coords`` replaced by its rank among the rows, scaled to [0, 1], ties
    broken in a seeded random order, plus a seeded uniform jitter of ±``jitter``: a display
    only (the LCE is computed on the embedding itself). An embedding of one numeric and a
    few one-hot columns puts the rows on a few thin stripes, one per category, and leaves the
    rest of the square empty; ranked, every axis is evenly filled with the order along it
    kept (up to the jitter), a tied group covers a stretch as long as its share of the rows,
    and the jitter widens each stripe so that the points of other bins on it show.

    Parameters
    ----------
    coords : array_like
        ``(n, k)`` coordinates.
    seed : int, default 0
        Seed of the order within ties and of the jitter.
    jitter : float, default SPREAD_JITTER
        Half-width of the jitter.

    Returns
    -------
    numpy.ndarray
        ``(n, k)`` ranks in [0, 1], jittered.
    """
    coords = np.asarray(coords, dtype=float)
    n = coords.shape[0]
    rng = np.random.default_rng(seed)
    shuffle = rng.permutation(n)
    spread = np.empty_like(coords)
    for k in range(coords.shape[1]):
        order = shuffle[np.argsort(coords[shuffle, k], kind="stable")]
        spread[order, k] = np.arange(n) / max(n - 1, 1)
    return spread + rng.uniform(-jitter, jitter, spread.shape)


def lce_scatter_figure(coords: np.ndarray, values: np.ndarray, in_bin: np.ndarray,
                       signed: bool, title: str = "", max_points: int = 50_000,
                       spread: bool = False) -> go.Figure:
    """LCE landscape (Luo et al. Fig. 2, left): the embedding coloured by each point's LCE.

    Points of the selected confidence bin are coloured (diverging scale around 0 for the
    signed LCE: red over-confident, blue under-confident); the others are drawn in grey,
    smaller and translucent, for context. At most ``max_points`` points of each kind are sent
    to the browser. With ``spread``, the axes are the coordinates' ranks
    (``spread_coordinates``): the same points and colours, evenly spread.

    Parameters
    ----------
    coords : array_like
        ``(n, 2)`` embedding coordinates.
    values : array_like
        ``(n,)`` LCE per row.
    in_bin : array_like of bool
        Rows of the selected confidence bin.
    signed : bool
        Whether ``values`` is the signed LCE.
    title : str
        The figure's title.
    max_points : int, default 50000
        Points of each kind drawn at most.
    spread : bool, default False
        Draw the coordinates' ranks instead of the coordinates.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    background, chosen = _bin_rows(in_bin, max_points)
    if spread:
        coords = spread_coordinates(coords)
    figure = go.Figure()
    figure.add_scattergl(
        x=coords[background, 0], y=coords[background, 1], mode="markers",
        marker=dict(size=4, color=CONTEXT_COLOR, opacity=0.45), name="other bins",
        hoverinfo="skip",
    )
    bound = float(np.nanmax(np.abs(values[chosen]))) if chosen.size else 1.0
    figure.add_scattergl(
        x=coords[chosen, 0], y=coords[chosen, 1], mode="markers", name="selected bin",
        marker=dict(
            size=6, opacity=0.9, color=values[chosen],
            colorscale="RdBu_r" if signed else "Viridis",
            cmin=-bound if signed else 0.0, cmax=bound if bound > 0 else 1.0,
            colorbar=dict(title="LCE (signed)" if signed else "LCE"),
        ),
        hovertemplate="LCE %{marker.color:.3f}<extra></extra>",
    )
    figure.update_layout(
        title=title or None, height=560, margin=dict(l=10, r=10, t=50 if title else 20, b=40),
        xaxis=dict(title="embedding 1" + (" (rank, jittered)" if spread else ""),
                   showgrid=False, zeroline=False),
        yaxis=dict(title="embedding 2" + (" (rank, jittered)" if spread else ""),
                   showgrid=False, zeroline=False, scaleanchor="x"),
        legend=dict(orientation="h", yanchor="top", y=-0.12, x=0),
    )
    return figure


def lce_cdf_figure(values: np.ndarray, fraction: np.ndarray, bin_error: float,
                   mean_lce: float, max_points: int = 2_000) -> go.Figure:
    """CDF of the LCE inside one confidence bin against the bin's calibration error (Fig. 2,
    right): a curve lying right of the line means local errors the bin average hides. At
    most ``max_points`` steps are drawn (evenly spaced in rank, the first and last kept:
    the curve is unchanged to 1/max_points in height).

    Parameters
    ----------
    values : array_like
        The sorted LCE values of the bin.
    fraction : array_like
        Their cumulative share.
    bin_error : float
        The bin's calibration error (a vertical line).
    mean_lce : float
        The mean LCE of the bin.
    max_points : int, default 2000
        Steps drawn at most.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if values.size > max_points:
        keep = np.linspace(0, values.size - 1, max_points).astype(int)
        values, fraction = values[keep], fraction[keep]
    figure = go.Figure()
    figure.add_scatter(x=values, y=fraction, mode="lines", line=dict(color=OBSERVED_COLOR,
                                                                     width=2.5),
                       name="LCE in the bin", hovertemplate="%{y:.0%} ≤ %{x:.3f}<extra></extra>")
    figure.add_vline(x=bin_error, line=dict(color=GAP_COLOR, width=2, dash="dash"),
                     annotation_text=f"bin error {bin_error:.3f}", annotation_position="top")
    figure.add_vline(x=mean_lce, line=dict(color="#7f8c8d", width=1.5, dash="dot"),
                     annotation_text=f"mean LCE {mean_lce:.3f}",
                     annotation_position="bottom right")
    figure.update_layout(height=340, margin=dict(l=10, r=10, t=40, b=10), showlegend=False,
                         xaxis_title="LCE", yaxis=dict(title="share of the bin's points",
                                                       tickformat=".0%", range=[0, 1.02]))
    return figure


def mlce_curve_figure(curve: pd.DataFrame, mce: float, selected: float | None = None
                      ) -> go.Figure:
    """MLCE against the kernel bandwidth γ (Luo et al. Fig. 1/3), with the global MCE that
    the curve approaches as γ → ∞ and the mean LCE beside it.

    Parameters
    ----------
    curve : pandas.DataFrame
        MLCE over γ (:func:`core.local.mlce_curve`).
    mce : float
        The global MCE.
    selected : float, optional
        The γ of the landscape, marked.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    figure = go.Figure()
    figure.add_scatter(x=curve["gamma"], y=curve["mlce"], mode="lines+markers", name="MLCE",
                       line=dict(color=OBSERVED_COLOR, width=2.5))
    figure.add_scatter(x=curve["gamma"], y=curve["mean_lce"], mode="lines+markers",
                       name="mean LCE", line=dict(color=PREDICTED_COLOR, width=2))
    figure.add_hline(y=mce, line=dict(color=GAP_COLOR, dash="dash", width=1.5),
                     annotation_text=f"global MCE {mce:.3f}", annotation_position="top left")
    if selected is not None:
        figure.add_vline(x=selected, line=dict(color="#7f8c8d", dash="dot", width=1))
    figure.update_layout(height=340, margin=dict(l=10, r=10, t=30, b=10),
                         xaxis=dict(title="kernel bandwidth γ", type="log"),
                         yaxis=dict(title="calibration error", rangemode="tozero"),
                         legend=dict(orientation="h", yanchor="bottom", y=1.01, x=0))
    return figure


def lce_profile_figure(feature: np.ndarray, values: np.ndarray, in_bin: np.ndarray,
                       signed: bool, feature_name: str, title: str = "",
                       max_points: int = 50_000) -> go.Figure:
    """The 1-D LCE landscape for a single audit feature: each row's LCE (Luo et al., eq. 4)
    against the feature's value.

    Points of the selected confidence bin are coloured by their LCE (diverging around 0 for
    the signed LCE: red over-confident, blue under-confident); the other bins are drawn faintly
    for context. At most ``max_points`` points of each kind are sent to the browser.

    Parameters
    ----------
    feature : array_like
        ``(n,)`` the feature's value per row.
    values : array_like
        ``(n,)`` LCE per row.
    in_bin : array_like of bool
        Rows of the selected confidence bin.
    signed : bool
        Whether ``values`` is the signed LCE.
    feature_name : str
        The x-axis title.
    title : str
        The figure's title.
    max_points : int, default 50000
        Points of each kind drawn at most.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    background, chosen = _bin_rows(in_bin, max_points)
    figure = go.Figure()
    figure.add_scattergl(
        x=feature[background], y=values[background], mode="markers",
        marker=dict(size=4, color=CONTEXT_COLOR, opacity=0.45), name="other bins",
        hoverinfo="skip",
    )
    bound = float(np.nanmax(np.abs(values[chosen]))) if chosen.size else 1.0
    figure.add_scattergl(
        x=feature[chosen], y=values[chosen], mode="markers", name="selected bin",
        marker=dict(
            size=5, color=values[chosen],
            colorscale="RdBu_r" if signed else "Viridis",
            cmin=-bound if signed else 0.0, cmax=bound if bound > 0 else 1.0,
            colorbar=dict(title="LCE (signed)" if signed else "LCE"),
        ),
        hovertemplate=f"{feature_name} %{{x:.4g}}<br>LCE %{{y:.3f}}<extra></extra>",
    )
    if signed:
        figure.add_hline(y=0.0, line=dict(color="#7f8c8d", width=1, dash="dot"))
    figure.update_layout(
        title=title or None, height=460, margin=dict(l=10, r=10, t=50 if title else 20, b=40),
        xaxis=dict(title=feature_name, showgrid=False, zeroline=False),
        yaxis=dict(title="LCE (signed: confidence − accuracy)" if signed else "LCE",
                   zeroline=False),
        legend=dict(orientation="h", yanchor="top", y=-0.14, x=0),
    )
    return figure

