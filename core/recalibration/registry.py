"""The registry of recalibration methods: every method's key, name, reference, parameters
(with their ranges, for the app's controls) and the problems it supports, and
:func:`make_recalibrator`, which builds one. A method's class is imported only when it is
built (``factory`` = ``"module:callable"`` under :mod:`core.recalibration`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.data.validation import check_choice, is_whole
from core.recalibration.base import BINARY, MULTICLASS, Recalibrator

__all__ = ["RECALIBRATORS", "ParameterSpec", "RecalibratorSpec", "make_recalibrator"]


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter of a method: its default, allowed range and meaning.

    ``kind`` is ``"int"``, ``"float"`` or ``"choice"``; numbers lie in ``[low, high]``
    (``log`` asks a widget for a log scale), choices in ``choices``. The page builds its
    widgets from these, so adding a method touches its registry entry only.
    """

    name: str
    default: Any
    kind: str
    meaning: str
    low: float | None = None
    high: float | None = None
    choices: tuple = ()
    log: bool = False

    def check(self, value: object, method: str) -> object:
        """``value`` converted to the parameter's type, or a ValueError naming it."""
        label = f"{method}: parameter {self.name!r}"
        if self.kind == "choice":
            return check_choice(value, self.choices, f"value for {label}")
        if self.kind == "int":
            if not is_whole(value):
                raise ValueError(f"{label} must be a whole number, not {value!r}.")
            number: float = int(value)  # type: ignore[arg-type]
        else:
            try:
                number = float(value)  # type: ignore[arg-type]
            except (TypeError, ValueError) as err:
                raise ValueError(f"{label} must be a number, not {value!r}.") from err
            if np.isnan(number):
                raise ValueError(f"{label} must be a number, not NaN.")
        low = -np.inf if self.low is None else self.low
        high = np.inf if self.high is None else self.high
        if not low <= number <= high:
            raise ValueError(f"{label} must lie between {self.low:g} and {self.high:g}, "
                             f"not {value!r}.")
        return number


@dataclass(frozen=True)
class RecalibratorSpec:
    """A registry entry: what a method is, what it needs, and how to build it."""

    key: str
    name: str
    description: str
    reference: str
    family: str  # "scaling", "binning", "local" or "group"
    parameters: tuple[ParameterSpec, ...]
    problems: tuple[str, ...]  # of BINARY, MULTICLASS
    needs: tuple[str, ...]  # of "features", "groups"
    factory: str  # "module:callable" under core.recalibration, imported when built

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.parameters}

    def supports(self, binary: bool) -> bool:
        return (BINARY if binary else MULTICLASS) in self.problems

    def build(self, **params: Any) -> Recalibrator:
        """The method with ``params`` (checked; unknown names raise) over the defaults."""
        known = {p.name: p for p in self.parameters}
        for name in params:
            check_choice(name, tuple(known), f"parameter for {self.key!r}",
                         hint=("this method has no parameters" if not known else
                               "its parameters are " + ", ".join(repr(k) for k in known)))
        values = self.defaults()
        values.update({name: known[name].check(value, self.key)
                       for name, value in params.items()})
        module, name = self.factory.split(":")
        return getattr(importlib.import_module(f"core.recalibration.{module}"), name)(**values)

    def unavailable(self, binary: bool, has_features: bool, has_groups: bool) -> str | None:
        """Why the method cannot run on such data, or ``None`` when it can."""
        if not self.supports(binary):
            kind = "binary" if binary else "multiclass"
            return f"{self.name} is not defined for {kind} problems."
        if "features" in self.needs and not has_features:
            return f"{self.name} needs audit features; none are chosen."
        if "groups" in self.needs and not has_groups:
            return f"{self.name} needs group attributes; none are mapped or chosen."
        return None


def _int(name, default, low, high, meaning):
    return ParameterSpec(name, default, "int", meaning, low, high)


def _float(name, default, low, high, meaning, log=False):
    return ParameterSpec(name, default, "float", meaning, low, high, log=log)


def _choice(name, default, choices, meaning):
    return ParameterSpec(name, default, "choice", meaning, choices=tuple(choices))


_N_BINS = _int("n_bins", 15, 2, 200, "number of bins")
_STRATEGY = _choice("strategy", "uniform", ("uniform", "quantile"),
                    "equal-width (uniform) or equal-mass (quantile) bins")
