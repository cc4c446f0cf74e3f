"""Reference-model workflow: train a model on part of a raw table, audit its predictions.

When a table has outcomes and model features but no predictions, the auditor can train a
reference model, as the COMPAS audit of the I-trustworthy paper does (Vashistha & Farahi,
Fig. 4): the rows are split, stratified by the label, into train / calibration / test parts
(by default a third each); a model is fitted on the train part only, and the calibration and
test rows, which it never saw, receive its predicted class probabilities. The result is a
new table plus a :class:`~core.data.mapping.ColumnMapping` ready for
:meth:`~core.data.audit_data.AuditData.from_mapping`; the caller adds audit features and groups.

The parts: :mod:`core.data.reference_split` (labels, the stratified split),
:mod:`core.data.reference_estimators` (the models and their pipelines) and
:mod:`core.data.outcome_check` (whether the trained model reads the outcome as a whole).

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

from core.data.column_guess import guess_columns
from core.data.leakage import FeatureScreen, LeftOut, leakage_warnings, screen_features
from core.data.mapping import ColumnMapping
from core.data.outcome_check import ModelCheck, check_model
from core.data.problems import DataError
from core.data.reference_estimators import (
    MODEL_PHRASES,
    check_model_name,
    fit_model,
    model_inputs,
)
from core.data.reference_split import (
    SPLIT_COLUMN,
    SPLIT_PARTS,
    check_class_sizes,
    check_fractions,
    encode_labels,
    stratified_split,
)
from core.data.table import MISSING_LEVEL, deduplicate_columns, is_numeric_feature

#: Fewest rows the workflow accepts (a third of them is about 20 training rows).
MIN_ROWS = 60


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


# --------------------------------------------------------------------------- checks


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
        f"Trained {MODEL_PHRASES[model]} on {counts['train']:,} rows; {audited:,} rows "
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
    y, classes = encode_labels(frame[label])
    train = stratified_split(y, check_fractions(fractions), seed) == "train"
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
    check_model_name(model)
    shares = check_fractions(fractions)
    if model_features is None:
        model_features = default_model_features(df, label, shares, seed).kept
        if not model_features:
            raise DataError(f"No column of the table can be proposed as a model feature for "
                            f"'{label}'; choose the model features yourself.")
    deduplicated = deduplicate_columns(df)
    features = _check_columns(deduplicated.frame, label, model_features, deduplicated.ambiguous)
    df = deduplicated.frame
    y, classes = encode_labels(df[label])
    if len(df) < MIN_ROWS:
        raise DataError(
            f"The table has {len(df)} rows; training a reference model and auditing it needs "
            f"at least {MIN_ROWS}. Load more data."
        )
    check_class_sizes(label, y, classes)
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
    inputs = model_inputs(df, numeric, categorical)
    estimator = fit_model(model, inputs, y, train, numeric, categorical, seed)
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


def _leakage_note(screen: FeatureScreen) -> tuple[str, ...]:
    """The strongest single model feature, when the screen flags none of them (a reassurance
    beside a flagged column would mislead: issue 29)."""
    if screen.flagged() or not screen.auc:
        return ()
    column = max(screen.auc, key=lambda c: screen.auc[c])
    return (f"No model feature separates '{screen.label}' by itself: the strongest, "
            f"'{column}', has a single-feature AUC of {screen.auc[column]:.3f} on the training "
            "rows.",)
