"""Reference-model workflow: train a model on part of a raw table, audit its predictions.

When a table has outcomes and model features but no predictions, the auditor can train a
reference model, as the COMPAS audit of the I-trustworthy paper does (Vashistha & Farahi,
Fig. 4): the rows are split, stratified by the label, into train / calibration / test parts
(by default a third each); a model is fitted on the train part only, and the calibration and
test rows, which it never saw, receive its predicted class probabilities. The result is a
new table plus a :class:`~core.data.mapping.ColumnMapping` ready for
:meth:`~core.data.audit_data.AuditData.from_mapping`; the caller adds audit features and groups.

The default model features (:func:`default_model_features`) leave out what a model must not
learn from — columns that separate the label almost perfectly by themselves (the outcome in
another form), identifiers, dates — each with a sentence (:mod:`core.data.leakage`); a model
trained on such a column anyway carries a warning that names it (``warnings``).

Class names follow :mod:`core.data`: integral numbers are written as integers (``1.0`` →
``"1"``), booleans as ``"True"``/``"False"``, text is stripped. Classes are ordered by value
(numbers numerically); in a binary problem the larger value is the positive class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from core.data.column_guess import guess_columns
from core.data.leakage import FeatureScreen, LeftOut, leakage_warnings, screen_features
from core.data.mapping import ColumnMapping
from core.data.problems import DataError
from core.data.table import MISSING_LEVEL, deduplicate_columns, is_numeric_feature

#: Model name → label shown to users.
REFERENCE_MODELS: dict[str, str] = {
    "logistic": "Logistic regression",
    "random_forest": "Random forest",
    "random_forest_default": "Random forest, scikit-learn defaults (as in the I-trustworthy "
                             "COMPAS audit)",
    "gradient_boosting": "Gradient boosting (histogram-based)",
}
#: The same models as a noun phrase inside a sentence.
_MODEL_PHRASES = {
    "logistic": "a logistic regression",
    "random_forest": "a random forest",
    "random_forest_default": "a random forest with scikit-learn's default settings (100 fully "
                             "grown trees)",
    "gradient_boosting": "a histogram-based gradient-boosting model",
}
#: Fewest rows the workflow accepts (a third of them is about 20 training rows).
MIN_ROWS = 60
#: Fewest rows per class: one for each of the three parts of the stratified split.
MIN_CLASS_ROWS = 3
SPLIT_COLUMN = "split"
SPLIT_PARTS = ("train", "calibration", "test")
#: Trees in the random forest.
FOREST_TREES = 300
#: Smallest leaf of the random forest (larger leaves give less extreme probabilities).
FOREST_MIN_LEAF = 5
#: A reference model whose test AUC reaches this reads the outcome more often than not: few
#: real prediction problems of the kind audited here allow it.
HIGH_AUC = 0.95
#: A test AUC this far above that of the same model without the flagged columns says the
#: flagged columns carry the outcome.
AUC_MARGIN = 0.05
#: Most model features whose drop-column importance is computed (refits of the model).
MAX_DROPPED = 5


@dataclass(frozen=True)
class ReferenceModelResult:
    """A trained reference model's predictions, ready for an audit.

    Attributes
    ----------
    frame
        the calibration and test rows (original order, fresh index) with every
        original column, one probability column per class (``p_<class>``; binary: only
        ``p_<positive class>``) and a ``split`` column (``calibration`` / ``test``).
    mapping
        label, probability columns, split and (binary) positive class; no audit
        features or groups yet.
    n_train
        rows the model was fitted on (they are not in ``frame``).
    model
        the model's name, a key of :data:`REFERENCE_MODELS`.
    classes
        class names in probability-column order.
    notes
        sentences describing what was done, for the validation report.
    warnings
        sentences naming chosen model features that the leakage screen would have
        left out (a column separating the label, an identifier, dates), with their
        single-feature AUC.
    features
        the model features used.
    """

    frame: pd.DataFrame
    mapping: ColumnMapping
    n_train: int
    model: str
    classes: tuple[str, ...]
    notes: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    check: ModelCheck | None = None


@dataclass(frozen=True)
class ModelCheck:
    """Whether a trained reference model reads the outcome as a whole (issue 29).

    A single column can pass the leakage screen and a model still read the outcome from
    several together. After training, the model's AUC on the test rows is compared with
    :data:`HIGH_AUC` and with the AUC of the same model trained without the chosen columns
    the screen flags (the *baseline*); when it is high, or above the baseline by
    :data:`AUC_MARGIN`, the columns whose removal lowers the AUC on the calibration rows
    most (drop-column importance: the model refitted without each) are named.

    Attributes
    ----------
    test_auc : float
        AUC on the test rows (Hand & Till's M for several classes).
    baseline_auc : float or None
        The same for the model without the flagged chosen columns (``None`` when none was
        chosen, or nothing else was).
    flagged : tuple of str
        The chosen columns the leakage screen flags.
    importance : tuple of (str, float)
        Drop-column importance on the calibration rows, largest first (computed only when
        the check fires).
    warning : str or None
        The sentence for the Data page and the validation report, ``None`` when the check
        passes.
    """

    test_auc: float
    baseline_auc: float | None = None
    flagged: tuple[str, ...] = ()
    importance: tuple[tuple[str, float], ...] = ()
    warning: str | None = None


# --------------------------------------------------------------------------- checks


def _check_model(model: str) -> None:
    if model not in REFERENCE_MODELS:
        known = ", ".join(f"'{name}'" for name in REFERENCE_MODELS)
        raise DataError(f"Unknown reference model '{model}'. Choose one of {known}.")


def _check_fractions(fractions: Sequence[float]) -> np.ndarray:
    """Three positive shares summing to 1 (within 1e-6), for train, calibration and test."""
    values = np.asarray(fractions, dtype=float)
    if values.shape != (3,) or not np.all(values > 0) or abs(values.sum() - 1.0) > 1e-6:
        raise DataError(
            f"The split fractions must be three positive numbers (train, calibration, test) "
            f"that add up to 1; got {tuple(fractions)}."
        )
    return values / values.sum()


def _check_columns(
    df: pd.DataFrame, label: str, model_features: Sequence[str],
    ambiguous: dict[str, tuple[str, ...]],
) -> list[str]:
    """The model features as a list, after checking that every named column exists once.

    ``df`` is the table after :func:`~core.data.table.deduplicate_columns`; ``ambiguous`` the names
    that several differing columns shared there.
    """
    features = list(model_features)
    if not features:
        raise DataError("Choose at least one model feature for the reference model to learn from.")
    duplicated = sorted({f for f in features if features.count(f) > 1})
    if duplicated:
        raise DataError(f"Model feature '{duplicated[0]}' is listed twice; list each column once.")
    if label in features:
        raise DataError(
            f"Column '{label}' is the label and cannot also be a model feature; remove it from "
            "the model features."
        )
    names = [str(c) for c in df.columns]
    shown = ", ".join(repr(c) for c in names[:12]) + (", …" if len(names) > 12 else "")
    for column, role in [(label, "label"), *((f, "model feature") for f in features)]:
        if str(column) in ambiguous:
            raise DataError(
                f"The table has more than one column named '{column}', with different values "
                f"({role}); rename the duplicates, or choose one of "
                f"{', '.join(repr(c) for c in ambiguous[str(column)])}."
            )
        if column not in df.columns:
            raise DataError(
                f"Column '{column}' ({role}) is not in the table. Pick one of the table's "
                f"columns: {shown}."
            )
    return features


def _check_numeric_feature(series: pd.Series) -> None:
    """A numeric model feature must be finite in every row."""
    values = series.to_numpy(dtype=float, na_value=np.nan)
    missing = int(np.count_nonzero(~np.isfinite(values)))
    if missing:
        raise DataError(
            f"Numeric model feature '{series.name}' has {missing:,} missing or infinite "
            f"value{'s' if missing != 1 else ''}. Impute the missing values (for example with "
            "the column's median) or drop those rows, or leave the column out of the model "
            "features."
        )


def _check_text_feature(series: pd.Series) -> None:
    """A text column whose values are mostly numbers is a numeric column with typos in it.

    If at least 90% of its non-missing values, but not all, parse as numbers, the others
    (``'n/a'``, ``'12,5'``) are almost surely mistakes; one-hot encoding every number as its
    own category would hide them, so this raises instead.
    """
    present = series.dropna()
    if present.empty or pd.api.types.is_bool_dtype(series):
        return
    parsed = pd.to_numeric(present.astype(str).str.strip(), errors="coerce")
    text = parsed.isna().to_numpy()
    if 0 < text.sum() <= 0.1 * len(present):
        example = present[text].iloc[0]
        raise DataError(
            f"Model feature '{series.name}' holds numbers except in {int(text.sum()):,} "
            f"row{'s' if text.sum() != 1 else ''} with text such as '{example}'. Correct "
            "those values (a decimal comma must become a decimal point) or clear them and "
            "impute, so the column can be used as a number."
        )


# --------------------------------------------------------------------------- labels


def _class_name(value: object) -> str:
    """One label value written the way :mod:`core.data` writes it."""
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        return str(int(number)) if number == np.round(number) else repr(number)
    return str(value).strip()


def _encode_labels(series: pd.Series) -> tuple[np.ndarray, tuple[str, ...]]:
    """Labels → (class index per row, class names); raises for missing values or one class.

    Numeric and boolean labels are ordered by value, text labels alphabetically.
    """
    missing = int(series.isna().sum())
    if missing:
        raise DataError(
            f"Label column '{series.name}' is empty in {missing:,} row"
            f"{'s' if missing != 1 else ''}. Remove those rows or fill in their labels."
        )
    if pd.api.types.is_bool_dtype(series):
        values = series.to_numpy(dtype=bool)
    elif pd.api.types.is_numeric_dtype(series):
        values = series.to_numpy(dtype=float)
    else:
        values = None
    if values is not None:
        uniques = np.unique(values)
        names = tuple(_class_name(v) for v in uniques)
        index = np.searchsorted(uniques, values)
    else:
        text = np.array([_class_name(v) for v in series.to_numpy(dtype=object)], dtype=object)
        names = tuple(sorted(set(text)))
        lookup = {name: i for i, name in enumerate(names)}
        index = np.array([lookup[v] for v in text])
    if len(names) < 2:
        raise DataError(
            f"Label column '{series.name}' holds only one class ('{names[0]}'). A model cannot "
            "be trained without at least two classes; load data that contains both outcomes."
        )
    return index.astype(np.int64), names


def _check_class_sizes(label: str, y: np.ndarray, classes: tuple[str, ...]) -> None:
    counts = np.bincount(y, minlength=len(classes))
    small = [(c, int(k)) for c, k in zip(classes, counts, strict=True) if k < MIN_CLASS_ROWS]
    if small:
        listed = ", ".join(f"'{c}' ({k} row{'s' if k != 1 else ''})" for c, k in small)
        raise DataError(
            f"Label column '{label}' has classes with fewer than {MIN_CLASS_ROWS} rows: "
            f"{listed}. Each class needs a row in train, calibration and test for a "
            "stratified split; merge rare classes or remove their rows."
        )


# --------------------------------------------------------------------------- split


def _allocate(count: int, fractions: np.ndarray, deficit: np.ndarray) -> np.ndarray:
    """Split ``count`` rows into len(fractions) parts by largest remainder, each ≥ 1 if possible.

    Sizes are ``floor(count·f)`` plus one for the parts with the largest fractional remainders;
    ties go to the part furthest behind its overall target (``deficit``), so that the totals
    over all classes also come out as even as possible. An empty part then takes a row from
    the largest part.
    """
    raw = count * fractions
    sizes = np.floor(raw + 1e-9).astype(np.int64)
    order = np.lexsort((-deficit, -np.round(raw - sizes, 9)))
    sizes[order[: count - int(sizes.sum())]] += 1
    for part in range(sizes.size):
        if sizes[part] == 0 and count >= sizes.size:
            sizes[int(np.argmax(sizes))] -= 1
            sizes[part] += 1
    return sizes


def stratified_split(y: np.ndarray, fractions: Sequence[float], seed: int = 0) -> np.ndarray:
    """Assign each row to ``train`` / ``calibration`` / ``test``, stratified by class.

    Within every class the rows are shuffled (``numpy.random.default_rng(seed)``, classes in
    index order) and cut into parts of sizes given by :func:`_allocate`, so each part's class
    proportions match the whole table's to within one row per class.
    """
    shares = _check_fractions(fractions)
    y = np.asarray(y)
    rng = np.random.default_rng(seed)
    parts = np.empty(y.shape[0], dtype=object)
    allocated = np.zeros(len(SPLIT_PARTS), dtype=np.int64)
    for cls in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == cls))
        deficit = shares * (allocated.sum() + rows.size) - allocated - np.floor(shares * rows.size)
        sizes = _allocate(rows.size, shares, deficit)
        allocated += sizes
        for name, chunk in zip(SPLIT_PARTS, np.split(rows, np.cumsum(sizes)[:-1]), strict=True):
            parts[chunk] = name
    return parts


# --------------------------------------------------------------------------- model


def _model_inputs(df: pd.DataFrame, numeric: list[str], categorical: list[str]) -> pd.DataFrame:
    """The feature columns as the estimator sees them: float numbers, categories as text."""
    inputs = {c: df[c].to_numpy(dtype=float, na_value=np.nan) for c in numeric}
    for column in categorical:
        series = df[column]
        text = series.astype(object).where(series.notna(), MISSING_LEVEL)
        inputs[column] = np.array([str(v) for v in text], dtype=object)
    return pd.DataFrame(inputs, index=pd.RangeIndex(len(df)))[numeric + categorical]


def _make_estimator(model: str, numeric: list[str], categorical: list[str], seed: int) -> Pipeline:
    """The pipeline: one-hot categoricals (unseen levels ignored), then the classifier.

    Numbers are standardised for the logistic regression and passed through for the tree
    models, which do not need it.
    """
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


# --------------------------------------------------------------------------- result


def _probability_columns(classes: tuple[str, ...]) -> list[str]:
    """``p_<class>`` per class; binary problems keep only the positive (second) class."""
    kept = classes[1:] if len(classes) == 2 else classes
    return [f"p_{c}" for c in kept]


def _replaced_columns(
    df: pd.DataFrame, new_columns: list[str], label: str, features: list[str]
) -> list[str]:
    """Existing columns the output will overwrite; an error if one is the label or a feature."""
    clashes = [c for c in new_columns if c in df.columns]
    for column in clashes:
        if column == label or column in features:
            raise DataError(
                f"Column '{column}' is needed for the reference model's output but is "
                f"{'the label' if column == label else 'a model feature'}; rename that column."
            )
    return clashes


def _notes(
    model: str, split: np.ndarray, label: str, classes: tuple[str, ...],
    numeric: list[str], categorical: list[str], replaced: list[str], seed: int,
    missing_levels: list[str],
) -> tuple[str, ...]:
    """Sentences for the validation report: sizes, split, features, output columns."""
    counts = {part: int(np.count_nonzero(split == part)) for part in SPLIT_PARTS}
    audited = counts["calibration"] + counts["test"]
    notes = [
        f"Trained {_MODEL_PHRASES[model]} on {counts['train']:,} rows; {audited:,} rows "
        f"(calibration {counts['calibration']:,}, test {counts['test']:,}) carry its "
        "predictions.",
        f"The split is stratified by '{label}' and reproducible with seed {seed}; the training "
        "rows are not part of the audit table.",
    ]
    kinds = []
    if numeric:
        scaled = ", standardised" if model == "logistic" else ""
        kinds.append(f"{len(numeric)} numeric ({', '.join(numeric)}{scaled})")
    if categorical:
        kinds.append(f"{len(categorical)} categorical, one-hot encoded ({', '.join(categorical)})")
    notes.append(f"Model features: {'; '.join(kinds)}.")
    if missing_levels:
        notes.append(
            f"Missing values of {', '.join(repr(c) for c in missing_levels)} were treated as "
            f"their own category '{MISSING_LEVEL}'."
        )
    columns = _probability_columns(classes)
    if len(classes) == 2:
        notes.append(
            f"Column '{columns[0]}' holds the predicted probability that '{label}' is "
            f"'{classes[1]}' (the positive class; the other class is '{classes[0]}')."
        )
    else:
        notes.append(
            f"Columns {', '.join(repr(c) for c in columns)} hold the predicted probabilities "
            f"of the {len(classes)} classes of '{label}'."
        )
    if replaced:
        notes.append(
            f"The table's existing column{'s' if len(replaced) > 1 else ''} "
            f"{', '.join(repr(c) for c in replaced)} {'were' if len(replaced) > 1 else 'was'} "
            "replaced by the reference model's output."
        )
    return tuple(notes)


def _check_label(df: pd.DataFrame, label: str) -> None:
    if label not in df.columns:
        names = [str(c) for c in df.columns]
        shown = ", ".join(repr(c) for c in names[:12]) + (", …" if len(names) > 12 else "")
        raise DataError(f"Column '{label}' (label) is not in the table. Pick one of the "
                        f"table's columns: {shown}.")


def default_model_features(
    df: pd.DataFrame,
    label: str,
    fractions: Sequence[float] = (1 / 3, 1 / 3, 1 / 3),
    seed: int = 0,
) -> FeatureScreen:
    """The model features :func:`train_reference_model` proposes for ``label``, and why each
    other column is left out (:func:`core.data.leakage.screen_features`).

    The leakage statistics are computed on the training rows of the same stratified split
    (``fractions``, ``seed``) the model would be trained on. A column the app would map to
    another role (a split column, another model's probabilities, ensemble members) is left
    out too. A label that cannot be trained on (missing values, one class) raises the
    DataError :func:`train_reference_model` would.

    Parameters
    ----------
    df
        the raw table (not modified; repeated names are made unique as for training).
    label
        the outcome column.
    fractions
        shares of train, calibration and test rows.
    seed
        seeds the split.
    """
    deduplicated = deduplicate_columns(df)
    frame = deduplicated.frame
    _check_label(frame, label)
    y, classes = _encode_labels(frame[label])
    train = stratified_split(y, _check_fractions(fractions), seed) == "train"
    guess = guess_columns(frame)
    roles = {guess.split: "split", **{c: "probability" for c in guess.probs},
             **{c: "probability" for c in guess.members}}
    roles.pop(None, None)
    roles.pop(label, None)
    screen = screen_features(frame, label, y, train,
                             columns=[c for c in frame.columns if c not in roles],
                             classes=classes, seed=seed)
    extra = tuple(LeftOut(c, "probability" if role == "probability" else "split", (
        f"'{c}' holds a model's predicted probabilities; a reference model should not learn "
        "from another model's output." if role == "probability" else
        f"'{c}' assigns rows to train / calibration / test parts; it describes a split, not "
        "the case.")) for c, role in roles.items())
    return replace(screen, left_out=screen.left_out + extra)


def train_reference_model(
    df: pd.DataFrame,
    label: str,
    model_features: Sequence[str] | None = None,
    model: str = "random_forest",
    fractions: Sequence[float] = (1 / 3, 1 / 3, 1 / 3),
    seed: int = 0,
) -> ReferenceModelResult:
    """Train a reference model on a stratified train part and predict the other rows.

    Parameters
    ----------
    df
        the raw table (not modified).
    label
        the outcome column (two or more classes, no missing values).
    model_features
        the columns the model learns from; text, categorical and boolean
        columns are one-hot encoded, numeric ones must have no missing values. ``None``:
        :func:`default_model_features` (leaks, identifiers and dates left out). Chosen
        columns the leakage screen would leave out are used, and named in ``warnings``.
    model
        a key of :data:`REFERENCE_MODELS` — ``"logistic"`` (standardised numbers,
        L2-penalised logistic regression, multinomial for several classes),
        ``"random_forest"`` (300 trees, leaves of at least 5 rows, which keeps the
        probabilities from being extreme), ``"random_forest_default"`` (scikit-learn's
        defaults: 100 trees grown until their leaves are pure — the configuration of the
        I-trustworthy COMPAS audit, whose overfit forest is miscalibrated) or
        ``"gradient_boosting"`` (scikit-learn's HistGradientBoostingClassifier).
    fractions
        shares of train, calibration and test rows.
    seed
        seeds the split and the model.

    Raises
    ------
    DataError
        a sentence naming the column at fault and the fix.
    """
    _check_model(model)
    shares = _check_fractions(fractions)
    if model_features is None:
        model_features = default_model_features(df, label, shares, seed).kept
        if not model_features:
            raise DataError(f"No column of the table can be proposed as a model feature for "
                            f"'{label}'; choose the model features yourself.")
    deduplicated = deduplicate_columns(df)
    features = _check_columns(deduplicated.frame, label, model_features, deduplicated.ambiguous)
    df = deduplicated.frame
    y, classes = _encode_labels(df[label])
    if len(df) < MIN_ROWS:
        raise DataError(
            f"The table has {len(df)} rows; training a reference model and auditing it needs "
            f"at least {MIN_ROWS}. Load more data."
        )
    _check_class_sizes(label, y, classes)
    numeric = [c for c in features if is_numeric_feature(df[c])]
    categorical = [c for c in features if c not in numeric]
    for column in numeric:
        _check_numeric_feature(df[column])
    for column in categorical:
        _check_text_feature(df[column])
    prob_columns = _probability_columns(classes)
    replaced = _replaced_columns(df, [*prob_columns, SPLIT_COLUMN], label, features)

    split = stratified_split(y, shares, seed)
    train = split == "train"
    screen = screen_features(df, label, y, train, columns=features, classes=classes, seed=seed)
    inputs = _model_inputs(df, numeric, categorical)
    estimator = _fit(model, inputs, y, train, numeric, categorical, seed)
    # Every class has a training row (stratified split, ≥ 3 rows per class), so the columns
    # of predict_proba are the classes 0..m-1 in order.
    probs = estimator.predict_proba(inputs[~train])
    check = check_model(model, inputs, y, split, numeric, categorical, seed, probs,
                        tuple(item.column for item in screen.flagged()), label, screen.auc)

    frame = df.iloc[np.flatnonzero(~train)].reset_index(drop=True).drop(columns=replaced)
    kept = probs[:, 1:] if len(classes) == 2 else probs
    for j, column in enumerate(prob_columns):
        frame[column] = kept[:, j]
    frame[SPLIT_COLUMN] = split[~train]
    mapping = ColumnMapping(
        label=label, probs=tuple(prob_columns), split=SPLIT_COLUMN,
        positive=classes[1] if len(classes) == 2 else None,
    )
    missing_levels = [c for c in categorical if df[c].isna().any()]
    notes = deduplicated.notes + _notes(
        model, split, label, classes, numeric, categorical, replaced, seed, missing_levels
    ) + _leakage_note(screen)
    warnings = leakage_warnings(screen, features) + ((check.warning,) if check.warning else ())
    return ReferenceModelResult(
        frame=frame, mapping=mapping, n_train=int(train.sum()), model=model, classes=classes,
        notes=notes, warnings=warnings, features=tuple(features), check=check,
    )


def _fit(model: str, inputs: pd.DataFrame, y: np.ndarray, train: np.ndarray,
         numeric: list[str], categorical: list[str], seed: int) -> Pipeline:
    estimator = _make_estimator(model, numeric, categorical, seed)
    estimator.fit(inputs.loc[train, numeric + categorical], y[train])
    return estimator


def _auc(y: np.ndarray, probs: np.ndarray) -> float:
    """AUC of predicted class probabilities: binary, of the positive class; more classes,
    Hand & Till's M (scikit-learn's one-vs-one average). ``nan`` when a class is absent."""
    m = probs.shape[1]
    if np.unique(y).size < m:
        return float("nan")
    if m == 2:
        return float(roc_auc_score(y, probs[:, 1]))
    return float(roc_auc_score(y, probs, multi_class="ovo", labels=np.arange(m)))


def check_model(model: str, inputs: pd.DataFrame, y: np.ndarray, split: np.ndarray,
                numeric: list[str], categorical: list[str], seed: int, probs: np.ndarray,
                flagged: tuple[str, ...], label: str,
                strength: dict[str, float] | None = None) -> ModelCheck:
    """The whole-model check of :class:`ModelCheck` for a model already fitted.

    Parameters
    ----------
    model : str
        A key of :data:`REFERENCE_MODELS`.
    inputs : pandas.DataFrame
        The model features of every row, as the estimator sees them.
    y : numpy.ndarray
        Integer labels of every row.
    split : numpy.ndarray
        ``train`` / ``calibration`` / ``test`` of every row.
    numeric, categorical : list of str
        The model features by kind.
    seed : int
        Seeds the refits as the model.
    probs : numpy.ndarray
        The fitted model's class probabilities on the rows outside ``train``, in order.
    flagged : tuple of str
        The chosen model features the leakage screen flags.
    label : str
        The label's name, for the sentence.
    strength : dict, optional
        Single-feature AUCs: after the flagged columns, the strongest are dropped first.

    Returns
    -------
    ModelCheck
    """
    train = split == "train"
    held = split[~train]
    test_auc = _auc(y[~train][held == "test"], probs[held == "test"])
    flagged = tuple(c for c in numeric + categorical if c in flagged)
    honest = ([c for c in numeric if c not in flagged],
              [c for c in categorical if c not in flagged])
    baseline = None
    if flagged and (honest[0] or honest[1]):
        refit = _fit(model, inputs, y, train, *honest, seed)
        test = split == "test"
        baseline = _auc(y[test], refit.predict_proba(inputs.loc[test, honest[0] + honest[1]]))
    high = np.isfinite(test_auc) and test_auc >= HIGH_AUC
    gap = baseline is not None and np.isfinite(baseline) and test_auc - baseline >= AUC_MARGIN
    if not (high or gap):
        return ModelCheck(test_auc, baseline, flagged)
    importance = _drop_column_importance(model, inputs, y, split, numeric, categorical, seed,
                                         probs[held == "calibration"], flagged, strength or {})
    named = [(c, drop) for c, drop in importance[:3] if drop > 0]
    if gap:
        sentence = (f"The reference model reaches a test AUC of {test_auc:.3f}, against "
                    f"{baseline:.3f} for the same model without "
                    f"{', '.join(repr(c) for c in flagged)}, which the leakage screen flags: "
                    "those columns carry much of the outcome.")
    else:
        sentence = (f"The reference model reaches a test AUC of {test_auc:.3f} on '{label}': "
                    "higher than real prediction problems of this kind usually allow, which "
                    "often means the model features hold the outcome in another form.")
    if named:
        sentence += (f" Removing '{named[0][0]}' lowers the AUC on the calibration rows most "
                     f"(by {named[0][1]:.3f})" + "".join(f", then '{c}' (by {drop:.3f})"
                                                         for c, drop in named[1:]) + ".")
    sentence += (" Check that every model feature is known when the prediction is made: an "
                 "audit of a model that reads the outcome looks better than the truth.")
    return ModelCheck(test_auc, baseline, flagged, tuple(importance), sentence)


def _drop_column_importance(model: str, inputs: pd.DataFrame, y: np.ndarray,
                            split: np.ndarray, numeric: list[str], categorical: list[str],
                            seed: int, calibration_probs: np.ndarray,
                            flagged: tuple[str, ...],
                            strength: dict[str, float]) -> list[tuple[str, float]]:
    """AUC on the calibration rows of the fitted model minus that of the model refitted
    without each column, largest first; at most :data:`MAX_DROPPED` columns (the flagged
    ones, then the others by their single-feature AUC), none when only one column is used."""
    columns = numeric + categorical
    if len(columns) < 2:
        return []
    calibration = split == "calibration"
    full = _auc(y[calibration], calibration_probs)
    others = sorted((c for c in columns if c not in flagged),
                    key=lambda c: -np.nan_to_num(strength.get(c, 0.5), nan=0.5))
    candidates = [*flagged, *others][:MAX_DROPPED]
    drops = []
    for column in candidates:
        kept = ([c for c in numeric if c != column], [c for c in categorical if c != column])
        refit = _fit(model, inputs, y, split == "train", *kept, seed)
        without = _auc(y[calibration],
                       refit.predict_proba(inputs.loc[calibration, kept[0] + kept[1]]))
        drops.append((column, float(full - without)))
    return sorted(drops, key=lambda item: -item[1])


def _leakage_note(screen: FeatureScreen) -> tuple[str, ...]:
    """The strongest single model feature, when the screen flags none of them (a reassurance
    beside a flagged column would mislead: issue 29)."""
    if screen.flagged() or not screen.auc:
        return ()
    column = max(screen.auc, key=lambda c: screen.auc[c])
    return (f"No model feature separates '{screen.label}' by itself: the strongest, "
            f"'{column}', has a single-feature AUC of {screen.auc[column]:.3f} on the training "
            "rows.",)
