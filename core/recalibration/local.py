"""Local methods: recalibration that uses the audit features.

* :class:`LoRe` — local recalibration (Luo et al. 2022, §4, eq. 6): the top-label
  confidence becomes the kernel-weighted accuracy of the calibration points in the same
  confidence bin, near the point in an embedding of the audit features.
* :class:`LCBCorrection` — the individual-level correction the I-trustworthy paper suggests
  after eq. 7 (Vashistha & Farahi, §3.3): ``p + LCB(p, x)`` estimated on the calibration rows.
"""

from __future__ import annotations

import numpy as np

from core.kernels.tiles import Standardizer, kernel_matmul
from core.local.embedding import fit_embedding
from core.local.lcb_estimate import lcb, select_bandwidths
from core.local.lce_inputs import LCE_TILE, confidence_bins
from core.recalibration.base import BinaryRecalibrator, RecalibratorBase, replace_top_label
from core.recalibration.binning import HistogramBinning

#: A kernel-weight sum at or below this has underflowed; LoRe falls back to histogram binning.
MIN_WEIGHT = np.finfo(np.float64).tiny
#: LCB correction: predictions are clipped into [LCB_CLIP, 1 − LCB_CLIP].
LCB_CLIP = 1e-6


class LoRe(RecalibratorBase):
    """Local recalibration, LoRe (Luo et al. 2022, eq. 6).

    With ``β(x)`` the calibration points whose top-label confidence lies in the same of
    ``n_bins`` equal-width bins as ``x``'s (the LCE's bins,
    :func:`core.local.lce_estimate.confidence_bins`)::

        p̂'(x) = Σ_{i∈β(x)} k_γ(x, x_i) 1[f(x_i) = y_i]  /  Σ_{i∈β(x)} k_γ(x, x_i)
        k_γ(a, b) = exp(−‖φ(a) − φ(b)‖₁ / (d·γ))

    ``φ`` is an embedding of the audit features: they are z-scored with the calibration
    rows' means and standard deviations (:class:`core.kernels.tiles.Standardizer`), mapped by
    ``embedding`` (PCA by default; t-SNE or UMAP through :func:`core.local.embedding.fit_embedding`,
    which places new rows) to ``n_components`` dimensions (at most the number of feature
    columns), and the coordinates z-scored again with the calibration rows' statistics — the
    space the LCE landscape page measures in. The paper uses γ = 0.4 with PCA and 0.2 with
    t-SNE.

    The new value replaces the top-label confidence; the other classes are rescaled and the
    predicted class never changes (:func:`~core.recalibration.base.replace_top_label`).
    Fallback: a bin with no calibration points, or whose kernel weights underflow to 0 (a
    point far from every calibration point at a small γ), gets histogram binning with the
    same bins (the bin's calibration accuracy; a bin without calibration points keeps the
    model's confidence). γ → ∞ is histogram binning itself, γ → 0 the correctness of the
    nearest same-bin calibration point (paper §4).

    Cost: the sums run over each bin's calibration points for each new row, through the tile
    engine. Rows that share a bin and coordinates (repeated categorical features) are
    computed once, and calibration points that share them are merged with their weights —
    both exact. A bin with more than ``max_reference`` calibration points uses a seeded
    random subset of that size: eq. 6 estimated from a sample of the bin (exact below it;
    this keeps 100,000 rows within seconds).
    """

    title = "LoRe"
    needs = ("features",)

    def __init__(self, gamma: float = 0.4, n_bins: int = 15, embedding: str = "pca",
                 n_components: int = 2, max_reference: int = 2000, seed: int = 0) -> None:
        self.gamma = gamma
        self.n_bins = n_bins
        self.embedding = embedding
        self.n_components = n_components
        self.max_reference = max_reference
        self.seed = seed

    def _fit(self, P, y, X, g) -> None:
        self.scaler_ = Standardizer.fit(X)
        Z = self.scaler_.transform(X)
        k = min(int(self.n_components), Z.shape[1], Z.shape[0])
        self.map_ = fit_embedding(Z, method=self.embedding, n_components=k, seed=self.seed)
        self.coord_scaler_ = Standardizer.fit(self.map_.coords)
        self.coords_ = self.coord_scaler_.transform(self.map_.coords)
        bins = confidence_bins(P.max(axis=1), self.n_bins)
        correct = (np.argmax(P, axis=1) == y).astype(np.float64)
        rng = np.random.default_rng(self.seed)
        self.reference_ = {}
        for b in np.unique(bins):
            rows = np.flatnonzero(bins == b)
            if rows.size > self.max_reference:
                rows = np.sort(rng.choice(rows, int(self.max_reference), replace=False))
            # merge calibration points with equal coordinates: weights (Σ correct, count)
            points, inverse = np.unique(self.coords_[rows], axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            weights = np.column_stack([
                np.bincount(inverse, weights=correct[rows], minlength=points.shape[0]),
                np.bincount(inverse, minlength=points.shape[0]).astype(np.float64)])
            self.reference_[int(b)] = (points, weights)
        self.fallback_ = HistogramBinning(self.n_bins, "uniform", "top-label")
        self.fallback_.fit_matrix(P, y, None, None)

    def place(self, X: np.ndarray) -> np.ndarray:
        """Standardised embedding coordinates of new rows' audit features."""
        return self.coord_scaler_.transform(self.map_.transform(self.scaler_.transform(X)))

    def _predict(self, P, X, g) -> np.ndarray:
        coords = self.place(X)
        conf = P.max(axis=1)
        new = self.fallback_._predict_binary(conf, None, None)
        bins = confidence_bins(conf, self.n_bins)
        for b in np.unique(bins):
            if int(b) not in self.reference_:
                continue
            points, weights = self.reference_[int(b)]
            query = np.flatnonzero(bins == b)
            distinct, inverse = np.unique(coords[query], axis=0, return_inverse=True)
            sums = kernel_matmul(distinct, points, weights, float(self.gamma),
                                 kind="laplacian", tile_size=LCE_TILE)[inverse.reshape(-1)]
            ok = sums[:, 1] > MIN_WEIGHT
            new[query[ok]] = sums[ok, 0] / sums[ok, 1]
        return replace_top_label(P, np.clip(new, 0.0, 1.0))


class LCBCorrection(BinaryRecalibrator):
    """Individual correction by the local calibration bias (I-trustworthy, eq. 7 and §3.3).

    ``q(p, x) = clip(p + LCB(p, x), 1e-6, 1 − 1e-6)`` with ::

        LCB(p, x) = Σ_i (t_i − p_i) k(p_i, p) l(x_i, x) / Σ_i k(p_i, p) l(x_i, x)

    over the calibration rows (:func:`core.local.lcb_estimate.lcb`; Gaussian kernels, features
    standardised
    with the calibration rows' statistics), bandwidths chosen on the calibration rows by
    leave-one-out cross-validation (:func:`core.local.lcb_estimate.select_bandwidths`). A point
    without kernel neighbours keeps ``p``. At most ``max_reference`` calibration rows (a seeded
    subsample) serve as the reference, which bounds the cost at ``n_new × max_reference``
    kernel evaluations; the cross-validation uses at most ``cv_rows`` of them. Binary;
    multiclass one-vs-rest with renormalisation (a cross-validation per class).
    """

    title = "LCB correction"
    needs = ("features",)

    def __init__(self, max_reference: int = 2000, cv_rows: int = 1000, seed: int = 0
                 ) -> None:
        self.max_reference = max_reference
        self.cv_rows = cv_rows
        self.seed = seed

    def _fit_binary(self, p, t, X, g) -> None:
        rows = np.arange(p.size)
        if p.size > self.max_reference:
            rows = np.sort(np.random.default_rng(self.seed).choice(
                p.size, int(self.max_reference), replace=False))
        self.reference_ = (p[rows], t[rows].astype(np.int64), X[rows])
        self.prob_bandwidth_, self.feature_bandwidth_, _ = select_bandwidths(
            *self.reference_, max_rows=int(self.cv_rows), seed=self.seed)

    def _predict_binary(self, p, X, g) -> np.ndarray:
        bias = lcb(*self.reference_, query_probs=p, query_X=X,
                   prob_bandwidth=self.prob_bandwidth_,
                   feature_bandwidth=self.feature_bandwidth_)
        return np.clip(p + np.nan_to_num(bias, nan=0.0), LCB_CLIP, 1.0 - LCB_CLIP)
