"""The Findings section: every slice of the audit features and group attributes tested for a
calibration gap with family-wise or false-discovery error control
(:func:`core.local.slice_discovery.discover_slices`; above
:data:`~core.audit.settings.SAMPLE_ROWS` rows with the max-|T| null drawn on a streamed audit's
seeded sample, :func:`core.local.slice_sampled.sampled_discovery`), and a closer look at one
slice."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core import metrics
from core.audit.local_bias import PREDICTION
from core.audit.results import LcbSection
from core.audit.rows import reference_and_query, slice_frame
from core.audit.settings import SAMPLE_ROWS, FindingsSettings
from core.audit.store import Progress, section
from core.data.audit_data import AuditData
from core.data.table import is_numeric_feature
from core.kernels.resampling import row_sample
from core.kernels.spec import one_vs_rest
from core.local.slice_discovery import SliceDiscovery, discover_slices, with_prediction
from core.local.slice_sampled import sampled_discovery
from core.local.slice_space import Slice


@section(FindingsSettings,
         "SliceDiscovery: every tested slice with its gap, interval and adjusted p-value")
def slice_section(data: AuditData, settings: FindingsSettings,
                  progress: Progress | None = None, store=None) -> SliceDiscovery:
    """The Findings page at ``settings``: every slice of the columns ``settings.names`` of
    the audited rows tested for a calibration gap. Above ``SAMPLE_ROWS`` (200,000) rows by a
    streamed audit's method (``core.local.slice_sampled``): sums over all rows, the ``max-|T|``
    null on the seeded sample a streamed audit of these rows draws, so both give the same
    findings."""
    kwargs = dict(alpha=settings.alpha, error_rate=settings.error_rate,
                  n_ranges=settings.slice_ranges, depth=settings.slice_depth,
                  n_resamples=settings.slice_resamples,
                  notion=settings.notion if not data.is_binary else None,
                  class_names=data.classes, seed=settings.seed, progress=progress)
    frame = slice_frame(data, settings.names)
    if data.n > SAMPLE_ROWS:
        return sampled_discovery(data.probs, data.y, frame,
                                 row_sample(data.n, SAMPLE_ROWS, settings.seed), **kwargs)
    return discover_slices(data.probs, data.y, frame, **kwargs)


def slice_class(discovery: SliceDiscovery, class_name: str) -> int | None:
    """The class a row of the slice table tests one vs rest (``None``: the positive class of
    a binary model, or the top label).

    Parameters
    ----------
    discovery : SliceDiscovery
        The slice findings.
    class_name : str
        The class of a row of its table.
    """
    if discovery.notion != "classwise" or len(discovery.classes) == 1:
        return None
    return discovery.classes.index(class_name)


def slice_reliability(data: AuditData, inside: np.ndarray, notion: str,
                      class_index: int | None, n_bins: int = 10
                      ) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Equal-mass reliability tables of a slice's rows and of the other rows (``None`` when
    the slice holds every row), on the notion its test used (``classwise`` with
    ``class_index``, ``positive`` or ``top-label``), with at most ``n_bins`` bins of at least
    30 rows.

    Parameters
    ----------
    data : AuditData
        The audited rows.
    inside : ndarray of bool
        Which rows lie in the slice.
    notion : str
        The notion its test used.
    class_index : int or None
        The class tested one vs rest.
    n_bins : int, default 10
        Most bins.
    """
    notion = "classwise" if class_index is not None else notion
    tables: list[pd.DataFrame | None] = []
    for rows in (inside, ~inside):
        if not rows.any():
            tables.append(None)
            continue
        bins = max(1, min(n_bins, int(rows.sum()) // 30))
        tables.append(metrics.reliability_table(data.probs[rows], data.y[rows], n_bins=bins,
                                                strategy="quantile", notion=notion,
                                                class_index=class_index))
    return tables[0], tables[1]


def slice_lcb_points(audit: AuditData, section: LcbSection, piece: Slice,
                     names: tuple[str, ...]) -> tuple[pd.DataFrame, str]:
    """The LCB of the evaluated query rows of ``section`` (the Local bias section of
    ``audit``) with whether each lies in the slice ``piece``, beside the numeric column the
    slice is cut on (else the first numeric one, else the prediction).

    Parameters
    ----------
    audit : AuditData
        The validated data (all splits).
    section : LcbSection
        Its Local bias section.
    piece : Slice
        The slice.
    names : tuple of str
        The columns slices are cut from.
    """
    _, query, _ = reference_and_query(audit)
    rows = np.arange(query.n) if section.rows is None else section.rows
    frame = with_prediction(slice_frame(query, names), query.probs).iloc[rows].reset_index(
        drop=True)
    numeric = [c.feature for c in piece.conditions if c.low is not None and c.low != c.high]
    numeric += [n for n in names if is_numeric_feature(frame[n])]
    if numeric:
        x_name = numeric[0]
        x = pd.to_numeric(frame[x_name], errors="coerce").to_numpy(dtype=float)
    else:
        x_name = PREDICTION
        x = one_vs_rest(query.probs[rows], query.y[rows], section.spec.class_index)[0]
    return pd.DataFrame({x_name: x, "lcb": section.values, "inside": piece.mask(frame)}), x_name
