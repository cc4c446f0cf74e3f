"""The calibration test for credal sets with instance-dependent weights (Algorithm 1).

H0 (paper eq. 12): some λ: 𝒳 → Δ_M makes ``f_λ(x) = Σ_m λ_m(x) f^(m)(x)`` calibrated in
distribution. Algorithm 1 of Jürgens et al. (``papers/credal-set-calibration-test.txt``):

1. split the rows into an optimisation, a validation and a test part (``split``);
2. learn λ(x) on the optimisation rows with eq. 16, stopping early on the validation rows
   (:class:`core.ensembles.weights.WeightNetwork`), and predict it on the test rows;
3. the statistic is ``T = ĝ(f_λ, D_test)`` for an estimator ĝ (CE₂, CE_KL or SKCE);
4. the null: B times, draw test rows with replacement, redraw their labels from ``f_λ``
   (consistency resampling, Vaicenavicius et al.) and recompute ĝ;
5. ``p = (1 + #{null ≥ T}) / (1 + B)`` (:func:`core.stattests.result.resampling_p_value`; the
   paper rejects when T exceeds the (1 − α)-quantile of the null, the same decision up to the
   +1), with the paper's ``#{null > T} / B`` kept as ``p_value_paper``.

The baselines of the paper's Figs. 3–4 are other choices of weights on the same test rows:

``mean``     λ ≡ 1/M, the plain ensemble average ("Avg. + npbe": Vaicenavicius et al.'s
             bootstrap test of the mean prediction).
``sampled``  Mortier et al. (2023): constant weights. The statistic is the smallest ĝ over
             constant λ on the test rows (the best of ``N_CANDIDATES`` Dir(1) draws and the
             uniform weights, refined by L-BFGS over softmax parameters); the null draws a
             fresh λ_b ~ Dir(1) in every resample, then rows and labels as above. Minimising
             on the tested rows while the null does not is why this test is conservative
             (paper §3.5, §4.1).

Type-I error of the learned test. T tests the *learned* combination f_λ̂, not the credal set:
under H0 a λ̂ fitted on finitely many rows differs from a calibrating λ*, f_λ̂ can then be
miscalibrated on the test rows, and rejecting it is right for f_λ̂ but a Type-I error for the
credal set. The paper says so (§4.1: "slightly above [α] ... due to the generalization
error"). How fast this vanishes depends on the split: a squared calibration error of f_λ̂ on
m test rows resolves a deviation ‖f_λ̂ − f_λ*‖ of order m^(−1/2), and λ̂ fitted on n rows is
off by at least order n^(−1/2), so the level tends to α only when n/m → ∞ (App. C lets m
and n grow without saying at which rates). With n = m, as in the paper's 400 / 400, the
learned test stays above α. Measured (``benchmarks/credal_study.py --oracle``, README):
the bootstrap test of the *true* combination on the same test rows rejects at α in the binary
settings, the learned one above it (0.11–0.135 with CE₂; 0.09 for H0,2 with four times the
optimisation rows) — the excess is the weights' generalisation error
(:mod:`core.ensembles.weights`), not an estimator bias the bootstrap misses. The default
``split`` gives the optimisation part three times the test rows.

The refit null (``null="refit"``, :func:`refit_null`). Algorithm 1's null holds λ̂ fixed, so
it describes T for a *given* combination and leaves that generalisation error out. The null
of the whole procedure puts it back: in a bootstrap world whose truth is f_λ̂ — a member of
the credal set, so H0 holds there — redraw the labels of every row, learn λ again exactly as
on the data (same network, seed, split and early stopping), and compute ĝ of the refitted
combination on the test rows. This is the parametric bootstrap of the two-stage test
(lines 3–11 of Algorithm 1 inside the loop instead of lines 6–11); it costs B more network
fits. On the paper's simulations at 400 / 400 / 400 (B = 100, CE₂, α = 0.05) the learned test
then rejects 0.030 ± 0.012 (binary H0,1) and 0.070 ± 0.018 (H0,2) over 200 data sets, and
0.040 / 0.020 in the multiclass H0 settings over 50, against 0.110 / 0.135 with Algorithm 1's
null; a truth 0.01 outside the set (binary H1,1) is rejected less often (0.07 against 0.18).
README, "The credal-set test on the paper's simulations".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from core.data.validation import (
    check_choice,
    check_count,
    check_features,
    check_fraction,
    check_labels,
    check_positive,
    check_seed,
    softmax,
)
from core.ensembles.calibration_errors import ESTIMATORS, resample_counts, resampled_values
from core.ensembles.weights import WeightNetwork, WeightSettings, combine
from core.kernels.resampling import categorical_labels
from core.stattests.result import TestResult, paper_p_value, resampling_p_value

Progress = Callable[[float, str], None]
WEIGHTS = ("learned", "mean", "sampled")
NULLS = ("bootstrap", "consistency", "refit")
NULL_LABELS = {
    "bootstrap": "Algorithm 1: test rows drawn with replacement, labels redrawn",
    "consistency": "test rows kept, labels redrawn",
    "refit": "the whole procedure again: labels redrawn, λ(x) refitted (B fits)",
}
WEIGHT_LABELS = {
    "learned": "learned λ(x) (Algorithm 1)",
    "mean": "ensemble mean (Avg. + npbe)",
    "sampled": "constant λ, Dir(1) null (Mortier et al.)",
}


def null_description(null: str, weights: str) -> str:
    """How the null of the ``weights`` test was drawn under ``null`` (for captions): the
    mean and sampled tests fit no weights on other rows, so ``"refit"`` keeps their rows.

    Parameters
    ----------
    null : {"bootstrap", "consistency", "refit"}
        The null asked for.
    weights : {"learned", "mean", "sampled"}
        The weights of the test.

    Returns
    -------
    str
    """
    if null == "refit" and weights != "learned":
        return f"{NULL_LABELS['consistency']} (this test fits no weights to refit)"
    return NULL_LABELS[null]


#: Fewest rows each of the three parts of the split must hold.
MIN_PART_ROWS = 20
#: A member probability may leave [0, 1] (or a row sum 1) by this much before it is an error.
TOLERANCE = 1e-6
DEFAULT_SETTINGS = WeightSettings()
#: Resamples per pass of the bootstrap null (memory n · NULL_CHUNK · K counts).
NULL_CHUNK = 25
#: Share of a learned test's progress bar that training the network takes (B refits follow
#: it under ``null="refit"``, so there the first fit takes a smaller share).
FIT_SHARE, REFIT_FIT_SHARE = 0.6, 0.05
#: Dir(1) draws from which the constant-weight minimisation of ``sampled`` starts.
N_CANDIDATES = 32
#: L-BFGS iterations refining the best constant weights (M is small; it converges quickly).
MIN_ITERATIONS = 20


@dataclass(frozen=True)
class CredalTestResult(TestResult):
    """A :class:`~core.stattests.result.TestResult` of :func:`credal_test`, plus what was tested.

    Attributes
    ----------
    weights : ndarray of shape (n_test, M)
        λ(x) on the test rows (constant rows for ``mean`` and ``sampled``).
    combined : ndarray of shape (n_test, K)
        The combined prediction f_λ on the test rows.
    rows : ndarray of shape (n_test,)
        Indices of the test rows in the input.
    labels : ndarray of shape (n_test,)
        Their labels.
    """

    __test__ = False

    weights: np.ndarray = field(default_factory=lambda: np.empty((0, 0)), repr=False)
    combined: np.ndarray = field(default_factory=lambda: np.empty((0, 0)), repr=False)
    rows: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64), repr=False)
    labels: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64),
                               repr=False)


# --------------------------------------------------------------------------- validation


def check_members(members: object) -> np.ndarray:
    """Members as float64 ``(n, M, K)``: ``(n, M)`` P(y = 1) of M binary members becomes
    ``(n, M, 2)``; values in [0, 1], class rows summing to 1, at least two members."""
    try:
        P = np.array(members, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError("members must contain numbers (each member's predicted "
                         "probabilities).") from err
    if P.ndim == 2:
        P = np.stack([1.0 - P, P], axis=2)
    if P.ndim != 3:
        raise ValueError(
            "members must be (n, M) probabilities P(y = 1) of M binary members or (n, M, K) "
            f"class probabilities; this array has {P.ndim} dimensions.")
    n, M, K = P.shape
    if n == 0:
        raise ValueError("members is empty: at least one row is needed.")
    if M < 2:
        raise ValueError(f"members holds {M} member; a credal set needs at least 2 members "
                         "(axis 1 of members).")
    if K < 2:
        raise ValueError(f"members has {K} class column; at least 2 classes are needed.")
    bad = ~np.isfinite(P) | (P < -TOLERANCE) | (P > 1.0 + TOLERANCE)
    if bad.any():
        row, member, _ = np.argwhere(bad)[0]
        raise ValueError(
            f"members are not probabilities: {int(bad.any(axis=(1, 2)).sum())} rows have a "
            f"value outside [0, 1] or missing (first: row {row}, member {member}). Give "
            "probabilities, not scores or logits.")
    sums = P.sum(axis=2)
    off = np.abs(sums - 1.0) > 1e-5
    if off.any():
        row, member = np.argwhere(off)[0]
        raise ValueError(
            f"Each member's class probabilities must sum to 1; row {row}, member {member} "
            f"sums to {sums[row, member]:.6g} ({int(off.any(axis=1).sum())} rows affected).")
    return np.clip(P, 0.0, 1.0)


def check_split(split: Sequence[float], n: int) -> tuple[int, int, int]:
    """Row counts of the optimisation, validation and test parts from three fractions."""
    try:
        parts = [float(s) for s in split]
    except (TypeError, ValueError) as err:
        raise ValueError(f"split must be three fractions (optimisation, validation, test), "
                         f"not {split!r}.") from err
    if len(parts) != 3:
        raise ValueError(f"split must be three fractions (optimisation, validation, test), "
                         f"not {len(parts)} numbers.")
    for name, part in zip(("optimisation", "validation", "test"), parts, strict=True):
        check_fraction(f"The {name} fraction of split", part)
    if abs(sum(parts) - 1.0) > 1e-9:
        raise ValueError(f"The fractions of split must sum to 1; {split!r} sums to "
                         f"{sum(parts):g}.")
    n_opt, n_val = int(round(parts[0] * n)), int(round(parts[1] * n))
    counts = (n_opt, n_val, n - n_opt - n_val)
    if min(counts) < MIN_PART_ROWS:
        need = int(np.ceil(MIN_PART_ROWS / min(parts)))
        raise ValueError(
            f"Too few rows for the three splits: {n} rows give {counts[0]} / {counts[1]} / "
            f"{counts[2]} (optimisation / validation / test); each part needs at least "
            f"{MIN_PART_ROWS}, so at least {need} rows are needed with split={tuple(parts)}.")
    return counts


# --------------------------------------------------------------------------- the null


def bootstrap_null(combined: np.ndarray, estimator: str, bandwidth: float, n_resamples: int,
                   rng: np.random.Generator, progress: Progress | None = None,
                   null: str = "bootstrap") -> np.ndarray:
    """B statistics on rows drawn with replacement (``null="bootstrap"``, Algorithm 1,
    lines 5–12) or kept (``"consistency"``, ``"refit"``) and labels redrawn from the
    prediction, all
    resamples in one pass per row tile (:func:`core.ensembles.calibration_errors.resampled_values`),
    in chunks for the progress bar."""
    values = np.empty(n_resamples)
    chunk = max(1, min(NULL_CHUNK, n_resamples))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        counts = resample_counts(combined, size, rng, rows_fixed=null != "bootstrap")
        values[start:start + size] = resampled_values(estimator, combined, counts, bandwidth)
        if progress is not None:
            progress((start + size) / n_resamples,
                     f"Resampling: {start + size} of {n_resamples}")
    return values


def sampled_null(members: np.ndarray, estimator: str, bandwidth: float, n_resamples: int,
                 rng: np.random.Generator, progress: Progress | None = None,
                 null: str = "bootstrap") -> np.ndarray:
    """Mortier et al.'s null: in every resample constant weights λ_b ~ Dir(1), then rows
    drawn with replacement (or kept, ``"consistency"``, ``"refit"``) and labels redrawn from
    ``f_λb`` (a kernel pass per resample, since the predictions change)."""
    values = np.empty(n_resamples)
    for b in range(n_resamples):
        lam = rng.dirichlet(np.ones(members.shape[1]))
        F = np.einsum("m,nmk->nk", lam, members)
        counts = resample_counts(F, 1, rng, rows_fixed=null != "bootstrap")
        values[b] = resampled_values(estimator, F, counts, bandwidth)[0]
        if progress is not None and (b % 10 == 9 or b == n_resamples - 1):
            progress((b + 1) / n_resamples, f"Resampling: {b + 1} of {n_resamples}")
    return values


def refit_null(combined: np.ndarray, members_test: np.ndarray, test: np.ndarray,
               refit: Callable[[np.ndarray], np.ndarray], estimator: str, bandwidth: float,
               n_resamples: int, rng: np.random.Generator,
               progress: Progress | None = None) -> np.ndarray:
    """The null of the whole learned test, weight fitting included (``null="refit"``).

    In the bootstrap world the learned combination ``f_λ̂`` is the truth, so H0 holds there.
    B times: draw a label for *every* row from ``f_λ̂(x_i)`` (``combined``, ``(n, K)``), learn
    the weights again from the redrawn optimisation and validation labels (``refit(labels)
    -> λ̂_b`` on the test rows: the same network, seed and early stopping) and compute
    ``t_b = ĝ(f_λ̂_b, ỹ_test)`` on the test rows (kept once each). λ̂_b misses ``f_λ̂`` as λ̂
    misses a calibrating λ*, so t_b carries the weights' generalisation error that
    Algorithm 1's null, which holds λ̂ fixed, leaves out.
    """
    spec = ESTIMATORS[estimator]
    values = np.empty(n_resamples)
    for b in range(n_resamples):
        labels = categorical_labels(combined, 1, rng)[:, 0]
        F = combine(refit(labels), members_test)
        values[b] = spec.value(F, labels[test], bandwidth)
        if progress is not None:
            progress((b + 1) / n_resamples, f"Refitting λ(x): {b + 1} of {n_resamples}")
    return values


def min_constant_weights(members: np.ndarray, y: np.ndarray, estimator: str, bandwidth: float,
                         candidates: np.ndarray) -> tuple[np.ndarray, float]:
    """The constant λ ∈ Δ_M with the smallest ĝ(f_λ, y): the best of ``candidates`` (rows
    on the simplex), refined by L-BFGS over λ = softmax(θ) with the analytic gradient."""
    spec = ESTIMATORS[estimator]

    def value(lam: np.ndarray) -> float:
        return spec.value(np.einsum("m,nmk->nk", lam, members), y, bandwidth)

    scores = [value(lam) for lam in candidates]
    start = candidates[int(np.argmin(scores))]

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        lam = softmax(theta[None, :])[0]
        F = np.einsum("m,nmk->nk", lam, members)
        g, grad_F = spec.value_and_gradient(F, y, bandwidth, gradient=True)
        grad_lam = np.einsum("nk,nmk->m", grad_F, members)
        return g, lam * (grad_lam - lam @ grad_lam)

    theta0 = np.log(np.maximum(start, 1e-8))
    result = minimize(objective, theta0, jac=True, method="L-BFGS-B",
                      options={"maxiter": MIN_ITERATIONS})
    best = softmax(result.x[None, :])[0]
    best_value = value(best)
    if best_value <= min(scores):
        return best, best_value
    return start, float(min(scores))


# --------------------------------------------------------------------------- the test


def credal_test(
    members: np.ndarray,
    y: np.ndarray,
    X: np.ndarray,
    estimator: str = "ce2",
    weights: str = "learned",
    n_resamples: int = 100,
    split: Sequence[float] = (0.6, 0.2, 0.2),
    alpha: float = 0.05,
    seed: int | None = 0,
    progress: Progress | None = None,
    bandwidth: float | None = None,
    settings: WeightSettings = DEFAULT_SETTINGS,
    null: str = "bootstrap",
) -> CredalTestResult:
    """Test H0 "some convex combination of the members is calibrated" (Algorithm 1).

    Parameters
    ----------
    members : ndarray of shape (n, M) or (n, M, K)
        P(y = 1) of M binary members, or their class probabilities.
    y : ndarray of shape (n,)
        Integer labels 0..K−1.
    X : ndarray of shape (n, d)
        Instance features the weights λ(x) may depend on.
    estimator : {"ce2", "cekl", "skce"}
        The calibration-error estimator ĝ (:data:`core.ensembles.calibration_errors.ESTIMATORS`).
    weights : {"learned", "mean", "sampled"}
        Learned instance-dependent weights (Algorithm 1) or a baseline (module doc).
    n_resamples : int
        B, bootstrap resamples of the null (the paper uses 100).
    split : three fractions
        Optimisation, validation and test parts of the rows (shuffled with ``seed``). All
        three weight choices test on the same test rows.
    alpha : float
        Significance level, recorded with the result (``result.rejects(alpha)``).
    seed : int or None
        Seeds the split, the network, and the resampling.
    progress : callable, optional
        ``progress(fraction, message)``.
    bandwidth : float or None
        The estimator's bandwidth; None = its default (h = 0.1 for CE₂ and CE_KL, the median
        heuristic of the tested predictions for the SKCE), held fixed across resamples.
    settings : WeightSettings
        Architecture and training of the weight network.
    null : {"bootstrap", "consistency", "refit"}
        ``"bootstrap"`` (Algorithm 1): test rows drawn with replacement, labels redrawn.
        ``"consistency"``: every test row kept once, labels redrawn (Bröcker & Smith; exact
        given the predictions). With replacement, a drawn row's copies sit at kernel distance
        0 from each other, which inflates the kernel-ratio estimators under a narrow kernel
        and makes the bootstrap null conservative (see ``benchmarks/credal_study.py``).
        ``"refit"``: for the learned test, the whole procedure is repeated in every resample —
        labels of all rows redrawn from f_λ̂, λ(x) learned again, ĝ on the test rows
        (:func:`refit_null`; B network fits) — so the null includes the weights'
        generalisation error, which makes Algorithm 1 liberal (module doc). The mean and
        sampled tests fit no weights on other rows; for them it keeps the rows as
        ``"consistency"`` does.

    Returns
    -------
    CredalTestResult
        ``statistic`` T, ``p_value``, ``null`` (the B resampled statistics), ``weights`` and
        ``combined`` on the test rows, ``rows``; ``parameters`` hold the settings used.
    """
    P = check_members(members)
    n, M, K = P.shape
    labels = check_labels(y, n, K)
    features = check_features(X, n, "X")
    check_choice(estimator, tuple(ESTIMATORS), "estimator")
    check_choice(weights, WEIGHTS, "weights")
    check_choice(null, NULLS, "null")
    n_resamples = check_count("n_resamples", n_resamples, 1)
    check_fraction("alpha", alpha)
    seed = check_seed(seed)
    if bandwidth is not None:
        bandwidth = check_positive("bandwidth", bandwidth)
    n_opt, n_val, _ = check_split(split, n)
    # Small matrices throughout (a 256-row penalty, tiles of n_test rows): one BLAS thread is
    # faster than several, which on a busy machine wait on each other (measured: 10× slower).
    with threadpool_limits(limits=1, user_api="blas"):
        return _credal_test(P, labels, features, estimator, weights, n_resamples, (n_opt, n_val),
                            split, alpha, seed, progress, bandwidth, settings, null)


def _credal_test(P: np.ndarray, labels: np.ndarray, features: np.ndarray, estimator: str,
                 weights: str, n_resamples: int, sizes: tuple[int, int],
                 split: Sequence[float], alpha: float, seed: int | None,
                 progress: Progress | None, bandwidth: float | None,
                 settings: WeightSettings, null: str) -> CredalTestResult:
    """:func:`credal_test` on validated inputs."""
    n, M, K = P.shape
    n_opt, n_val = sizes
    report = progress or (lambda fraction, message: None)

    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    opt, val, test = order[:n_opt], order[n_opt:n_opt + n_val], order[n_opt + n_val:]
    spec = ESTIMATORS[estimator]
    extra: dict[str, object] = {}

    def learn(y: np.ndarray, progress: Progress | None = None) -> WeightNetwork:
        return WeightNetwork(estimator, bandwidth, settings, seed).fit(
            P[opt], y[opt], features[opt], P[val], y[val], features[val], progress=progress)

    refits = weights == "learned" and null == "refit"
    start = 0.0  # share of the progress bar before the null
    if weights == "learned":
        start = REFIT_FIT_SHARE if refits else FIT_SHARE
        network = learn(labels, progress=lambda f, m: report(start * f, m))
        lam = network.predict(features[test])
        extra = {"training_iterations": len(network.history_),
                 "best_iteration": network.best_iteration_,
                 "penalty_bandwidth": network.bandwidth_, "gamma": settings.gamma,
                 "hidden": settings.hidden}
    else:
        lam = np.full((test.size, M), 1.0 / M)
    F = combine(lam, P[test])
    h = spec.bandwidth_for(F, bandwidth)
    y_test = labels[test]

    def null_progress(fraction: float, message: str) -> None:
        report(start + (1 - start) * fraction, message)

    if weights == "sampled":
        candidates = np.vstack([np.full(M, 1.0 / M),
                                rng.dirichlet(np.ones(M), size=N_CANDIDATES)])
        best, observed = min_constant_weights(P[test], y_test, estimator, h, candidates)
        lam = np.tile(best, (test.size, 1))
        F = combine(lam, P[test])
        values = sampled_null(P[test], estimator, h, n_resamples, rng, null_progress, null)
    else:
        observed = spec.value(F, y_test, h)
        if refits:
            values = refit_null(combine(network.predict(features), P), P[test], test,
                                lambda y: learn(y).predict(features[test]), estimator, h,
                                n_resamples, rng, null_progress)
        else:
            values = bootstrap_null(F, estimator, h, n_resamples, rng, null_progress, null)
    report(1.0, "Done")
    return CredalTestResult(
        statistic=float(observed), p_value=resampling_p_value(observed, values), null=values,
        method=f"credal-{weights}", n_resamples=n_resamples,
        parameters={"estimator": estimator, "weights": weights, "null": null, "bandwidth": h,
                    "alpha": alpha, "seed": seed, "split": tuple(float(s) for s in split),
                    "n_members": M, "n_classes": K, "n_optimisation": n_opt,
                    "n_validation": n_val, "n_test": int(test.size), **extra},
        p_value_paper=paper_p_value(observed, values),
        weights=lam, combined=F, rows=test, labels=y_test,
    )
