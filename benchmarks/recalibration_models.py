"""Every recalibrator on real model families whose scores saturate, against scikit-learn.

    .venv/bin/python -m benchmarks.recalibration_models [--repeats 5] [--tables ...]
        [--families rf,gb,knn,nb] [--methods platt,temperature,...]

Random forests, k-NN and naive Bayes output exact 0s and 1s (or probabilities beyond what the
calibration rows resolve), which broke every method taking a logarithm of a probability
(issue 20). For each table × model family × repetition: a stratified third of the rows trains
the model (:func:`core.data.reference_split.stratified_split`, seed = repetition), every
method is fitted on the calibration third and scored on the test third, and
scikit-learn's ``CalibratedClassifierCV(FrozenEstimator(model), method="sigmoid" |
"isotonic")`` is fitted on the same calibration rows (scikit-learn's sigmoid uses the
model's decision function where it has one — gradient boosting — and its probabilities
otherwise). The table is the test ECE (15 equal-width bins, the positive class; top-label for
a multiclass table), the mean over the repetitions; ``saturated`` is the share of test rows
whose predicted probability is exactly 0 or 1.

Tables (the model features; audit features and groups for the local and group methods):

* ``compas`` — :func:`core.data.public_tables.compas_like_frame` (7,214 rows), the paper's
  seven model features, audit features sex, age, race, groups sex, race;
* ``census`` — the census demo's raw columns without its model (10,000 rows), audit features
  age, sex, race, groups sex, race;
* ``cancer`` — scikit-learn's bundled breast-cancer data (569 rows, 30 features), audit
  features its first three, groups the tercile of ``mean radius``;
* ``digits`` (not in the default list) — scikit-learn's bundled digits (1,797 rows, 10
  classes), a multiclass check of vector, matrix and Dirichlet scaling.

Families: ``rf`` scikit-learn's default random forest, ``gb`` gradient boosting (defaults),
``knn`` k-NN (k = 5, standardised inputs), ``nb`` Gaussian naive Bayes.
The summary lines check issue 20's acceptance: Platt within 0.005 of scikit-learn's sigmoid in
every cell, and no scaling method more than 0.01 above the uncalibrated model's ECE.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from core import metrics
from core.data.demo import demo_frame
from core.data.public_tables import COMPAS_AUDIT_FEATURES, COMPAS_MODEL_FEATURES, compas_like_frame
from core.data.reference_split import stratified_split
from core.data.table import deduplicate_columns
from core.recalibration import RECALIBRATORS, make_recalibrator

#: Acceptance of issue 20: Platt against scikit-learn's sigmoid, scaling against uncalibrated.
PLATT_TOLERANCE = 0.005
SCALING_TOLERANCE = 0.01
SCALING = tuple(k for k, spec in RECALIBRATORS.items() if spec.family == "scaling") + (
    "group-temperature",)
FAMILIES: dict[str, Callable[[int], object]] = {
    "rf": lambda seed: RandomForestClassifier(random_state=seed),
    "gb": lambda seed: GradientBoostingClassifier(random_state=seed),
    "knn": lambda seed: KNeighborsClassifier(),
    "nb": lambda seed: GaussianNB(),
}
BASELINES = ("uncalibrated", "sklearn-sigmoid", "sklearn-isotonic")


@dataclass(frozen=True)
class Table:
    """A raw table: model features, label, audit features and group attributes."""

    name: str
    X: pd.DataFrame
    y: np.ndarray
    audit: tuple[str, ...]
    groups: pd.DataFrame


def load_table(name: str) -> Table:
    if name == "compas":
        frame = deduplicate_columns(compas_like_frame()).frame
        return Table(name, frame[list(COMPAS_MODEL_FEATURES)],
                     frame["two_year_recid"].to_numpy(), COMPAS_AUDIT_FEATURES,
                     frame[["sex", "race"]])
    if name == "census":
        frame = demo_frame("census")
        X = frame[["age", "sex", "race", "income", "education", "hours", "region"]]
        return Table(name, X, frame["defaulted"].to_numpy(), ("age", "sex", "race"),
                     frame[["sex", "race"]])
    if name == "cancer":
        data = load_breast_cancer(as_frame=True)
        radius = pd.qcut(data.data["mean radius"], 3, labels=["small", "medium", "large"])
        return Table(name, data.data, data.target.to_numpy(), tuple(data.data.columns[:3]),
                     pd.DataFrame({"radius": radius.astype(str)}))
    if name == "digits":
        data = load_digits(as_frame=True)
        ink = pd.qcut(data.data.sum(axis=1), 3, labels=["light", "medium", "heavy"])
        return Table(name, data.data, data.target.to_numpy(),
                     ("pixel_2_4", "pixel_4_4", "pixel_6_4"),
                     pd.DataFrame({"ink": ink.astype(str)}))
    raise ValueError(f"unknown table {name!r}")


def encoder(X: pd.DataFrame) -> ColumnTransformer:
    """Standardised numbers, one-hot categories (unseen levels ignored)."""
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numeric = [c for c in X.columns if c not in categorical]
    return ColumnTransformer([
        ("numeric", StandardScaler(), numeric),
        ("categorical", OneHotEncoder(handle_unknown="ignore", sparse_output=False),
         categorical),
    ], sparse_threshold=0.0)


def audit_matrix(table: Table) -> np.ndarray:
    """The audit features as numbers (categories one-hot) for LoRe and the LCB correction."""
    return pd.get_dummies(table.X[list(table.audit)], dtype=float).to_numpy()


def positive(P: np.ndarray) -> np.ndarray:
    """P(y = 1) of a binary problem, the matrix otherwise (the library's layout)."""
    return P[:, 1] if P.shape[1] == 2 else P


def one_cell(table: Table, family: str, seed: int, methods: list[str],
             features: np.ndarray) -> dict[str, float]:
    """Test ECE of every method and baseline on one split of one table for one model."""
    parts = stratified_split(table.y, (1 / 3, 1 / 3, 1 / 3), seed)
    train, cal, test = (parts == part for part in ("train", "calibration", "test"))
    model = Pipeline([("encode", encoder(table.X)), ("model", FAMILIES[family](seed))])
    model.fit(table.X[train], table.y[train])
    p_cal = positive(model.predict_proba(table.X[cal]))
    p_test = positive(model.predict_proba(table.X[test]))
    y_cal, y_test = table.y[cal], table.y[test]
    out = {"uncalibrated": metrics.ece(p_test, y_test),
           "saturated": float(np.mean((p_test == 0.0) | (p_test == 1.0)))}
    for method in ("sigmoid", "isotonic"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = CalibratedClassifierCV(FrozenEstimator(model), method=method)
            fitted.fit(table.X[cal], y_cal)
        out[f"sklearn-{method}"] = metrics.ece(positive(fitted.predict_proba(table.X[test])),
                                               y_test)
    groups = table.groups.to_numpy(dtype=str)
    for name in methods:
        recalibrator = make_recalibrator(name)
        recalibrator.fit(p_cal, y_cal, features=features[cal], groups=groups[cal])
        q = recalibrator.predict(p_test, features=features[test], groups=groups[test])
        out[name] = metrics.ece(q, y_test)
    return out


def run(tables: list[str], families: list[str], methods: list[str], repeats: int
        ) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """Mean test ECE (rows: baselines and methods; columns: table/family), its standard
    error over the repetitions, and per cell the standard error of the paired difference
    Platt − scikit-learn's sigmoid (same splits)."""
    means, errors, paired = {}, {}, {}
    for table_name in tables:
        table = load_table(table_name)
        binary = np.unique(table.y).size == 2
        usable = [m for m in methods if RECALIBRATORS[m].supports(binary)]
        features = audit_matrix(table)
        for family in families:
            start = time.perf_counter()
            runs = pd.DataFrame([one_cell(table, family, seed, usable, features)
                                 for seed in range(repeats)])
            column = f"{table_name}/{family}"
            means[column] = runs.mean()
            errors[column] = runs.std(ddof=1) / np.sqrt(repeats) if repeats > 1 else \
                runs.mean() * np.nan
            if "platt" in runs and repeats > 1:
                gap = runs["platt"] - runs["sklearn-sigmoid"]
                paired[column] = gap.std(ddof=1) / np.sqrt(repeats)
            print(f"  {column}: {repeats} splits in {time.perf_counter() - start:.0f} s",
                  file=sys.stderr, flush=True)
    order = ["saturated", *BASELINES, *methods]
    return (pd.DataFrame(means).reindex(order), pd.DataFrame(errors).reindex(order),
            pd.Series(paired, dtype=float))


def markdown(table: pd.DataFrame) -> str:
    cells = [[f"{v:.3f}" if np.isfinite(v) else "—" for v in row] for row in table.to_numpy()]
    lines = ["| method | " + " | ".join(table.columns) + " |",
             "|---|" + "---:|" * table.shape[1]]
    lines += [f"| {name} | " + " | ".join(row) + " |" for name, row in zip(table.index, cells,
                                                                         strict=True)]
    return "\n".join(lines)


def acceptance(means: pd.DataFrame, paired: pd.Series) -> list[str]:
    """The two checks of issue 20, one line each (Platt's in both directions), on the cells
    where they apply."""
    lines = []
    if "platt" in means.index:
        gap = means.loc["platt"] - means.loc["sklearn-sigmoid"]
        worst, above = gap.abs().idxmax(), gap.idxmax()

        def se(cell: str) -> str:
            return f", paired SE {paired[cell]:.3f}" if cell in paired.index else ""

        lines.append(f"Platt − scikit-learn sigmoid: largest |difference| {gap[worst]:+.3f} "
                     f"({worst}{se(worst)}); within {PLATT_TOLERANCE} in every cell: "
                     f"{'yes' if (gap.abs() <= PLATT_TOLERANCE).all() else 'NO'}")
        lines.append(f"Platt above scikit-learn sigmoid by at most {gap[above]:+.3f} ({above}"
                     f"{se(above)}); never more than {PLATT_TOLERANCE} worse: "
                     f"{'yes' if gap.max() <= PLATT_TOLERANCE else 'NO'}")
    for name in SCALING:
        if name not in means.index:
            continue
        rise = (means.loc[name] - means.loc["uncalibrated"]).dropna()
        if rise.empty:
            continue
        worst = rise.idxmax()
        lines.append(f"{name}: largest rise over the uncalibrated ECE {rise[worst]:+.3f} "
                     f"({worst}); at most {SCALING_TOLERANCE}: "
                     f"{'yes' if rise.max() <= SCALING_TOLERANCE else 'NO'}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="splits per cell (seeds 0…)")
    parser.add_argument("--tables", default="compas,census,cancer",
                        help="of compas, census, cancer, digits")
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--methods", default=",".join(RECALIBRATORS))
    args = parser.parse_args()
    tables = [t for t in args.tables.split(",") if t]
    families = [f for f in args.families.split(",") if f]
    methods = [m for m in args.methods.split(",") if m]
    for name in tables:
        if name not in ("compas", "census", "cancer", "digits"):
            parser.error(f"unknown table {name!r}; choose from compas, census, cancer, digits")
    for name in families:
        if name not in FAMILIES:
            parser.error(f"unknown family {name!r}; choose from {', '.join(FAMILIES)}")
    for name in methods:
        if name not in RECALIBRATORS:
            parser.error(f"unknown method {name!r}; choose from {', '.join(RECALIBRATORS)}")
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    start = time.perf_counter()
    means, errors, paired = run(tables, families, methods, args.repeats)
    print(f"Test ECE, mean over {args.repeats} splits (train / calibration / test thirds); "
          "'saturated': share of test rows at exactly 0 or 1.\n")
    print(markdown(means))
    finite = errors.drop(index="saturated").to_numpy()
    finite = finite[np.isfinite(finite)]
    if finite.size:
        print(f"\nStandard error of a mean over the splits: median {np.median(finite):.3f}, "
              f"largest {finite.max():.3f}.")
    print()
    print("\n".join(acceptance(means, paired)))
    print(f"\n{time.perf_counter() - start:.0f} s in all.")


if __name__ == "__main__":
    main()
