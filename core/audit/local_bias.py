"""The Local bias section: LCB (I-trustworthy eq. 7) with cross-validated bandwidths, the
calibration split as reference and the test split as query, and its profile — the LCB of the
evaluated rows against a feature, with per-group polynomial trends (Fig. 6) — which the page,
the report and the Findings page draw from the same function."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from core.audit.results import LcbSection
from core.audit.rows import local_inputs, numeric_features, reference_and_query, tested_class
from core.audit.settings import LocalBiasSettings, _Checked
from core.audit.store import Progress, SectionStore, section
from core.data.audit_data import AuditData
from core.kernels.spec import KernelSpec, one_vs_rest
from core.local.lcb_estimate import LcbEstimate, select_bandwidths
from core.local.lcb_estimate import lcb_estimate as estimate_lcb
from core.local.lcb_trends import lcb_trends, trend_note

#: The x axis when no audit feature is numeric.
PREDICTION = "predicted probability"


def lcb_estimate(reference: AuditData, query: AuditData, features: tuple[str, ...],
                 class_index: int | None, prob_bandwidth: float, feature_bandwidth: float,
                 computation: str = "auto", seed: int = 0) -> LcbEstimate:
    """LCB of the query rows, exact or sampled (:func:`core.local.lcb_estimate.lcb_estimate`:
    exact while that takes at most about 10 s, else 50,000 seeded query rows from 20,000
    seeded reference rows)."""
    probs, y, X, spec = local_inputs(reference, features, class_index)
    spec = spec.with_bandwidths(prob_bandwidth, feature_bandwidth)
    if query is reference:
        return estimate_lcb(probs, y, X, spec=spec, computation=computation, seed=seed)
    q_probs, _, q_X, _ = local_inputs(query, features, class_index)
    return estimate_lcb(probs, y, X, q_probs, q_X, spec=spec, computation=computation,
                        seed=seed)


@section(LocalBiasSettings,
         "tuple: ``(σ_p, σ_x, cross-validation table)``",
         reads=("features", "class_index"),
         data="audit")
def lcb_bandwidths(audit: AuditData, settings: LocalBiasSettings,
                   progress: Progress | None = None, store=None
                   ) -> tuple[float, float, pd.DataFrame]:
    """``(σ_p, σ_x, table)``: LCB bandwidths by leave-one-out cross-validation on the
    reference rows of ``audit`` (:func:`core.audit.rows.reference_and_query`)."""
    reference, _, _ = reference_and_query(audit)
    probs, y, X, spec = local_inputs(reference, settings.features, settings.class_index)
    return select_bandwidths(probs, y, X, class_index=spec.class_index)


@section(LocalBiasSettings,
         "LcbEstimate: the values, the rows evaluated and the plan that ran",
         data="audit")
def lcb_values(audit: AuditData, settings: LocalBiasSettings,
               progress: Progress | None = None, store=None) -> LcbEstimate:
    """LCB of the query rows of ``audit`` at the bandwidths of ``settings``
    (:func:`lcb_estimate`)."""
    reference, query, _ = reference_and_query(audit)
    return lcb_estimate(reference, query, settings.features, settings.class_index,
                        settings.prob_bandwidth, settings.feature_bandwidth,
                        settings.computation, settings.seed)


@section(LocalBiasSettings,
         "LcbSection: the values with the bandwidths and how the rows were chosen",
         data="audit")
def lcb_section(audit: AuditData, settings: LocalBiasSettings,
                progress: Progress | None = None,
                store: SectionStore | None = None) -> LcbSection:
    """The Local bias page: the LCB of the query rows (exact, or sampled on large data:
    :func:`lcb_estimate`) at the bandwidths of ``settings`` — cross-validated when they are
    ``None`` (:func:`lcb_bandwidths`)."""
    store = store or SectionStore()
    _, _, how = reference_and_query(audit)
    cv_p, cv_x, cv_table = store.section(lcb_bandwidths, audit, settings)
    if settings.prob_bandwidth is None:
        settings = replace(settings, prob_bandwidth=cv_p, feature_bandwidth=cv_x)
    estimate = store.section(lcb_values, audit, settings)
    spec = KernelSpec(settings.prob_bandwidth, settings.feature_bandwidth,
                      class_index=tested_class(audit, settings.class_index))
    return LcbSection(estimate.values, spec, cv_table, how, estimate.rows,
                      estimate.describe(), estimate.plan.exact_seconds,
                      estimate.plan.computation)


@dataclass(frozen=True)
class ProfileSettings(_Checked):
    """The LCB profile of a :class:`LocalBiasSettings` section: against ``x_name`` (``None``:
    the first numeric audit feature, else the prediction), coloured by ``color`` and faceted
    by ``facet`` (group attributes or ``None``), with degree-``degree`` trends and
    ``n_resamples`` bootstrap resamples for their bands."""

    lcb: LocalBiasSettings = LocalBiasSettings()
    x_name: str | None = None
    color: str | None = None
    facet: str | None = None
    degree: int = 3
    n_resamples: int = 200
    seed: int = 0


@dataclass(frozen=True)
class LcbProfile:
    """The evaluated rows with an LCB (``points``: x, ``lcb`` and the group columns), the
    trends fitted to them, the sentence on groups without a trend, and how many evaluated
    rows had no reference neighbours (not drawn).

    Attributes
    ----------
    section : LcbSection
        The LCB section drawn.
    points : DataFrame
        The evaluated rows with an LCB: x, ``lcb`` and the group columns.
    x_name : str
        The column LCB is drawn against.
    trends : DataFrame
        The per-group polynomial fits with their bands.
    skipped : str or None
        The sentence on groups without a trend.
    without_neighbours : int
        Evaluated rows without reference neighbours (not drawn).
    """

    section: LcbSection
    points: pd.DataFrame
    x_name: str
    trends: pd.DataFrame
    skipped: str | None
    without_neighbours: int


def axis_options(audit: AuditData, features: tuple[str, ...]) -> list[str]:
    """What LCB can be drawn against: the numeric audit features, else the prediction.

    Parameters
    ----------
    audit : AuditData
        The validated data.
    features : tuple of str
        The audit features of the LCB kernel.
    """
    return numeric_features(audit, features) or [PREDICTION]


@section(ProfileSettings,
         "LcbProfile: the points, their trends and what was left out",
         data="audit")
def lcb_profile(audit: AuditData, settings: ProfileSettings,
                progress: Progress | None = None,
                store: SectionStore | None = None) -> LcbProfile:
    """The LCB section of ``settings.lcb`` (from ``store``) against a feature with
    per-group polynomial trends (:func:`profile_of`)."""
    section = (store or SectionStore()).section(lcb_section, audit, settings.lcb)
    return profile_of(audit, section, settings)


def profile_of(audit: AuditData, section: LcbSection, settings: ProfileSettings
               ) -> LcbProfile:
    """The LCB values of ``section`` (the query rows of ``audit`` it evaluated) against
    ``settings.x_name`` with the group columns ``color`` and ``facet``, and degree-``degree``
    polynomial trends per group with bootstrap bands
    (:func:`core.local.lcb_trends.lcb_trends`); rows without reference neighbours are left
    out and counted."""
    _, query, _ = reference_and_query(audit)
    shown = query if section.rows is None else query.subset(section.rows)
    x_name = settings.x_name or axis_options(audit, settings.lcb.features)[0]
    if x_name == PREDICTION:
        x = one_vs_rest(shown.probs, shown.y, section.spec.class_index)[0]
    else:
        x = shown.feature_frame[x_name].to_numpy(dtype=float)
    points = pd.DataFrame({x_name: x, "lcb": section.values})
    for column in {settings.color, settings.facet} - {None}:
        points[column] = shown.groups[column].to_numpy()
    valid = ~np.isnan(section.values)
    points = points[valid].reset_index(drop=True)
    labels = [points[c].astype(str) for c in (settings.facet, settings.color) if c is not None]
    groups = None
    if labels:
        groups = (labels[0] if len(labels) == 1 else labels[0] + " | " + labels[1]).to_numpy()
    trends = lcb_trends(points[x_name].to_numpy(), points["lcb"].to_numpy(), groups,
                        degree=settings.degree, n_resamples=settings.n_resamples,
                        seed=settings.seed)
    skipped = trend_note(points[x_name].to_numpy(), groups, settings.degree)
    return LcbProfile(section, points, x_name, trends, skipped, int((~valid).sum()))
