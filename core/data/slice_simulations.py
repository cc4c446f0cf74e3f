"""Simulated audits for the error-rate studies of slice discovery.

Each setting draws people with a few audit features and group attributes, a model's
predictions that depend on them, and outcomes from the *true* probabilities: equal to the
predictions (a calibrated model) or shifted by a planted gap on some cells. The level study,
the false-discovery study and the power study (``benchmarks/slices_study.py``) and their
bounded versions in the tests draw from here.

Settings (:data:`SETTINGS`):

``categorical``  n = 5,000; sex (2), race (5, shares 50/20/15/10/5 %), region (4): about 50
                 slices at depth 2; calibrated.
``issue``        n = 5,000; sex × race × age (4 ranges), the configuration measured in the
                 issue (9.5 % of calibrated data sets got a "strong" |z| ≥ 3 subgroup);
                 calibrated.
``numeric-8``    n = 5,000; eight standard-normal features, 4 ranges each, depth 2: 481
                 slices; calibrated.
``multiclass-5`` n = 5,000; a 5-class model (softmax of feature effects), sex, race, region;
                 every class one vs rest (about 50 slices × 5 classes); calibrated.
``planted-2pct`` n = 20,000; sex, race (shares 50/20/14/8/8 %), region, age and income (4
                 ranges each): race = D ∧ age in its top quartile holds 2 % of the rows and
                 the model underestimates its rate by 0.1.
``mixture``      the ``planted-2pct`` population with three planted cells: race = C ∧
                 region = West (+0.10), sex = M ∧ income in its bottom quartile (−0.08), age in
                 its top quartile ∧ region = North (+0.06).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit, softmax

#: The settings of :func:`simulate_slices` and their default sizes.
SETTINGS = {"categorical": 5_000, "issue": 5_000, "numeric-8": 5_000, "multiclass-5": 5_000,
            "planted-2pct": 20_000, "mixture": 20_000}
RACES = ("A", "B", "C", "D", "E")
REGIONS = ("North", "South", "East", "West")


@dataclass(frozen=True)
class SliceAudit:
    """A simulated audit: the model's ``probs``, outcomes ``y`` drawn from ``truth``, the
    ``features`` slices are made of, and the planted ``cells`` (row masks; none for a
    calibrated model)."""

    probs: np.ndarray
    y: np.ndarray
    features: pd.DataFrame
    truth: np.ndarray
    cells: tuple[np.ndarray, ...] = ()

    @property
    def affected(self) -> np.ndarray:
        """The rows whose true probability is not the prediction."""
        affected = np.zeros(self.y.size, dtype=bool)
        for cell in self.cells:
            affected |= cell
        return affected


def _people(rng: np.random.Generator, n: int, race_shares: tuple[float, ...]) -> pd.DataFrame:
    return pd.DataFrame({
        "sex": rng.choice(np.array(["F", "M"], dtype=object), n),
        "race": rng.choice(np.array(RACES, dtype=object), n, p=race_shares),
        "region": rng.choice(np.array(REGIONS, dtype=object), n),
        "age": rng.integers(18, 90, n),
        "income": np.round(np.exp(rng.normal(10.3, 0.5, n)), -2),
    })


def _binary_model(frame: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
    """Predictions (about 0.25 on average) that depend on every column, plus noise."""
    logit = (-1.2 + 0.3 * (frame["sex"] == "M") + 0.2 * frame["race"].map(
        dict(zip(RACES, (0.0, 0.5, -0.3, 0.4, -0.2), strict=True))).astype(float)
        - 0.01 * (frame["age"] - 50) + 0.4 * rng.standard_normal(len(frame)))
    return expit(logit.to_numpy(dtype=float))


def simulate_slices(setting: str, rng: np.random.Generator, n: int | None = None
                    ) -> SliceAudit:
    """One simulated audit of ``setting`` (module doc) with ``n`` rows (default its size)."""
    if setting not in SETTINGS:
        raise ValueError(f"Unknown slice simulation {setting!r}; choose one of "
                         f"{', '.join(SETTINGS)}.")
    n = SETTINGS[setting] if n is None else n
    if setting == "numeric-8":
        X = rng.standard_normal((n, 8))
        p = expit(-1.0 + X @ np.array([0.4, -0.3, 0.2, 0.0, 0.1, -0.1, 0.3, 0.0]))
        frame = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(8)])
        return _calibrated(p, frame, rng)
    shares = (0.5, 0.2, 0.14, 0.08, 0.08) if setting in ("planted-2pct", "mixture") else \
        (0.5, 0.2, 0.15, 0.1, 0.05)
    people = _people(rng, n, shares)
    if setting == "multiclass-5":
        effects = rng.normal(0.0, 0.5, (3, 5))
        codes = np.column_stack([(people["sex"] == "M"), people["race"].isin(["B", "D"]),
                                 people["region"].isin(["North", "East"])]).astype(float)
        P = softmax(codes @ effects + 0.8 * rng.standard_normal((n, 5)), axis=1)
        cumulative = np.cumsum(P, axis=1)
        y = np.minimum((rng.random(n)[:, None] >= cumulative).sum(axis=1), 4)
        return SliceAudit(P, y, people[["sex", "race", "region"]], P)
    p = _binary_model(people, rng)
    if setting == "categorical":
        return _calibrated(p, people[["sex", "race", "region"]], rng)
    if setting == "issue":
        return _calibrated(p, people[["sex", "race", "age"]], rng)
    top_age = people["age"].to_numpy() >= np.quantile(people["age"], 0.75)
    if setting == "planted-2pct":
        cells = [((people["race"] == "D").to_numpy() & top_age, 0.10)]
    else:
        low_income = people["income"].to_numpy() < np.quantile(people["income"], 0.25)
        cells = [((people["race"] == "C").to_numpy() & (people["region"] == "West").to_numpy(),
                  0.10),
                 ((people["sex"] == "M").to_numpy() & low_income, -0.08),
                 (top_age & (people["region"] == "North").to_numpy(), 0.06)]
    truth = p.copy()
    for mask, gap in cells:
        truth[mask] = np.clip(truth[mask] + gap, 0.0, 1.0)
    return SliceAudit(p, (rng.random(n) < truth).astype(np.int64), people, truth,
                      tuple(mask for mask, _ in cells))


def _calibrated(p: np.ndarray, frame: pd.DataFrame, rng: np.random.Generator) -> SliceAudit:
    return SliceAudit(p, (rng.random(p.size) < p).astype(np.int64),
                      frame.reset_index(drop=True), p)
