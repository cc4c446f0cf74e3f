"""The tables of a streamed audit built from the passes' sums: the metrics table's SKCE
row (:func:`skce_row`) and each group attribute's per-level table and reliability tables
(:func:`group_tables`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.audit.reliability import SKCE_ROW
from core.audit.settings import AuditSettings
from core.data.groups import MIN_GROUP_ROWS
from core.kernels.computation import summary as computation_summary
from core.metrics.intervals import bootstrap_interval
from core.metrics.skce_estimate import SkceFourierSums
from core.metrics.streamed import binned_value, reliability_table_from, uniform_binning
from core.stream.kernel_sums import KernelSetup
from core.stream.plan import StreamPlan


def skce_row(value: SkceFourierSums, setup: KernelSetup, settings: AuditSettings
             ) -> pd.DataFrame:
    """The metrics table's canonical SKCE row (:func:`core.audit.metrics_with_skce`) from the
    streamed random-feature sums and their Poisson bootstrap."""
    draws, plugin = value.draws()
    low = high = np.nan
    if setup.value_resamples:
        low, high = bootstrap_interval(draws[1:], draws[0], 0.95, settings.bootstrap_method,
                                       plugin=plugin)
    ran = {"computation": setup.value_plan.label,
           "computation_reason": setup.value_plan.reason}
    return pd.DataFrame([{
        "metric": SKCE_ROW, "value": float(draws[0]), "estimate": float(draws[0]),
        "ci_low": float(np.clip(low, 0.0, None)), "ci_high": float(np.clip(high, 0.0, None)),
        "notion": "canonical",
        "description": "Squared kernel calibration error of the whole probability vector, "
                       "Gaussian kernel with median-heuristic bandwidth (Widmann et al. 2019); "
                       "0 when calibrated, can be slightly negative. Poisson bootstrap. "
                       + computation_summary(ran),
        **ran}])


def group_tables(plan: StreamPlan, sums: dict, quantiles: dict, binnings: dict, groups: dict,
                 group: str) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """``core.audit.reliability.group_diagnostics`` of one group attribute from the sums: the
    per-level table and each level's reliability table."""
    schema, settings = plan.schema, plan.settings
    levels = {code: level for (g, code), level in sums["groups"].items() if g == group}
    names = schema.levels[group]
    order = sorted(levels, key=lambda code: (-levels[code][0].n, names[code]))
    bins, strategy = plan.group_bins, settings.strategy
    rows, tables = [], {}
    for code in order:
        level_rows, uniform = levels[code]
        count = level_rows.n
        row = {"group": names[code], "rows": count, "share": count / plan.n_audited}
        if count >= MIN_GROUP_ROWS:
            binned = uniform if strategy == "uniform" else \
                {key: quantiles["binned"][(key, group, code), bins] for key in plan.series}
            series = [binned[key] for key in plan.series]
            single = len(plan.series) == 1
            totals = series[0].sums
            row.update({
                "mean_confidence": float(totals[1].sum() / count) if single else np.nan,
                "observed_frequency": float(totals[2].sum() / count) if single else np.nan,
                "ece": binned_value(series, "ece"), "mce": binned_value(series, "mce"),
                "brier": float(level_rows.sums[2] / count),
                "hosmer_lemeshow_p": groups[(plan.series[0], group, code)].finish(
                    quantiles["hl"][(plan.series[0], group, code)]).p_value
                if single else np.nan})
            binning = uniform_binning(bins) if strategy == "uniform" else \
                binnings[(plan.series[0], group, code), bins]
            tables[names[code]] = reliability_table_from(
                series[0], binning, plan.notion, strategy, class_index=plan.class_index,
                n_resamples=500)
        rows.append(row)
    columns = ["group", "rows", "share", "mean_confidence", "observed_frequency", "ece", "mce",
               "brier", "hosmer_lemeshow_p"]
    return pd.DataFrame(rows).reindex(columns=columns), tables
