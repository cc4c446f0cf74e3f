"""Global scaling methods: a few parameters fitted by maximum likelihood on the calibration rows.

Each maps the model's probabilities through a fixed parametric family, fitted by minimising
the negative log-likelihood (NLL) of the calibration labels:

* Platt scaling (Platt 1999): ``q = σ(a·logit p + b)``, logistic regression on the logit;
* temperature scaling (Guo et al. 2017): ``q = softmax(log p / T)``, one parameter ``T``;
* vector and matrix scaling (Guo et al. 2017) and Dirichlet calibration (Kull et al. 2019):
  ``q = softmax(W z + b)`` with ``z`` the centred logits or the log-probabilities;
* beta calibration (Kull, Silva Filho & Flach 2017):
  ``q = σ(a·log p − b·log(1 − p) + c)``, ``a, b ≥ 0``.

Saturated scores. Random forests, k-NN, naive Bayes and boosted trees with few leaves output
exact 0s and 1s, whose logarithms are infinite. Every method here takes its logarithms of
probabilities clipped into ``[ε, 1 − ε]`` with ``ε`` fitted from the calibration rows
(:func:`~core.data.validation.resolvable_bound`, stored as ``eps_`` and applied to new rows):
half a step of the model's own score resolution beyond its most extreme score, the
Haldane–Anscombe empirical logit of a vote share of 0. A fixed 1e-12 put those rows at
``logit = ±27.6``, where a few of them decided the fit (issue 20, a default random forest on
ProPublica's COMPAS file: Platt ECE 0.085 against scikit-learn's 0.043). Platt scaling also
fits on the score itself where that comes out better calibrated, as Platt (1999) and
scikit-learn do for models whose output is not a log-odds (:class:`PlattScaling`).
``python -m benchmarks.recalibration_models`` measures every method on four model families
that saturate × three tables against scikit-learn's ``CalibratedClassifierCV``.

Optimisation is L-BFGS-B with analytic gradients (the 1-D temperature: a bounded scalar
search over ``log T``).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import log_softmax

from core.data.validation import logit, probability_matrix, resolvable_bound, sigmoid, softmax
from core.metrics.binned import ece
from core.recalibration.base import BinaryRecalibrator, RecalibratorBase

#: Search interval of log T for temperature scaling: T ∈ [1e-2, 1e2].
LOG_T_BOUNDS = (np.log(1e-2), np.log(1e2))
#: Iteration limit of the L-BFGS-B fits.
MAX_ITER = 500


def _log_probs(P: np.ndarray, eps: float) -> np.ndarray:
    """``log P`` with the entries clipped into ``[eps, 1 − eps]`` (``eps``: the fitted
    ``eps_``), so that a binary row ``(1, 0)`` has the log-odds of ``(1 − ε, ε)``."""
    return np.log(np.clip(P, eps, 1.0 - eps))


def _binary_bound(p: np.ndarray) -> float:
    """:func:`~core.data.validation.resolvable_bound` of ``(n,)`` scores P(y = 1)."""
    return resolvable_bound(probability_matrix(p))


def _binary_nll(params: np.ndarray, F: np.ndarray, t: np.ndarray, penalty: np.ndarray
                ) -> tuple[float, np.ndarray]:
    """Mean logistic NLL of ``σ(F @ params)`` and its gradient, plus ``Σ penalty·params²``."""
    z = F @ params
    # log(1 + e^z) − t·z, evaluated stably
    loss = np.mean(np.logaddexp(0.0, z) - t * z) + np.sum(penalty * params**2)
    grad = F.T @ (sigmoid(z) - t) / t.size + 2.0 * penalty * params
    return float(loss), grad


def _fit_logistic(F: np.ndarray, t: np.ndarray, start: np.ndarray,
                  bounds: list[tuple[float | None, float | None]] | None = None,
                  penalty: np.ndarray | None = None) -> np.ndarray:
    penalty = np.zeros(F.shape[1]) if penalty is None else penalty
    result = minimize(_binary_nll, start, args=(F, t, penalty), jac=True, method="L-BFGS-B",
                      bounds=bounds, options={"maxiter": MAX_ITER})
    return result.x


class PlattScaling(BinaryRecalibrator):
    """Platt scaling: a logistic regression of the label on the model's score (Platt 1999).

    ``q = σ(a · s(p) + b)``, with ``(a, b)`` minimising the calibration NLL
    ``−(1/n) Σ [t_i log q_i + (1 − t_i) log(1 − q_i)]``, where the score ``s`` is

    * ``transform="logit"``: ``s = logit(p)`` with ``p`` clipped into ``[ε, 1 − ε]``
      (``eps_``, :func:`~core.data.validation.resolvable_bound`). For a calibrated model
      ``a ≈ 1, b ≈ 0`` is the identity (Cox's logistic recalibration);
    * ``transform="identity"``: ``s = p``, Platt's (1999) sigmoid on the classifier's raw
      output as scikit-learn's ``CalibratedClassifierCV(method="sigmoid")`` fits it for
      models whose output is a probability or a vote share (random forests, k-NN, naive
      Bayes). It needs no logarithm, so a saturated score is an ordinary value;
    * ``transform="auto"`` (default): both are fitted and the one whose fit is better
      calibrated on the calibration rows — the smaller binned ECE (15 equal-width bins, as
      the audit reports it) — is kept; a tie keeps the logit. Both designs have two
      parameters, so neither is favoured by its size. For a model whose probabilities are a
      sigmoid of its log-odds (logistic regression, boosting) that is usually the logit, as
      scikit-learn's decision function gives; for vote shares (forests, k-NN) and naive
      Bayes' underflowing likelihood ratios, often the score. Choosing by the NLL instead
      rewards naive Bayes' extreme log-odds and lost 0.008–0.014 of test ECE against
      scikit-learn there (``benchmarks.recalibration_models``). ``transform_`` says which
      was kept.

    With ``smoothing="on"`` (default) the targets are Platt's ``t₊ = (N₊ + 1)/(N₊ + 2)`` and
    ``t₋ = 1/(N₋ + 2)`` instead of 1 and 0, as Platt (1999, §2.2) recommends against
    overfitting and scikit-learn does: without it, a small calibration set whose saturated
    rows are all right (a k-NN's unanimous neighbours) pulls the slope towards infinity.
    ``"off"`` is the plain maximum-likelihood fit. Binary; multiclass one-vs-rest with
    renormalisation.
    """

    title = "Platt scaling"

    def __init__(self, transform: str = "auto", smoothing: str = "on") -> None:
        self.transform = transform
        self.smoothing = smoothing

    def _score(self, p: np.ndarray, transform: str) -> np.ndarray:
        return logit(p, self.eps_) if transform == "logit" else p

    def _fit_binary(self, p, t, X, g) -> None:
        labels = t.astype(np.int64)
        if self.smoothing == "on":
            n_pos = t.sum()
            t = np.where(t == 1, (n_pos + 1) / (n_pos + 2), 1.0 / (t.size - n_pos + 2))
        self.eps_ = _binary_bound(p)
        candidates = ("logit", "identity") if self.transform == "auto" else (self.transform,)
        fits = {}
        for transform in candidates:
            score = self._score(p, transform)
            F = np.column_stack([score, np.ones(p.size)])
            start = np.array([1.0, 0.0]) if transform == "logit" else np.zeros(2)
            coef = _fit_logistic(F, t, start)
            error = ece(sigmoid(F @ coef), labels) if len(candidates) > 1 else 0.0
            fits[transform] = (error, coef)
        self.transform_ = min(fits, key=lambda k: fits[k][0])  # ties: the logit, listed first
        self.slope_, self.intercept_ = fits[self.transform_][1]

    def _predict_binary(self, p, X, g) -> np.ndarray:
        return sigmoid(self.slope_ * self._score(p, self.transform_) + self.intercept_)


class BetaCalibration(BinaryRecalibrator):
    """Beta calibration (Kull, Silva Filho & Flach 2017, eq. 4 with the constraints of §3).

    ``q = σ(a log p − b log(1 − p) + c)`` with ``a, b ≥ 0`` (the map is then monotone),
    maximum likelihood by bounded L-BFGS-B. ``variant`` follows the paper's families:
    ``"abm"`` all three parameters; ``"ab"`` fixes the midpoint ``m = 1/2``
    (``c = (a − b)·log 2``, so ``q(1/2) = 1/2``); ``"am"`` sets ``a = b`` (logistic in the
    logit: Platt scaling).
    The identity is ``a = b = 1, c = 0``. ``p`` is clipped into ``[ε, 1 − ε]`` before the
    logarithms (``eps_``, :func:`~core.data.validation.resolvable_bound`). Binary; multiclass
    one-vs-rest with renormalisation.
    """

    title = "Beta calibration"

    def __init__(self, variant: str = "abm") -> None:
        self.variant = variant

    def _design(self, p: np.ndarray) -> np.ndarray:
        q = np.clip(p, self.eps_, 1.0 - self.eps_)
        lp, lq = np.log(q), -np.log1p(-q)
        ones = np.ones(p.size)
        if self.variant == "ab":  # a·(log p + log 2) − b·(log(1 − p) + log 2)
            return np.column_stack([lp + np.log(2.0), lq - np.log(2.0)])
        if self.variant == "am":
            return np.column_stack([lp + lq, ones])
        return np.column_stack([lp, lq, ones])

    def _fit_binary(self, p, t, X, g) -> None:
        self.eps_ = _binary_bound(p)
        F = self._design(p)
        start = np.ones(F.shape[1])
        bounds: list[tuple[float | None, float | None]] = [(0.0, None)] * F.shape[1]
        if self.variant in ("abm", "am"):
            start[-1], bounds[-1] = 0.0, (None, None)
        self.coef_ = _fit_logistic(F, t, start, bounds)

    def _predict_binary(self, p, X, g) -> np.ndarray:
        return sigmoid(self._design(p) @ self.coef_)


class TemperatureScaling(RecalibratorBase):
    """Temperature scaling (Guo et al. 2017, §4.2): ``q = softmax(log p / T)``.

    ``log p`` are the model's logits up to a constant per row, which softmax ignores; for a
    binary problem this is ``σ(logit(p)/T)``. ``T`` minimises the calibration NLL over
    ``log T ∈ [log 0.01, log 100]`` with a bounded scalar search (Brent). ``T > 1`` softens
    an overconfident model; the predicted class never changes. Probabilities are clipped
    below at ``ε`` before the logarithm (``eps_``, :func:`~core.data.validation.resolvable_bound`),
    so a saturated row counts as the most extreme probability the data resolve, not as
    ``log 1e-12``.
    """

    title = "Temperature scaling"

    def _fit(self, P, y, X, g) -> None:
        self.eps_ = resolvable_bound(P)
        L = _log_probs(P, self.eps_)
        rows = np.arange(y.size)

        def nll(log_t: float) -> float:
            return float(-np.mean(log_softmax(L / np.exp(log_t), axis=1)[rows, y]))

        result = minimize_scalar(nll, bounds=LOG_T_BOUNDS, method="bounded",
                                 options={"xatol": 1e-6})
        self.temperature_ = float(np.exp(result.x))

    def _predict(self, P, X, g) -> np.ndarray:
        return softmax(_log_probs(P, self.eps_) / self.temperature_)


class _LinearSoftmax(RecalibratorBase):
    """``q = softmax(W z + b)`` fitted by penalised NLL; subclasses choose ``z`` and ``W``.

    Loss (Kull et al. 2019, eq. 8, ODIR)::

        (1/n) Σ_i −log q_{i,y_i} + λ/(m(m−1)) Σ_{k≠j} W_kj² + μ/m Σ_k b_k²

    and for vector scaling ``λ/m Σ_k (w_k − 1)² + μ/m Σ_k b_k²`` (an L2 pull towards the
    identity). Starts at the identity map, ``W = I, b = 0``. Probabilities are clipped below
    at ``ε`` before the logarithm (``eps_``, :func:`~core.data.validation.resolvable_bound`).
    """

    #: One weight per class (vector scaling) instead of a full matrix.
    diagonal: bool = False
    #: Map centred logits ``log p − mean_k log p`` (vector, matrix) instead of ``log p``.
    centred: bool = False

    def __init__(self, reg_lambda: float = 1e-3, reg_mu: float = 1e-3) -> None:
        self.reg_lambda = reg_lambda
        self.reg_mu = reg_mu

    def _inputs(self, P: np.ndarray) -> np.ndarray:
        L = _log_probs(P, self.eps_)
        return L - L.mean(axis=1, keepdims=True) if self.centred else L

    def _fit(self, P, y, X, g) -> None:
        self.eps_ = resolvable_bound(P)
        Z = self._inputs(P)
        n, m = Z.shape
        Y = np.zeros((n, m))
        Y[np.arange(n), y] = 1.0
        off = ~np.eye(m, dtype=bool)
        lam, mu = float(self.reg_lambda), float(self.reg_mu)

        def unpack(theta):
            if self.diagonal:
                return np.diag(theta[:m]), theta[m:]
            return theta[:m * m].reshape(m, m), theta[m * m:]

        def loss(theta):
            W, b = unpack(theta)
            L = Z @ W.T + b
            logq = log_softmax(L, axis=1)
            value = -np.sum(Y * logq) / n + mu / m * np.sum(b**2)
            R = (np.exp(logq) - Y) / n
            gW = R.T @ Z
            gb = R.sum(axis=0) + 2 * mu / m * b
            if self.diagonal:
                w = np.diag(W)
                value += lam / m * np.sum((w - 1.0) ** 2)
                return value, np.concatenate([np.diag(gW) + 2 * lam / m * (w - 1.0), gb])
            value += lam / (m * (m - 1)) * np.sum(W[off] ** 2)
            gW = gW + 2 * lam / (m * (m - 1)) * np.where(off, W, 0.0)
            return value, np.concatenate([gW.ravel(), gb])

        start = np.concatenate([np.ones(m) if self.diagonal else np.eye(m).ravel(),
                                np.zeros(m)])
        theta = minimize(loss, start, jac=True, method="L-BFGS-B",
                         options={"maxiter": MAX_ITER}).x
        self.weights_, self.bias_ = unpack(theta)

    def _predict(self, P, X, g) -> np.ndarray:
        return softmax(self._inputs(P) @ self.weights_.T + self.bias_)


class VectorScaling(_LinearSoftmax):
    """Vector scaling (Guo et al. 2017, §4.2): ``q = softmax(w ⊙ z + b)`` on the centred
    logits ``z = log p − mean_k log p``, one scale and one bias per class, with an L2 pull of
    ``w`` towards 1 and ``b`` towards 0 (``reg_lambda``, ``reg_mu``). Multiclass."""

    title = "Vector scaling"
    diagonal = True
    centred = True
    multiclass_only = True


class MatrixScaling(_LinearSoftmax):
    """Matrix scaling (Guo et al. 2017, §4.2): ``q = softmax(W z + b)`` on the centred logits
    ``z = log p − mean_k log p`` with the off-diagonal and intercept penalty (ODIR, Kull et al.
    2019). With probabilities only, the centred logits make this Dirichlet calibration with
    the constraint ``W·1 = 0`` (the map sees only ratios of probabilities). Multiclass."""

    title = "Matrix scaling"
    centred = True
    multiclass_only = True


class DirichletCalibration(_LinearSoftmax):
    """Dirichlet calibration (Kull et al. 2019, eq. 5): ``q = softmax(W log p + b)``, the
    log-likelihood of a Dirichlet model per class, fitted as multinomial regression on the
    log-probabilities with the ODIR penalty (off-diagonal ``W`` by ``reg_lambda``, ``b`` by
    ``reg_mu``). Binary and multiclass (for two classes it is a form of beta calibration)."""

    title = "Dirichlet calibration"