_SEED = _int("seed", 0, 0, 2**31 - 1, "seed of the random step")
_REG_LAMBDA = _float("reg_lambda", 1e-3, 0.0, 100.0, "penalty on the weights (λ)")
_REG_MU = _float("reg_mu", 1e-3, 0.0, 100.0, "penalty on the intercepts (μ)")
_MIN_ROWS = _int("min_rows", 50, 2, 1_000_000,
                 "fewest calibration rows a group level needs for its own calibrator; "
                 "smaller levels use the global one")
_BOTH = (BINARY, MULTICLASS)
_OVR = " Binary; multiclass one-vs-rest with renormalisation."

RECALIBRATORS: dict[str, RecalibratorSpec] = {spec.key: spec for spec in (
    RecalibratorSpec(
        "platt", "Platt scaling",
        "Logistic regression on the model's score, q = σ(a·s + b), with s the logit of p or "
        "p itself (scikit-learn's sigmoid on probability outputs), whichever comes out better "
        "calibrated on the calibration rows." + _OVR,
        "Platt (1999)", "scaling",
        (_choice("transform", "auto", ("auto", "logit", "identity"),
                 "the score s: logit(p), p itself, or whichever calibrates better (auto)"),
         _choice("smoothing", "on", ("on", "off"),
                 "Platt's target smoothing (N₊+1)/(N₊+2), 1/(N₋+2)")),
        _BOTH, (), "scaling:PlattScaling"),
    RecalibratorSpec(
        "temperature", "Temperature scaling",
        "One temperature T for all classes, q = softmax(log p / T), T minimising the NLL; "
        "never changes the predicted class.",
        "Guo et al. (2017)", "scaling", (), _BOTH, (), "scaling:TemperatureScaling"),
    RecalibratorSpec(
        "vector", "Vector scaling",
        "A scale and a bias per class on the centred logits, q = softmax(w ⊙ z + b), with an "
        "L2 pull towards the identity. Multiclass only.",
        "Guo et al. (2017)", "scaling", (_REG_LAMBDA, _REG_MU), (MULTICLASS,), (),
        "scaling:VectorScaling"),
    RecalibratorSpec(
        "matrix", "Matrix scaling",
        "A full linear map on the centred logits, q = softmax(W z + b), with off-diagonal "
        "and intercept regularisation (ODIR). Multiclass only.",
        "Guo et al. (2017); ODIR: Kull et al. (2019)", "scaling", (_REG_LAMBDA, _REG_MU),
        (MULTICLASS,), (), "scaling:MatrixScaling"),
    RecalibratorSpec(
        "dirichlet", "Dirichlet calibration",
        "Multinomial regression on the log-probabilities, q = softmax(W log p + b), with "
        "ODIR regularisation.",
        "Kull et al. (2019)", "scaling", (_REG_LAMBDA, _REG_MU), _BOTH, (),
        "scaling:DirichletCalibration"),
    RecalibratorSpec(
        "beta", "Beta calibration",
        "q = σ(a log p − b log(1 − p) + c) with a, b ≥ 0: a monotone map that can bend both "
        "tails." + _OVR,
        "Kull, Silva Filho & Flach (2017)", "scaling",
        (_choice("variant", "abm", ("abm", "ab", "am"),
                 "abm: all three parameters; ab: midpoint fixed at 1/2; am: a = b"),),
        _BOTH, (), "scaling:BetaCalibration"),
    RecalibratorSpec(
        "histogram", "Histogram binning",
        "Each bin predicts the share of positives of its calibration rows; an empty bin keeps "
        "the model's probability. One-vs-rest (multiclass: renormalised) or on the top-label "
        "confidence.",
        "Zadrozny & Elkan (2001)", "binning",
        (_N_BINS, _STRATEGY,
         _choice("notion", "one-vs-rest", ("one-vs-rest", "top-label"),
                 "bin P(y = k) per class, or the top-label confidence")),
        _BOTH, (), "binning:HistogramBinning"),
    RecalibratorSpec(
        "isotonic", "Isotonic regression",
        "The non-decreasing map fitted by pool-adjacent-violators, linear between the fitted "
        "points (scikit-learn's IsotonicRegression)." + _OVR,
        "Zadrozny & Elkan (2002)", "binning", (), _BOTH, (), "binning:IsotonicCalibration"),
    RecalibratorSpec(
        "bbq", "BBQ",
        "Bayesian binning into quantiles: equal-frequency binnings of many sizes averaged by "
        "their Bayesian score." + _OVR,
        "Naeini, Cooper & Hauskrecht (2015)", "binning",
        (_float("prior_strength", 2.0, 0.01, 1000.0, "equivalent sample size N' of the "
                "beta prior per model", log=True),
         _float("scale", 10.0, 1.0, 100.0, "C: bin counts from N^⅓/C to C·N^⅓")),
        _BOTH, (), "binning:BBQ"),
    RecalibratorSpec(
        "scaling-binning", "Scaling–binning",
        "Platt scaling on one half of the calibration rows, then equal-mass bins of the "
        "scaled values on the other half, each outputting its mean scaled value." + _OVR,
        "Kumar, Liang & Ma (2019)", "binning", (_N_BINS, _SEED), _BOTH, (),
        "binning:ScalingBinning"),
    RecalibratorSpec(
        "venn-abers", "Venn–Abers",
        "Inductive Venn–Abers: isotonic fits with the new point labelled 0 and 1 give an "
        "interval [p₀, p₁]; the prediction is p₁/(1 − p₀ + p₁)." + _OVR,
        "Vovk & Petej (2014)", "binning", (), _BOTH, (), "binning:VennAbers"),
    RecalibratorSpec(
        "lore", "LoRe",
        "Local recalibration: the top-label confidence becomes the kernel-weighted accuracy "
        "of same-bin calibration points near the row in an embedding of the audit features "
        "(eq. 6); bins without usable neighbours fall back to histogram binning. Keeps the "
        "predicted class.",
        "Luo et al. (2022), eq. 6", "local",
        (_float("gamma", 0.4, 1e-3, 1e3, "kernel bandwidth γ (paper: 0.4 with PCA, 0.2 with "
                "t-SNE)", log=True),
         _N_BINS,
         _choice("embedding", "pca", ("pca", "tsne", "umap"), "embedding of the features"),
         _int("n_components", 2, 1, 50, "dimensions of the embedding (at most the number "
              "of feature columns)"),
         _int("max_reference", 2000, 100, 1_000_000, "most calibration points per bin "
              "(a seeded subsample beyond it)"),
         _SEED),
        _BOTH, ("features",), "local:LoRe"),
    RecalibratorSpec(
        "lcb", "LCB correction",
        "p + LCB(p, x): the kernel-weighted mean residual of nearby calibration rows (eq. 7), "
        "bandwidths cross-validated, clipped into (0, 1)." + _OVR,
        "Vashistha & Farahi, I-trustworthy, §3.3", "local",
        (_int("max_reference", 2000, 100, 1_000_000,
              "most calibration rows used as the reference (seeded subsample)"),
         _int("cv_rows", 1000, 50, 100_000,
              "most rows of the bandwidth cross-validation (seeded subsample)"), _SEED),
        _BOTH, ("features",), "local:LCBCorrection"),
    RecalibratorSpec(
        "group-temperature", "Group temperature scaling",
        "Temperature scaling fitted per group level; levels with too few calibration rows "
        "use the global temperature.",
        "Luo et al. (2022), Table 1", "group", (_MIN_ROWS,), _BOTH, ("groups",),
        "group:group_temperature"),
    RecalibratorSpec(
        "group-histogram", "Group histogram binning",
        "Histogram binning fitted per group level; levels with too few calibration rows use "
        "the global bins.",
        "Luo et al. (2022), Table 1", "group", (_MIN_ROWS, _N_BINS, _STRATEGY), _BOTH,
        ("groups",), "group:group_histogram"),
    RecalibratorSpec(
        "multicalibration", "Multicalibration",
        "Patches the (group × prediction bin) cell with the largest mean residual until every "
        "cell with enough rows is within α; new rows replay the patches." + _OVR,
        "Hébert-Johnson et al. (2018)", "group",
        (_float("alpha", 0.05, 1e-3, 0.5, "tolerance α on a cell's mean residual", log=True),
         _int("n_bins", 10, 2, 100, "equal-width prediction bins"),
         _int("min_count", 50, 1, 1_000_000, "fewest rows a cell needs to be checked"),
         _int("max_iter", 2000, 1, 100_000, "most patches")),
        _BOTH, ("groups",), "group:Multicalibration"),
)}


def make_recalibrator(name: str, **params: Any) -> Recalibrator:
    """A new, unfitted recalibrator from the registry: ``RECALIBRATORS[name]`` with
    ``params`` over its defaults. An unknown name or parameter raises a ValueError naming
    the choices.

    Parameters
    ----------
    name : str
        A key of :data:`RECALIBRATORS`.
    **params
        Settings of that method over its defaults.

    Returns
    -------
    Recalibrator
        Unfitted: call ``.fit(probs, y)``, then ``.predict(probs)``.

    Raises
    ------
    ValueError
        An unknown name or parameter, with the choices.
    """
    spec = RECALIBRATORS[check_choice(name, tuple(RECALIBRATORS), "recalibration method")]
    return spec.build(**params)
