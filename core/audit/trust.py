"""The Trust section: the KLCE² bandwidth grid with its aggregated test, and the single test
at one bandwidth pair the page's sliders choose (I-trustworthy eq. 4)."""

from __future__ import annotations

from dataclasses import dataclass

from core.audit.rows import local_inputs
from core.audit.settings import TrustSettings, _Checked
from core.audit.store import Progress, section
from core.data.audit_data import AuditData
from core.kernels.rff import TEST_FEATURES
from core.kernels.spec import inputs_for
from core.stattests.klce import DEFAULT_NULL, klce_test
from core.stattests.klce_grid import GridTestResult, klce_grid_test
from core.stattests.result import TestResult


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


@section(TrustSettings, "tuple of float: ``(σ_p, σ_x)``", reads=("features", "class_index"))
def median_bandwidths(data: AuditData, settings: TrustSettings,
                      progress: Progress | None = None, store=None) -> tuple[float, float]:
    """The median-heuristic σ_p and σ_x the grid and the page's sliders are centred on."""
    probs, y, X, spec = local_inputs(data, settings.features, settings.class_index)
    inputs = inputs_for(probs, y, X, spec)
    return inputs.prob_bandwidth, inputs.feature_bandwidth


@dataclass(frozen=True)
class PairSettings(_Checked):
    """One KLCE test at the bandwidths ``prob_bandwidth`` and ``feature_bandwidth``."""

    features: tuple[str, ...] = ()
    class_index: int | None = None
    prob_bandwidth: float = 1.0
    feature_bandwidth: float = 1.0
    null: str = DEFAULT_NULL
    test_resamples: int = 500
    computation: str = "auto"
    seed: int = 0


@section(PairSettings, "TestResult: the KLCE test at the pair")
def klce_pair(data: AuditData, settings: PairSettings, progress: Progress | None = None,
              store=None) -> TestResult:
    """The KLCE test at one bandwidth pair (:func:`core.stattests.klce.klce_test`)."""
    probs, y, X, spec = local_inputs(data, settings.features, settings.class_index)
    return klce_test(probs, y, X, null=settings.null, n_resamples=settings.test_resamples,
                     spec=spec.with_bandwidths(settings.prob_bandwidth,
                                               settings.feature_bandwidth),
                     computation=settings.computation, n_features=TEST_FEATURES,
                     seed=settings.seed)
