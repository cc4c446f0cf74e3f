"""Binning and non-parametric methods: histogram binning, isotonic regression, BBQ,
scaling–binning and inductive Venn–Abers.

Binary methods act on ``p = P(y = 1)``; multiclass problems go through
:class:`~core.recalibration.base.OneVsRest` (one copy per class on ``(p_k, 1[y = k])``, rows
renormalised). Bins follow the reliability diagram's convention (:mod:`core.metrics`): right-
closed ``(e_b, e_{b+1}]``, the first bin includes 0 and the last includes 1.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from core.metrics.binning import bin_edges, bin_indices
from core.recalibration.base import BinaryRecalibrator, replace_top_label
from core.recalibration.scaling import PlattScaling

#: BBQ keeps the binning models whose posterior weight is at least this share of the best.
BBQ_MIN_WEIGHT = 1e-8


# --------------------------------------------------------------------------- histogram


def bin_means(values: np.ndarray, bins: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per bin: the mean of ``values`` (NaN for an empty bin) and the count."""
    counts = np.bincount(bins, minlength=k)
    sums = np.bincount(bins, weights=values, minlength=k)
    return np.divide(sums, counts, out=np.full(k, np.nan), where=counts > 0), counts


class HistogramBinning(BinaryRecalibrator):
    """Histogram binning (Zadrozny & Elkan 2001): each bin's prediction is the share of
    positives among the calibration rows in it.

    ``q(p) = (1/n_b) Σ_{i ∈ b} t_i`` for ``p`` in bin ``b``; ``n_bins`` equal-width bins
    (``strategy="uniform"``) or equal-mass bins at the calibration rows' quantiles
    (``"quantile"``). A bin without calibration rows keeps the model's probability.

    ``notion="one-vs-rest"`` bins ``P(y = 1)`` (multiclass: each class one-vs-rest, rows
    renormalised). ``notion="top-label"`` bins the top-label confidence ``c = max_k p_k`` and
    replaces it by the bin's accuracy, the other classes rescaled and the predicted class kept
    (:func:`~core.recalibration.base.replace_top_label`) — the limit γ → ∞ of LoRe (Luo et al.
    2022, §4).
    """

    title = "Histogram binning"

    def __init__(self, n_bins: int = 15, strategy: str = "uniform",
                 notion: str = "one-vs-rest") -> None:
        self.n_bins = n_bins
        self.strategy = strategy
        self.notion = notion

    @property
    def binary_only(self) -> bool:  # type: ignore[override]
        return self.notion == "one-vs-rest"

    def _fit(self, P, y, X, g) -> None:
        if self.notion == "top-label":
            conf, correct = P.max(axis=1), (np.argmax(P, axis=1) == y).astype(np.float64)
            self._fit_binary(conf, correct, X, g)
        else:
            super()._fit(P, y, X, g)

    def _predict(self, P, X, g) -> np.ndarray:
        if self.notion == "top-label":
            return replace_top_label(P, self._predict_binary(P.max(axis=1), X, g))
        return super()._predict(P, X, g)

    def _fit_binary(self, p, t, X, g) -> None:
        self.edges_ = bin_edges(p, self.n_bins, self.strategy)
        self.values_, self.counts_ = bin_means(t, bin_indices(p, self.edges_),
                                               self.edges_.size - 1)

    def _predict_binary(self, p, X, g) -> np.ndarray:
        value = self.values_[bin_indices(p, self.edges_)]
        return np.where(np.isnan(value), p, value)


# --------------------------------------------------------------------------- isotonic


