"""The figures of an audit, each styled and captioned so that it stands alone when exported.

:func:`audit_figures` turns an :class:`~core.audit.AuditResult` (and the data it was computed
on) into the figures the pages draw — reliability diagram, class balance, per-group
diagrams, KLCE p-value map and aggregated null, LCB against a feature, MLCE against γ, the
slices' gaps and their treemap — with
the caption line of :func:`core.figures.style.caption_text`. The report, the Export page and the
command line all draw from here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from core.audit.local_bias import ProfileSettings, profile_of
from core.audit.results import AuditResult
from core.audit.rows import audit_part
from core.audit.settings import LocalBiasSettings
from core.data.audit_data import AuditData
from core.figures.data import class_balance_figure
from core.figures.findings import slice_forest_figure, slice_treemap_figure
from core.figures.lce import mlce_curve_figure
from core.figures.local_bias import lcb_figure
from core.figures.reliability import reliability_figure, reliability_grid
from core.figures.style import apply_style, caption_text
from core.figures.trust import null_histogram_figure, p_value_heatmap_figure

#: Resamples of the LCB trend bands (the Local bias page's).
TREND_RESAMPLES = 200
TREND_DEGREE = 3
#: Most points a scatter layer of an exported figure draws (a seeded sample beyond, the
#: caption says so): the report and its files stay small at any number of rows, while the
#: trends and every number use all evaluated rows.
SCATTER_POINTS = 1_000


@dataclass(frozen=True)
class AuditFigure:
    """One exported figure: a file-name key, a title, the styled figure, its caption line and
    a note for the report's figure caption (what the figure leaves out, and why)."""

    key: str
    title: str
    figure: go.Figure
    caption: str
    note: str = ""


def slug(text: str) -> str:
    """A file-name-safe key: letters, digits and ``_`` only (``race/eth`` → ``race_eth``)."""
    cleaned = "".join(c if c.isalnum() else "_" for c in str(text).lower())
    return "_".join(part for part in cleaned.split("_") if part) or "figure"


def _klce_bandwidths(result: AuditResult) -> dict[str, float | None]:
    spec = result.klce_grid.spec
    symbols = {"σ_p centre": spec.prob_bandwidth}
    if result.features:
        symbols["σ_x centre"] = spec.feature_bandwidth
    return symbols


def _split(result: AuditResult) -> str:
    return result.part


def reliability_figures(result: AuditResult, audit: AuditData) -> list[AuditFigure]:
    """Reliability diagram, class balance of the audited rows and one grid per group."""
    settings, section = result.settings, result.reliability
    data, _ = audit_part(audit, settings.part)
    balance_table = result.stream.class_balance if result.stream is not None else \
        data.class_balance()
    kind = "equal-width" if settings.strategy == "uniform" else "equal-mass"
    binning = f"{settings.n_bins} {kind} bins, {settings.interval} intervals"
    class_name = (audit.classes[settings.class_index]
                  if section.notion == "classwise" and settings.class_index is not None
                  else None)
    figures = [AuditFigure(
        "reliability", "Reliability diagram",
        apply_style(reliability_figure(section.table, class_name=class_name), caption_text(
            notion=section.notion, split=_split(result), n=result.rows, extra=binning)),
        binning)]
    balance = caption_text(notion="class shares", split=_split(result), n=result.rows)
    figures.append(AuditFigure("class_balance", "Class balance",
                               apply_style(class_balance_figure(balance_table),
                                           balance), balance))
    for group, (_, tables) in section.groups.items():
        bins = min(settings.n_bins, settings.group_bins)
        caption = caption_text(notion=section.notion, split=_split(result), n=result.rows,
                               extra=f"by {group}, {bins} bins per group")
        figures.append(AuditFigure(
            f"reliability_by_{slug(group)}", f"Reliability by {group}",
            apply_style(reliability_grid(tables, class_name=class_name), caption), caption))
    return figures


def klce_figures(result: AuditResult) -> list[AuditFigure]:
    """The p-value map over the bandwidth grid and the aggregated test's null histogram."""
    grid = result.klce_grid
    scope = ", ".join(result.features) if result.features else "predictions only"
    extra = f"features: {scope} · null: {grid.null}, B = {grid.n_resamples}"
    caption = caption_text(notion="one-vs-rest", bandwidths=_klce_bandwidths(result),
                           split=_split(result), n=result.rows, extra=extra)
    heatmap = p_value_heatmap_figure(grid.prob_bandwidths, grid.feature_bandwidths,
                                     grid.p_values, result.settings.alpha)
    aggregated = grid.aggregated
    null = null_histogram_figure(aggregated.null, aggregated.statistic,
                                 statistic_label="largest standardised KLCE² over the grid")
    null_caption = caption + f" · aggregated p = {aggregated.p_value:.4f}"
    return [
        AuditFigure("klce_p_values", "KLCE p-values over the bandwidth grid",
                    apply_style(heatmap, caption), caption),
        AuditFigure("klce_aggregated_null", "KLCE aggregated test: null and observed",
                    apply_style(null, null_caption), null_caption),
    ]


