"""Embedded demo datasets, generated in-process from fixed seeds (no downloads).

Each demo is a table exactly as a user would upload it (:func:`demo_frame`), a column mapping
(:func:`demo_mapping`) and the validated container built from both (:func:`load_demo`). The
generators are pure functions of their arguments: the same seed gives the same table, byte for
byte, on the same platform.

The four demos and what an auditor should find in them (each generator in its own module:
:mod:`core.data.census_demo`, :mod:`core.data.land_cover_demo`,
:mod:`core.data.ensemble_demo`; the shared draws in :mod:`core.data.demo_draws`):

``census`` (default)
    Synthetic loan applicants; a main-effects logistic regression that is well calibrated
    globally (binned ECE about 0.011) but misses an age x race interaction planted in the
    truth, so it underestimates the risk of some race x age cells by many standard errors.
    A second model, ``p_challenger``, adds per-race age terms (better globally) but has a
    planted logit shift for Asian applicants (worse for that group): the comparison's demo.
``itrustworthy``
    The Type-II simulation of the I-trustworthy paper (Vashistha & Farahi, §4): the model
    ``sigmoid(x_1 + ... + x_{d-1})`` is blind to ``x_d``; its residual tracks ``x_d``.
``multiclass``
    Five land-cover classes from six remote-sensing features; a multinomial logistic regression
    whose logits were multiplied by 2.5, hence overconfident.
``ensemble``
    Five ensemble members whose instance-dependent convex combination is the truth (credal-set
    calibration test paper, §4 and App. E.1); the plain ensemble mean is locally miscalibrated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit
from threadpoolctl import threadpool_limits

from core.data.audit_data import AuditData
from core.data.census_demo import (
    CENSUS_AUDIT_FEATURES,
    census_simulation,
    census_stream_simulation,
)
from core.data.demo_draws import bernoulli_draws
from core.data.ensemble_demo import ENSEMBLE_MEMBERS, ensemble_simulation
from core.data.land_cover_demo import LAND_COVER, LAND_FEATURES, multiclass_simulation
from core.data.mapping import ColumnMapping

DEFAULT_DEMO = "census"

#: Seed of the ``itrustworthy`` demo (the other demos' seeds are in their modules);
#: changing it changes the published demo table.
ITRUSTWORTHY_SEED = 7


@dataclass(frozen=True)
class DemoSpec:
    """A demo dataset's identity: its key, a short title, a short description (what the table
    is, its rows, its models, what an auditor would ask; no spoilers) and ``planted``, what the
    generator planted and what an auditor should find (the Data page folds it away)."""

    key: str
    title: str
    description: str
    planted: str


# --------------------------------------------------------------------------- I-trustworthy


def itrustworthy_simulation(n: int = 2_000, d: int = 5, seed: int = 0) -> pd.DataFrame:
    """The Type-II simulation of the I-trustworthy paper (Vashistha & Farahi, §4 "Simulations").

    ``x_i ~ N(0, 1)`` for i = 1..d, ``y ~ Bernoulli(sigmoid(x_1 + ... + x_d))`` and the model
    ``p = sigmoid(x_1 + ... + x_{d-1})``, which ignores the last coordinate. Columns
    ``x1..xd`` (float64), ``y`` (int64 0/1) and ``p`` (float64).

    The model is miscalibrated along ``x_d``: ``E[y - p | x]`` grows with ``x_d`` (by Stein's
    lemma ``Cov(y - p, x_d) = E[sigmoid'(Σ x_i)]``, about 0.141 for d = 5). It is *not*
    exactly calibrated on ``x_1..x_{d-1}`` either, contrary to the paper's wording: averaging
    over the unseen ``x_d`` flattens the true probability, so the model is slightly
    overconfident and ``Cov(y - p, x_1) = E[sigmoid'(Σ_{i≤d} x_i)] - E[sigmoid'(Σ_{i<d} x_i)]``,
    about -0.010 for d = 5 — small against the 0.141 along ``x_d``.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}.")
    if d < 2:
        raise ValueError(f"d must be at least 2 (the model drops the last coordinate), got {d}.")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    y = bernoulli_draws(expit(x.sum(axis=1)), rng)
    p = expit(x[:, :-1].sum(axis=1))
    frame = pd.DataFrame({f"x{i + 1}": x[:, i] for i in range(d)})
    frame["y"] = y
    frame["p"] = p
    return frame


# --------------------------------------------------------------------------- registry

DEMOS: dict[str, DemoSpec] = {
    "census": DemoSpec(
        key="census",
        title="Census-style loan default (synthetic)",
        description=(
            "10,000 synthetic loan applicants (age, sex, race, income, years of education, "
            "weekly hours, US region) and whether each defaulted on a loan within two years. "
            "Every row comes from a fixed-seed simulation: no real person or real statistic "
            "is behind the table. Two models give each applicant a default risk: p_default, "
            "the audited model, and p_challenger, offered for comparison; the split column "
            "divides the table into calibration and test halves. An auditor would ask whether "
            "the predicted risks are right overall, and whether they are right for every age "
            "and race."
        ),
        planted=(
            "The applicants: age 18–90, race in five groups of realistic unequal size, "
            "log-normal income that depends on age, education, hours and region; about 30% "
            "defaulted. The pattern below is planted, not a finding about any population. The "
            "true default risk contains an age × race interaction: it climbs steeply after "
            "age 45 for Black applicants and is raised for young Hispanic applicants, fading "
            "out by the mid-forties. The audited model, a main-effects logistic regression "
            "(standardised numbers, log income, one-hot categories, no interactions) fitted "
            "on 30,000 separate people who are not in the table, cannot represent that. "
            "Globally it "
            "looks fine: on the test split its binned ECE (15 bins) is about 0.011, its "
            "mean prediction is within 0.005 of the default rate, and neither the SKCE test nor "
            "Hosmer–Lemeshow rejects. Locally it fails: it "
            "underestimates the risk of Black applicants aged 60 and over by about 0.39 "
            "(observed rate minus mean prediction, 10 standard errors) and of Hispanic "
            "applicants under 30 by about 0.19 (5 standard errors), and, because its race "
            "effect is an average over ages, overestimates that of Black applicants aged 30–44 "
            "by about 0.18. An auditor should see a clean reliability diagram, a KLCE test on "
            "age and race (on the test split) that rejects, and LCB-versus-age curves per "
            "race that bend away from zero for the Black and Hispanic groups. The second "
            "model, p_challenger (the Compare models page; the sidebar switches which model "
            "every page audits), is a logistic regression on the same "
            "inputs plus, per race, an age hinge after 45 and a decay from age 18, so it "
            "can follow the planted interaction — but its logit for Asian applicants was "
            "shifted up by 1.5 (planted, like the interaction). On the test split it is "
            "better globally (Brier score lower by about 0.006, log loss by 0.015, both "
            "significant in the paired test) and worse for Asian applicants (it "
            "overestimates their risk by about 0.26; Brier score higher by about 0.07, found "
            "by the per-group comparison with simultaneous inference), which also makes its "
            "global ECE and KLCE² worse."
        ),
    ),
    "itrustworthy": DemoSpec(
        key="itrustworthy",
        title="I-trustworthy simulation (five features)",
        description=(
            "2,000 simulated rows with five independent numeric features x1…x5, a 0/1 "
            "outcome y and one model's predicted probability p, generated with a fixed seed "
            "as in the simulation of Vashistha & Farahi's I-trustworthy paper (§4). An "
            "auditor would ask whether p is calibrated overall and along each of the five "
            "features, and which feature, if any, the model gets wrong."
        ),
        planted=(
            "The features are standard normal; the outcomes y are drawn from "
            "Bernoulli(sigmoid(x1 + … + x5)) and the model p = sigmoid(x1 + … + x4) never "
            "sees x5. A reliability diagram shows only a mild "
            "overconfidence, because averaging over the unseen x5 flattens the true "
            "probability; the real failure is local: the residual y − p rises with x5 "
            "(covariance about 0.14) and is essentially unrelated to x1…x4 (about −0.01). An "
            "auditor should find that the KLCE test on all five features rejects, and that "
            "the local calibration bias plotted against x5 is a rising curve while against "
            "x1 it is flat."
        ),
    ),
    "multiclass": DemoSpec(
        key="multiclass",
        title="Land cover, five classes",
        description=(
            "6,000 synthetic map pixels from four sites (alpine, coastal, delta, plains), "
            "each labelled water, forest, grassland, cropland or urban, with six "
            "remote-sensing features (NDVI, NDWI, elevation, slope, near-infrared "
            "reflectance, surface temperature), generated with a fixed seed. A multinomial "
            "logistic regression gives each pixel a probability for each of the five classes; "
            "the split column divides the table into calibration and test parts, and site "
            "serves as the group attribute. An auditor would ask whether the model's "
            "confidence matches its accuracy, and whether a recalibration fitted on the "
            "calibration split would repair it."
        ),
        planted=(
            "The features are drawn from class- and site-dependent distributions. The "
            "multinomial logistic regression was fitted on "
            "4,000 separate pixels (site is not one of its inputs); its logits were then "
            "multiplied by 2.5, so the model is deliberately overconfident: mean top-label "
            "confidence is about 0.90 while accuracy is about 0.79. An auditor should see a "
            "reliability diagram below the diagonal, high ECE and NLL, and a temperature "
            "(or other) recalibration fitted on the calibration split that closes most of the "
            "gap on the test split."
        ),
    ),
    "ensemble": DemoSpec(
        key="ensemble",
        title="Ensemble of five members (credal-set setting)",
        description=(
            "3,000 rows of a binary problem with one feature x ∈ [0, 5], a 0/1 outcome y and "
            "five ensemble members, each predicting P(y = 1) as a smooth curve of x; p_mean "
            "is their plain average. The table is generated with a fixed seed, as in the "
            "binary simulation of the credal-set calibration-test paper (§4.1). An auditor "
            "would ask whether the ensemble mean is calibrated, and whether some combination "
            "of the members, allowed to change with x, could be."
        ),
        planted=(
            "Each member's curve is a Gaussian-process path scaled into [0.03, 0.97]. The "
            "true probability is an "
            "instance-dependent convex combination of the members — near each of five points "
            "on the x axis a different member carries most of the weight — and y is drawn "
            "from it. The truth therefore lies inside the ensemble's "
            "credal set everywhere, yet the plain ensemble mean p_mean, though right on "
            "average (mean prediction 0.49 against a positive rate of 0.50), is miscalibrated "
            "locally: it is too high for small x and too low for large x. An auditor should "
            "find that calibration tests reject p_mean (globally and, more strongly, locally "
            "along x), while the credal-set test, which may re-weight the members as a "
            "function of x, has no reason to: a calibrated combination exists."
        ),
    ),
    "census-stream": DemoSpec(
        key="census-stream",
        title="Census-style loans over time (monthly)",
        description=(
            "36,000 synthetic loan applicants decided between January 2025 and December "
            "2026 (decision_date), generated like the census demo by a fixed-seed "
            "simulation; no real person or statistic is behind them. The deployed model, "
            "p_default, gives each applicant a default risk, and p_challenger, the census "
            "demo's main-effects model, is its challenger. An auditor would ask, month by "
            "month on the Over time page, whether the deployed model stays calibrated for "
            "every group, and when an alarm should be raised."
        ),
        planted=(
            "p_default is a logistic regression with per-race age terms fitted on 30,000 "
            "earlier applicants: it can follow the true risk, so it is calibrated overall and "
            "in every group. On 1 March 2026 the world changes for Black applicants only "
            "(planted: their true default logit rises by 1.0, as a policy change the model "
            "never saw would do), and nothing else changes. An auditor should find, on the "
            "Over time page (monthly periods), no alarm through May 2026 and an alarm for "
            "race = Black in June 2026: the monthly gap of Black applicants turns positive "
            "(about +0.1 to +0.2) from March, and the e-process needs a few hundred of their "
            "outcomes to cross its line, the price of a false-alarm rate of at most α that "
            "holds however often the table is re-audited, for seven groups at once. "
            "p_challenger's Brier score is worse, and the confidence "
            "sequence of the score difference says so."
        ),
    ),
}

_FRAMES: dict[str, Callable[[], pd.DataFrame]] = {
    "census": census_simulation,
    "itrustworthy": lambda: itrustworthy_simulation(seed=ITRUSTWORTHY_SEED),
    "multiclass": multiclass_simulation,
    "ensemble": ensemble_simulation,
    "census-stream": census_stream_simulation,
}

_MAPPINGS: dict[str, ColumnMapping] = {
    "census": ColumnMapping(
        label="defaulted", probs=("p_default",), positive="1", features=CENSUS_AUDIT_FEATURES,
        groups=("sex", "race"), split="split",
        models=(("p_challenger", ("p_challenger",)),),
    ),
    "itrustworthy": ColumnMapping(
        label="y", probs=("p",), positive="1", features=tuple(f"x{i}" for i in range(1, 6)),
    ),
    "multiclass": ColumnMapping(
        label="land_cover", probs=tuple(f"p_{c}" for c in LAND_COVER), features=LAND_FEATURES,
        groups=("site",), split="split",
    ),
    "ensemble": ColumnMapping(
        label="y", probs=("p_mean",), positive="1", features=("x",), split="split",
        members=tuple((f"member_{k}",) for k in range(1, ENSEMBLE_MEMBERS + 1)),
    ),
    "census-stream": ColumnMapping(
        label="defaulted", probs=("p_default",), positive="1", features=CENSUS_AUDIT_FEATURES,
        groups=("sex", "race"), models=(("p_challenger", ("p_challenger",)),),
        time="decision_date",
    ),
}


def _spec(key: str) -> DemoSpec:
    """The spec for ``key``; an unknown key raises ValueError listing the known ones."""
    if key not in DEMOS:
        known = ", ".join(f"'{k}'" for k in DEMOS)
        raise ValueError(f"Unknown demo '{key}'. The demos are {known}.")
    return DEMOS[key]


def demo_frame(key: str) -> pd.DataFrame:
    """The demo's raw table, exactly as a user would upload it (a fresh DataFrame each call).

    Its models are fitted with BLAS held to one thread: the fits are small (tens of columns),
    threads only add spinning on a busy machine (4 s instead of 0.2 s for the census demo),
    and one thread gives the same bits on every machine whatever its number of cores.

    Parameters
    ----------
    key : str
        One of :data:`DEMOS`.

    Returns
    -------
    pandas.DataFrame
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _FRAMES[_spec(key).key]()


def demo_mapping(key: str) -> ColumnMapping:
    """Which column of :func:`demo_frame` plays which role.

    Parameters
    ----------
    key : str
        One of :data:`DEMOS`.

    Returns
    -------
    ColumnMapping
    """
    return _MAPPINGS[_spec(key).key]


def load_demo(key: str = DEFAULT_DEMO) -> AuditData:
    """The demo as a validated :class:`~core.data.audit_data.AuditData`, named and described by its
    spec.

    Parameters
    ----------
    key : str, default "census"
        One of :data:`DEMOS`.

    Returns
    -------
    AuditData
    """
    spec = _spec(key)
    return AuditData.from_mapping(
        demo_frame(key), demo_mapping(key), name=spec.title, description=spec.description
    )
