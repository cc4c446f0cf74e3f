"""Curve-based and clinical calibration measures: the integrated calibration index (ICI, E50,
E90, Emax) of a lowess calibration curve, the calibration slope and intercept with Wald
intervals. The tests built on them (Cox, Spiegelhalter) are in
:mod:`core.stattests.clinical`.

These are the numbers clinical-prediction software reports (Harrell's ``rms::val.prob`` in R:
``Eavg`` = ICI, ``E90``, ``Emax``, ``Intercept``, ``Slope``, ``U`` and ``S:z``; Van Calster et
al. 2019, "Calibration: the Achilles heel of predictive analytics", BMC Medicine 17:230).
Every function works on the (confidence, outcome) pair of a calibration notion
(:func:`core.metrics.binned.confidence_outcome`; default: positive for binary problems, top-label
otherwise).

Logits. The logistic recalibration models need ``logit(p)``; predictions of exactly 0 or 1
(a random forest's unanimous votes) are placed half a step of the model's own resolution
beyond its most extreme other prediction (:func:`~core.data.validation.resolvable_bound`: a
forest of 100 trees puts 0 at ``logit(0.00495) = −5.3``, next to its 0.01 at −4.6), as the
recalibration methods do. A prediction that is certain and wrong still pulls the slope
strongly, as it should, but by what the model's scores resolve rather than by an arbitrary
1e-12 (``logit = −27.6``), which let 3% of a forest's rows decide its slope.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit

from core.data.distributions import norm_ppf
from core.data.validation import logit, resolvable_bound
from core.metrics.binning import SortedGroups, grouped_sums
from core.metrics.intervals import check_level
from core.metrics.scores import one_confidence_per_row

#: Cells of the prediction axis (width 2⁻¹²) into which the lowess pools the rows once there
#: are more rows than cells (see :func:`ici`).
CELLS = 4096
#: Fit points of the lowess curve when there are more distinct predictions than this.
FIT_POINTS = 101


def pair(probs: ArrayLike, y: ArrayLike, notion: str | None,
          class_index: int | None) -> tuple[np.ndarray, np.ndarray, str]:
    """Validated confidence and outcome of one notion (classwise needs ``class_index``)."""
    return one_confidence_per_row(probs, y, notion, class_index, "This measure")


# --------------------------------------------------------------------------- lowess and ICI


def _check_span(span: object) -> float:
    try:
        value = float(span)  # type: ignore[arg-type]
    except (TypeError, ValueError) as err:
        raise ValueError(f"span must be a number in (0, 1], not {span!r}.") from err
    if not 0.0 < value <= 1.0:
        raise ValueError(f"span is the share of rows in each local fit and must lie in (0, 1]; "
                         f"got {span!r}.")
    return value


def _point_layout(conf: np.ndarray) -> tuple[np.ndarray, int, np.ndarray | None]:
    """Each row's fit point: ``(ids, points, values)`` — the sorted distinct predictions
    (``values``) up to ``CELLS`` rows, else ``CELLS`` cells of width 1/CELLS (``values``
    ``None``: a cell enters at its rows' mean prediction)."""
    if conf.shape[0] <= CELLS:
        values, ids = np.unique(conf, return_inverse=True)
        return ids, values.shape[0], values
    return np.minimum((conf * CELLS).astype(np.int64), CELLS - 1), CELLS, None


def _points(values: np.ndarray | None, counts: np.ndarray, conf_sums: np.ndarray,
            outcome_sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fit points holding rows, from the per-point row counts and sums of
    :func:`_point_layout`'s points: ``(x, counts, outcome sums)``."""
    used = counts > 0
    x = conf_sums[used] / counts[used] if values is None else values[used]
    return x, counts[used], outcome_sums[used]


def _weighted_points(conf: np.ndarray, outcome: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted distinct predictions (or cell means above ``CELLS`` rows) with their row
    counts and outcome sums. Tied rows get equal tricube weights, so pooling them is exact."""
    ids, size, values = _point_layout(conf)
    counts = np.bincount(ids, minlength=size).astype(np.float64)
    conf_sums, outcome_sums = grouped_sums(ids, (conf, outcome), size)
    return _points(values, counts, conf_sums, outcome_sums)


def _neighbour_distance(x: np.ndarray, cumulative: np.ndarray, at: np.ndarray,
                        q: int) -> np.ndarray:
    """Distance from each fit point to its q-th nearest row (rows counted with multiplicity),
    by bisection to machine precision on ``#{rows within r} ≥ q``."""
    low = np.zeros_like(at)
    high = np.maximum(at - x[0], x[-1] - at)
    for _ in range(64):
        mid = (low + high) / 2
        inside = (cumulative[np.searchsorted(x, at + mid, side="right")]
                  - cumulative[np.searchsorted(x, at - mid, side="left")])
        enough = inside >= q
        high = np.where(enough, mid, high)
        low = np.where(enough, low, mid)
    return high


def lowess_curve(conf: np.ndarray, outcome: np.ndarray, span: float = 2 / 3,
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Lowess calibration curve (Cleveland 1979, no robustness iterations): fit points and
    fitted values of ``E[outcome | confidence]``. Inputs are trusted (see :func:`ici`).

    At a point ``x₀`` with ``h`` the distance to the ``q = ⌊span·n⌋``-th nearest row
    (``2 ≤ q ≤ n``), rows get tricube weights ``w = (1 − (|x − x₀|/h)³)³`` (0 beyond h), and
    the fit is the weighted least-squares line at ``x₀``; when the weighted spread of x is at
    most 0.001 of the range of x the weighted mean is used instead — both as R's ``lowess``
    (``clowess``).
    """
    return _lowess_of_points(*_weighted_points(conf, outcome), span)


def _lowess_of_points(x: np.ndarray, counts: np.ndarray, sums: np.ndarray, span: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`lowess_curve` of the sorted distinct points ``x`` holding ``counts`` rows whose
    outcomes sum to ``sums``."""
    n = counts.sum()
    q = int(min(max(np.floor(span * n + 1e-7), 2), n))
    at = x if x.shape[0] <= FIT_POINTS else np.linspace(x[0], x[-1], FIT_POINTS)
    cumulative = np.concatenate([[0.0], np.cumsum(counts)])
    h = _neighbour_distance(x, cumulative, at, q)
    spread = 0.001 * (x[-1] - x[0])
    fitted = np.empty_like(at)
    for start in range(0, at.shape[0], 32):
        g, hg = at[start:start + 32], h[start:start + 32]
        lo = np.searchsorted(x, (g - hg).min(), side="left")
        hi = np.searchsorted(x, (g + hg).max(), side="right")
        centre = g.mean()  # moments about a nearby point keep the variances accurate
        xs = x[lo:hi] - centre
        d = xs[None, :] - (g - centre)[:, None]
        u = np.divide(np.abs(d), hg[:, None], out=np.full_like(d, 2.0), where=hg[:, None] > 0)
        np.minimum(u, 1.0, out=u)
        tri = (1.0 - u**3) ** 3
        tied = hg == 0  # the q nearest rows all sit at the fit point: they alone count
        tri[tied] = d[tied] == 0
        c, s_y = counts[lo:hi], sums[lo:hi]
        moments = tri @ np.column_stack([c, c * xs, c * xs * xs, s_y, s_y * xs])
        total = moments[:, 0]
        mean_x = moments[:, 1] / total
        var_x = np.maximum(moments[:, 2] / total - mean_x**2, 0.0)
        mean_y = moments[:, 3] / total
        cov = moments[:, 4] / total - mean_x * mean_y
        linear = np.sqrt(var_x) > spread
        slope = np.divide(cov, var_x, out=np.zeros_like(var_x), where=linear)
        fitted[start:start + 32] = mean_y + slope * ((g - centre) - mean_x)
    return at, fitted


def ici(probs: ArrayLike, y: ArrayLike, span: float = 2 / 3, notion: str | None = None,
        class_index: int | None = None) -> dict[str, float]:
    """Integrated calibration index and its quantiles (Austin & Steyerberg 2019, "The
    Integrated Calibration Index (ICI) and related metrics for quantifying the calibration of
    logistic regression models", Statistics in Medicine 38:4051–4065).

    With ``ĉ`` the lowess calibration curve of the outcomes on the predictions
    (:func:`lowess_curve`) and ``e_i = |ĉ(p_i) − p_i|``::

        ICI = mean_i e_i,   E50 = median_i e_i,   E90 = 90th percentile,   Emax = max_i e_i

    Convention: ``rms::val.prob`` (Harrell), whose Eavg, E90 and Emax these are — R's
    ``lowess(p, y, iter = 0)`` with span f = 2/3, a local *linear* fit, evaluated at every
    prediction by linear interpolation; quantiles by linear interpolation (R type 7). Austin &
    Steyerberg's own code used ``loess`` (span 0.75, local quadratic); the curve differs a
    little, the definition of the index does not. The curve is fitted at every distinct
    prediction when there are at most ``FIT_POINTS`` of them, else at ``FIT_POINTS`` equally
    spaced points (R's lowess likewise fits every ``delta`` = 1% of the range and
    interpolates). Above ``CELLS`` rows, rows are pooled into ``CELLS`` cells of width 2⁻¹²
    on the prediction axis, each entering at its mean prediction with its row count, so the
    cost is O(n) plus O(``FIT_POINTS``·``CELLS``): a cell's weight sum moves from
    ``Σ w(x_i)`` to ``n_b w(x̄_b)``, a relative change of order ``(2⁻¹²/h)²`` (the first-order
    term vanishes at the mean), below 10⁻⁴ for neighbourhoods wider than h = 0.025.

    Parameters
    ----------
    probs, y
        Predictions and labels (DESIGN.md conventions).
    span
        Share of the rows in each local neighbourhood, in (0, 1].
    notion, class_index
        The (confidence, outcome) pair; classwise needs ``class_index``.

    Returns
    -------
    dict
        ``{"ici", "e50", "e90", "emax"}``, each in [0, 1].
    """
    span = _check_span(span)
    conf, outcome, _ = pair(probs, y, notion, class_index)
    return ici_of(conf, outcome, span)


def ici_of(conf: np.ndarray, outcome: np.ndarray, span: float = 2 / 3) -> dict[str, float]:
    """:func:`ici` of one validated (confidence, outcome) pair (no input checks)."""
    at, fitted = lowess_curve(conf, outcome, span)
    return _error_summary(np.abs(np.interp(conf, at, fitted) - conf))


def _error_summary(errors: np.ndarray) -> dict[str, float]:
    """ICI, E50, E90 and Emax of the rows' errors ``e_i = |ĉ(p_i) − p_i|`` (type-7 quantiles,
    both from one partition)."""
    e50, e90 = np.quantile(errors, [0.5, 0.9])
    return {"ici": float(errors.mean()), "e50": float(e50), "e90": float(e90),
            "emax": float(errors.max())}


class ResampledIci:
    """:func:`ici_of` of bootstrap resamples of one (confidence, outcome) pair whose rows are
    sorted by confidence, each resample given by its rows' counts.

    The rows' fit points (:func:`_point_layout`) are found once; a resample
    then costs one weighted segmented sum over the rows
    (:class:`~core.metrics.binning.SortedGroups`), the lowess fit on the cells, and the
    errors of the rows repeated by their counts — the value :func:`ici_of` gives on those
    rows, to rounding.
    """

    def __init__(self, conf: np.ndarray, outcome: np.ndarray, span: float = 2 / 3) -> None:
        self._conf, self._span = conf, span
        ids, size, self._values = _point_layout(conf)
        self._columns = np.stack([np.ones(conf.shape[0]), conf, outcome])
        self._groups = SortedGroups(ids, size)

    def __call__(self, counts: np.ndarray) -> dict[str, float]:
        at, fitted = _lowess_of_points(*_points(self._values,
                                                *self._groups.sums(self._columns * counts)),
                                       self._span)
        errors = np.abs(np.interp(self._conf, at, fitted) - self._conf)
        return _error_summary(np.repeat(errors, counts))


# --------------------------------------------------------------------------- logistic models


@dataclass(frozen=True)
class LogisticFit:
    """Maximum-likelihood fit of ``logit P(y=1) = a + b·z`` (or with b fixed at 1)."""

    intercept: float
    slope: float
    covariance: np.ndarray = field(repr=False)
    log_likelihood: float
    iterations: int


def confidence_logit(conf: np.ndarray) -> np.ndarray:
    """``logit(conf)`` with saturated predictions clipped at the bound their own resolution
    gives (:func:`~core.data.validation.resolvable_bound`; see the module's note on logits)."""
    return logit(conf, resolvable_bound(conf))


def log_likelihood(eta: np.ndarray, outcome: np.ndarray) -> float:
    """``Σ y η − log(1 + e^η)``, computed without overflow."""
    return float(np.sum(outcome * eta - np.logaddexp(0.0, eta)))


def logistic_fit(z: np.ndarray, outcome: np.ndarray, fit_slope: bool = True,
                 max_iter: int = 100) -> LogisticFit:
    """Newton–Raphson (IRLS) for ``logit P(y=1) = a + b z`` (``fit_slope=False``: ``a + z``,
    the offset model), started at (0, 1) — the calibrated model. Converges when the Newton
    step is below 1e-10; the covariance is the inverse observed information
    ``[Σ w (1, z)ᵀ(1, z)]⁻¹``, ``w = μ(1 − μ)``. Inputs are trusted; outcomes of one kind only,
    or predictions that separate the outcomes, have no finite estimate and raise a ValueError.
    """
    if outcome.min() == outcome.max():
        raise ValueError(
            "The calibration intercept and slope need both outcomes; every row has outcome "
            f"{int(outcome[0])}, so the logistic fit has no finite solution."
        )
    a, b = 0.0, 1.0
    for iteration in range(1, max_iter + 1):
        info, grad = _information(z, outcome, a, b, fit_slope)
        try:
            step = np.linalg.solve(info, grad)
        except np.linalg.LinAlgError as err:
            raise ValueError("The logistic recalibration has no unique solution: the "
                             "predictions take a single value or separate the outcomes.") from err
        a += step[0]
        if fit_slope:
            b += step[1]
        if np.max(np.abs(step)) < 1e-10:
            # the information of this iteration: the final step (< 1e-10) leaves it unchanged
            return LogisticFit(float(a), float(b), np.linalg.inv(info),
                               log_likelihood(a + b * z, outcome), iteration)
    raise ValueError(
        f"The logistic recalibration did not converge in {max_iter} Newton steps: the "
        "predictions (nearly) separate the outcomes, so the slope is not finite."
    )


def _information(z: np.ndarray, outcome: np.ndarray, a: float, b: float,
                 fit_slope: bool) -> tuple[np.ndarray, np.ndarray]:
    """Observed information and score of the logistic model at (a, b)."""
    mu = expit(a + b * z)
    w = mu * (1.0 - mu)
    resid = outcome - mu
    if not fit_slope:
        return np.array([[w.sum()]]), np.array([resid.sum()])
    wz = w * z
    info = np.array([[w.sum(), wz.sum()], [wz.sum(), float(np.dot(wz, z))]])
    return info, np.array([resid.sum(), float(np.dot(resid, z))])


def calibration_slope(probs: ArrayLike, y: ArrayLike, level: float = 0.95,
                      notion: str | None = None, class_index: int | None = None
                      ) -> dict[str, float]:
    """Calibration slope and intercept with Wald intervals (Cox 1958, "Two further
    applications of a model for binary regression", Biometrika 45:562–565; Van Calster et al.
    2019).

    * ``slope``: b of the logistic recalibration ``logit P(y=1) = a + b·logit(p)``; 1 when
      calibrated, below 1 when the predictions are too extreme (overfitting), above 1 when
      too modest. ``joint_intercept`` is that model's a (``rms::val.prob``'s "Intercept").
    * ``intercept``: calibration-in-the-large, a of ``logit P(y=1) = a + logit(p)`` (slope
      fixed at 1, logit(p) as offset); 0 when calibrated, < 0 when the predictions are too
      high on average.

    Wald intervals ``estimate ± z_{(1+level)/2}·SE`` with SE from the inverse observed
    information of each maximum-likelihood fit (:func:`logistic_fit`).

    Parameters
    ----------
    probs, y
        Predictions and labels (DESIGN.md conventions).
    level
        Confidence level of the intervals.
    notion, class_index
        The (confidence, outcome) pair; classwise needs ``class_index``.

    Returns
    -------
    dict
        ``slope, slope_se, slope_low, slope_high, intercept, intercept_se, intercept_low,
        intercept_high, joint_intercept, level``.
    """
    level = check_level(level)
    conf, outcome, _ = pair(probs, y, notion, class_index)
    z = confidence_logit(conf)
    joint = logistic_fit(z, outcome, fit_slope=True)
    offset = logistic_fit(z, outcome, fit_slope=False)
    crit = float(norm_ppf(0.5 + level / 2))
    slope_se = float(np.sqrt(joint.covariance[1, 1]))
    intercept_se = float(np.sqrt(offset.covariance[0, 0]))
    return {
        "slope": joint.slope, "slope_se": slope_se,
        "slope_low": joint.slope - crit * slope_se, "slope_high": joint.slope + crit * slope_se,
        "intercept": offset.intercept, "intercept_se": intercept_se,
        "intercept_low": offset.intercept - crit * intercept_se,
        "intercept_high": offset.intercept + crit * intercept_se,
        "joint_intercept": joint.intercept, "level": level,
    }