def lcb_figures(result: AuditResult, audit: AuditData) -> list[AuditFigure]:
    """LCB against a feature, coloured by the first group attribute and faceted by the
    second, with per-group polynomial trends (I-trustworthy Fig. 6;
    :func:`core.audit.local_bias.profile_of`, the Local bias page's)."""
    groups = list(audit.groups.columns[:2])
    color = groups[0] if groups else None
    facet = groups[1] if len(groups) > 1 else None
    profile = profile_of(audit, result.lcb, ProfileSettings(
        LocalBiasSettings(result.features), color=color, facet=facet, degree=TREND_DEGREE,
        n_resamples=TREND_RESAMPLES, seed=result.settings.seed))
    n, spec = len(profile.points), result.lcb.spec
    shown = min(n, SCATTER_POINTS)
    drawn = "" if shown == n else f" · {shown:,} of the {n:,} points drawn (a seeded sample)"
    caption = caption_text(
        notion="one-vs-rest", bandwidths={"σ_p": spec.prob_bandwidth,
                                          "σ_x": spec.feature_bandwidth},
        split="test (query)" if "test split" in result.lcb.reference else "all rows",
        n=n,
        extra=f"bandwidths by leave-one-out CV · degree-{TREND_DEGREE} trends, 90% bands"
              + drawn)
    figure = lcb_figure(profile.points, profile.trends, profile.x_name, color, facet,
                        max_points=SCATTER_POINTS)
    return [AuditFigure("lcb", f"Local calibration bias against {profile.x_name}",
                        apply_style(figure, caption), caption, profile.skipped or "")]


def lce_figures(result: AuditResult) -> list[AuditFigure]:
    """MLCE against the bandwidth γ with the global MCE (Luo et al. Fig. 1)."""
    if result.lce is None:
        return []
    section = result.lce
    caption = caption_text(notion="top-label", bandwidths={"γ": result.settings.gamma},
                           split=_split(result), n=result.rows,
                           extra=f"MLCE = {section.mlce:.3f} at γ; map: {section.map}")
    figure = mlce_curve_figure(section.curve, section.mce, result.settings.gamma)
    return [AuditFigure("mlce_curve", "MLCE against the kernel bandwidth γ",
                        apply_style(figure, caption), caption)]


def slice_figures(result: AuditResult) -> list[AuditFigure]:
    """The slices' gaps with their intervals (most significant first) and the depth-2 slices
    as a treemap coloured by gap."""
    slices = result.slices
    if slices.n_tested == 0:
        return []
    interval = ("simultaneous" if slices.error_rate == "fwer" else "FCR-adjusted") + \
        f" {1 - slices.alpha:.0%} interval"
    caption = caption_text(
        notion=slices.notion, split=_split(result), n=result.rows,
        extra=f"{slices.n_tested:,} tests · {slices.error_rate.upper()} at α = "
              f"{slices.alpha:g} · B = {slices.n_resamples:,}")
    figures = [AuditFigure("slices_forest", "Slices: gap and interval",
                           apply_style(slice_forest_figure(slices.table, interval=interval),
                                       caption), caption)]
    if slices.family.depth > 0 and any(s.depth for s in slices.family.slices):
        figures.append(AuditFigure("slices_treemap", "Slices: gaps of the deepest slices",
                                   apply_style(slice_treemap_figure(slices), caption),
                                   caption))
    return figures


#: The report's pages in the order of the report.
REPORT_PAGES = ("reliability", "klce", "lcb", "lce", "slices")
#: The order in which a report builds its pages while the browser draws the built ones:
#: the page whose figures take the browser longest (the slices' treemap) first, then the
#: one that takes Python longest (the LCB trends' bootstrap), so that neither waits at the
#: end (at 10⁶ rows the report's images are ready 0.3 s sooner than in page order).
DRAWING_ORDER = ("slices", "lcb", "reliability", "klce", "lce")


def page_figures(result: AuditResult, audit: AuditData, order: Sequence[str] = REPORT_PAGES
                 ) -> Iterator[list[AuditFigure]]:
    """The figures of :func:`audit_figures`, one page's list at a time in ``order`` (names of
    :data:`REPORT_PAGES`), each built when it is asked for (so the first can be drawn while the next
    are built); keys not yet made unique (:func:`unique_keys`)."""
    expected = result.stream.sample_fingerprint if result.stream is not None else \
        result.fingerprint  # a streamed audit's figures draw rows from its seeded sample
    if audit.fingerprint != expected:
        raise ValueError("The audit result was computed on other data than the one given: "
                         f"fingerprints {expected[:12]} and "
                         f"{audit.fingerprint[:12]} differ. Pass the data the audit ran on.")
    builders = {"reliability": lambda: reliability_figures(result, audit),
                "klce": lambda: klce_figures(result), "lcb": lambda: lcb_figures(result, audit),
                "lce": lambda: lce_figures(result), "slices": lambda: slice_figures(result)}
    for page in order:
        yield builders[page]()


def audit_figures(result: AuditResult, audit: AuditData) -> tuple[AuditFigure, ...]:
    """Every figure of the audit, in the order of the pages.

    Parameters
    ----------
    result : AuditResult
        From :func:`core.audit.run_audit`.
    audit : AuditData
        The data ``result`` was computed on (its fingerprint must match; for a streamed
        audit, its seeded sample).

    Returns
    -------
    tuple of AuditFigure
        Styled, captioned figures with unique keys.
    """
    return tuple(unique_keys([item for page in page_figures(result, audit) for item in page]))


def unique_keys(figures: list[AuditFigure]) -> list[AuditFigure]:
    """The figures with keys made unique (``_2``, ``_3``, … where two slugs coincide)."""
    seen: dict[str, int] = {}
    out = []
    for item in figures:
        seen[item.key] = seen.get(item.key, 0) + 1
        key = item.key if seen[item.key] == 1 else f"{item.key}_{seen[item.key]}"
        out.append(AuditFigure(key, item.title, item.figure, item.caption))
    return out
