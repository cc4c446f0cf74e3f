"""The validated audit container: labels, predicted probabilities, audit features, groups.

Every computation in ``core`` takes an :class:`AuditData`. It is built once, at the boundary,
from a user's table plus a :class:`ColumnMapping`, by :meth:`AuditData.from_frame`; all checks
happen there, and every problem raises :class:`DataError` with a sentence that names the
column, the number of rows affected (with the first few row numbers, counting the first data
row as 1) and the fix. Small, harmless repairs (probability overshoots of at most 1e-6,
rows summing to 1 within 1e-3) are made and reported in :attr:`AuditData.report`, never
silently. The caller's DataFrame is never modified.

Conventions (DESIGN.md): ``probs`` is ``(n, m)`` with rows on the simplex, ``y`` holds integer
labels ``0..m-1`` indexing the columns of ``probs``; a binary problem has ``m = 2`` and its
positive class is column 1.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace

import numpy as np
import pandas as pd

from core._validation import probability_matrix, sigmoid, softmax

#: Largest overshoot of [0, 1] that is clipped (and reported) instead of rejected.
CLIP_TOLERANCE = 1e-6
#: Largest deviation of a row sum from 1 that is renormalised (and reported).
SUM_TOLERANCE = 1e-3
#: Row sums closer to 1 than this are floating-point noise; they are renormalised unreported.
SUM_NOISE = 1e-6
#: Fewest rows any calibration statistic is computed on.
MIN_ROWS = 20
#: Most distinct values a categorical feature or group column may have.
MAX_LEVELS = 50
#: Label value spellings recognised as the positive class of a binary problem.
POSITIVE_SPELLINGS = ("1", "1.0", "true", "yes", "y", "positive", "pos")
#: Recognised spellings of split values.
SPLIT_SPELLINGS = {
    "train": "train", "training": "train", "fit": "train",
    "calibration": "calibration", "calib": "calibration", "cal": "calibration",
    "calibrate": "calibration", "validation": "calibration", "valid": "calibration",
    "val": "calibration",
    "test": "test", "testing": "test", "holdout": "test", "eval": "test",
}
SPLITS = ("train", "calibration", "test")
#: Level given to missing values of a categorical feature or group attribute.
MISSING_LEVEL = "(missing)"


class DataError(ValueError):
    """A problem with the user's data, phrased for the person who uploaded it."""


@dataclass(frozen=True)
class ValidationNote:
    """One entry of the validation report: what was found and what was done about it."""

    level: str  # "info" or "warning"
    message: str


