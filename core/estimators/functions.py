"""Calibration estimation functions of Gruber & Bach §4 and their hyperparameter grids.

Each estimator is fitted on training rows and returns a :class:`~core.estimators.risk.Bilinear`
``h``; the calibration estimate on other rows is the mean of ``h(p, p)`` (eq. 21–22).

* ``bins`` — equal-width binning of the top-label confidence (eq. 23–24); top-label only,
  since binning does not extend to the canonical notion (§4.1).
* ``kde`` — the kernel density ratio of Popordanoska et al. (eq. 25–26): a Beta kernel on the
  confidence for top-label, a Dirichlet kernel on the probability vector for canonical.
* ``kkr`` — Kronecker kernel ridge regression of the pair targets (eq. 27–29).
* ``ukkr`` — two-step kernel ridge regression: a ridge fit of the residual ``p − e_y`` plugged
  into the inner product (eq. 32).

Both ridge estimators use the RBF kernel ``exp(−γ‖x − x'‖²)`` with γ = ½ (§5.2) and one
eigendecomposition ``K = Q Λ Qᵀ`` of the training kernel, shared by the whole λ grid, so a
fit costs at most O(n³) instead of the O(n⁶) of the Kronecker system (eq. 28) — and, since
the eigendecomposition is taken from a pivoted Cholesky factor of rank r, O(n r²).

Hyperparameter grids (Appendix B): bins ``{5i : i = 1..20}``; kde bandwidths
``{10^(−1−4(i−1)/14) : i = 1..15} ∪ {0.2i : i = 1..5}``; top-label λ
``kkr: n^½·10^(1−2i), i = 1..9`` and ``ukkr: n^½·10^(−i), i = 1..9``; canonical λ
``kkr: n^½·10^(9−i), i = 1..18`` and ``ukkr: n^½·10^(4.5−i/2), i = 1..18``; n is the number
of training rows of the ridge fit.

Where the paper disagrees with itself: the objective (27) already multiplies the ridge
constant by n² — its minimiser (28–29) is ``(K ⊗ K + λn²I)⁻¹`` — and the two-step fit (32)
by n, while the appendix lists λ values that carry a further factor ``n^½``. We follow the
text: the ridge term is ``λn²`` (kkr) and ``λn`` (ukkr), with λ taken from the appendix's
grid as written (``n^½·10^…``). With the kernel's leading eigenvalues of order n, this puts
the grid's middle where the regularisation and the data terms balance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln

from core.data.validation import check_choice, check_positive, check_probs_labels, is_whole
from core.estimators.risk import Bilinear, check_notion, notion_inputs
from core.kernels.tiles import gaussian_block
from core.metrics.binning import bin_indices

#: RBF parameter of the ridge estimators: ``exp(−γ‖x − x'‖²)`` with γ = ½ (§5.2), i.e. the
#: Gaussian kernel of ``core.kernels`` with σ = 1.
RIDGE_GAMMA = 0.5
#: Eigen-directions of the training kernel below this fraction of the largest eigenvalue are
#: dropped (the numerical rank, as ``numpy.linalg.pinv``'s ``rcond``): ``eigh`` resolves
#: eigenvalues only to about ``n·ε·λ_max``, so smaller ones are rounding noise that the
#: ``1/(λ_i λ_j + λn²)`` of eq. 29 would amplify at the grid's small λ.
RANK_TOL = 1e-10
#: Pivoted Cholesky stops when every residual variance of the kernel is below this (the
#: kernel's diagonal is 1), so ‖K − LLᵀ‖₂ ≤ n·PIVOT_TOL, far below RANK_TOL·λ_max.
PIVOT_TOL = 1e-12
#: Most eigen-directions a ridge fit keeps (reached only by kernels far rougher than the RBF
#: on the simplex; the fit is then a rank-MAX_RANK approximation).
MAX_RANK = 1000
#: Probabilities are floored here before their logarithm in the Dirichlet/Beta kernel, so the
#: density ratio is defined everywhere (the reference implementation returns NaN for some
#: inputs, App. B).
LOG_FLOOR = 1e-12
#: Query rows × training rows held at once by the kernel density ratio.
KDE_BLOCK = 2_000_000

Features = Callable[[np.ndarray], np.ndarray]


# --------------------------------------------------------------------------- binning


def _bin_residual(points: np.ndarray, edges: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    return gaps[bin_indices(points, edges)]


def fit_bins(points: np.ndarray, D: np.ndarray, n_bins: int) -> Bilinear:
    """``h_bin`` of eq. 23 on ``n_bins`` equal-width bins of the confidence.

    ``h(c, c') = (conf(B_m) − acc(B_m))·(conf(B_m') − acc(B_m'))`` for the bins m ∋ c, m' ∋ c'
    of the training rows; a bin no training row fell into contributes 0. On its own training
    rows the mean of ``h(c, c)`` is the squared plug-in ECE₂ of ``core.metrics.binned.ece`` (eq.
    24). Bins are ``core.metrics``'s: ``(e_b, e_{b+1}]``, the first one closed at 0.

    Parameters
    ----------
    points : ndarray
        ``(n,)`` training confidences.
    D : ndarray
        ``(n, 1)`` residuals ``c − o``.
    n_bins : int
        Number of equal-width bins on [0, 1].

    Returns
    -------
    Bilinear
        ``h`` with the one feature ``conf(B) − acc(B)`` of the bin a confidence falls into.
    """
    n_bins = int(n_bins)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    ids = bin_indices(points, edges)
    counts = np.bincount(ids, minlength=n_bins).astype(np.float64)
    sums = np.bincount(ids, weights=D[:, 0], minlength=n_bins)
    gaps = np.divide(sums, counts, out=np.zeros(n_bins), where=counts > 0)
    return Bilinear(partial(_bin_residual, edges=edges, gaps=gaps))


# --------------------------------------------------------------------------- kernel density


def _simplex(points: np.ndarray) -> np.ndarray:
    """Confidences ``c`` → rows ``(c, 1 − c)`` (the Beta kernel is the 2-class Dirichlet)."""
    return np.column_stack([points, 1.0 - points]) if points.ndim == 1 else points


def dirichlet_ratio(query: np.ndarray, reference: np.ndarray, targets: np.ndarray,
                    bandwidth: float) -> np.ndarray:
    """Nadaraya–Watson average of ``targets`` with the Dirichlet kernel (eq. 11, 25).

    ::

        ĝ(q) = Σ_j k(q; p_j) t_j / Σ_j k(q; p_j),   k(q; p_j) = Dir(q; α_j),  α_j = p_j/b + 1

    the density of a Dirichlet centred on the training point ``p_j`` (Popordanoska et al.
    2022), evaluated at the query; for two classes it is the Beta kernel. Weights are formed in
    log space (log-sum-exp), in blocks of query rows of at most ``KDE_BLOCK`` pairs.

    Parameters
    ----------
    query, reference : ndarray
        ``(q, m)`` and ``(n, m)`` rows on the simplex.
    targets : ndarray
        ``(n, k)`` values to average.
    bandwidth : float
        b > 0.

    Returns
    -------
    ndarray
        ``(q, k)`` kernel-weighted averages.
    """
    alpha = reference / bandwidth + 1.0
    log_beta = gammaln(alpha).sum(axis=1) - gammaln(alpha.sum(axis=1))
    coefficients = np.ascontiguousarray((reference / bandwidth).T)  # (α_j − 1) as columns
    log_query = np.log(np.maximum(query, LOG_FLOOR))
    weighted = np.column_stack([targets, np.ones(targets.shape[0])])  # numerator | denominator
    out = np.empty((query.shape[0], targets.shape[1]))
    step = max(1, KDE_BLOCK // max(1, reference.shape[0]))
    for lo in range(0, query.shape[0], step):
        L = log_query[lo:lo + step] @ coefficients
        L -= log_beta[None, :]
        L -= L.max(axis=1, keepdims=True)
        sums = np.exp(L, out=L) @ weighted
        out[lo:lo + step] = sums[:, :-1] / sums[:, -1:]
    return out


def _kde_residual(points: np.ndarray, reference: np.ndarray, targets: np.ndarray,
                  bandwidth: float) -> np.ndarray:
    fitted = dirichlet_ratio(_simplex(points), reference, targets, bandwidth)
    if points.ndim == 1:
        return points - fitted[:, 0]
    return points - fitted


def fit_kde(points: np.ndarray, D: np.ndarray, bandwidth: float) -> Bilinear:
    """``h_kde`` of eq. 25: ``⟨p − ĝ(p), p' − ĝ(p')⟩`` with ĝ the Dirichlet density ratio.

    Top-label: ĝ(c) estimates P(correct | c) with the Beta kernel on ``(c, 1 − c)``;
    canonical: ĝ(p) estimates P(Y | p) with the Dirichlet kernel on the probability vector.
    No row is left out: the function is fitted on training rows and evaluated on others.

    Parameters
    ----------
    points : ndarray
        ``(n,)`` confidences (top-label) or ``(n, m)`` probability rows (canonical).
    D : ndarray
        Residuals from :func:`~core.estimators.risk.notion_inputs`.
    bandwidth : float
        Kernel bandwidth b.

    Returns
    -------
    Bilinear
    """
    targets = (points - D[:, 0])[:, None] if points.ndim == 1 else points - D
    return Bilinear(partial(_kde_residual, reference=_simplex(points), targets=targets,
                            bandwidth=float(bandwidth)))


# --------------------------------------------------------------------------- kernel ridge


def pivoted_cholesky(points: np.ndarray, tol: float = PIVOT_TOL,
                     max_rank: int = MAX_RANK) -> np.ndarray:
    """``L`` (n × r) with ``K ≈ L Lᵀ`` for the RBF kernel of ``points``, greedy pivoting.

    Each step adds the column of the point with the largest residual variance
    ``d_j = K_jj − ‖L_j‖²`` and stops when every ``d_j ≤ tol`` (then ``‖K − LLᵀ‖₂ ≤ n·tol``)
    or at ``max_rank`` columns. Only r kernel columns are formed: O(n r²) time, O(n r) memory.

    Parameters
    ----------
    points : ndarray
        ``(n,)`` or ``(n, d)`` training points.
    tol : float
        Largest residual diagonal left.
    max_rank : int
        Most columns.

    Returns
    -------
    ndarray
        ``(n, r)`` factor.
    """
    X = points[:, None] if points.ndim == 1 else points
    n = X.shape[0]
    limit = min(n, max_rank)
    L = np.zeros((n, limit))
    d = np.ones(n)  # the RBF kernel has k(x, x) = 1
    rank = 0
    while rank < limit:
        j = int(np.argmax(d))
        if d[j] <= tol:
            break
        column = _rbf(X, X[j:j + 1])[:, 0] - L[:, :rank] @ L[j, :rank]
        L[:, rank] = column / np.sqrt(d[j])
        d -= L[:, rank] ** 2
        d[j] = 0.0
        rank += 1
    return L[:, :rank]


@dataclass(frozen=True, eq=False)
class KernelEigen:
    """``K = Q Λ Qᵀ`` of the training rows' RBF kernel, truncated to its numerical rank.

    Computed without the n × n matrix: a pivoted Cholesky factor ``K ≈ L Lᵀ`` (residual below
    ``PIVOT_TOL`` on the diagonal) and the SVD ``L = U S Vᵀ`` give ``Q = U``, ``Λ = S²``, in
    O(n r²) time for rank r (RBF kernels on the simplex have r ≪ n: about 5 for confidences
    and 60 for 5-class probability vectors at n = 1,500). Eigenvalues below ``RANK_TOL``·λ_max
    are dropped, as a full ``eigh`` would resolve them only to rounding.

    Attributes
    ----------
    reference : ndarray
        ``(n, ·)`` training points.
    vectors : ndarray
        ``(n, r)`` eigenvectors Q.
    values : ndarray
        ``(r,)`` eigenvalues λ_i > ``RANK_TOL``·λ_max.
    G : ndarray
        ``(r, k)`` ``Qᵀ Δᵀ``: the training residuals in the eigenbasis.
    feature_map : callable
        ``φ(p) = Qᵀ k(p)`` as rows ``K(points, reference) Q``; one object per fit, shared by
        every kkr and ukkr function of the grid, so callers can memoise its features.
    """

    reference: np.ndarray
    vectors: np.ndarray
    values: np.ndarray
    G: np.ndarray
    feature_map: Features

    @classmethod
    def fit(cls, points: np.ndarray, D: np.ndarray) -> KernelEigen:
        U, S, _ = np.linalg.svd(pivoted_cholesky(points), full_matrices=False)
        values = S**2
        keep = values > RANK_TOL * values[0]
        vectors = np.ascontiguousarray(U[:, keep])
        features = partial(_kernel_features, reference=points, basis=vectors)
        return cls(points, vectors, values[keep], vectors.T @ D, features)

    @property
    def n(self) -> int:
        return int(self.vectors.shape[0])


def _rbf(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``exp(−γ‖a_i − b_j‖²)`` with γ = ``RIDGE_GAMMA``."""
    return gaussian_block(a, b, bandwidth=float(np.sqrt(0.5 / RIDGE_GAMMA)))


