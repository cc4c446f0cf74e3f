"""The Trust section: the KLCE² bandwidth grid with its aggregated test (I-trustworthy eq. 4);
the page's sliders read its cells."""

from __future__ import annotations

from core.audit.rows import local_inputs
from core.audit.settings import TrustSettings
from core.audit.store import Progress, section
from core.data.audit_data import AuditData
from core.kernels.rff import TEST_FEATURES
from core.stattests.klce_grid import GridTestResult, klce_grid_test


def klce_grid(data: AuditData, features: tuple[str, ...], class_index: int | None,
              null: str, n_resamples: int, seed: int = 0,
              progress: Progress | None = None, computation: str = "auto",
              n_features: int = TEST_FEATURES) -> GridTestResult:
    """The Trust page's bandwidth grid and aggregated KLCE test (``computation``: see
    :mod:`core.kernels.computation`; random Fourier features with ``n_features`` per grid point)."""
    probs, y, X, spec = local_inputs(data, features, class_index)
    return klce_grid_test(probs, y, X, null=null, n_resamples=n_resamples, seed=seed,
                          progress=progress, spec=spec, computation=computation,
                          n_features=n_features)


@section(TrustSettings, "GridTestResult: the p-value of every grid point and the aggregated test")
def trust_section(data: AuditData, settings: TrustSettings, progress: Progress | None = None,
                  store=None) -> GridTestResult:
    """The Trust page's verdict: the 5 × 5 bandwidth grid around the median heuristic and its
    aggregated test (:func:`klce_grid`)."""
    return klce_grid(data, settings.features, settings.class_index, settings.null,
                     settings.grid_resamples, settings.seed, progress, settings.computation,
                     settings.grid_features)
