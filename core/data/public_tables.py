"""Generated stand-ins for public tables auditors bring: ProPublica's COMPAS file and the
German credit data.

Neither ProPublica's ``compas-scores-two-years.csv`` nor the German credit table is shipped
(their licences differ); these generators reproduce their shapes and quirks instead: the
COMPAS file's 53 columns in its order, with ``decile_score`` and ``priors_count`` each
appearing twice (identical copies, as in the real file), a column that is entirely empty
(``violent_recid``), dates and case numbers as text, a numeric ``id`` with gaps (1, 3, 4, …),
near-unique names (``name``), COMPAS's own scores (``decile_score``, ``score_text``,
``v_decile_score``, ``v_score_text``), columns that are missing unless the person reoffended,
and columns recorded after the outcome with the real file's single-feature AUCs against
``two_year_recid`` (issue 29): ``is_recid`` (a superset of the outcome, ≈ 0.97), ``event``
(the survival analysis' indicator of a reoffence at *any* time, equal to the label in 89% of
rows, ≈ 0.88), ``end`` (days of follow-up, short for those who reoffended, ≈ 0.93),
``is_violent_recid`` and ``vr_charge_degree`` (≈ 0.61) — what a reference model must not learn
from (:mod:`core.data.leakage`); German credit's 1,000 rows of
coded categorical attributes with boolean-like text (``yes``/``no``, ``yes``/``none``) and
text labels ``good``/``bad``.

Every table is a pure function of its seed and is cached per process (``lru_cache``), so the
tests, the benchmarks and the app share one copy. Callers must not modify them (copy first).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
from scipy.special import expit

#: The header of compas-scores-two-years.csv, in order (53 names, two of them twice).
COMPAS_COLUMNS = (
    "id", "name", "first", "last", "compas_screening_date", "sex", "dob", "age", "age_cat",
    "race", "juv_fel_count", "decile_score", "juv_misd_count", "juv_other_count",
    "priors_count", "days_b_screening_arrest", "c_jail_in", "c_jail_out", "c_case_number",
    "c_offense_date", "c_arrest_date", "c_days_from_compas", "c_charge_degree",
    "c_charge_desc", "is_recid", "r_case_number", "r_charge_degree", "r_days_from_arrest",
    "r_offense_date", "r_charge_desc", "r_jail_in", "r_jail_out", "violent_recid",
    "is_violent_recid", "vr_case_number", "vr_charge_degree", "vr_offense_date",
    "vr_charge_desc", "type_of_assessment", "decile_score", "score_text", "screening_date",
    "v_type_of_assessment", "v_decile_score", "v_score_text", "v_screening_date",
    "in_custody", "out_custody", "priors_count", "start", "end", "event", "two_year_recid",
)
#: The model features of the I-trustworthy COMPAS audit (demographics and criminal history).
COMPAS_MODEL_FEATURES = ("sex", "age", "race", "priors_count", "c_charge_degree",
                         "juv_fel_count", "juv_misd_count")
#: Its audit features: the demographics only.
COMPAS_AUDIT_FEATURES = ("sex", "age", "race")
COMPAS_RACES = ("African-American", "Caucasian", "Hispanic", "Other", "Asian",
                "Native American")
COMPAS_RACE_SHARES = (0.51, 0.34, 0.088, 0.055, 0.005, 0.002)
CHARGES = ("Battery", "Grand Theft in the 3rd Degree", "Possession of Cocaine",
           "Driving While License Revoked", "arrest case no charge", None)


def _dates(rng: np.random.Generator, n: int, start: str = "2013-01-01",
           days: int = 730) -> np.ndarray:
    base = np.datetime64(start)
    return np.array([str(base + int(d)) for d in rng.integers(0, days, n)], dtype=object)


@lru_cache(maxsize=4)
def compas_like_frame(n: int = 7_214, seed: int = 0) -> pd.DataFrame:
    """A table shaped like ProPublica's compas-scores-two-years.csv (7,214 rows, 53 columns).

    Two-year recidivism follows ``logit = −1.2 + 0.16·priors − 0.045·(age − 35) + 0.35·[felony]
    + 0.25·juvenile felonies + 0.2·[male]`` (45% positives, as in the real file). The columns
    recorded after the outcome follow the real file's relations to ``two_year_recid``:

    * ``is_recid`` is 1 whenever ``two_year_recid`` is and for 6% of the others (a reoffence
      after two years);
    * ``event`` is 1 for 82.3% of the two-year reoffenders and for 9 in 10 of those who
      reoffended later (AUC ≈ 0.88, agreement ≈ 89%);
    * ``end`` is the day of the reoffence (a gamma-distributed wait, median ≈ 250 days,
      within two years) when ``event`` is 1 and the label too, else the day follow-up ended
      (after two years, but before it for 10% of the others; AUC ≈ 0.92);
    * ``is_violent_recid`` is 1 for 24% of the two-year reoffenders and 2% of the others
      (AUC ≈ 0.61), the ``vr_*`` columns are filled in for them.

    Columns with duplicate names hold identical values.
    """
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Male", "Female"], n, p=[0.81, 0.19])
    age = np.clip(np.round(18 + rng.gamma(2.2, 7.5, n)), 18, 96).astype(np.int64)
    race = rng.choice(COMPAS_RACES, n, p=COMPAS_RACE_SHARES)
    priors = rng.negative_binomial(1, 0.22, n).astype(np.int64)
    juv_fel = rng.poisson(0.07, n).astype(np.int64)
    juv_misd = rng.poisson(0.09, n).astype(np.int64)
    felony = rng.random(n) < 0.64
    logit = (-1.2 + 0.16 * np.minimum(priors, 15) - 0.045 * (age - 35) + 0.35 * felony
             + 0.25 * juv_fel + 0.2 * (sex == "Male"))
    two_year = (rng.random(n) < expit(logit)).astype(np.int64)
    is_recid = np.where(two_year == 1, 1, (rng.random(n) < 0.06).astype(np.int64))
    decile = np.clip(np.round(1 + 9 * expit(logit + rng.normal(0, 0.8, n))), 1, 10)
    decile = decile.astype(np.int64)
    recid = is_recid == 1
    violent = recid & (rng.random(n) < np.where(two_year == 1, 0.24, 1 / 3))
    event = np.where(two_year == 1, rng.random(n) >= 0.177,
                     recid & (rng.random(n) < 0.9)).astype(np.int64)
    wait = np.minimum(rng.gamma(1.3, 260.0, n), 729.0).round().astype(np.int64) + 1
    end = np.where(two_year == 1, np.where(event == 1, wait, rng.integers(0, 1_187, n)),
                   np.where(rng.random(n) < 0.10, rng.integers(0, 730, n),
                            rng.integers(730, 1_187, n)))
    ids = np.sort(np.concatenate([[1], rng.choice(np.arange(2, 11_002), n - 1, replace=False)]))
    names = np.array([f"person {i} name" for i in range(n)], dtype=object)
    repeats = rng.choice(n, max(n * 56 // 7_214, 1), replace=False)
    names[repeats] = names[rng.choice(n, repeats.size)]  # 7,158 distinct names in 7,214 rows
    first_names = np.array([f"first{k}" for k in rng.zipf(1.3, n) % 2_800], dtype=object)
    last_names = np.array([f"last{k}" for k in rng.zipf(1.2, n) % 3_950], dtype=object)
    v_decile = np.clip(decile + rng.integers(-2, 3, n), 1, 10)

    def score_text(scores: np.ndarray) -> np.ndarray:
        return np.where(scores <= 4, "Low", np.where(scores <= 7, "Medium", "High"))
    screening = _dates(rng, n)
    age_cat = np.where(age < 25, "Less than 25", np.where(age > 45, "Greater than 45", "25 - 45"))

    def where(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
        out = np.asarray(values, dtype=object).copy()
        out[~mask] = None
        return out

    days_arrest = rng.integers(-30, 5, n).astype(float)
    days_arrest[rng.random(n) < 0.04] = np.nan
    c_days = rng.integers(0, 40, n).astype(float)
    c_days[rng.random(n) < 0.003] = np.nan
    values = [
        ids, names, first_names, last_names, screening,
        sex, _dates(rng, n, "1950-01-01", 18_000), age, age_cat, race, juv_fel, decile,
        juv_misd, rng.poisson(0.1, n).astype(np.int64), priors, days_arrest,
        where(rng.random(n) > 0.04, _dates(rng, n)), where(rng.random(n) > 0.04, _dates(rng, n)),
        [f"13{i:06d}CF10A" for i in range(n)], where(rng.random(n) > 0.16, _dates(rng, n)),
        where(rng.random(n) > 0.84, _dates(rng, n)), c_days, np.where(felony, "F", "M"),
        rng.choice(np.array(CHARGES, dtype=object), n), is_recid,
        where(recid, np.array([f"15{i:06d}CF10A" for i in range(n)], dtype=object)),
        where(recid, rng.choice(["(F3)", "(M1)", "(M2)", "(F2)", "(MO3)"], n)),
        where(recid, rng.integers(-1, 3, n).astype(object)), where(recid, _dates(rng, n)),
        where(recid, rng.choice(np.array(CHARGES[:5], dtype=object), n)),
        where(recid, _dates(rng, n)), where(recid, _dates(rng, n)),
        np.full(n, np.nan),  # violent_recid: empty in every row of the real file
        violent.astype(np.int64),
        where(violent, np.array([f"16{i:06d}MM10A" for i in range(n)], dtype=object)),
        where(violent, rng.choice(["(F3)", "(M1)", "(F2)"], n)), where(violent, _dates(rng, n)),
        where(violent, rng.choice(np.array(CHARGES[:2], dtype=object), n)),
        np.full(n, "Risk of Recidivism", dtype=object), decile, score_text(decile), screening,
        np.full(n, "Risk of Violence", dtype=object), v_decile, score_text(v_decile), screening,
        where(rng.random(n) > 0.03, _dates(rng, n)), where(rng.random(n) > 0.03, _dates(rng, n)),
        priors, rng.integers(0, 30, n), end, event, two_year,
    ]
    frame = pd.concat([pd.Series(v).rename(i) for i, v in enumerate(values)], axis=1)
    frame.columns = list(COMPAS_COLUMNS)
    return frame


GERMAN_CATEGORIES = {
    "checking_status": ("<0", "0<=X<200", ">=200", "no checking"),
    "credit_history": ("no credits/all paid", "all paid", "existing paid", "delayed previously",
                       "critical/other existing credit"),
    "purpose": ("new car", "used car", "furniture/equipment", "radio/tv", "domestic appliance",
                "repairs", "education", "retraining", "business", "other"),
    "savings_status": ("<100", "100<=X<500", "500<=X<1000", ">=1000", "no known savings"),
    "employment": ("unemployed", "<1", "1<=X<4", "4<=X<7", ">=7"),
    "personal_status": ("male div/sep", "female div/dep/mar", "male single", "male mar/wid"),
    "other_parties": ("none", "co applicant", "guarantor"),
    "property_magnitude": ("real estate", "life insurance", "car", "no known property"),
    "other_payment_plans": ("bank", "stores", "none"),
    "housing": ("rent", "own", "for free"),
    "job": ("unemp/unskilled non res", "unskilled resident", "skilled",
            "high qualif/self emp/mgmt"),
}
GERMAN_MODEL_FEATURES = ("checking_status", "duration", "credit_history", "purpose",
                         "credit_amount", "savings_status", "employment", "personal_status",
                         "age", "housing", "own_telephone", "foreign_worker")
GERMAN_AUDIT_FEATURES = ("age", "personal_status", "foreign_worker")


@lru_cache(maxsize=4)
def german_credit_like_frame(n: int = 1_000, seed: int = 0) -> pd.DataFrame:
    """A table shaped like the German credit data (OpenML ``credit-g``): 21 columns, text
    categories, boolean-like text (``own_telephone`` yes/none, ``foreign_worker`` yes/no),
    the label ``class`` as ``good``/``bad`` (70% good)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"checking_status": rng.choice(GERMAN_CATEGORIES["checking_status"], n)})
    frame["duration"] = rng.choice([6, 12, 18, 24, 36, 48], n)
    for column in ("credit_history", "purpose"):
        frame[column] = rng.choice(GERMAN_CATEGORIES[column], n)
    frame["credit_amount"] = np.round(rng.lognormal(7.9, 0.75, n)).astype(np.int64)
    for column in ("savings_status", "employment"):
        frame[column] = rng.choice(GERMAN_CATEGORIES[column], n)
    frame["installment_commitment"] = rng.integers(1, 5, n)
    frame["personal_status"] = rng.choice(GERMAN_CATEGORIES["personal_status"], n)
    frame["other_parties"] = rng.choice(GERMAN_CATEGORIES["other_parties"], n, p=[0.9, 0.04, 0.06])
    frame["residence_since"] = rng.integers(1, 5, n)
    frame["property_magnitude"] = rng.choice(GERMAN_CATEGORIES["property_magnitude"], n)
    frame["age"] = np.clip(np.round(19 + rng.gamma(2.0, 8.0, n)), 19, 75).astype(np.int64)
    for column in ("other_payment_plans", "housing"):
        frame[column] = rng.choice(GERMAN_CATEGORIES[column], n)
    frame["existing_credits"] = rng.integers(1, 5, n)
    frame["job"] = rng.choice(GERMAN_CATEGORIES["job"], n)
    frame["num_dependents"] = rng.integers(1, 3, n)
    frame["own_telephone"] = rng.choice(["yes", "none"], n, p=[0.4, 0.6])
    frame["foreign_worker"] = rng.choice(["yes", "no"], n, p=[0.96, 0.04])
    logit = (0.9 + 0.9 * (frame["checking_status"] == "no checking")
             - 0.6 * (frame["checking_status"] == "<0") - 0.03 * (frame["duration"] - 20)
             + 0.02 * (frame["age"] - 35) - 0.25e-4 * (frame["credit_amount"] - 3_000))
    frame["class"] = np.where(rng.random(n) < expit(logit.to_numpy()), "good", "bad")
    return frame
