"""Instance-dependent convex weights λ(x) on the simplex, learned by a small neural network.

The credal-set test (Jürgens et al., ``papers/credal-set-calibration-test.txt``, §3.5 and
App. E.1) finds the most calibrated combination ``f_λ(x) = Σ_m λ_m(x) f^(m)(x)`` with a
multilayer perceptron whose softmax output is λ(x) ∈ Δ_M, trained on an optimisation split
with the combined loss of eq. 16,

    L(θ) = 1/n Σ_i ℓ(f_λθ(x_i), y_i) + γ · ĝ(f_λθ),

ℓ a proper scoring rule (Brier score, or log loss with CE_KL) and ĝ a differentiable
calibration-error estimator (:mod:`core.ensembles.calibration_errors`), γ = 0.01 as in the
paper. The network has three hidden layers of 16 tanh units (the paper's synthetic experiments
use 3 × 16; tanh instead of ReLU makes the objective smooth for L-BFGS and for the gradient
checks).

Written with numpy only: the forward pass, the analytic backward pass, and full-batch L-BFGS
(``scipy.optimize.minimize``) with early stopping on a validation split — the parameters with
the lowest validation loss are kept and training stops after ``patience`` iterations without
improvement. The paper trains with Adam on batches of 256 rows (App. E.2); here the
calibration penalty is likewise estimated on a fixed seeded subset of at most
``penalty_rows`` = 256 rows of the split, which keeps each L-BFGS step O(penalty_rows²) while
the scoring rule uses every row.

Where this differs from the paper. The paper's synthetic experiments train the 3 × 16 MLP on
N_opt = 400 rows with no validation split and do not state the optimiser; its image
experiments use Adam (lr 10⁻⁴, batches of 256, 200 epochs). Here: L-BFGS with early stopping
on a separate validation split (the issue's design), tanh units, and an output layer that
starts at zero, so training starts from the ensemble mean λ ≡ 1/M and a network whose
validation loss never improves *is* the mean. ĝ is CE₂ squared — eq. 6 without its 1/p
root, as in the authors' code; the root would change the penalty's scale, not the test.

What the fitted weights are worth at the paper's sizes (binary H0,2, 400 optimisation, 400
validation and 400 test rows, 200 data sets; seeds as in ``benchmarks/credal_study.py``):
the learned combination is off the truth by a mean |f_λ̂ − f*| of 0.020 on the test rows
(the ensemble mean: 0.034). In 41 of the 200 data sets the validation loss never fell below
its value at the initial weights, so the mean was returned — in 26 of those 41 the
validation Brier score of the mean is no worse than that of the *true* combination (in 11 of
the other 159): 400 binary labels often cannot tell the members apart when they differ by
about 0.1. That is a limit of the data, not of the optimiser: Adam (full batch, lr 10⁻²,
0.021 over 100 data sets), refitting on the optimisation and validation rows together
(0.019) or averaging two networks cross-fitted on the two parts (0.019) leave the deviation
where it is, while 1,600 optimisation rows (or 1,600 validation rows) bring it to 0.016. The
learned test's Type-I error above α under Algorithm 1's null follows from it; the refit
null, which fits this network again in every resample, accounts for it
(:mod:`core.ensembles.test`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize

from core.data.validation import softmax
from core.ensembles.calibration_errors import EPS, ESTIMATORS
from core.kernels.tiles import Standardizer

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class WeightSettings:
    """How the weight network is built and trained (a hashable value).

    Attributes
    ----------
    hidden : tuple of int
        Units per hidden layer (paper: 3 × 16 on synthetic data, 3 × 32 on images).
    gamma : float
        γ of eq. 16, the weight of the calibration penalty.
    max_iter : int
        Upper bound on L-BFGS iterations.
    patience : int
        Iterations without a lower validation loss before training stops.
    penalty_rows : int
        Rows (a fixed seeded subset) on which the calibration penalty is estimated.
    """

    hidden: tuple[int, ...] = (16, 16, 16)
    gamma: float = 0.01
    max_iter: int = 300
    patience: int = 20
    penalty_rows: int = 256


def combine(weights: np.ndarray, members: np.ndarray) -> np.ndarray:
    """``f_λ(x_i) = Σ_m λ_im f^(m)(x_i)``: ``(n, M)`` weights and ``(n, M, K)`` members give
    ``(n, K)``.

    Parameters
    ----------
    weights : array_like
        ``(n, M)`` convex weights, rows summing to 1.
    members : array_like
        ``(n, M, K)`` members' class probabilities.

    Returns
    -------
    numpy.ndarray
        ``(n, K)``.
    """
    return np.einsum("nm,nmk->nk", weights, members)


# --------------------------------------------------------------------------- the network


def layer_sizes(n_features: int, hidden: tuple[int, ...], n_members: int) -> list[int]:
    return [n_features, *hidden, n_members]


def n_parameters(sizes: list[int]) -> int:
    return sum((a + 1) * b for a, b in zip(sizes[:-1], sizes[1:], strict=True))


def unpack(theta: np.ndarray, sizes: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The flat parameter vector as ``[(W_l, b_l)]``, ``W_l`` of shape (in, out)."""
    layers, at = [], 0
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        W = theta[at:at + a * b].reshape(a, b)
        at += a * b
        layers.append((W, theta[at:at + b]))
        at += b
    return layers


