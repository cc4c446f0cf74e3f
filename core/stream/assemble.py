"""The :class:`~core.audit.AuditResult` of a streamed audit (:func:`assemble`): the passes'
sums over every audited row, and the sections that are not sums over rows computed on the
seeded sample (:data:`SAMPLED`), each saying so; the slice findings from pass 4's exact
cell sums with a null drawn on the sample (:func:`stream_slices`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pandas as pd

from core import metrics as metric_functions
from core.audit.landscape import lce_section
from core.audit.local_bias import lcb_section
from core.audit.reliability import extended_metrics
from core.audit.results import AuditResult, ReliabilitySection, StreamInfo
from core.audit.rows import feature_columns_of
from core.data.audit_data import AuditData
from core.data.stream_decoding import audit_data, merge_notes, stream_fingerprint
from core.data.stream_sources import TableSource
from core.kernels import engine
from core.local.slice_discovery import SliceDiscovery, slice_targets
from core.local.slice_streamed import RawCoding, StreamedFamily, streamed_discovery, streamed_family
from core.metrics.streamed import (
    TOP,
    class_series,
    metrics_table_from,
    reliability_table_from,
    uniform_binning,
)
from core.stattests import clinical as clinical_tests
from core.stattests import cumulative as cumulative_tests
from core.stattests.skce import bound_test, skce_test
from core.stream.kernel_sums import KernelSetup, kernel_results
from core.stream.plan import StreamPlan
from core.stream.tables import group_tables, skce_row

#: What a streamed audit computes over every audited row, and what on its sample.
EXACT = ("the reliability table, accuracy, Brier, log loss and the binned errors (ECE, MCE, "
         "ACE, debiased ECE)", "the Hosmer–Lemeshow and Spiegelhalter tests",
         "the group tables", "the SKCE, its consistency test and the KLCE bandwidth grid "
         "(random Fourier features)", "every slice's rows, counts, gaps, statistics and "
         "intervals")


SAMPLED = ("the smooth ECE, ICI, E50, E90, Emax, calibration slope and intercept, Brier and "
           "log-loss decompositions, cumulative metrics and their tests, Cox's test and the "
           "SKCE block test", "LCB", "MLCE over γ", "the slice findings' max-|T| null "
           "(consistency resamples of the sample's rows)")


def on_sample(result, rows: int, total: int):
    """A test result computed on the seeded sample, saying so in its parameters."""
    return dataclasses.replace(result, parameters={
        **result.parameters, "rows": rows,
        "scope": f"a seeded sample of {rows:,} of the {total:,} audited rows"})


def assemble(source: TableSource, plan: StreamPlan, sums: dict, kernel: dict, setup: KernelSetup,
             quantiles: dict, binnings: dict, groups: dict, codings: tuple[RawCoding, ...],
             progress: Callable[[float, str], None]) -> tuple[AuditResult, AuditData]:
    """The :class:`AuditResult` of the passes' sums and of the sample's sections."""
    settings, schema, n = plan.settings, plan.schema, plan.n_audited
    notion, series, n_bins = plan.notion, plan.series, settings.n_bins
    notes = merge_notes(list(schema.notes) + list(sums["notes"]))
    fingerprint = stream_fingerprint(sums["digest"], schema)
    sample = audit_data(sums["sample"], schema, source.name, notes)  # its own fingerprint
    part = sample.split_part(plan.part) if plan.part else sample
    binned = quantiles["binned"]
    row_sums, notion_binned = quantiles["bootstrap"]  # pass 4's sums with a bootstrap

    if settings.strategy == "quantile":
        table_sums, table_binning = binned[series[0], n_bins], binnings[series[0], n_bins]
    else:
        table_sums, table_binning = notion_binned[series[0]], uniform_binning(n_bins)
    table = reliability_table_from(table_sums, table_binning, notion, settings.strategy,
                                   settings.interval, class_index=plan.class_index)
    notion_sums = {"uniform": [notion_binned[k] for k in plan.metric_series],
                   "quantile": [binned[k, n_bins] for k in plan.metric_series]}
    summary = metrics_table_from(
        row_sums, notion_sums,
        [binned[class_series(k), n_bins] for k in range(schema.n_classes)],
        binned[TOP, n_bins], notion, n_bins, settings.strategy, method=settings.bootstrap_method)
    progress(0.1, "The seeded sample: smooth and curve metrics…")
    sampled = f" On a seeded sample of {part.n:,} of the {n:,} audited rows."
    extended = extended_metrics(part.probs, part.y, notion, plan.class_index,
                                settings.n_bootstrap, settings.bootstrap_method, settings.seed)
    extended["description"] = extended["description"] + sampled
    metrics_frame = pd.concat([summary, skce_row(kernel["value"], setup, settings), extended],
                              ignore_index=True)

    grid, consistency = kernel_results(plan, kernel, setup)
    tests = {"consistency": consistency}
    tests["block"] = on_sample(skce_test(part.probs, part.y, method="block"), part.n, n)
    tests["bound"] = bound_test(tests["consistency"].statistic, n, setup.skce_sigma)
    tests["hosmer-lemeshow"] = groups[series[0]].finish(quantiles["hl"][series[0]])
    conf, outcome = metric_functions.confidence_outcome(part.probs, part.y, notion,
                                                        plan.class_index)
    curve_tests = {
        "spiegelhalter": lambda: clinical_tests.spiegelhalter_from_sums(
            *sums["spiegelhalter"], notion),
        "cox": lambda: on_sample(clinical_tests.cox_test(conf, outcome.astype(np.int64)),
                                 part.n, n),
        "cumulative-ks": lambda: on_sample(cumulative_tests.cumulative_test(
            conf, outcome.astype(np.int64), "ks"), part.n, n),
        "cumulative-kuiper": lambda: on_sample(cumulative_tests.cumulative_test(
            conf, outcome.astype(np.int64), "kuiper"), part.n, n)}
    for key, run_test in curve_tests.items():
        if np.ndim(conf) == 1:
            try:
                tests[key] = run_test()
            except ValueError:
                continue
    group_sections = {g: group_tables(plan, sums, quantiles, binnings, groups, g)
                      for g in schema.mapping.groups}
    reliability = ReliabilitySection(table, metrics_frame, tests, group_sections, notion)

    features = feature_columns_of(schema.mapping.features, settings.features)
    progress(0.4, "The seeded sample: local bias…")
    bias = lcb_section(sample, settings.local_bias(features))
    bias = dataclasses.replace(bias, computation=bias.computation + sampled)
    progress(0.5, "Slice findings: the max-|T| null on the seeded sample…")
    slices = stream_slices(plan, sums, quantiles, codings,
                           lambda f: progress(0.5 + 0.1 * f, "Slice findings: resampling "
                                              f"{f:.0%} of the sample"))
    progress(0.6, "The seeded sample: MLCE over γ…")
    lce = lce_section(part, settings.landscape(features),
                      progress=lambda f, msg: progress(0.6 + 0.4 * f, msg))
    if lce is not None:
        lce = dataclasses.replace(lce, computation=lce.computation + sampled)
    info = StreamInfo(source.describe(), schema.n, len(source.partitions),
                      engine.current().describe(), sample.n, sample.fingerprint, EXACT, SAMPLED,
                      row_sums.class_balance(schema.classes))
    result_notes = () if features else (
        "No audit features are mapped: the KLCE test uses the prediction kernel only and "
        "there is no LCE landscape.",)
    result = AuditResult(settings, source.name, fingerprint, n,
                         plan.part or "all rows", features, reliability, grid, bias, lce,
                         slices, (info.describe(), *result_notes), info)
    return result, sample


def slice_family(plan: StreamPlan, quantiles: dict, codings: tuple[RawCoding, ...]
                 ) -> StreamedFamily:
    """The slices of the audited rows and their exact sums, from pass 4's cell sums."""
    return streamed_family(codings, quantiles["cells"], plan.settings.slice_ranges,
                           plan.settings.slice_depth, plan.n_audited)


def stream_slices(plan: StreamPlan, sums: dict, quantiles: dict, codings: tuple[RawCoding, ...],
                  progress: Callable[[float], None] | None = None) -> SliceDiscovery:
    """The findings of a streamed audit: every slice's sums over all audited rows, the
    max-``|T|`` null from the seeded sample's audited rows
    (:func:`core.local.slice_streamed.streamed_discovery`)."""
    settings = plan.settings
    rows = sums["sample"]
    if plan.part is not None:
        rows = rows.take(rows.split == plan.part)
    scores, targets = slice_targets(rows.probs, rows.y, plan.slice_notion, plan.schema.classes,
                                    settings.slice_resamples)
    return streamed_discovery(
        slice_family(plan, quantiles, codings), plan.slice_raw(rows, codings), scores, targets,
        alpha=settings.findings_alpha, error_rate=settings.error_rate, notion=plan.slice_notion,
        n_resamples=settings.slice_resamples, seed=settings.seed, n_rows=plan.n_audited,
        progress=progress)
