"""The product kernel of the local statistics (KLCE², LCB): its settings and its coordinates.

KLCE² (I-trustworthy eq. 4) and LCB (eq. 7) weigh pairs of rows by a Gaussian kernel on the
predictions times a Gaussian kernel on the (standardised) audit features,

    k(p, p') l(x, x') = exp(−(p − p')²/(2σ_p²)) · exp(−‖x − x'‖²/(2σ_x²)),

which is one Gaussian with σ = 1 on the coordinates ``[p/σ_p, x/σ_x]``
(:func:`core.kernels.tiles.scale_blocks`), so every sum goes through the tile engine. A
:class:`KernelSpec` is the frozen value of the settings — bandwidths (``None``: the median
heuristic; ``inf``: that kernel ≡ 1), standardisation, the class tested one-vs-rest — that
functions take and results carry; :func:`kernel_inputs` applies it to data and returns the
*resolved* spec (bandwidths filled in) with the :class:`~core.kernels.tiles.Standardizer` fitted on
the reference rows, so query rows (LCB on a test split) are mapped exactly the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from core.data.validation import check_features, check_positive, is_whole
from core.kernels.tiles import Standardizer, median_heuristic, scale_blocks


@dataclass(frozen=True)
class KernelSpec:
    """Settings of the KLCE / LCB product kernel (Gaussian on p times Gaussian on x).

    Attributes
    ----------
    prob_bandwidth : float or None
        σ_p of the prediction kernel; ``None`` = median heuristic, ``inf`` = kernel ≡ 1.
    feature_bandwidth : float or None
        σ_x of the feature kernel, in standard deviations when ``standardize``; ``None`` =
        median heuristic, ``inf`` = kernel ≡ 1 (also used when there are no features).
    standardize : bool
        z-score every audit feature (population sd) before the kernel (DESIGN.md).
    class_index : int or None
        The class tested one-vs-rest (``None``: the positive class of a binary problem).
    """

    prob_bandwidth: float | None = None
    feature_bandwidth: float | None = None
    standardize: bool = True
    class_index: int | None = None

    def __post_init__(self) -> None:
        for name in ("prob_bandwidth", "feature_bandwidth"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, check_positive(
                    f"{name} (use inf for a constant kernel)", value, allow_inf=True))
        if not isinstance(self.standardize, bool | np.bool_):
            raise ValueError(f"standardize must be True or False, not {self.standardize!r}.")
        if self.class_index is not None and (not is_whole(self.class_index)
                                             or self.class_index < 0):
            raise ValueError(f"class_index must be a class number (0, 1, …), not "
                             f"{self.class_index!r}.")

    def with_bandwidths(self, prob_bandwidth: float | None,
                        feature_bandwidth: float | None) -> KernelSpec:
        """The same settings with other bandwidths."""
        return replace(self, prob_bandwidth=prob_bandwidth, feature_bandwidth=feature_bandwidth)

    def describe(self) -> str:
        """One line for a caption or a report, e.g. ``σ_p = 0.0812, σ_x = 1.85 (sd units)``."""
        def text(value: float | None) -> str:
            return "median heuristic" if value is None else f"{value:.3g}"

        unit = " (sd units)" if self.standardize else " (feature units)"
        return (f"σ_p = {text(self.prob_bandwidth)}, σ_x = {text(self.feature_bandwidth)}"
                + (unit if self.feature_bandwidth is not None
                   and np.isfinite(self.feature_bandwidth) else ""))


@dataclass(frozen=True)
class KernelInputs:
    """What the kernels act on, after one-vs-rest reduction and standardisation.

    Attributes
    ----------
    points : numpy.ndarray
        The kernel's input rows (prediction and scaled feature coordinates).
    residuals : numpy.ndarray
        The residuals ``e`` the kernel sums weight.
    p : numpy.ndarray
        The one-vs-rest probabilities.
    spec : KernelSpec
        The resolved settings (bandwidths filled in).
    standardizer : Standardizer or None
        The features' scaling, for new rows.
    features : numpy.ndarray or None
        The standardised features.
    """

    points: np.ndarray  # (n, 1 + d') coordinates of the product kernel, bandwidth 1
    residuals: np.ndarray  # (n,) y − p
    p: np.ndarray  # (n,) the probability tested (P(y=1) or P(y=k))
    spec: KernelSpec  # resolved: both bandwidths are numbers
    standardizer: Standardizer | None  # fitted on these rows' features (None: not standardised)
    features: np.ndarray  # (n, d) audit features after standardisation

    def at(self, prob_bandwidth: float, feature_bandwidth: float) -> KernelInputs:
        """The same rows under other bandwidths (no second standardisation)."""
        spec = self.spec.with_bandwidths(float(prob_bandwidth), float(feature_bandwidth))
        points = product_points(self.p, self.features, spec.prob_bandwidth,
                                spec.feature_bandwidth)
        return replace(self, points=points, spec=spec)

    @property
    def n_features(self) -> int:
        """Audit feature columns of the reference rows."""
        return int(self.features.shape[1])

    @property
    def prob_bandwidth(self) -> float:
        return float(self.spec.prob_bandwidth)  # type: ignore[arg-type]

    @property
    def feature_bandwidth(self) -> float:
        return float(self.spec.feature_bandwidth)  # type: ignore[arg-type]


def one_vs_rest(probs: np.ndarray, y: np.ndarray, class_index: int | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """``(p, outcome)`` for the positive class (binary) or class ``class_index``.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    class_index : int, optional
        The class (required for several classes).

    Returns
    -------
    p, outcome : numpy.ndarray
    """
    probs = np.asarray(probs, dtype=np.float64)
    y = np.asarray(y)
    if probs.ndim == 1:
        if class_index not in (None, 1):
            raise ValueError("For (n,) probabilities of the positive class use class_index=1.")
        return probs, (y == 1).astype(np.float64)
    k = 1 if class_index is None and probs.shape[1] == 2 else class_index
    if k is None:
        raise ValueError(
            f"The model has {probs.shape[1]} classes; KLCE tests one class against the rest. "
            "Pass class_index to choose it."
        )
    if not 0 <= int(k) < probs.shape[1]:
        raise ValueError(f"class_index must be between 0 and {probs.shape[1] - 1}.")
    return probs[:, int(k)], (y == int(k)).astype(np.float64)


def product_points(p: np.ndarray, features: np.ndarray, sigma_p: float, sigma_x: float
                   ) -> np.ndarray:
    """Coordinates ``[p/σ_p, x/σ_x]`` of the product kernel as one Gaussian with σ = 1; an
    infinite bandwidth (or no features) drops that factor (kernel ≡ 1)."""
    blocks, scales = [], []
    if np.isfinite(sigma_p):
        blocks.append(p[:, None])
        scales.append(sigma_p)
    if features.shape[1] and np.isfinite(sigma_x):
        blocks.append(features)
        scales.append(sigma_x)
    return scale_blocks(blocks, scales) if blocks else np.zeros((p.shape[0], 1))


def spec_from(spec: KernelSpec | None, prob_bandwidth: float | None = None,
              feature_bandwidth: float | None = None, standardize: bool = True,
              class_index: int | None = None) -> KernelSpec:
    """The settings of a public function that takes them either as one ``spec`` or as the
    keyword arguments of the DESIGN contract — not both."""
    given = KernelSpec(prob_bandwidth, feature_bandwidth, standardize, class_index)
    if spec is None:
        return given
    if given != KernelSpec():
        raise ValueError("Give the kernel settings either as spec=KernelSpec(...) or as the "
                         "keyword arguments prob_bandwidth, feature_bandwidth, standardize "
                         "and class_index, not both.")
    if not isinstance(spec, KernelSpec):
        raise ValueError(f"spec must be a KernelSpec, not {type(spec).__name__}.")
    return spec


def resolve(spec: KernelSpec, p: np.ndarray, features: np.ndarray) -> KernelSpec:
    """``spec`` with ``None`` bandwidths replaced by the median heuristic on ``p`` and on the
    (already standardised) ``features``; no features → σ_x = inf."""
    sigma_p = median_heuristic(p) if spec.prob_bandwidth is None else spec.prob_bandwidth
    sigma_x = spec.feature_bandwidth
    if sigma_x is None:
        sigma_x = median_heuristic(features) if features.shape[1] else np.inf
    return spec.with_bandwidths(float(sigma_p), float(sigma_x))


def inputs_for(probs: np.ndarray, y: np.ndarray, X: np.ndarray | None,
               spec: KernelSpec) -> KernelInputs:
    """Residuals and product-kernel coordinates of the reference rows under ``spec``."""
    p, outcome = one_vs_rest(probs, y, spec.class_index)
    features = check_features(X, p.shape[0])
    standardizer = Standardizer.fit(features) if spec.standardize and features.shape[1] \
        else None
    if standardizer is not None:
        features = standardizer.transform(features)
    resolved = resolve(spec, p, features)
    points = product_points(p, features, resolved.prob_bandwidth, resolved.feature_bandwidth)
    return KernelInputs(points, outcome - p, p, resolved, standardizer, features)


def query_points(inputs: KernelInputs, probs: np.ndarray, X: np.ndarray | None) -> np.ndarray:
    """Product-kernel coordinates of new rows, mapped exactly as the reference rows were (the
    reference rows' standardisation and bandwidths)."""
    p, _ = one_vs_rest(probs, np.zeros(np.shape(probs)[0], dtype=int), inputs.spec.class_index)
    features = check_features(X, p.shape[0], "query_X")
    if features.shape[1] != inputs.n_features:
        raise ValueError(f"query_X has {features.shape[1]} features but X has "
                         f"{inputs.n_features}.")
    if inputs.standardizer is not None:
        features = inputs.standardizer.transform(features)
    return product_points(p, features, inputs.prob_bandwidth, inputs.feature_bandwidth)


def kernel_inputs(
    probs: np.ndarray,
    y: np.ndarray,
    X: np.ndarray | None,
    prob_bandwidth: float | None = None,
    feature_bandwidth: float | None = None,
    standardize: bool = True,
    class_index: int | None = None,
) -> KernelInputs:
    """:func:`inputs_for` with the settings as keyword arguments.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    X : array_like or None
        ``(n, d)`` audit features.
    prob_bandwidth, feature_bandwidth : float, optional
        Bandwidths; ``None``: the median heuristic.
    standardize : bool, default True
        Scale each feature column to unit spread.
    class_index : int, optional
        The class of a one-vs-rest reduction.

    Returns
    -------
    KernelInputs
    """
    return inputs_for(probs, y, X, KernelSpec(prob_bandwidth, feature_bandwidth, standardize,
                                              class_index))