def initial_parameters(sizes: list[int], seed: int | None) -> np.ndarray:
    """Hidden weights ~ N(0, 1/fan_in), biases 0; the output layer starts at 0, so the first
    λ(x) is uniform — training starts from the plain ensemble mean."""
    rng = np.random.default_rng(seed)
    parts = []
    for index, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        last = index == len(sizes) - 2
        W = np.zeros((a, b)) if last else rng.standard_normal((a, b)) / np.sqrt(max(a, 1))
        parts += [W.ravel(), np.zeros(b)]
    return np.concatenate(parts)


def forward(theta: np.ndarray, sizes: list[int], Z: np.ndarray
            ) -> tuple[np.ndarray, list[np.ndarray]]:
    """λ = softmax(MLP(Z)) and the activations the backward pass needs."""
    activations = [Z]
    layers = unpack(theta, sizes)
    for W, b in layers[:-1]:
        activations.append(np.tanh(activations[-1] @ W + b))
    W, b = layers[-1]
    return softmax(activations[-1] @ W + b), activations


def backward(theta: np.ndarray, sizes: list[int], weights: np.ndarray,
             activations: list[np.ndarray], grad_weights: np.ndarray) -> np.ndarray:
    """∂L/∂θ from ∂L/∂λ: softmax ``∂z = λ ∘ (∂λ − ⟨λ, ∂λ⟩)``, then the layers in reverse
    (tanh' = 1 − a²)."""
    delta = weights * (grad_weights - (weights * grad_weights).sum(axis=1, keepdims=True))
    layers = unpack(theta, sizes)
    grads: list[np.ndarray] = []
    for index in range(len(layers) - 1, -1, -1):
        a = activations[index]
        grads = [(a.T @ delta).ravel(), delta.sum(axis=0), *grads]
        if index:
            delta = (delta @ layers[index][0].T) * (1.0 - a * a)
    return np.concatenate(grads)


# --------------------------------------------------------------------------- the loss


def scoring_rule(F: np.ndarray, y: np.ndarray, rule: str) -> tuple[float, np.ndarray]:
    """Mean proper score and its gradient in F: Brier ``1/n Σ ‖f_i − e_{y_i}‖²`` (paper eq. 3)
    or log loss ``−1/n Σ log f_{i,y_i}`` (F clipped below at ``EPS``)."""
    n = F.shape[0]
    Y = (y[:, None] == np.arange(F.shape[1])[None, :]).astype(np.float64)
    if rule == "brier":
        diff = F - Y
        return float((diff * diff).sum() / n), 2.0 * diff / n
    picked = np.maximum(F[np.arange(n), y], EPS)
    grad = np.zeros_like(F)
    grad[np.arange(n), y] = -1.0 / (picked * n)
    return float(-np.log(picked).sum() / n), grad


@dataclass(frozen=True)
class Objective:
    """The combined loss of eq. 16 on one split, as a function of the flat parameters."""

    Z: np.ndarray = field(repr=False)
    members: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    penalty_rows: np.ndarray = field(repr=False)
    sizes: tuple[int, ...]
    estimator: str
    bandwidth: float
    gamma: float

    def __call__(self, theta: np.ndarray, gradient: bool = True
                 ) -> tuple[float, np.ndarray | None]:
        sizes = list(self.sizes)
        spec = ESTIMATORS[self.estimator]
        weights, activations = forward(theta, sizes, self.Z)
        F = combine(weights, self.members)
        value, grad_F = scoring_rule(F, self.y, spec.scoring_rule)
        rows = self.penalty_rows
        if self.gamma > 0:
            penalty, grad_pen = spec.value_and_gradient(F[rows], self.y[rows], self.bandwidth,
                                                        gradient)
            value += self.gamma * penalty
            if gradient:
                grad_F[rows] += self.gamma * grad_pen
        if not gradient:
            return value, None
        grad_weights = np.einsum("nk,nmk->nm", grad_F, self.members)
        return value, backward(theta, sizes, weights, activations, grad_weights)


