"""The LCE landscape section: MLCE against the bandwidth γ (Luo et al. Fig. 1, eq. 5) on a
map of the audit features — a 2-D embedding of the standardised features, or one feature
z-scored — which the page and the report draw from the same pieces."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core import metrics
from core.audit.results import LceSection
from core.audit.settings import LandscapeSettings
from core.audit.store import OnceStore, Progress, SectionStore, section
from core.data.audit_data import AuditData
from core.kernels.resampling import row_sample
from core.local.embedding import (
    Embedding,
    embed,
    landscape_coordinates,
    prepare_features,
    profile_coordinates,
)
from core.local.lce_estimate import mlce_curve

#: γ grid of the MLCE curve (Luo et al., Fig. 1): the page's and the report's.
CURVE_GAMMAS = tuple(float(g) for g in np.logspace(-3, 1.5, 13))
#: Confidence bins of the LCE (the paper's 15 equal-width bins).
LCE_BINS = 15
#: Most rows of the MLCE curve; beyond, a seeded sample of this many (the exact LCE sweep at
#: small γ takes several seconds per γ at 10⁶ rows on two cores).
LCE_ROWS = 200_000


@section(LandscapeSettings,
         "tuple: ``(coordinates, embedding)``; the embedding is ``None`` for one feature",
         reads=("features", "embedding", "seed"))
def feature_map(data: AuditData, settings: LandscapeSettings,
                progress: Progress | None = None, store=None
                ) -> tuple[np.ndarray, Embedding | None]:
    """Coordinates for the LCE: a 2-D embedding of the standardised audit features, rescaled
    (:func:`core.local.embedding.landscape_coordinates`), or, for a single encoded feature
    column, that column z-scored (a 1-D profile, no embedding)."""
    encoded = data.feature_matrix(settings.features)
    if encoded.shape[1] == 1:
        return profile_coordinates(encoded[:, 0]), None
    X = prepare_features(encoded, data.encoded_names(settings.features))
    embedding = embed(X, method=settings.embedding, n_components=2, seed=settings.seed,
                      progress=progress)
    return landscape_coordinates(embedding.coords), embedding


def lce_rows(n: int, seed: int = 0) -> np.ndarray | None:
    """The rows of the MLCE curve: all (``None``) up to :data:`LCE_ROWS`, else a seeded
    sample of that many (:func:`core.kernels.resampling.row_sample`).

    Parameters
    ----------
    n : int
        Rows.
    seed : int, default 0
        Seed of the sample.
    """
    return None if n <= LCE_ROWS else row_sample(n, LCE_ROWS, seed)


def _curve(data: AuditData, settings: LandscapeSettings, gammas, progress, store
           ) -> pd.DataFrame:
    coords, _ = (store or SectionStore()).section(feature_map, data, settings)
    conf, correct = metrics.confidence_outcome(data.probs, data.y, "top-label")
    rows = lce_rows(data.n, settings.seed)
    if rows is not None:
        conf, correct, coords = conf[rows], correct[rows], coords[rows]
    return mlce_curve(conf, correct, coords, list(gammas), n_bins=LCE_BINS,
                      method=settings.computation, progress=progress)


@section(LandscapeSettings,
         "DataFrame: ``gamma, mlce, mean_lce, method, error_bound``",
         reads=("features", "embedding", "seed", "computation"))
def curve_over_gammas(data: AuditData, settings: LandscapeSettings,
                      progress: Progress | None = None, store=None) -> pd.DataFrame:
    """MLCE at every γ of :data:`CURVE_GAMMAS` (:func:`core.local.lce_estimate.mlce_curve`;
    beyond :data:`LCE_ROWS` rows on a seeded sample of them, :func:`lce_rows`)."""
    return _curve(data, settings, CURVE_GAMMAS, progress, store)


@section(LandscapeSettings, "DataFrame: one row, as :func:`curve_over_gammas`")
def curve_at_gamma(data: AuditData, settings: LandscapeSettings,
                   progress: Progress | None = None, store=None) -> pd.DataFrame:
    """MLCE at ``settings.gamma`` alone, on the rows of :func:`curve_over_gammas`."""
    return _curve(data, settings, (float(settings.gamma),), progress, store)


@section(LandscapeSettings,
         "LceSection or None: the curve, MLCE at γ and the MCE; ``None`` without features")
def lce_section(data: AuditData, settings: LandscapeSettings,
                progress: Progress | None = None,
                store: SectionStore | None = None) -> LceSection | None:
    """MLCE over γ on a map of the audit features, with its value at ``settings.gamma``;
    ``None`` when no audit feature is chosen. ``settings.computation`` is the LCE method
    (:func:`core.local.lce_plan.plan_method`: ``"auto"`` keeps exact sums on small data and
    takes the binned grid or the exact sweep on large data). Without a ``store``, its pieces
    share one :class:`~core.audit.store.OnceStore`: the feature map that the curve and its
    value at γ both read is computed once."""
    if not settings.features:
        return None
    store = store or OnceStore()  # without a store, the feature map is still computed once

    def report(start: float, width: float) -> Progress:
        return lambda f, m: progress(start + width * f, m) if progress is not None else None

    _, embedding = store.section(feature_map, data, settings, report(0.0, 0.2))
    curve = store.section(curve_over_gammas, data, settings, report(0.2, 0.8))
    if not np.isclose(curve["gamma"], settings.gamma).any():
        curve = pd.concat([curve, store.section(curve_at_gamma, data, settings)])
        curve = curve.sort_values("gamma", kind="stable").reset_index(drop=True)
    at = float(curve.loc[np.isclose(curve["gamma"], settings.gamma), "mlce"].iloc[0])
    mce = metrics.mce(data.probs, data.y, LCE_BINS, "uniform", notion="top-label")
    method = settings.embedding
    described = "the standardised feature" if embedding is None else \
        f"a 2-D {method.upper() if method == 'pca' else method} map of the standardised features"
    rows = lce_rows(data.n, settings.seed)
    sampled = "" if rows is None else \
        f" The curve is computed on a seeded sample of {rows.size:,} of the {data.n:,} rows."
    return LceSection(curve, at, mce, described, curve_computation(curve) + sampled)


def curve_computation(curve: pd.DataFrame) -> str:
    """One sentence: which LCE computation ran at which γ of an MLCE curve, with the largest
    worst-case error of the binned points.

    Parameters
    ----------
    curve : DataFrame
        An MLCE curve (columns ``gamma``, ``method``, ``error_bound``).
    """
    names = {"pairs": "exact pair sums", "sweep": "the exact sweep",
             "binned": "the binned grid"}
    parts = []
    for name, rows in curve.groupby("method", sort=False):
        low, high = rows["gamma"].min(), rows["gamma"].max()
        where = f"γ = {low:.3g}" if low == high else f"γ from {low:.3g} to {high:.3g}"
        bound = f" (|error| ≤ {rows['error_bound'].max():.2g})" if name == "binned" else ""
        parts.append(f"{names.get(name, name)}{bound} at {where}")
    return "Computed by " + "; ".join(parts) + "."
