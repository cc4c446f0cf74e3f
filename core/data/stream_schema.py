"""The schema pass of a table read partition by partition
(:class:`~core.data.stream_sources.TableSource`): the facts of the whole table that decoding
a partition needs.

Decoding a partition needs a few facts about the whole table: the label values (which
classes there are, and which is positive), the levels of categorical features and group
attributes (so that every partition one-hot encodes the same columns) and how many rows each
partition audits (so that a seeded sample or a row's place among the audited rows is the
same wherever it is computed). :func:`schema_part` collects them from one partition's label,
categorical and split columns, :func:`combine_schema` joins the partitions' parts into a
:class:`StreamSchema` — the first, light pass of a streamed audit. What only the whole table
can show (fewer than two classes, too many levels) is checked on the schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.audit_data import MIN_ROWS
from core.data.features import SPLITS, split_values
from core.data.mapping import ColumnMapping, check_roles_distinct
from core.data.predictions import binary_labels, label_strings, multiclass_labels
from core.data.problems import DataError, ValidationNote, describe_rows, quote_list, rows_from
from core.data.table import MAX_LEVELS, MISSING_LEVEL, is_categorical


@dataclass(frozen=True)
class SchemaPart:
    """What one partition tells of the whole table (:func:`schema_part`)."""

    rows: int
    labels: frozenset[str]
    levels: dict[str, frozenset[str]]  # categorical column → its values (as strings)
    splits: dict[str, int]  # split → rows of the partition in it (empty: no split column)
    missing: tuple[ValidationNote, ...] = ()

def categorical_columns(source_frame: pd.DataFrame, mapping: ColumnMapping) -> tuple[str, ...]:
    """The mapped features and every group attribute that are categorical (one-hot encoded
    features, group levels), judged from the columns' types as
    :func:`core.data.table.is_categorical` does."""
    features = [c for c in mapping.features if is_categorical(source_frame[c])]
    return tuple(dict.fromkeys([*features, *mapping.groups]))

def schema_columns(mapping: ColumnMapping, categorical: Sequence[str]) -> list[str]:
    """The columns the schema pass reads: the label, the categorical ones and the split."""
    return list(dict.fromkeys([mapping.label, *categorical,
                               *([mapping.split] if mapping.split else [])]))

def levels_of(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, names)``: a categorical column's values as strings, missing values as
    ``'(missing)'`` (as :class:`AuditData` reads them)."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    names = np.array([str(u) for u in uniques] + [MISSING_LEVEL], dtype=object)
    return np.where(codes < 0, len(uniques), codes), names

def schema_part(frame: pd.DataFrame, mapping: ColumnMapping, categorical: Sequence[str],
                start: int) -> SchemaPart:
    """The label values, categorical levels and split counts of one partition (rows
    ``start + 1 …`` of the table); a missing label or a bad split value raises DataError
    naming rows of the table."""
    with rows_from(start):
        label = frame[mapping.label]
        missing = label.isna().to_numpy()
        if missing.any():
            raise DataError(
                f"Label column '{mapping.label}' is empty in {describe_rows(missing)}. Remove "
                "those rows or fill in their labels, then load the table again.")
        levels, notes = {}, []
        for column in categorical:
            codes, names = levels_of(frame[column])
            levels[column] = frozenset(names[np.unique(codes)])
            absent = codes == len(names) - 1
            if absent.any():
                notes.append(ValidationNote(
                    "warning", f"Column '{column}' has missing values in "
                    f"{describe_rows(absent)}; they form their own level '{MISSING_LEVEL}'."))
        splits = {}
        if mapping.split:
            values = split_values(frame, mapping.split)
            splits = {s: int(np.count_nonzero(values == s)) for s in SPLITS}
    return SchemaPart(len(frame), frozenset(label_strings(label)), levels, splits,
                      tuple(notes))

@dataclass(frozen=True)
class StreamSchema:
    """The facts of the whole table that decoding a partition needs (:func:`combine_schema`).

    ``classes`` in column order (binary: negative, positive); ``label_codes`` each label
    value's class; ``levels`` the sorted levels of each categorical column; ``categorical``
    the categorical audit features; ``feature_names`` the encoded feature columns (as
    :attr:`AuditData.feature_names`); ``split_rows[k]`` the rows of partition k in each split.
    """

    mapping: ColumnMapping
    n: int
    classes: tuple[str, ...]
    label_codes: dict[str, int]
    levels: dict[str, tuple[str, ...]]
    categorical: tuple[str, ...]
    feature_names: tuple[str, ...]
    split_rows: tuple[dict[str, int], ...]
    partition_rows: tuple[int, ...] = ()
    notes: tuple[ValidationNote, ...] = ()
    reversed: bool = False  # two probability columns, the first one's class named positive

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def part_rows(self, part: str) -> np.ndarray:
        """Rows of each partition that ``part`` audits (``"all"``, or a split)."""
        if part == "all" or self.mapping.split is None:
            return np.array(self.partition_rows, dtype=np.int64)
        return np.array([r.get(part, 0) for r in self.split_rows], dtype=np.int64)

def combine_schema(parts: Sequence[SchemaPart], mapping: ColumnMapping,
                   categorical: Sequence[str], name: str) -> StreamSchema:
    """Join the partitions' :class:`SchemaPart` (in partition order) into the table's
    :class:`StreamSchema`; the whole-table checks of :class:`AuditData` (at least
    ``MIN_ROWS`` rows, two classes, labels matching the probability columns, at most
    ``MAX_LEVELS`` levels) raise DataError here."""
    check_roles_distinct(mapping)
    n = sum(p.rows for p in parts)
    if n < MIN_ROWS:
        raise DataError(f"The table has only {n} rows; at least {MIN_ROWS} are needed to "
                        "assess calibration. Load more data.")
    values = np.array(sorted(set().union(*(p.labels for p in parts))), dtype=object)
    notes: list[ValidationNote] = []
    reversed_ = False
    if len(mapping.probs) == 1:
        if len(values) < 2:
            raise DataError(
                f"Label column '{mapping.label}' holds only one class ('{values[0]}') in all "
                f"{n:,} rows. Calibration cannot be assessed without both outcomes; load data "
                "that contains both classes.")
        codes, classes = binary_labels(values, mapping.label, mapping.probs[0],
                                       mapping.positive)
    else:
        codes, classes = multiclass_labels(values, mapping.label, mapping.probs)
        if len(values) < 2:
            raise DataError(
                f"Label column '{mapping.label}' holds only one class ('{values[0]}') in all "
                f"{n:,} rows. Calibration cannot be assessed from a single class; load data "
                "that contains several classes.")
        reversed_ = False
        if mapping.positive is not None and len(classes) == 2:
            if str(mapping.positive) == classes[0]:  # as AuditData: the named class is column 1
                codes, classes, reversed_ = 1 - codes, classes[::-1], True
            elif str(mapping.positive) != classes[1]:
                raise DataError(f"The positive class '{mapping.positive}' is not one of the "
                                f"classes {quote_list(classes)}.")
        absent = [c for i, c in enumerate(classes) if i not in set(codes)]
        if absent:
            notes.append(ValidationNote(
                "info", f"No row has the label {quote_list(absent)}; those classes have "
                "predicted probabilities but no observations."))
    levels = {}
    for column in categorical:
        found = sorted(set().union(*(p.levels[column] for p in parts)))
        if len(found) > MAX_LEVELS:
            role = "group attribute" if column in mapping.groups and \
                column not in mapping.features else "audit feature"
            raise DataError(
                f"Column '{column}' ({role}) has {len(found):,} distinct values; at most "
                f"{MAX_LEVELS} are allowed for a categorical column. Group rare values "
                "together or leave the column out.")
        levels[column] = tuple(found)
    features = tuple(c for c in mapping.features if c in categorical)
    names: list[str] = []
    for column in mapping.features:
        if column in levels:
            names += [f"{column}={level}" for level in levels[column]]
            notes.append(ValidationNote(
                "info", f"Audit feature '{column}' is categorical with {len(levels[column])} "
                f"levels; it was one-hot encoded into {len(levels[column])} columns."))
        else:
            names.append(str(column))
    seen: set[str] = set()
    for part in parts:
        for note in part.missing:
            key = note.message.split(" in ")[0]
            if key not in seen:  # the first partition's rows name each column's problem
                seen.add(key)
                notes.append(note)
    return StreamSchema(mapping, n, tuple(classes),
                        {str(v): int(c) for v, c in zip(values, codes, strict=True)}, levels,
                        features, tuple(names), tuple(p.splits for p in parts),
                        tuple(p.rows for p in parts), tuple(notes), reversed_)