def penalty_subset(n: int, size: int, seed: int | None) -> np.ndarray:
    """Sorted indices of a seeded subset of at most ``size`` of n rows."""
    if n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False))


# --------------------------------------------------------------------------- the model


class WeightNetwork:
    """λ(x) = softmax(MLP(x)), fitted with the combined loss of eq. 16 (see module doc).

    Parameters
    ----------
    estimator : str
        Key of :data:`core.ensembles.calibration_errors.ESTIMATORS` for the calibration penalty; it
        also picks the scoring rule (log loss for ``"cekl"``, else Brier).
    bandwidth : float or None
        Bandwidth of the penalty's estimator; None = its default (the median heuristic of
        the mean combination for the SKCE).
    settings : WeightSettings, optional
        Architecture and training settings (default ``WeightSettings()``).
    seed : int or None
        Seeds the initial parameters and the penalty subset.

    Attributes
    ----------
    standardizer_ : Standardizer
        z-scores of the features, fitted on the optimisation rows.
    params_ : ndarray
        Flat parameters with the lowest validation loss.
    history_ : list of tuple
        ``(iteration, training loss, validation loss)`` per L-BFGS iteration.
    best_iteration_ : int
        Iteration whose parameters were kept.
    bandwidth_ : float
        Bandwidth the penalty used.
    """

    def __init__(self, estimator: str = "ce2", bandwidth: float | None = None,
                 settings: WeightSettings | None = None, seed: int | None = 0) -> None:
        self.estimator = estimator
        self.bandwidth = bandwidth
        self.settings = settings or WeightSettings()
        self.seed = seed

    def _objective(self, members: np.ndarray, y: np.ndarray, X: np.ndarray, seed_offset: int
                   ) -> Objective:
        sizes = layer_sizes(X.shape[1], self.settings.hidden, members.shape[1])
        seed = None if self.seed is None else self.seed + seed_offset
        rows = penalty_subset(len(y), self.settings.penalty_rows, seed)
        return Objective(self.standardizer_.transform(X), members, y, rows, tuple(sizes),
                         self.estimator, self.bandwidth_, self.settings.gamma)

    def fit(self, members: np.ndarray, y: np.ndarray, X: np.ndarray,
            members_val: np.ndarray, y_val: np.ndarray, X_val: np.ndarray,
            progress: Progress | None = None) -> WeightNetwork:
        """Train on the optimisation rows, stop early on the validation rows.

        Parameters
        ----------
        members, members_val : ndarray of shape (n, M, K)
            Member predictions on the optimisation and validation rows.
        y, y_val : ndarray of shape (n,)
            Integer labels.
        X, X_val : ndarray of shape (n, d)
            Instance features (raw; standardised inside).
        progress : callable, optional
            ``progress(fraction, message)`` after each iteration.

        Returns
        -------
        WeightNetwork
            self.
        """
        self.standardizer_ = Standardizer.fit(X)
        spec = ESTIMATORS[self.estimator]
        self.bandwidth_ = spec.bandwidth_for(members.mean(axis=1), self.bandwidth)
        train = self._objective(members, y, X, 0)
        valid = self._objective(members_val, y_val, X_val, 1)
        theta0 = initial_parameters(list(train.sizes), self.seed)
        best = {"loss": valid(theta0, gradient=False)[0], "theta": theta0, "iteration": 0}
        history: list[tuple[int, float, float]] = []
        limit = self.settings.max_iter

        def callback(intermediate_result) -> None:
            iteration = len(history) + 1
            loss = valid(intermediate_result.x, gradient=False)[0]
            history.append((iteration, float(intermediate_result.fun), loss))
            if loss < best["loss"]:
                best.update(loss=loss, theta=intermediate_result.x.copy(), iteration=iteration)
            if progress is not None:
                progress(min(iteration / limit, 1.0),
                         f"Training the weight network: iteration {iteration}")
            if iteration - best["iteration"] >= self.settings.patience:
                raise StopIteration

        minimize(train, theta0, jac=True, method="L-BFGS-B", callback=callback,
                 options={"maxiter": limit})
        self.params_ = best["theta"]
        self.best_iteration_ = int(best["iteration"])
        self.history_ = history
        self.sizes_ = list(train.sizes)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """λ(x) for new rows, ``(n, M)``, each row on the simplex."""
        Z = self.standardizer_.transform(X)
        return forward(self.params_, self.sizes_, Z)[0]
