"""Plotly figures, one module a page, shared by the dashboard and the report.

This is the public face (``from core import figures``). :mod:`core.figures.style` holds the
template and captions every figure gets, :mod:`core.figures.palette` the colours (and
:func:`method_colors`, one colour a recalibration method on every chart); the figures
of each page are in the module named after it (:mod:`core.figures.reliability`,
:mod:`core.figures.trust`, :mod:`core.figures.local_bias`, :mod:`core.figures.lce`,
:mod:`core.figures.recalibration`, :mod:`core.figures.ensembles`,
:mod:`core.figures.estimators`, :mod:`core.figures.data`, :mod:`core.figures.findings`,
:mod:`core.figures.over_time`).
"""

from core.figures.compare import differences_figure, dumbbell_figure, reliability_overlay_figure
from core.figures.data import class_balance_figure
from core.figures.ensembles import (
    credal_p_values_figure,
    credal_weights_figure,
    credal_weights_map_figure,
)
from core.figures.estimators import (
    estimator_curves_figure,
    estimator_estimates_figure,
    estimator_risk_figure,
)
from core.figures.findings import (
    slice_forest_figure,
    slice_lcb_figure,
    slice_reliability_figure,
    slice_treemap_figure,
)
from core.figures.lce import (
    lce_cdf_figure,
    lce_profile_figure,
    lce_scatter_figure,
    mlce_curve_figure,
)
from core.figures.local_bias import lcb_figure
from core.figures.over_time import (
    PERIOD_METRICS,
    brier_sequence_figure,
    eprocess_figure,
    group_eprocess_figure,
    group_gap_figure,
    period_metric_figure,
)
from core.figures.palette import method_colors
from core.figures.recalibration import (
    klce_pvalue_figure,
    lcb_before_after_figure,
    mlce_comparison_figure,
)
from core.figures.reliability import (
    CUMULATIVE_POINTS,
    cumulative_figure,
    reliability_figure,
    reliability_grid,
    smooth_reliability_figure,
)
from core.figures.style import apply_style, caption_text
from core.figures.trust import null_histogram_figure, p_value_heatmap_figure

__all__ = [
    "CUMULATIVE_POINTS",
    "PERIOD_METRICS",
    "apply_style",
    "brier_sequence_figure",
    "caption_text",
    "class_balance_figure",
    "credal_p_values_figure",
    "credal_weights_figure",
    "credal_weights_map_figure",
    "cumulative_figure",
    "differences_figure",
    "dumbbell_figure",
    "eprocess_figure",
    "estimator_curves_figure",
    "estimator_estimates_figure",
    "estimator_risk_figure",
    "group_eprocess_figure",
    "group_gap_figure",
    "klce_pvalue_figure",
    "lcb_before_after_figure",
    "lcb_figure",
    "method_colors",
    "lce_cdf_figure",
    "lce_profile_figure",
    "lce_scatter_figure",
    "mlce_comparison_figure",
    "mlce_curve_figure",
    "null_histogram_figure",
    "p_value_heatmap_figure",
    "period_metric_figure",
    "reliability_figure",
    "reliability_grid",
    "reliability_overlay_figure",
    "slice_forest_figure",
    "slice_lcb_figure",
    "slice_reliability_figure",
    "slice_treemap_figure",
    "smooth_reliability_figure",
]