@dataclass(frozen=True)
class ColumnMapping:
    """Which column of a table plays which role; the keyword arguments of ``from_frame``.

    ``probs`` with one column means a binary problem and holds P(y = positive); with m
    columns it holds one probability (or logit) per class, in class order.
    ``members`` lists ensemble members, each as one column (binary) or m columns.
    """

    label: str
    probs: tuple[str, ...]
    logits: bool = False
    positive: str | None = None
    features: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    split: str | None = None
    members: tuple[tuple[str, ...], ...] = ()

    def as_kwargs(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


# --------------------------------------------------------------------------- row wording


def describe_rows(mask: np.ndarray, limit: int = 5) -> str:
    """``'3 rows (rows 4, 18, 43)'`` for a boolean mask; rows are counted from 1."""
    positions = np.flatnonzero(mask) + 1
    count = positions.size
    shown = ", ".join(str(p) for p in positions[:limit])
    more = ", …" if count > limit else ""
    noun = "row" if count == 1 else "rows"
    return f"{count:,} {noun} ({noun} {shown}{more})"


def _quote_list(values: Sequence, limit: int = 8) -> str:
    items = [f"'{v}'" for v in list(values)[:limit]]
    if len(values) > limit:
        items.append(f"… ({len(values) - limit} more)")
    return ", ".join(items)


# --------------------------------------------------------------------------- table checks


@dataclass(frozen=True, eq=False)
class DeduplicatedTable:
    """A table whose column names are unique, and what was done to make them so.

    Attributes:
        frame: the table; the caller's frame itself when no name repeats, else a new frame.
        notes: one sentence per repeated name, for the person who loaded the table.
        ambiguous: each repeated name whose columns hold different values → the names its
            columns were kept under (``'sex (column 3)'``, ``'sex (column 4)'``).
    """

    frame: pd.DataFrame
    notes: tuple[str, ...] = ()
    ambiguous: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _same_values(a: pd.Series, b: pd.Series) -> bool:
    """Equal in every row, missing where the other is missing; numbers compare by value."""
    if a.equals(b):
        return True
    numeric = [pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
               for s in (a, b)]
    if all(numeric):
        return bool(np.array_equal(a.to_numpy(dtype=float, na_value=np.nan),
                                   b.to_numpy(dtype=float, na_value=np.nan), equal_nan=True))
    return False


def _positions(positions: Sequence[int]) -> str:
    """``'columns 3 and 40'`` for 0-based positions (shown from 1)."""
    shown = [str(p + 1) for p in positions]
    return "columns " + (", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1
                         else shown[0])


def deduplicate_columns(df: pd.DataFrame) -> DeduplicatedTable:
    """Make repeated column names unique without losing or guessing at data.

    Real tables repeat headers: ProPublica's ``compas-scores-two-years.csv`` has two columns
    named ``decile_score`` and two named ``priors_count``. For each repeated name the columns
    are compared value by value (:func:`_same_values`):

    * all hold the same values: the first is kept under the name, the copies are dropped;
    * they differ: every distinct version is kept, named ``'<name> (column k)'`` after its
      first position k in the table (counted from 1), and the bare name is listed in
      :attr:`DeduplicatedTable.ambiguous`, so that mapping it to a role can be refused
      (:meth:`AuditData.from_mapping` does) instead of silently taking one of them.

    Each case adds a sentence to :attr:`DeduplicatedTable.notes`. The caller's frame is not
    modified.
    """
    names = list(df.columns)
    if not pd.Index(names).duplicated().any():
        return DeduplicatedTable(df)
    keep: list[int] = []
    new_names = list(names)
    notes: list[str] = []
    ambiguous: dict[str, tuple[str, ...]] = {}
    taken = {str(n) for n in names}
    seen: set = set()
    for position, name in enumerate(names):
        if name in seen:
            continue
        seen.add(name)
        positions = [i for i, other in enumerate(names) if other == name]
        if len(positions) == 1:
            keep.append(position)
            continue
        versions: list[int] = []  # first position of each distinct version
        for i in positions:
            if not any(_same_values(df.iloc[:, i], df.iloc[:, v]) for v in versions):
                versions.append(i)
        where = _positions(positions)
        if len(versions) == 1:
            keep.append(position)
            notes.append(
                f"The table has more than one column named '{name}' ({where}), with the same "
                f"values in every row; column {position + 1} was kept."
            )
            continue
        kept_as = []
        for i in versions:
            renamed = f"{name} (column {i + 1})"
            while renamed in taken:
                renamed += "'"
            taken.add(renamed)
            new_names[i] = renamed
            kept_as.append(renamed)
            keep.append(i)
        ambiguous[str(name)] = tuple(kept_as)
        copies = len(positions) - len(versions)
        dropped = f" {copies} exact {'copy was' if copies == 1 else 'copies were'} dropped." \
            if copies else ""
        notes.append(
            f"The table has more than one column named '{name}' ({where}), with different "
            f"values; they were kept as {_quote_list(kept_as)}.{dropped} Map the one you mean."
        )
    keep.sort()
    frame = df.iloc[:, keep].copy()
    frame.columns = [new_names[i] for i in keep]
    return DeduplicatedTable(frame, tuple(notes), ambiguous)


def _require_column(df: pd.DataFrame, column: str, role: str) -> pd.Series:
    if column in df.columns:
        return df[column]
    close = difflib.get_close_matches(str(column), [str(c) for c in df.columns], n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    raise DataError(
        f"Column '{column}' ({role}) is not in the table.{hint} "
        f"The table has the columns {_quote_list(list(df.columns))}."
    )


def _numeric_values(series: pd.Series, role: str) -> np.ndarray:
    """The column as finite float64, or a DataError naming the non-numeric or missing rows."""
    name = series.name
    if pd.api.types.is_bool_dtype(series):
        series = series.astype(float)
    numbers = pd.to_numeric(series, errors="coerce")
    text = numbers.isna().to_numpy() & series.notna().to_numpy()
    if text.any():
        example = series[text].iloc[0]
        raise DataError(
            f"Column '{name}' ({role}) must hold numbers, but {describe_rows(text)} hold text "
            f"such as '{example}'. Fix or remove those values (a decimal comma must become a "
            "decimal point), then load the table again."
        )
    values = numbers.to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        raise DataError(
            f"Column '{name}' ({role}) has missing or infinite values in {describe_rows(bad)}. "
            "Remove or fill those rows, then load the table again."
        )
    return values


def _probability_matrix(
    df: pd.DataFrame, columns: Sequence[str], logits: bool, role: str, notes: list
) -> np.ndarray:
    """Columns → an (n, m) row-stochastic matrix; one column means binary P(y=1).

    Logits are mapped by the sigmoid (one column) or softmax (m columns). Probabilities outside
    [0, 1] by at most ``CLIP_TOLERANCE`` are clipped, rows whose sums differ from 1 by at most
    ``SUM_TOLERANCE`` are renormalised; both are reported in ``notes``. Anything else raises.
    """
    values = np.column_stack([_numeric_values(_require_column(df, c, role), role) for c in columns])
    names = ", ".join(f"'{c}'" for c in columns)
    if logits:
        if values.shape[1] == 1:
            return probability_matrix(sigmoid(values[:, 0]))
        return softmax(values)

    outside = (values < -CLIP_TOLERANCE) | (values > 1.0 + CLIP_TOLERANCE)
    if outside.any():
        col = int(np.flatnonzero(outside.any(axis=0))[0])
        rows = outside[:, col]
        raise DataError(
            f"Column '{columns[col]}' ({role}) must hold probabilities between 0 and 1, but "
            f"{describe_rows(rows)} lie outside (values from {values[:, col].min():.4g} to "
            f"{values[:, col].max():.4g}). If these are logits or scores, mark the columns as "
            "logits; otherwise correct those rows."
        )
    overshoot = (values < 0.0) | (values > 1.0)
    if overshoot.any():
        notes.append(ValidationNote(
            "warning",
            f"{describe_rows(overshoot.any(axis=1))} in {names} lay outside [0, 1] by at most "
            f"{CLIP_TOLERANCE:g} (rounding); they were clipped to [0, 1].",
        ))
        values = np.clip(values, 0.0, 1.0)

    if values.shape[1] == 1:
        return np.column_stack([1.0 - values[:, 0], values[:, 0]])

    sums = values.sum(axis=1)
    deviation = np.abs(sums - 1.0)
    far = deviation > SUM_TOLERANCE
    if far.any():
        first = int(np.flatnonzero(far)[0])
        raise DataError(
            f"The probabilities in {names} ({role}) must sum to 1 in every row, but "
            f"{describe_rows(far)} differ from 1 by more than {SUM_TOLERANCE:g} (row {first + 1} "
            f"sums to {sums[first]:.4g}). Add the missing class column, or mark the columns as "
            "logits if they are unnormalised scores."
        )
    if (deviation > SUM_NOISE).any():
        notes.append(ValidationNote(
            "warning",
            f"{describe_rows(deviation > SUM_NOISE)} of {names} summed to within "
            f"{SUM_TOLERANCE:g} of 1 but not exactly; they were renormalised to sum to 1.",
        ))
    if (sums <= 0).any():
        raise DataError(f"Some rows of {names} are all zero ({describe_rows(sums <= 0)}).")
    return values / sums[:, None]


# --------------------------------------------------------------------------- labels


def _label_strings(series: pd.Series) -> np.ndarray:
    """Labels as strings, with integral floats written as integers (1.0 → '1')."""
    if pd.api.types.is_bool_dtype(series):
        return np.where(series.to_numpy(dtype=bool), "True", "False").astype(object)
    if pd.api.types.is_numeric_dtype(series):
        values, where = np.unique(series.to_numpy(dtype=float), return_inverse=True)
        integral = bool(np.all(values == np.round(values)))
        names = [str(int(v)) if integral else repr(float(v)) for v in values]
        return np.array(names, dtype=object)[where.ravel()]
    return series.astype(str).str.strip().to_numpy(dtype=object)


def _class_names_from_columns(columns: Sequence[str]) -> list[list[str]]:
    """Candidate class names for probability columns, most literal first.

    The column names themselves; with a prefix such as ``p_``/``prob_``/``proba_`` removed;
    with the columns' common prefix removed.
    """
    candidates = [[str(c) for c in columns]]
    for prefix in ("proba_", "prob_", "probability_", "p_", "logit_", "score_", "p"):
        if all(str(c).startswith(prefix) and len(str(c)) > len(prefix) for c in columns):
            candidates.append([str(c)[len(prefix):] for c in columns])
            break
    common = len(_common_prefix([str(c) for c in columns]))
    if common > 0:
        stripped = [str(c)[common:] for c in columns]
        if all(stripped):
            candidates.append(stripped)
    return candidates


def _common_prefix(words: list[str]) -> str:
    first, last = min(words), max(words)
    i = 0
    while i < min(len(first), len(last)) and first[i] == last[i]:
        i += 1
    return first[:i]


def _binary_labels(
    labels: np.ndarray, label: str, prob_column: str, positive: str | None
) -> tuple[np.ndarray, tuple[str, str]]:
    """Binary labels (one probability column) → y in {0, 1} and (negative, positive) names."""
    values = sorted(set(labels))
    if len(values) > 2:
        raise DataError(
            f"Label column '{label}' has {len(values)} distinct values ({_quote_list(values)}) "
            f"but only one probability column ('{prob_column}') was given. A binary problem "
            "needs exactly two label values; for multiclass, map one probability column per class."
        )
    if len(values) < 2:
        raise DataError(
            f"Label column '{label}' holds only one class ('{values[0]}') in all {len(labels):,} "
            "rows. Calibration cannot be assessed without both outcomes; load data that contains "
            "both classes."
        )
    if positive is not None:
        positive = str(positive).strip()
        if positive not in values:
            raise DataError(
                f"The positive class '{positive}' does not occur in label column '{label}', "
                f"whose values are {_quote_list(values)}. Choose one of those."
            )
    else:
        stems = {names[0].lower() for names in _class_names_from_columns([prob_column])}
        by_name = [v for v in values if v.lower() in stems]
        spelled = [v for v in values if v.lower() in POSITIVE_SPELLINGS]
        if set(values) == {"-1", "1"}:
            positive = "1"
        elif len(by_name) == 1:
            positive = by_name[0]
        elif len(spelled) == 1:
            positive = spelled[0]
        else:
            raise DataError(
                f"Label column '{label}' has the values {_quote_list(values)}; say which one is "
                f"the positive class, the event whose probability column '{prob_column}' holds."
            )
    negative = values[0] if values[1] == positive else values[1]
    return (labels == positive).astype(np.int64), (negative, positive)


def _multiclass_labels(
    labels: np.ndarray, label: str, columns: Sequence[str]
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Labels → indices of ``columns``: by class name, or by position for labels 0..m-1."""
    present = set(labels)
    for names in _class_names_from_columns(columns):
        if present <= set(names) and len(set(names)) == len(names):
            index = {name: i for i, name in enumerate(names)}
            return np.array([index[v] for v in labels], dtype=np.int64), tuple(names)
        lowered = [n.lower() for n in names]
        if {v.lower() for v in present} <= set(lowered) and len(set(lowered)) == len(lowered):
            index = {name: i for i, name in enumerate(lowered)}
            y = np.array([index[v.lower()] for v in labels], dtype=np.int64)
            return y, tuple(names)
    positions = {str(i) for i in range(len(columns))}
    if present <= positions:
        return labels.astype(np.int64), tuple(_class_names_from_columns(columns)[-1])
    unmatched = sorted(present - set(_class_names_from_columns(columns)[-1]))
    raise DataError(
        f"Label column '{label}' has values {_quote_list(unmatched)} that match none of the "
        f"probability columns ({_quote_list(list(columns))}). Name each probability column "
        f"after its class (for example 'p_{unmatched[0]}'), or use the labels 0 to "
        f"{len(columns) - 1} in the order of the probability columns."
    )


# --------------------------------------------------------------------------- features, groups


def _categorical_levels(series: pd.Series, role: str, notes: list) -> pd.Series:
    """A categorical column as strings; missing values become the level ``(missing)``."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    missing = codes < 0
    # one str() per distinct value, not per row (10⁶-row uploads)
    names = np.array([str(u) for u in uniques] + [MISSING_LEVEL], dtype=object)
    values = pd.Series(names[codes], index=series.index, name=series.name).astype(str)
    if missing.any():
        notes.append(ValidationNote(
            "warning",
            f"Column '{series.name}' ({role}) has missing values in {describe_rows(missing)}; "
            f"they form their own level '{MISSING_LEVEL}'.",
        ))
    n_levels = values.nunique()
    if n_levels > MAX_LEVELS:
        numeric_hint = (
            " It looks numeric: use it as a numeric audit feature, or cut it into bands first."
            if pd.api.types.is_numeric_dtype(series) else ""
        )
        raise DataError(
            f"Column '{series.name}' ({role}) has {n_levels:,} distinct values; at most "
            f"{MAX_LEVELS} are allowed for a categorical column.{numeric_hint} Group rare values "
            "together or leave the column out."
        )
    return values


def is_categorical(series: pd.Series) -> bool:
    """Whether a feature column is one-hot encoded (True) or used as a number (False).

    Text, categorical and boolean columns are categorical: a boolean such as ``is_female`` is
    a two-level category (``False`` / ``True``), as a user expects. Numeric columns, 0/1
    included, stay numeric. The one rule for audit features (:class:`AuditData`) and model
    features (:mod:`core.reference_model`).
    """
    return pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series)


def _encode_features(
    df: pd.DataFrame, columns: Sequence[str], notes: list
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Audit features → (original columns, numeric encoding with one-hot categoricals)."""
    role = "audit feature"
    original = pd.DataFrame(index=pd.RangeIndex(len(df)))
    encoded: dict[str, np.ndarray] = {}
    for column in columns:
        series = _require_column(df, column, role).reset_index(drop=True)
        if is_categorical(series):
            levels = _categorical_levels(series, role, notes)
            original[column] = levels.to_numpy()
            categories = sorted(levels.unique())
            for level in categories:
                encoded[f"{column}={level}"] = (levels == level).to_numpy(dtype=float)
            notes.append(ValidationNote(
                "info",
                f"Audit feature '{column}' is categorical with {len(categories)} levels; it was "
                f"one-hot encoded into {len(categories)} columns.",
            ))
        else:
            values = _numeric_values(series, role)
            original[column] = series.to_numpy()
            encoded[str(column)] = values
            if np.ptp(values) == 0:
                notes.append(ValidationNote(
                    "warning",
                    f"Audit feature '{column}' is constant ({values[0]:g}); it cannot reveal any "
                    "local miscalibration.",
                ))
    return original, pd.DataFrame(encoded)


def _group_frame(df: pd.DataFrame, columns: Sequence[str], notes: list) -> pd.DataFrame:
    groups = pd.DataFrame(index=pd.RangeIndex(len(df)))
    for column in columns:
        series = _require_column(df, column, "group attribute").reset_index(drop=True)
        groups[column] = _categorical_levels(series, "group attribute", notes).to_numpy()
    return groups


def _split_values(df: pd.DataFrame, column: str) -> np.ndarray:
    series = _require_column(df, column, "split")
    missing = series.isna().to_numpy()
    if missing.any():
        raise DataError(
            f"Split column '{column}' is empty in {describe_rows(missing)}. Every row needs one "
            f"of {_quote_list(SPLITS)}."
        )
    spelled = series.astype(str).str.strip().str.lower()
    unknown = sorted(set(spelled) - set(SPLIT_SPELLINGS))
    if unknown:
        bad = spelled.isin(unknown).to_numpy()
        raise DataError(
            f"Split column '{column}' has values {_quote_list(unknown)} in {describe_rows(bad)}; "
            f"allowed are {_quote_list(SPLITS)} (or 'training', 'validation', 'holdout'). "
            "Rename those values."
        )
    return spelled.map(SPLIT_SPELLINGS).to_numpy(dtype=object)


# --------------------------------------------------------------------------- the container


@dataclass(frozen=True, eq=False)
class AuditData:
    """Validated audit data: what every computation in ``core`` takes.

    Attributes:
        y: ``(n,)`` integer labels ``0..m-1``.
        probs: ``(n, m)`` predicted class probabilities, rows summing to 1.
        classes: the m class names, in column order (binary: ``(negative, positive)``).
        X: ``(n, d)`` numeric audit features (categoricals one-hot encoded), unstandardised.
        feature_names: the d encoded feature names (``race=Black`` for one-hot columns).
        feature_frame: the audit features as given (categoricals as strings), for display.
        groups: group attributes as strings, one column each (may have no columns).
        split: ``(n,)`` of ``"train" | "calibration" | "test"``, or ``None``.
        members: ``(n, K, m)`` ensemble members' probabilities, or ``None``.
        report: what validation found and repaired.
    """

    y: np.ndarray
    probs: np.ndarray
    classes: tuple[str, ...]
    X: np.ndarray
    feature_names: tuple[str, ...]
    feature_frame: pd.DataFrame
    groups: pd.DataFrame
    split: np.ndarray | None = None
    members: np.ndarray | None = None
    member_names: tuple[str, ...] = ()
    report: tuple[ValidationNote, ...] = ()
    mapping: ColumnMapping | None = None
    name: str = "uploaded data"
    description: str = ""
    fingerprint: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if not self.fingerprint:
            object.__setattr__(self, "fingerprint", self._compute_fingerprint())

    # ---------------------------------------------------------------- construction

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        label: str,
        prob: str | None = None,
        probs: Sequence[str] | None = None,
        logits: bool = False,
        positive: str | None = None,
        features: Sequence[str] = (),
        groups: Sequence[str] = (),
        split: str | None = None,
        members: Sequence[Sequence[str]] | Sequence[str] = (),
        name: str = "uploaded data",
        description: str = "",
    ) -> AuditData:
        """Validate a table and build the audit container; raises :class:`DataError`.

        Give the probabilities either as ``prob="p"`` (binary, P(y = positive)) or as
        ``probs=[...]`` (one column for binary, m columns for m classes). With
        ``logits=True`` the columns are mapped through the sigmoid or softmax first.
        """
        if not isinstance(df, pd.DataFrame):
            raise DataError("Expected a table (pandas DataFrame).")
        if (prob is None) == (probs is None or len(probs) == 0):
            raise DataError("Give the probability columns either as 'prob' or as 'probs'.")
        prob_columns = (prob,) if prob is not None else tuple(probs)
        members = tuple((m,) if isinstance(m, str) else tuple(m) for m in members)
        mapping = ColumnMapping(
            label=label, probs=prob_columns, logits=logits, positive=positive,
            features=tuple(features), groups=tuple(groups), split=split, members=members,
        )
        return cls.from_mapping(df, mapping, name=name, description=description)

    @classmethod
    def from_mapping(
        cls, df: pd.DataFrame, mapping: ColumnMapping, name: str = "uploaded data",
        description: str = "",
    ) -> AuditData:
        """Like :meth:`from_frame`, with the columns given as a :class:`ColumnMapping`."""
        deduplicated = deduplicate_columns(df)
        _check_unambiguous(mapping, deduplicated.ambiguous)
        df = deduplicated.frame
        if len(df) == 0:
            raise DataError("The table has no rows. Load a file with data below the header line.")
        _check_roles_distinct(mapping)
        notes: list[ValidationNote] = [ValidationNote("info", n) for n in deduplicated.notes]

        label_series = _require_column(df, mapping.label, "label")
        missing = label_series.isna().to_numpy()
        if missing.any():
            raise DataError(
                f"Label column '{mapping.label}' is empty in {describe_rows(missing)}. Remove "
                "those rows or fill in their labels, then load the table again."
            )
        if len(df) < MIN_ROWS:
            raise DataError(
                f"The table has only {len(df)} rows; at least {MIN_ROWS} are needed to assess "
                "calibration. Load more data."
            )
        probs = _probability_matrix(df, mapping.probs, mapping.logits, "probability", notes)
        labels = _label_strings(label_series)
        if len(mapping.probs) == 1:
            y, classes = _binary_labels(labels, mapping.label, mapping.probs[0], mapping.positive)
        else:
            y, classes = _multiclass_labels(labels, mapping.label, mapping.probs)
            if mapping.positive is not None and len(classes) == 2:
                if str(mapping.positive) == classes[0]:
                    y, classes, probs = 1 - y, classes[::-1], probs[:, ::-1]
                elif str(mapping.positive) != classes[1]:
                    raise DataError(
                        f"The positive class '{mapping.positive}' is not one of the classes "
                        f"{_quote_list(classes)}."
                    )
            if np.unique(y).size < 2:
                raise DataError(
                    f"Label column '{mapping.label}' holds only one class ('{classes[y[0]]}') in "
                    f"all {len(y):,} rows. Calibration cannot be assessed from a single class; "
                    "load data that contains several classes."
                )
            absent = [c for i, c in enumerate(classes) if not np.any(y == i)]
            if absent:
                notes.append(ValidationNote(
                    "info", f"No row has the label {_quote_list(absent)}; those classes have "
                    "predicted probabilities but no observations.",
                ))

        feature_frame, encoded = _encode_features(df, mapping.features, notes)
        group_frame = _group_frame(df, mapping.groups, notes)
        split = _split_values(df, mapping.split) if mapping.split else None
        member_probs = None
        if mapping.members:
            member_probs = np.stack([
                _member_matrix(df, cols, mapping.logits, probs.shape[1], notes)
                for cols in mapping.members
            ], axis=1)
        return cls(
            y=y, probs=probs, classes=tuple(classes), X=encoded.to_numpy(dtype=float),
            feature_names=tuple(encoded.columns), feature_frame=feature_frame,
            groups=group_frame, split=split, members=member_probs,
            member_names=tuple(", ".join(m) for m in mapping.members), report=tuple(notes),
            mapping=mapping, name=name, description=description,
        )

    # ---------------------------------------------------------------- views

    @property
    def n(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.probs.shape[1])

    @property
    def is_binary(self) -> bool:
        return self.n_classes == 2

    @property
    def positive_probs(self) -> np.ndarray:
        """P(y = positive class), the binary convention ``probs`` of shape ``(n,)``."""
        if not self.is_binary:
            raise ValueError("positive_probs is defined for binary problems only.")
        return self.probs[:, 1]

    def subset(self, rows: np.ndarray) -> AuditData:
        """The rows selected by a boolean mask or an index array, as a new container."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        return replace(
            self,
            y=self.y[rows], probs=self.probs[rows], X=self.X[rows],
            feature_frame=self.feature_frame.iloc[rows].reset_index(drop=True),
            groups=self.groups.iloc[rows].reset_index(drop=True),
            split=None if self.split is None else self.split[rows],
            members=None if self.members is None else self.members[rows],
            fingerprint="",
        )

    def split_part(self, part: str) -> AuditData:
        """The rows of one split (``"calibration"`` or ``"test"``); all rows if no split."""
        if self.split is None:
            return self
        if part not in SPLITS:
            raise ValueError(f"Unknown split {part!r}; use one of {SPLITS}.")
        return self.subset(self.split == part)

    def encoded_names(self, names: Sequence[str]) -> list[str]:
        """The encoded columns of the named audit features (every one-hot column ``name=level``
        of a categorical feature), in ``feature_names`` order."""
        wanted = set(names)
        return [encoded for encoded in self.feature_names
                if encoded in wanted or encoded.split("=", 1)[0] in wanted]

    def feature_matrix(self, names: Sequence[str]) -> np.ndarray:
        """The :meth:`encoded_names` columns of ``X``; ``(n, 0)`` for no names."""
        chosen = set(self.encoded_names(names))
        return self.X[:, [i for i, name in enumerate(self.feature_names) if name in chosen]]

    def class_balance(self) -> pd.DataFrame:
        """Count and share of each class among the labels, with its mean predicted probability."""
        counts = np.bincount(self.y, minlength=self.n_classes)
        return pd.DataFrame({
            "class": list(self.classes),
            "count": counts,
            "share": counts / self.n,
            "mean predicted probability": self.probs.mean(axis=0),
        })

    def to_frame(self) -> pd.DataFrame:
        """One row per observation: label (class name), class probabilities, features, groups."""
        frame = pd.DataFrame({"label": np.asarray(self.classes, dtype=object)[self.y]})
        for j, name in enumerate(self.classes):
            frame[f"p_{name}"] = self.probs[:, j]
        frame = pd.concat([frame, self.feature_frame.add_prefix("feature: ")], axis=1)
        frame = pd.concat([frame, self.groups.add_prefix("group: ")], axis=1)
        if self.split is not None:
            frame["split"] = self.split
        return frame

    def _compute_fingerprint(self) -> str:
        digest = hashlib.sha1()
        for array in (self.y, self.probs, self.X):
            digest.update(np.ascontiguousarray(array).tobytes())
        if self.members is not None:
            digest.update(np.ascontiguousarray(self.members).tobytes())
        if self.split is not None:
            digest.update("|".join(self.split).encode())
        digest.update(pd.util.hash_pandas_object(self.groups, index=False).to_numpy().tobytes())
        digest.update(repr((self.classes, self.feature_names)).encode())
        return digest.hexdigest()[:16]


def _member_matrix(
    df: pd.DataFrame, columns: Sequence[str], logits: bool, n_classes: int, notes: list
) -> np.ndarray:
    if len(columns) not in (1, n_classes) or (len(columns) == 1 and n_classes != 2):
        raise DataError(
            f"Ensemble member ({_quote_list(list(columns))}) must have one probability column "
            f"per class ({n_classes}), or a single column for a binary problem."
        )
    return _probability_matrix(df, columns, logits, "ensemble member probability", notes)


def _mapped_columns(mapping: ColumnMapping) -> list[tuple[str, str]]:
    """Every (column, role) pair of a mapping, in the order roles are checked."""
    pairs = [(mapping.label, "the label")]
    pairs += [(c, "a probability column") for c in mapping.probs]
    pairs += [(c, "an audit feature") for c in mapping.features]
    pairs += [(mapping.split, "the split column")] if mapping.split else []
    pairs += [(c, "an ensemble member column") for m in mapping.members for c in m]
    pairs += [(c, "a group attribute") for c in mapping.groups]
    return pairs


def _check_unambiguous(mapping: ColumnMapping, ambiguous: dict[str, tuple[str, ...]]) -> None:
    """Refuse a role mapped to a name that several differing columns share."""
    for column, role in _mapped_columns(mapping):
        if str(column) in ambiguous:
            kept = ambiguous[str(column)]
            raise DataError(
                f"The table has more than one column named '{column}', with different values, "
                f"and '{column}' is mapped as {role}. Map one of {_quote_list(kept)} instead, "
                "or rename the duplicates so every column name is unique, then load the table "
                "again."
            )


def _check_roles_distinct(mapping: ColumnMapping) -> None:
    """A column plays one role: the label cannot also be a feature, and so on."""
    roles: dict[str, str] = {}
    assignments = [(c, r) for c, r in _mapped_columns(mapping) if r != "a group attribute"]
    for column, role in assignments:
        if column in roles:
            raise DataError(
                f"Column '{column}' is mapped both as {roles[column]} and as {role}; each "
                "column can play one role only (group attributes may repeat a feature)."
            )
        roles[column] = role
    if len(set(mapping.groups)) != len(mapping.groups):
        raise DataError("A group attribute is listed twice; list each group column once.")
    for column in mapping.groups:
        if column in (mapping.label, *mapping.probs):
            raise DataError(
                f"Column '{column}' is the label or a probability and cannot be a group attribute."
            )


def summarise_columns(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-column summaries for display: ``(numeric, categorical)``.

    Numeric columns get missing count, distinct count, mean, standard deviation, minimum,
    median and maximum; the others their missing count, number of levels and top level.
    """
    numeric_rows, categorical_rows = [], []
    for column in df.columns:
        series = df[column]
        base = {"column": str(column), "missing": int(series.isna().sum())}
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            values = series.astype(float)
            numeric_rows.append({
                **base, "distinct": int(series.nunique()), "mean": values.mean(),
                "std": values.std(ddof=0), "min": values.min(), "median": values.median(),
                "max": values.max(),
            })
        else:
            top = series.value_counts()
            categorical_rows.append({
                **base, "levels": int(series.nunique()),
                "most common": f"{top.index[0]} ({top.iloc[0]:,} rows)" if len(top) else "",
            })
    numeric = pd.DataFrame(numeric_rows, columns=["column", "missing", "distinct", "mean", "std",
                                                  "min", "median", "max"])
    categorical = pd.DataFrame(categorical_rows,
                               columns=["column", "missing", "levels", "most common"])
    return numeric, categorical
