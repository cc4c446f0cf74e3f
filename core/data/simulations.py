"""The papers' simulated data, and the scale table.

Data generators used by the tests, the benchmarks and the demos (tests import them from here,
never from ``benchmarks``; the KLCE null study that runs on them is
:mod:`core.stattests.level_study`). Each takes a ``numpy.random.Generator`` and returns
``(p, y, X)``: P(y = 1) of the model, binary labels and the audit features (or ``None``).

I-trustworthy §4 and App. A.2 (VALIDATION.md):

* :func:`type_one_paper` — size: x ~ N(0, 1), p = sigmoid(−1 + 0.5x), y ~ Bernoulli(p),
  N = 50 (the prediction kernel only, so no audit features);
* :func:`type_two_paper` — power: x ∈ R^d standard normal, y ~ Bernoulli(sigmoid(Σx)), the
  model sigmoid(Σ_{i<d} x_i) is blind to the last feature;
* :func:`calibrated_two_features` — a calibrated model with two audit features;
* :func:`global_offset` — miscalibrated only globally (+0.4 on the logit scale).

Luo et al. (LCE): :func:`spatially_miscalibrated_classifier`, a 10-class model over- and
under-confident in different halves of its feature space.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy.special import expit

Draw = Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray, np.ndarray | None]]


def type_one_paper(rng: np.random.Generator, n: int = 50):
    """Size setting of the paper's Type-I study: a calibrated model, no audit features."""
    x = rng.standard_normal(n)
    p = expit(-1.0 + 0.5 * x)
    return p, (rng.random(n) < p).astype(int), None


def calibrated_two_features(rng: np.random.Generator, n: int = 300):
    """A calibrated model with two standard-normal audit features: p = sigmoid(x1 − x2/2)."""
    X = rng.standard_normal((n, 2))
    p = expit(X[:, 0] - 0.5 * X[:, 1])
    return p, (rng.random(n) < p).astype(int), X


def global_offset(rng: np.random.Generator, n: int = 300):
    """Miscalibrated only globally: the truth is the model shifted by 0.4 on the logit scale."""
    X = rng.standard_normal((n, 2))
    logit = X[:, 0] - 0.5 * X[:, 1]
    return expit(logit), (rng.random(n) < expit(logit + 0.4)).astype(int), X


def type_two_paper(rng: np.random.Generator, n: int = 500, d: int = 10):
    """Power setting of the paper's Type-II study: the model is blind to the last of d
    features (y ~ Bernoulli(sigmoid(Σ_i x_i)), model sigmoid(Σ_{i<d} x_i))."""
    X = rng.standard_normal((n, d))
    y = (rng.random(n) < expit(X.sum(axis=1))).astype(int)
    return expit(X[:, :-1].sum(axis=1)), y, X


def spatially_miscalibrated_classifier(
    n: int, d: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-label confidence, correctness and a d-D embedding of a synthetic 10-class model.

    Features: a mixture of four Gaussian blobs in the unit box; the model is over-confident
    on the left half of the first coordinate and under-confident on the right half, so the
    LCE varies in space.
    """
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.2, 0.8, size=(4, d))
    X = np.clip(centres[rng.integers(0, 4, n)] + 0.12 * rng.normal(size=(n, d)), 0.0, 1.0)
    logits = 2.5 * rng.normal(size=(n, 10))
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    conf = probs.max(axis=1)
    accuracy = np.clip(conf + 0.3 * (X[:, 0] - 0.5), 0.0, 1.0)
    correct = (rng.random(n) < accuracy).astype(np.float64)
    return conf, correct, X


#: The audit features of :func:`scale_table` (3 numeric, 1 categorical, also the group).
SCALE_FEATURES = ("age", "income", "tenure", "region")


def scale_table(n: int, seed: int = 0, local_bias: float = 0.8) -> pd.DataFrame:
    """A binary audit table of ``n`` rows for the scale benchmark and the large-upload tests.

    Columns ``label`` (0/1), ``prob`` (the model's P(y = 1)) and the audit features of
    :data:`SCALE_FEATURES`: ``age`` ~ U[18, 90], ``income`` log-normal, ``tenure`` ~ Exp(5)
    years, ``region`` one of five levels. The true logit is the model's plus a local bias
    that rises with age in region ``"north"`` (0 → ``local_bias``, +0.8 by default) and is 0
    elsewhere, so the model is nearly calibrated globally but not locally (``local_bias=0``:
    calibrated, locally too); every draw is vectorised.
    """
    rng = np.random.default_rng(seed)
    regions = np.array(["north", "south", "east", "west", "centre"])
    age = rng.uniform(18.0, 90.0, n)
    income = np.exp(rng.normal(10.5, 0.6, n))
    tenure = rng.exponential(5.0, n)
    region = regions[rng.integers(0, len(regions), n)]
    model_logit = (-1.0 + 0.03 * (age - 50.0) + 0.8 * (np.log(income) - 10.5)
                   - 0.05 * tenure + 0.6 * rng.normal(size=n))
    bias = np.where(region == "north", local_bias * (age - 18.0) / 72.0, 0.0)
    label = (rng.random(n) < expit(model_logit + bias)).astype(np.int8)
    return pd.DataFrame({"label": label, "prob": expit(model_logit), "age": age,
                         "income": income, "tenure": tenure, "region": region})