def _kernel_features(points: np.ndarray, reference: np.ndarray,
                     basis: np.ndarray) -> np.ndarray:
    """``K(points, reference) @ basis`` in blocks of at most ``KDE_BLOCK`` kernel values."""
    out = np.empty((points.shape[0], basis.shape[1]))
    step = max(1, KDE_BLOCK // max(1, reference.shape[0]))
    for lo in range(0, points.shape[0], step):
        out[lo:lo + step] = _rbf(points[lo:lo + step], reference) @ basis
    return out


def fit_kkr(eigen: KernelEigen, lam: float) -> Bilinear:
    """``h_kkr`` of eq. 29, the minimiser of the ridge objective (27).

    ::

        h(p, p') = k(p)ᵀ Q (Λ̃ ⊙ Qᵀ Δᵀ Δ Q) Qᵀ k(p'),   Λ̃_ij = 1 / (λ_i λ_j + λ n²)

    with ``Δ`` the ``d × n`` training residuals ``p_i − e_{y_i}``: features ``φ(p) = Qᵀ k(p)``
    and ``W = Λ̃ ⊙ G Gᵀ``, ``G = Qᵀ Δᵀ`` (O(n r²) after the shared eigendecomposition).

    Parameters
    ----------
    eigen : KernelEigen
        Eigendecomposition of the training kernel.
    lam : float
        Ridge constant λ (the objective scales it by n²).

    Returns
    -------
    Bilinear
    """
    Lt = 1.0 / (np.outer(eigen.values, eigen.values) + lam * eigen.n**2)
    return Bilinear(eigen.feature_map, weight=Lt * (eigen.G @ eigen.G.T))


def fit_ukkr(eigen: KernelEigen, lam: float) -> Bilinear:
    """``h_ukkr`` of eq. 32, two-step kernel ridge regression.

    ::

        h(p, p') = k(p)ᵀ (K + λnI)⁻¹ Δᵀ Δ (K + λnI)⁻ᵀ k(p') = ⟨u(p), u(p')⟩,
        u(p) = Δ (K + λnI)⁻¹ k(p) = Bᵀ Qᵀ k(p),   B = diag(1/(λ_i + λn)) G

    the ridge estimate of the residual ``p − P(Y | p)`` plugged into the inner product. As a
    :class:`Bilinear` it shares kkr's features ``φ(p) = Qᵀ k(p)``, with ``W = B Bᵀ`` of rank
    k, so the kernel between evaluated and training rows is formed once for the whole grid.

    Parameters
    ----------
    eigen : KernelEigen
        Eigendecomposition of the training kernel.
    lam : float
        Ridge constant λ (scaled by n, as in eq. 32).

    Returns
    -------
    Bilinear
    """
    B = eigen.G / (eigen.values + lam * eigen.n)[:, None]
    return Bilinear(eigen.feature_map, weight=B @ B.T)


# --------------------------------------------------------------------------- registry


def _bins_grid(n: int, notion: str) -> tuple[float, ...]:
    return tuple(float(5 * i) for i in range(1, 21))


def _kde_grid(n: int, notion: str) -> tuple[float, ...]:
    logs = {float(10.0 ** (-1.0 - 4.0 * (i - 1) / 14.0)) for i in range(1, 16)}
    return tuple(sorted(logs | {round(0.2 * i, 10) for i in range(1, 6)}))


def _kkr_grid(n: int, notion: str) -> tuple[float, ...]:
    powers = [1 - 2 * i for i in range(1, 10)] if notion == "top-label" else [
        9 - i for i in range(1, 19)]
    return tuple(sorted(float(np.sqrt(n) * 10.0**k) for k in powers))


def _ukkr_grid(n: int, notion: str) -> tuple[float, ...]:
    powers = [-i for i in range(1, 10)] if notion == "top-label" else [
        4.5 - 0.5 * i for i in range(1, 19)]
    return tuple(sorted(float(np.sqrt(n) * 10.0**k) for k in powers))


def _fit_bins(points: np.ndarray, D: np.ndarray, value: float, shared: dict) -> Bilinear:
    return fit_bins(points, D, int(round(value)))


def _fit_kde(points: np.ndarray, D: np.ndarray, value: float, shared: dict) -> Bilinear:
    return fit_kde(points, D, value)


def _eigen(points: np.ndarray, D: np.ndarray, shared: dict) -> KernelEigen:
    """One eigendecomposition per training set, shared by kkr and ukkr over their grids."""
    if "eigen" not in shared:
        shared["eigen"] = KernelEigen.fit(points, D)
    return shared["eigen"]


def _fit_kkr(points: np.ndarray, D: np.ndarray, value: float, shared: dict) -> Bilinear:
    return fit_kkr(_eigen(points, D, shared), value)


def _fit_ukkr(points: np.ndarray, D: np.ndarray, value: float, shared: dict) -> Bilinear:
    return fit_ukkr(_eigen(points, D, shared), value)


@dataclass(frozen=True)
class EstimatorSpec:
    """One family of calibration estimation functions and its hyperparameter grid.

    Attributes
    ----------
    key : str
        Registry key (kebab-case).
    label : str
        Display name.
    parameter : str
        Name of the hyperparameter.
    equations : str
        Where the paper defines it.
    notions : tuple of str
        The notions it estimates.
    log_scale : bool
        Whether its grid is best drawn on a log axis.
    kernel : bool
        A kernel estimator, fitted on at most ``max_fit_rows`` training rows (its cost
        grows with training rows × evaluated rows).
    grid : callable
        ``(n_train, notion) → values`` (Appendix B).
    fit : callable
        ``(points, D, value, shared) → Bilinear``; ``shared`` is a per-training-set dict
        for work common to a grid (the eigendecomposition).
    description : str
        One sentence for the page.
    """

    key: str
    label: str
    parameter: str
    equations: str
    notions: tuple[str, ...]
    log_scale: bool
    kernel: bool
    grid: Callable[[int, str], tuple[float, ...]]
    fit: Callable[[np.ndarray, np.ndarray, float, dict], Bilinear]
    description: str


ESTIMATORS: dict[str, EstimatorSpec] = {
    "bins": EstimatorSpec(
        "bins", "binning", "bins", "eq. 23–24", ("top-label",), False, False, _bins_grid,
        _fit_bins, "Equal-width bins of the confidence; the binned ECE₂² is its estimate."),
    "kde": EstimatorSpec(
        "kde", "kernel density ratio", "bandwidth", "eq. 25–26", ("top-label", "canonical"),
        True, True, _kde_grid, _fit_kde,
        "Beta (top-label) or Dirichlet (canonical) kernel estimate of P(Y | p), plugged in."),
    "kkr": EstimatorSpec(
        "kkr", "Kronecker kernel ridge", "λ", "eq. 27–29", ("top-label", "canonical"), True,
        True, _kkr_grid, _fit_kkr,
        "Kernel ridge regression of the pair targets ⟨p − e_y, p' − e_y'⟩ (RBF, γ = ½)."),
    "ukkr": EstimatorSpec(
        "ukkr", "two-step kernel ridge", "λ", "eq. 32", ("top-label", "canonical"), True, True,
        _ukkr_grid, _fit_ukkr,
        "Kernel ridge estimate of the residual p − P(Y | p), plugged into the inner product."),
}


def check_estimator(key: object, notion: str) -> EstimatorSpec:
    """The registry entry for ``key``, or a ValueError if unknown or not for ``notion``."""
    spec = ESTIMATORS[str(check_choice(key, tuple(ESTIMATORS), "calibration estimator"))]
    if notion not in spec.notions:
        raise ValueError(
            f"The {key!r} estimator does not estimate the {notion!r} notion (binning needs a "
            f"scalar confidence); for {notion!r} choose one of "
            + ", ".join(repr(k) for k, s in ESTIMATORS.items() if notion in s.notions) + "."
        )
    return spec


def make_estimator(key: str, probs: ArrayLike, y: ArrayLike, value: float,
                   notion: str = "top-label") -> Bilinear:
    """Fit one calibration estimation function on ``probs, y``.

    Parameters
    ----------
    key : {"bins", "kde", "kkr", "ukkr"}
        Which estimator (:data:`ESTIMATORS`).
    probs : array_like
        ``(n,)`` P(y = 1) or ``(n, m)`` training probabilities.
    y : array_like
        ``(n,)`` labels.
    value : float
        Its hyperparameter: number of bins, bandwidth, or λ.
    notion : {"top-label", "canonical"}
        Calibration notion.

    Returns
    -------
    Bilinear
        ``h``; ``core.estimators.risk(h, probs_val, y_val, notion)`` scores it, and
        ``h.diagonal(points).mean()`` on held-out rows is its CE² estimate (eq. 21).
    """
    p, labels = check_probs_labels(probs, y)
    notion = check_notion(notion)
    spec = check_estimator(key, notion)
    if spec.key == "bins" and not (is_whole(value) and value >= 1):
        raise ValueError(f"The number of bins must be a whole number of at least 1, not "
                         f"{value!r}.")
    value = check_positive(spec.parameter, value)
    if labels.shape[0] < 2:
        raise ValueError("Fitting an estimator needs at least 2 rows of probs.")
    points, D = notion_inputs(p, labels, notion)
    return spec.fit(points, D, value, {})