def pava(x: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Isotonic (non-decreasing) least-squares fit of ``t`` on ``x`` by pool-adjacent-violators.

    Ties in ``x`` are first averaged (weight = their count), as scikit-learn does. Returns the
    distinct ``x`` in increasing order and the fitted value at each:
    ``argmin_f Σ_j w_j (t̄_j − f_j)²`` subject to ``f_1 ≤ … ≤ f_u``.
    """
    xs, inverse, weights = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse.reshape(-1), weights=t, minlength=xs.size)
    # blocks on a stack: value (mean), weight, number of distinct x in the block
    means, masses, sizes = [], [], []
    for total, weight in zip(sums.tolist(), weights.tolist(), strict=True):
        mean, mass, size = total / weight, float(weight), 1
        while means and means[-1] >= mean:
            mass_prev = masses.pop()
            mean = (means.pop() * mass_prev + mean * mass) / (mass_prev + mass)
            mass += mass_prev
            size += sizes.pop()
        means.append(mean)
        masses.append(mass)
        sizes.append(size)
    return xs, np.repeat(np.asarray(means), np.asarray(sizes))


class IsotonicCalibration(BinaryRecalibrator):
    """Isotonic regression (Zadrozny & Elkan 2002): the non-decreasing map ``p ↦ q`` that
    minimises ``Σ_i (t_i − q(p_i))²`` on the calibration rows (:func:`pava`).

    New probabilities are interpolated linearly between the fitted points and clipped to the
    end values outside their range — scikit-learn's ``IsotonicRegression(out_of_bounds=
    "clip")``, which this reproduces. Binary; multiclass one-vs-rest with renormalisation.
    """

    title = "Isotonic regression"

    def _fit_binary(self, p, t, X, g) -> None:
        self.x_, self.y_ = pava(p, t)

    def _predict_binary(self, p, X, g) -> np.ndarray:
        return np.interp(p, self.x_, self.y_)


# --------------------------------------------------------------------------- BBQ


class BBQ(BinaryRecalibrator):
    """Bayesian binning into quantiles (Naeini, Cooper & Hauskrecht 2015).

    Averages equal-frequency histogram-binning models ``M_B`` with ``B`` bins, ``B`` from
    ``⌊N^{1/3}/C⌋`` to ``⌈C·N^{1/3}⌉`` (``C = scale``), weighted by their Bayesian score
    (uniform prior over models)::

        P(D | M) = Π_b Γ(N'/B)/Γ(n_b + N'/B) · Γ(m_b + α_b)/Γ(α_b) · Γ(n_b − m_b + β_b)/Γ(β_b)

    with ``n_b`` rows and ``m_b`` positives in bin ``b``, ``α_b = (N'/B)·p̄_b``,
    ``β_b = (N'/B)(1 − p̄_b)``, ``p̄_b`` the midpoint of the bin and ``N'`` the
    ``prior_strength`` (equivalent sample size, 2 in the paper). Each model predicts its
    bin's posterior mean ``(m_b + α_b)/(n_b + N'/B)``; the output is their weighted average.
    Models with weight below 1e-8 of the best are dropped (their share is negligible).
    Binary; multiclass one-vs-rest with renormalisation.
    """

    title = "BBQ"

    def __init__(self, prior_strength: float = 2.0, scale: float = 10.0) -> None:
        self.prior_strength = prior_strength
        self.scale = scale

    def _fit_binary(self, p, t, X, g) -> None:
        n = p.size
        root = n ** (1.0 / 3.0)
        low = max(1, int(np.floor(root / self.scale)))
        high = max(low, min(n, int(np.ceil(self.scale * root))))
        order = np.argsort(p, kind="stable")
        ps = p[order]
        cum_t = np.concatenate([[0.0], np.cumsum(t[order])])
        models, scores = [], []
        seen: set[bytes] = set()
        for B in range(low, high + 1):
            edges = _quantile_edges(ps, B)
            key = edges.tobytes()
            if key in seen:  # ties can make two B give the same bins
                continue
            seen.add(key)
            k = edges.size - 1
            # rows up to each inner edge (bins are right-closed) on the sorted scores
            cuts = np.concatenate([[0], np.searchsorted(ps, edges[1:-1], side="right"), [n]])
            counts = np.diff(cuts).astype(np.float64)
            positives = np.diff(cum_t[cuts])
            strength = self.prior_strength / k
            mid = np.clip((edges[:-1] + edges[1:]) / 2.0, 1e-6, 1.0 - 1e-6)
            alpha, beta = strength * mid, strength * (1.0 - mid)
            score = np.sum(gammaln(strength) - gammaln(counts + strength)
                           + gammaln(positives + alpha) - gammaln(alpha)
                           + gammaln(counts - positives + beta) - gammaln(beta))
            models.append((edges, (positives + alpha) / (counts + strength)))
            scores.append(score)
        scores_arr = np.asarray(scores)
        weights = np.exp(scores_arr - scores_arr.max())
        keep = weights >= BBQ_MIN_WEIGHT
        self.models_ = [m for m, k in zip(models, keep, strict=True) if k]
        self.weights_ = weights[keep] / weights[keep].sum()
        self.n_models_ = len(models)

    def _predict_binary(self, p, X, g) -> np.ndarray:
        out = np.zeros(p.size)
        for (edges, values), weight in zip(self.models_, self.weights_, strict=True):
            out += weight * values[np.searchsorted(edges[1:-1], p, side="left")]
        return out


def _quantile_edges(sorted_p: np.ndarray, B: int) -> np.ndarray:
    """Equal-frequency edges of ``B`` bins on sorted values, outer edges 0 and 1, ties merged."""
    n = sorted_p.size
    cuts = sorted_p[np.clip((np.arange(1, B) * n) // B - 1, 0, n - 1)]
    return np.concatenate([[0.0], np.unique(cuts[(cuts > 0) & (cuts < 1)]), [1.0]])


# --------------------------------------------------------------------------- scaling–binning


class ScalingBinning(BinaryRecalibrator):
    """Scaling–binning calibrator (Kumar, Liang & Ma 2019, "Verified uncertainty calibration").

    The calibration rows are split at random (``seed``) into two halves. On the first, a
    Platt map ``g`` is fitted; on the second, ``n_bins`` equal-mass bins of ``g(p)`` are formed
    and each bin outputs the *mean of g* over its rows (not of the labels — the step that
    makes the calibration error measurable). Kumar et al. use the second half both for the
    bins and for the means, as here. Binary; multiclass one-vs-rest (their marginal
    calibration) with renormalisation.
    """

    title = "Scaling–binning"

    def __init__(self, n_bins: int = 15, seed: int = 0) -> None:
        self.n_bins = n_bins
        self.seed = seed

    def _fit_binary(self, p, t, X, g) -> None:
        order = np.random.default_rng(self.seed).permutation(p.size)
        half = max(1, p.size // 2)
        first, second = order[:half], order[half:] if p.size > half else order
        pair = np.column_stack([1.0 - p[first], p[first]])
        self.scaler_ = PlattScaling().fit_matrix(pair, t[first].astype(np.int64), None, None)
        scaled = self._scale(p[second])
        self.edges_ = bin_edges(scaled, self.n_bins, "quantile")
        self.values_, _ = bin_means(scaled, bin_indices(scaled, self.edges_),
                                    self.edges_.size - 1)

    def _scale(self, p: np.ndarray) -> np.ndarray:
        return self.scaler_.predict_matrix(np.column_stack([1.0 - p, p]), None, None)[:, 1]

    def _predict_binary(self, p, X, g) -> np.ndarray:
        scaled = self._scale(p)
        value = self.values_[bin_indices(scaled, self.edges_)]
        return np.where(np.isnan(value), scaled, value)


# --------------------------------------------------------------------------- Venn–Abers


def _prefix_hull(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``prev[i]``: the vertex before ``i`` on the lower convex hull of points ``0..i``
    (``-1`` for point 0). Following ``prev`` from ``i`` walks that hull right to left."""
    prev = np.full(x.size, -1, dtype=np.int64)
    stack: list[int] = []
    xs, ys = x.tolist(), y.tolist()
    for i in range(len(xs)):
        while len(stack) >= 2:
            a, b = stack[-2], stack[-1]
            if (ys[b] - ys[a]) * (xs[i] - xs[b]) >= (ys[i] - ys[b]) * (xs[b] - xs[a]):
                stack.pop()
            else:
                break
        prev[i] = stack[-1] if stack else -1
        stack.append(i)
    return prev


def _suffix_hull(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``next[i]``: the vertex after ``i`` on the lower convex hull of points ``i..u``
    (``-1`` for the last point)."""
    nxt = np.full(x.size, -1, dtype=np.int64)
    stack: list[int] = []
    xs, ys = x.tolist(), y.tolist()
    for i in range(len(xs) - 1, -1, -1):
        while len(stack) >= 2:
            b, c = stack[-1], stack[-2]
            if (ys[b] - ys[i]) * (xs[c] - xs[b]) >= (ys[c] - ys[b]) * (xs[b] - xs[i]):
                stack.pop()
            else:
                break
        nxt[i] = stack[-1] if stack else -1
        stack.append(i)
    return nxt


def _bridge_slopes(cx, cy, prev, nxt, left, right, shift_y) -> np.ndarray:
    """Slope of the lower common tangent between the hull of points ``0..left`` and the hull
    of points ``right..u`` shifted by ``(1, shift_y)``, for arrays of ``left``/``right``.

    Both hulls are walked from their inner ends (``prev`` leftwards, ``nxt`` rightwards),
    one step at a time for all configurations at once, until no point lies below the line.
    """
    a, b = left.copy(), right.copy()

    def slope(ia, ib):
        return (cy[ib] + shift_y - cy[ia]) / (cx[ib] + 1.0 - cx[ia])

    while True:
        current = slope(a, b)
        pa = prev[a]
        move_a = pa >= 0
        move_a[move_a] = ((cy[a[move_a]] - cy[pa[move_a]]) / (cx[a[move_a]] - cx[pa[move_a]])
                          > current[move_a])
        a = np.where(move_a, pa, a)
        current = slope(a, b)
        nb = nxt[b]
        move_b = nb >= 0
        move_b[move_b] = ((cy[nb[move_b]] - cy[b[move_b]]) / (cx[nb[move_b]] - cx[b[move_b]])
                          < current[move_b])
        b = np.where(move_b, nb, b)
        if not (move_a.any() or move_b.any()):
            return np.clip(slope(a, b), 0.0, 1.0)


class VennAbers(BinaryRecalibrator):
    """Inductive Venn–Abers predictor (Vovk & Petej 2014; Vovk, Petej & Fedorova 2015).

    For a new score ``s``, isotonic regression is fitted twice to the calibration rows plus
    ``(s, 0)`` and plus ``(s, 1)``; its values at ``s`` are ``p₀ ≤ p₁``, the multiprobability
    interval (:meth:`predict_interval`), valid in the Venn sense. The point prediction is
    their log-loss merge ``p = p₁ / (1 − p₀ + p₁)``.

    Computed exactly without refitting: the isotonic value at ``s`` is the slope of the
    greatest convex minorant of the cumulative-sum diagram across the new point's step, i.e.
    the lower common tangent of the diagram's hull left of ``s`` and its hull right of ``s``
    shifted by the new point ``(1, y)``. Prefix and suffix hulls are stored as parent
    pointers (one stack pass each), and each tangent is found by walking both hulls from
    ``s`` outwards. Binary; multiclass one-vs-rest with renormalisation.
    """

    title = "Venn–Abers"

    def _fit_binary(self, p, t, X, g) -> None:
        xs, inverse, counts = np.unique(p, return_inverse=True, return_counts=True)
        sums = np.bincount(inverse.reshape(-1), weights=t, minlength=xs.size)
        self.scores_ = xs
        self.cum_x_ = np.concatenate([[0.0], np.cumsum(counts, dtype=np.float64)])
        self.cum_y_ = np.concatenate([[0.0], np.cumsum(sums)])
        self.prev_ = _prefix_hull(self.cum_x_, self.cum_y_)
        self.next_ = _suffix_hull(self.cum_x_, self.cum_y_)

    def _interval(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        u = self.scores_.size
        pos = np.searchsorted(self.scores_, p, side="left")
        tie = (pos < u) & (self.scores_[np.minimum(pos, u - 1)] == p)
        keys, index = np.unique(2 * pos + tie, return_inverse=True)
        left = keys // 2
        right = left + (keys % 2)
        args = (self.cum_x_, self.cum_y_, self.prev_, self.next_, left, right)
        p0 = _bridge_slopes(*args, 0.0)
        p1 = _bridge_slopes(*args, 1.0)
        index = index.reshape(-1)
        return p0[index], p1[index]

    def predict_interval(self, probs) -> tuple[np.ndarray, np.ndarray]:
        """``(p₀, p₁)`` of every row: ``(n,)`` each for binary ``(n,)`` input, else
        ``(n, m)`` per class (before renormalisation)."""
        p = np.asarray(self.predict(probs))  # validates and checks the fit
        del p
        P = np.asarray(probs, dtype=np.float64)
        if self.ovr_ is None:
            q = P if P.ndim == 1 else P[:, 1]
            return self._interval(q)
        pairs = [model._interval(P[:, k]) for k, model in enumerate(self.ovr_.models_)]
        return (np.column_stack([lo for lo, _ in pairs]),
                np.column_stack([hi for _, hi in pairs]))

    def _predict_binary(self, p, X, g) -> np.ndarray:
        p0, p1 = self._interval(p)
        return p1 / (1.0 - p0 + p1)
