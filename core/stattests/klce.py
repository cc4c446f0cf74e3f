"""Kernel local calibration error (KLCE²) and its test (Vashistha & Farahi, I-trustworthy).

For a binary problem (or one class against the rest) with residuals ``e_i = y_i − p_i``, the
KLCE² estimator (eq. 4) is the U-statistic

    KLCE² = 1/(n(n−1)) Σ_{i≠j} e_i k(p_i, p_j) l(x_i, x_j) e_j,

with Gaussian kernels on the predictions, ``k(p, p') = exp(−(p − p')²/(2σ_p²))``, and on the
(standardised) audit features, ``l(x, x') = exp(−‖x − x'‖²/(2σ_x²))``. Their product is one
Gaussian kernel on ``[p/σ_p, x/σ_x]`` (:func:`core.kernels.tiles.scale_blocks`), so every statistic
and every resample goes through the tile engine in one pass. ``σ = None`` means the median
heuristic; ``σ = inf`` makes that kernel ≡ 1 (prediction kernel only, as in the paper's
Type-I study, or feature kernel only).

Testing H0 "the model is locally calibrated", i.e. ``P(y = 1 | p, x) = p``: each null scheme
of :mod:`core.kernels.resampling` gives B resampled residual vectors; all of them are columns of one
matrix E, and the B + 1 statistics are ``diag(Eᵀ K E)`` minus the diagonal terms.

The *centred* statistic replaces e by e − ē (equivalently K by HKH, H = I − 11ᵀ/n) in the
observed and in every resampled vector. A wide kernel is nearly constant, and then
``Σ_{i≠j} K_ij e_i e_j ≈ c((Σe)² − Σe²)``: the statistic is dominated by the global term
(Σe)², whose large null variance hides local structure. Centring removes that term; with
consistency resampling the test stays exact (the resamples are exact draws from H0 given p
and x, and any fixed function of them — the centred statistic included — is calibrated by
them). What centring gives up is power against a miscalibration that is the same constant
everywhere, which the global SKCE test on the Reliability page covers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from core.data.distributions import norm_sf
from core.data.validation import check_choice, check_count, check_probs_labels
from core.kernels import engine
from core.kernels.computation import plan as computation_plan
from core.kernels.resampling import resample_residuals
from core.kernels.rff import DEFAULT_FEATURES, FourierMap, accumulate_maps, bernoulli_columns
from core.kernels.spec import KernelInputs, KernelSpec, inputs_for, product_points, spec_from
from core.kernels.tiles import kernel_matmul, quadratic_forms
from core.metrics.skce_estimate import block_estimates
from core.stattests.result import TestResult, paper_p_value, resampling_p_value

#: Nulls offered by :func:`klce_test` (each holds its level; see the size and power study in
#: ``benchmarks/klce_null_study.py``): a resampling scheme and the statistic it calibrates.
NULLS = ("consistency-combined", "consistency-centred", "consistency", "permutation", "wild",
         "bootstrap")
#: Also measured by the study but not offered: resampling centred residuals with
#: replacement ignores that residual variances differ by row and rejects too often (≈ 0.06
#: at α = 0.05).
STUDIED_NULLS = (*NULLS, "bootstrap-centred")
DEFAULT_NULL = "consistency-combined"
#: One sentence per null, for the app.
NULL_EXPLANATIONS = {
    "consistency-combined": "Labels are redrawn from the model's own probabilities (the exact "
    "null 'locally calibrated'), and the larger of the standardised plain and centred KLCE² "
    "is compared with the same maximum over the redraws: exact level, power against both "
    "local and global miscalibration.",
    "consistency-centred": "Labels redrawn from the probabilities; the statistic uses centred "
    "residuals, so a wide kernel's global term (Σe)² cannot drown local structure — exact "
    "level, most power for local bias, little for a purely global offset.",
    "consistency": "Labels redrawn from the probabilities, plain KLCE²: exact level, but with "
    "wide kernels the global term dominates and local power drops.",
    "permutation": "Residuals shuffled across rows (the paper authors' code): close to "
    "nominal level, keeps Σe fixed and so cannot see a global offset.",
    "wild": "Residuals multiplied by random signs: asymptotic level, power like plain "
    "consistency resampling.",
    "bootstrap": "Residuals drawn with replacement (the paper's Algorithm 1): the null is "
    "shifted up by n·ē², so the test almost never rejects.",
}
#: Largest number of resample columns per tile-engine pass (memory n × columns × 8 bytes).
MAX_COLUMNS = 2048


def klce(
    probs: np.ndarray,
    y: np.ndarray,
    X: np.ndarray | None,
    prob_bandwidth: float | None = None,
    feature_bandwidth: float | None = None,
    standardize: bool = True,
    class_index: int | None = None,
    *,
    spec: KernelSpec | None = None,
) -> float:
    """KLCE² U-statistic, I-trustworthy eq. 4: ``Σ_{i≠j} e_i k_ij l_ij e_j / (n(n−1))``.

    The kernel settings come as the keyword arguments or as one :class:`KernelSpec`.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    X : array_like or None
        ``(n, d)`` numeric audit features (one-hot encoded categoricals); ``None`` or no
        columns: the prediction kernel alone.
    prob_bandwidth, feature_bandwidth : float, optional
        Bandwidths of the prediction and feature kernels; ``None``: the median heuristic.
    standardize : bool, default True
        Scale each feature column to unit spread before the feature kernel.
    class_index : int, optional
        For several classes: the class whose residual is tested (default: every class).
    spec : KernelSpec, optional
        The kernel settings as one value (:class:`core.kernels.KernelSpec`), instead of the
        keyword arguments above.

    Returns
    -------
    float
        KLCE², unbiased (may be negative).
    """
    inputs = checked_inputs(probs, y, X, spec_from(spec, prob_bandwidth, feature_bandwidth,
                                                    standardize, class_index))
    n = inputs.p.shape[0]
    return float(quadratic_forms(inputs.points, inputs.residuals, 1.0) / (n * (n - 1)))


def checked_inputs(probs: np.ndarray, y: np.ndarray, X: np.ndarray | None,
                    spec: KernelSpec) -> KernelInputs:
    """Validate the public inputs once, then the kernel coordinates (at least three rows)."""
    p, labels = check_probs_labels(probs, y)
    if p.shape[0] < 3:
        raise ValueError("KLCE needs at least three rows.")
    return inputs_for(p, labels, X, spec)


# --------------------------------------------------------------------------- resampling

#: Null name → (resampling scheme, statistic variants it tests with).
_NULL_SCHEMES = {
    "consistency-combined": ("consistency", ("plain", "centred")),
    "consistency-centred": ("consistency", ("centred",)),
    "consistency": ("consistency", ("plain",)),
    "permutation": ("permutation", ("plain",)),
    "wild": ("wild", ("plain",)),
    "bootstrap": ("bootstrap", ("plain",)),
    "bootstrap-centred": ("bootstrap-centred", ("plain",)),
}


def null_scheme(null: str) -> tuple[str, tuple[str, ...]]:
    check_choice(null, _NULL_SCHEMES, "null", f"choose one of {', '.join(STUDIED_NULLS)}")
    return _NULL_SCHEMES[null]


def residual_columns(
    null: str, e: np.ndarray, p: np.ndarray, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """``(n, B + 1)``: column 0 the observed residuals, then B draws under the null's scheme.

    ``bootstrap-centred`` resamples centred residuals: it removes the shift (Σe)² that
    drawing with replacement adds to the null of the plain statistic.
    """
    scheme, _ = null_scheme(null)
    E = np.empty((e.shape[0], n_resamples + 1))
    E[:, 0] = e
    E[:, 1:] = resample_residuals(scheme, e, p, n_resamples, rng)
    return E


def variant_statistics(points: np.ndarray, E: np.ndarray, variants: Sequence[str],
                       n_jobs: int | None = None) -> np.ndarray:
    """``(len(variants), B + 1)``: the plain and/or centred KLCE² of every column of E.

    One tile-engine pass gives the plain forms ``Q_b = Σ_{i≠j} K_ij e_ib e_jb`` (in passes of
    at most ``MAX_COLUMNS`` columns). The centred forms need no second set of columns: with
    ``ē_b`` the column mean and ``r = K·1`` the kernel row sums (one more, one-column pass),

        Σ_{i≠j} K_ij (e_i − ē)(e_j − ē) = Q − 2ē (rᵀe − Σe) + ē² (Σr − n)

    since ``K_ii = 1``.
    """
    n = points.shape[0]
    plain = np.concatenate([
        quadratic_forms(points, E[:, start:start + MAX_COLUMNS], 1.0, n_jobs=n_jobs)
        for start in range(0, E.shape[1], MAX_COLUMNS)])
    rows = {"plain": plain}
    if "centred" in variants:
        r = kernel_matmul(points, points, np.ones(n), 1.0, n_jobs=n_jobs)
        means = E.mean(axis=0)
        rows["centred"] = (plain - 2.0 * means * (r @ E - E.sum(axis=0))
                           + means**2 * (r.sum() - n))
    return np.stack([rows[variant] for variant in variants]) / (n * (n - 1))


def standardized_maximum(values: np.ndarray) -> np.ndarray:
    """``max_v z_v`` per column, ``z_v = (T_v − mean_v)/sd_v`` over all columns of variant v.

    The mean and sd use the observed and the resampled columns alike — a symmetric function
    of all B + 1 columns — so exchangeability under H0, hence the exact level of a
    consistency test, carries over to the maximum.
    """
    flat = values.reshape(-1, values.shape[-1])
    sd = flat.std(axis=1, keepdims=True)
    z = (flat - flat.mean(axis=1, keepdims=True)) / np.where(sd > 0, sd, 1.0)
    return z.max(axis=0)


def klce_test(
    probs: np.ndarray,
    y: np.ndarray,
    X: np.ndarray | None,
    prob_bandwidth: float | None = None,
    feature_bandwidth: float | None = None,
    standardize: bool = True,
    null: str = DEFAULT_NULL,
    n_resamples: int = 500,
    seed: int = 0,
    class_index: int | None = None,
    *,
    spec: KernelSpec | None = None,
    computation: str = "auto",
    n_features: int = DEFAULT_FEATURES,
    block_size: int = 2,
) -> TestResult:
    """Test H0 "locally calibrated" with KLCE²; all B null statistics in one kernel pass.

    For a null with one statistic, ``statistic`` is its observed value (the KLCE², or the
    centred KLCE²) and the p-value ``(1 + #{null ≥ statistic}) / (1 + B)``. For
    ``consistency-combined`` the statistic is the larger of the standardised plain and
    centred KLCE² (:func:`standardized_maximum`), compared with the same maximum over the
    resamples. ``p_value_paper`` is the paper's ``#{null > statistic} / B``;
    ``parameters["klce"]`` always holds the plain KLCE² of eq. 4 and ``parameters["spec"]``
    the resolved :class:`KernelSpec` (bandwidths filled in).

    ``computation`` (:mod:`core.kernels.computation`): ``"exact"`` tiles; ``"rff"`` random Fourier
    features with ``n_features`` features (consistency nulls only; the level stays exact,
    :mod:`core.kernels.rff`); ``"block"`` the linear-time block z-test of the plain KLCE² (blocks of
    ``block_size`` rows); ``"auto"`` exact while it takes at most a few seconds here, else
    rff, with D and B sized to the data (:func:`core.kernels.computation.plan`).
    ``parameters["computation"]`` says which ran and why.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    X : array_like or None
        ``(n, d)`` numeric audit features (one-hot encoded categoricals); ``None`` or no
        columns: the prediction kernel alone.
    prob_bandwidth, feature_bandwidth : float, optional
        Bandwidths of the prediction and feature kernels; ``None``: the median heuristic.
    standardize : bool, default True
        Scale each feature column to unit spread before the feature kernel.
    null : str
        The null distribution, one of :data:`NULLS` (default ``"consistency-combined"``; the
        choice is measured in the documentation's KLCE null study).
    n_resamples : int, default 500
        Resamples B of the null.
    seed : int, default 0
        Seed of the resamples.
    class_index : int, optional
        For several classes: the class whose residual is tested (default: every class).
    spec : KernelSpec, optional
        The kernel settings as one value (:class:`core.kernels.KernelSpec`), instead of the
        keyword arguments above.
    computation : {"auto", "exact", "rff", "block"}
        How the kernel sums are computed (:mod:`core.kernels.computation`).
    n_features : int
        Random Fourier features D of ``"rff"``.
    block_size : int, default 2
        Block size of the ``"block"`` computation.

    Returns
    -------
    TestResult
        The statistic, its p-value, the null statistics; ``parameters["klce"]`` and
        ``parameters["spec"]``.
    """
    inputs = checked_inputs(probs, y, X, spec_from(spec, prob_bandwidth, feature_bandwidth,
                                                    standardize, class_index))
    scheme, variants = null_scheme(null)
    n_resamples = check_count("n_resamples", n_resamples, 1)
    n = inputs.p.shape[0]
    chosen = computation_plan(computation, n, n_resamples, n_features,
                              exact_only(scheme, null))
    label, reason = chosen.label, chosen.reason
    n_resamples, n_features = chosen.n_resamples, chosen.n_features
    if label == "block":
        return _block_test(inputs, check_count("block_size", block_size, 2), reason)
    tested = variants if "plain" in variants else ("plain", *variants)
    if label == "exact":
        E = residual_columns(null, inputs.residuals, inputs.p, n_resamples,
                             np.random.default_rng(seed))
        values = variant_statistics(inputs.points, E, tested)
    else:
        values = fourier_statistics(inputs, [(inputs.prob_bandwidth, inputs.feature_bandwidth)],
                                    n_resamples, tested, n_features, seed)[0]
    by_variant = dict(zip(tested, values, strict=True))
    combined = len(variants) > 1
    series = standardized_maximum(values) if combined else by_variant[variants[0]]
    observed, resampled = series[0], series[1:]
    return TestResult(
        statistic=float(observed), p_value=resampling_p_value(observed, resampled),
        null=resampled, method=null, n_resamples=n_resamples,
        parameters={"prob_bandwidth": inputs.prob_bandwidth,
                    "feature_bandwidth": inputs.feature_bandwidth,
                    "standardize": inputs.spec.standardize, "seed": seed,
                    "class_index": inputs.spec.class_index, "spec": inputs.spec,
                    "engine": engine.current().describe(), "computation": label,
                    "computation_reason": reason,
                    "exact_seconds": chosen.exact_seconds,
                    "klce": float(by_variant["plain"][0]),
                    **({"klce_centred": float(by_variant["centred"][0])}
                       if "centred" in by_variant else {}),
                    "statistic": "max standardised (plain, centred)" if combined else
                    f"{variants[0]} KLCE²"},
        p_value_paper=paper_p_value(observed, resampled),
    )


def exact_only(scheme: str, null: str) -> str | None:
    """Why a null cannot use random Fourier features (``None`` when it can)."""
    if scheme == "consistency":
        return None
    return (f"The '{null}' null needs the exact computation; random Fourier features are "
            "offered for the consistency nulls, whose resamples can be drawn chunk by chunk.")


def fourier_statistics(base: KernelInputs, bandwidths: Sequence[tuple[float, float]],
                       n_resamples: int, variants: Sequence[str], n_features: int, seed: int,
                       progress: Callable[[float], None] | None = None) -> np.ndarray:
    """``(len(bandwidths), len(variants), B + 1)`` plain / centred KLCE² under random Fourier
    features at each ``(σ_p, σ_x)`` pair, from one pass over the rows with the consistency
    resamples drawn row by row (:mod:`core.kernels.rff`). Every pair uses the same W on the
    unscaled coordinates ``[p, x]``, divided by its bandwidths, so a grid point and a single
    test at the same bandwidths give the same statistic."""
    n = base.p.shape[0]
    coordinates = product_points(base.p, base.features, 1.0, 1.0)
    fourier, per_column = fourier_maps(coordinates.shape[1], base.n_features, bandwidths,
                                       n_features, seed)
    sums = accumulate_maps(coordinates,
                           bernoulli_columns(base.p, base.residuals, n_resamples, seed),
                           fourier, per_column, progress=progress)
    return fourier_values(sums, variants, n)


def fourier_maps(dimension: int, n_x: int, bandwidths: Sequence[tuple[float, float]],
                 n_features: int, seed: int) -> tuple[FourierMap, np.ndarray]:
    """The random map of :func:`fourier_statistics` on ``[p, x]`` coordinates of
    ``dimension`` columns (``n_x`` of them features) and the per-column bandwidths of each
    ``(σ_p, σ_x)`` pair (a streamed test accumulates the same maps partition by partition)."""
    fourier = FourierMap.draw(dimension, n_features, seed)
    per_column = np.array([[sigma_p] + [sigma_x] * n_x for sigma_p, sigma_x in bandwidths])
    return fourier, per_column


def fourier_values(sums: Sequence, variants: Sequence[str], n: int) -> np.ndarray:
    """``(maps, variants, B + 1)`` KLCE² of each map's :class:`~core.kernels.rff.FourierSums`."""
    return np.stack([np.stack([getattr(s, variant)() for variant in variants]) for s in sums]
                    ) / (n * (n - 1))


def _block_test(inputs: KernelInputs, block_size: int, reason: str) -> TestResult:
    """The linear-time block z-test of the plain KLCE² (Widmann et al. 2019's block test,
    with the KLCE summand ``h_ij = e_i k_ij e_j``): the block estimates are i.i.d. with mean
    KLCE², ``z = mean / (sd/√#blocks)``, ``p = 1 − Φ(z)``."""
    estimates = block_estimates(inputs.points, inputs.residuals[:, None], 1.0, block_size)
    mean = float(estimates.mean())
    se = float(estimates.std(ddof=1) / np.sqrt(estimates.size)) if estimates.size > 1 else np.inf
    z = mean / se if se > 0 else (np.inf if mean > 0 else 0.0)
    return TestResult(mean, float(norm_sf(z)), np.empty(0), "block", 0, {
        "prob_bandwidth": inputs.prob_bandwidth, "feature_bandwidth": inputs.feature_bandwidth,
        "spec": inputs.spec, "block_size": block_size, "n_blocks": int(estimates.size),
        "z": float(z), "standard_error": se, "klce": mean, "statistic": "block KLCE²",
        "computation": f"block({block_size})", "computation_reason": reason,
        "engine": engine.current().describe()})


def p_values_of_nulls(
    inputs: KernelInputs, nulls: Sequence[str], n_resamples: int, rng: np.random.Generator
) -> dict[str, float]:
    """The p-value of every null in ``nulls`` for one dataset, from one tile-engine pass.

    Used by the size and power study (``benchmarks/klce_null_study.py``) and its tests, where
    every repetition compares all nulls on the same data: the nulls' residual columns are
    stacked and evaluated together, plain and centred statistics alike.
    """
    columns = [residual_columns(null, inputs.residuals, inputs.p, n_resamples, rng)
               for null in nulls]
    values = variant_statistics(inputs.points, np.hstack(columns), ("plain", "centred"))
    result = {}
    for k, null in enumerate(nulls):
        _, variants = null_scheme(null)
        block = values[:, k * (n_resamples + 1):(k + 1) * (n_resamples + 1)]
        chosen = np.stack([block[0 if v == "plain" else 1] for v in variants])
        series = standardized_maximum(chosen) if len(variants) > 1 else chosen[0]
        result[null] = resampling_p_value(series[0], series[1:])
    return result

