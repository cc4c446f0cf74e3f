"""Figures of the Data page: the class balance (observed shares against mean predicted
probabilities).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from core.figures.palette import OBSERVED_COLOR, PREDICTED_COLOR


def class_balance_figure(balance: pd.DataFrame) -> go.Figure:
    """Observed class shares beside mean predicted probabilities (calibration in the large).

    ``balance`` is :meth:`core.data.audit_data.AuditData.class_balance`: columns ``class``,
    ``count``,
    ``share`` and ``mean predicted probability``. A calibrated model has the two bars of each
    class at the same height.

    Parameters
    ----------
    balance : pandas.DataFrame
        As above.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    figure = go.Figure()
    figure.add_bar(
        x=balance["class"], y=balance["share"], name="observed share",
        marker_color=OBSERVED_COLOR, text=[f"{c:,} rows" for c in balance["count"]],
        textposition="outside", cliponaxis=False,
        hovertemplate="%{x}: %{y:.3f} observed (%{text})<extra></extra>",
    )
    figure.add_bar(
        x=balance["class"], y=balance["mean predicted probability"],
        name="mean predicted probability", marker_color=PREDICTED_COLOR,
        hovertemplate="%{x}: %{y:.3f} predicted<extra></extra>",
    )
    figure.update_layout(
        barmode="group", height=320, margin=dict(l=10, r=10, t=60, b=10),
        yaxis=dict(title="share of rows", rangemode="tozero", tickformat=".0%"),
        xaxis=dict(title="class", type="category"),
        legend=dict(orientation="h", yanchor="bottom", y=1.08, x=0),
    )
    return figure

