"""The ``multiclass`` demo (:mod:`core.data.demo`): five land-cover classes from six
remote-sensing features at four sites; a multinomial logistic regression whose logits were
multiplied by :data:`LAND_SHARPEN`, hence overconfident.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import softmax

from core.data.demo_draws import half_split

#: Seed of the published demo table (chosen as :data:`core.data.census_demo.CENSUS_SEED` is).
MULTICLASS_SEED = 31
LAND_COVER = ("water", "forest", "grassland", "cropland", "urban")
SITES = ("alpine", "coastal", "delta", "plains")
SITE_SHARES = (0.20, 0.25, 0.25, 0.30)
#: Class prior of each site (rows: sites, columns: LAND_COVER).
SITE_PRIORS = np.array([
    [0.10, 0.40, 0.30, 0.05, 0.15],
    [0.25, 0.15, 0.20, 0.15, 0.25],
    [0.30, 0.10, 0.15, 0.35, 0.10],
    [0.05, 0.15, 0.30, 0.35, 0.15],
])
LAND_FEATURES = ("ndvi", "ndwi", "elevation_m", "slope_deg", "nir", "surface_temp_c")
#: Class means (rows: LAND_COVER) of ndvi, ndwi, log elevation, slope, nir, temperature.
LAND_MEANS = np.array([
    [0.00, 0.25, np.log(150.0), 1.0, 0.08, 19.0],
    [0.75, -0.35, np.log(900.0), 14.0, 0.35, 21.0],
    [0.50, -0.25, np.log(500.0), 6.0, 0.30, 26.0],
    [0.58, -0.20, np.log(250.0), 3.0, 0.33, 28.0],
    [0.15, -0.05, np.log(250.0), 4.0, 0.20, 33.0],
])
#: Site shifts (rows: SITES) of the same six quantities.
LAND_SITE_SHIFTS = np.array([
    [0.0, 0.00, 0.5, 5.0, 0.0, -6.0],
    [0.0, 0.03, -0.6, -1.0, 0.0, 1.0],
    [0.0, 0.05, -1.0, -2.0, 0.0, 2.0],
    [0.0, 0.00, 0.0, -1.0, 0.0, 3.0],
])
#: Within-class standard deviations of the six quantities (before the noise factor).
LAND_SDS = np.array([0.15, 0.12, 0.35, 5.0, 0.07, 4.0])
LAND_NOISE = 1.3
#: Elevations are clipped to [1 m, this] (above it nothing grows).
LAND_MAX_ELEVATION = 4_500.0
LAND_SHARPEN = 2.5
MULTICLASS_N_TRAIN = 4_000
MULTICLASS_N_AUDIT = 6_000


def _land_cover_sites(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """n labelled map pixels: site, land-cover class and six remote-sensing features.

    site ~ ``SITE_SHARES``; class | site ~ ``SITE_PRIORS``; the six quantities are Gaussian
    with class means ``LAND_MEANS``, site shifts ``LAND_SITE_SHIFTS`` and standard deviations
    ``LAND_NOISE · LAND_SDS``. Elevation is log-normal (the Gaussian is on its log), slope is
    folded at 0; indices are clipped to [-1, 1], elevation to [1, ``LAND_MAX_ELEVATION``] m,
    and values rounded as a sensor would report.
    """
    site = rng.choice(len(SITES), size=n, p=SITE_SHARES)
    cumulative = np.cumsum(SITE_PRIORS[site], axis=1)
    cover = np.minimum((rng.random(n)[:, None] > cumulative).sum(axis=1), len(LAND_COVER) - 1)
    noise = LAND_NOISE * LAND_SDS * rng.standard_normal((n, len(LAND_FEATURES)))
    raw = LAND_MEANS[cover] + LAND_SITE_SHIFTS[site] + noise
    elevation = np.clip(np.exp(raw[:, 2]), 1.0, LAND_MAX_ELEVATION)
    return pd.DataFrame({
        "ndvi": np.round(np.clip(raw[:, 0], -1.0, 1.0), 3),
        "ndwi": np.round(np.clip(raw[:, 1], -1.0, 1.0), 3),
        "elevation_m": np.round(elevation).astype(np.int64),
        "slope_deg": np.round(np.abs(raw[:, 3]), 1),
        "nir": np.round(np.clip(raw[:, 4], 0.0, 1.0), 3),
        "surface_temp_c": np.round(raw[:, 5], 1),
        "site": np.array(SITES, dtype=object)[site],
        "land_cover": np.array(LAND_COVER, dtype=object)[cover],
    })


def multiclass_simulation(
    n_train: int = MULTICLASS_N_TRAIN,
    n_audit: int = MULTICLASS_N_AUDIT,
    sharpen: float = LAND_SHARPEN,
    seed: int = MULTICLASS_SEED,
) -> pd.DataFrame:
    """The multiclass demo table: audit pixels with probabilities ``p_<class>`` and a ``split``.

    A multinomial logistic regression on the six standardised features (site is not a model
    input) is fitted on ``n_train`` separate pixels; its logits ``z`` on the audit pixels are
    multiplied by ``sharpen`` before the softmax, ``p = softmax(sharpen · z)``, which makes it
    overconfident for ``sharpen > 1`` (temperature scaling with T = sharpen undoes it).
    """
    from sklearn.linear_model import LogisticRegression  # here, not at start-up (0.5 s)
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(seed)
    pixels = _land_cover_sites(n_train + n_audit, rng)
    train = pixels.iloc[:n_train]
    audit = pixels.iloc[n_train:].reset_index(drop=True)
    features = list(LAND_FEATURES)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2_000))
    model.fit(train[features], train["land_cover"].to_numpy(dtype=object))
    order = [list(model.classes_).index(c) for c in LAND_COVER]
    logits = model.decision_function(audit[features])[:, order]
    probs = softmax(sharpen * logits, axis=1)
    frame = audit.copy()
    for j, name in enumerate(LAND_COVER):
        frame[f"p_{name}"] = probs[:, j]
    frame["split"] = half_split(n_audit, rng)
    return frame
