"""The Trust section: the KLCE² bandwidth grid with its aggregated test (I-trustworthy eq. 4);
the page's sliders read its cells."""

from __future__ import annotations

from core.audit.rows import local_inputs
from core.audit.settings import TrustSettings
from core.audit.store import Progress, section
from core.data.audit_data import AuditData
from core.stattests.klce_grid import GridTestResult, klce_grid_test


@section(TrustSettings, "GridTestResult: the p-value of every grid point and the aggregated test")
def trust_section(data: AuditData, settings: TrustSettings, progress: Progress | None = None,
                  store=None) -> GridTestResult:
    """The Trust page's verdict: the 5 × 5 bandwidth grid around the median heuristic and its
    aggregated test (:func:`core.stattests.klce_grid.klce_grid_test`; random Fourier features
    with ``settings.grid_features`` per grid point where its plan chooses them)."""
    probs, y, X, spec = local_inputs(data, settings.features, settings.class_index)
    return klce_grid_test(probs, y, X, null=settings.null, n_resamples=settings.grid_resamples,
                          seed=settings.seed, progress=progress, spec=spec,
                          computation=settings.computation, n_features=settings.grid_features)
