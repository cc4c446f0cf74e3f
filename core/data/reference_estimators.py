"""The reference models: which estimators a reference model can be, their pipelines (one-hot
categories, standardised numbers for the logistic regression), fitting and the AUC they are
checked with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from core.data.problems import DataError
from core.data.table import MISSING_LEVEL

if TYPE_CHECKING:  # scikit-learn is imported where a model is made (0.5 s, not at start-up)
    from sklearn.pipeline import Pipeline

#: Model name → label shown to users.
REFERENCE_MODELS: dict[str, str] = {
    "logistic": "Logistic regression",
    "random_forest": "Random forest",
    "random_forest_default": "Random forest, scikit-learn defaults (as in the I-trustworthy "
                             "COMPAS audit)",
    "gradient_boosting": "Gradient boosting (histogram-based)",
}
#: The same models as a noun phrase inside a sentence.
MODEL_PHRASES = {
    "logistic": "a logistic regression",
    "random_forest": "a random forest",
    "random_forest_default": "a random forest with scikit-learn's default settings (100 fully "
                             "grown trees)",
    "gradient_boosting": "a histogram-based gradient-boosting model",
}
#: Trees in the random forest.
FOREST_TREES = 300
#: Smallest leaf of the random forest (larger leaves give less extreme probabilities).
FOREST_MIN_LEAF = 5


def check_model_name(model: str) -> None:
    if model not in REFERENCE_MODELS:
        known = ", ".join(f"'{name}'" for name in REFERENCE_MODELS)
        raise DataError(f"Unknown reference model '{model}'. Choose one of {known}.")


def model_inputs(df: pd.DataFrame, numeric: list[str], categorical: list[str]) -> pd.DataFrame:
    """The feature columns as the estimator sees them: float numbers, categories as text."""
    inputs = {c: df[c].to_numpy(dtype=float, na_value=np.nan) for c in numeric}
    for column in categorical:
        series = df[column]
        text = series.astype(object).where(series.notna(), MISSING_LEVEL)
        inputs[column] = np.array([str(v) for v in text], dtype=object)
    return pd.DataFrame(inputs, index=pd.RangeIndex(len(df)))[numeric + categorical]


def make_estimator(model: str, numeric: list[str], categorical: list[str], seed: int) -> Pipeline:
    """The pipeline: one-hot categoricals (unseen levels ignored), then the classifier.

    Numbers are standardised for the logistic regression and passed through for the tree
    models, which do not need it.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    scale = StandardScaler() if model == "logistic" else "passthrough"
    steps = [("numeric", scale, numeric)] if numeric else []
    if categorical:
        steps.append((
            "categorical",
            OneHotEncoder(handle_unknown="ignore", sparse_output=False),
            categorical,
        ))
    encoder = ColumnTransformer(steps, sparse_threshold=0.0)
    if model == "logistic":
        classifier = LogisticRegression(max_iter=2_000)
    elif model == "random_forest":
        classifier = RandomForestClassifier(
            n_estimators=FOREST_TREES, min_samples_leaf=FOREST_MIN_LEAF, random_state=seed
        )
    elif model == "random_forest_default":
        classifier = RandomForestClassifier(random_state=seed)
    else:
        classifier = HistGradientBoostingClassifier(random_state=seed)
    return Pipeline([("encode", encoder), ("classify", classifier)])


def fit_model(model: str, inputs: pd.DataFrame, y: np.ndarray, train: np.ndarray,
         numeric: list[str], categorical: list[str], seed: int) -> Pipeline:
    estimator = make_estimator(model, numeric, categorical, seed)
    estimator.fit(inputs.loc[train, numeric + categorical], y[train])
    return estimator


def model_auc(y: np.ndarray, probs: np.ndarray) -> float:
    """AUC of predicted class probabilities: binary, of the positive class; more classes,
    Hand & Till's M (scikit-learn's one-vs-one average). ``nan`` when a class is absent."""
    from sklearn.metrics import roc_auc_score

    m = probs.shape[1]
    if np.unique(y).size < m:
        return float("nan")
    if m == 2:
        return float(roc_auc_score(y, probs[:, 1]))
    return float(roc_auc_score(y, probs, multi_class="ovo", labels=np.arange(m)))
