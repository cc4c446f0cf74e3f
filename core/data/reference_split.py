"""The reference model's labels and its stratified train / calibration / test split.

Class names follow :mod:`core.data`: integral numbers are written as integers (``1.0`` →
``"1"``), booleans as ``"True"``/``"False"``, text is stripped. Classes are ordered by value
(numbers numerically); in a binary problem the larger value is the positive class. The rows
are split, stratified by the label, so that each part's class proportions match the whole
table's to within one row per class (:func:`stratified_split`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.data.problems import DataError

#: Fewest rows per class: one for each of the three parts of the stratified split.
MIN_CLASS_ROWS = 3
SPLIT_COLUMN = "split"
SPLIT_PARTS = ("train", "calibration", "test")


def check_fractions(fractions: Sequence[float]) -> np.ndarray:
    """Three positive shares summing to 1 (within 1e-6), for train, calibration and test."""
    values = np.asarray(fractions, dtype=float)
    if values.shape != (3,) or not np.all(values > 0) or abs(values.sum() - 1.0) > 1e-6:
        raise DataError(
            f"The split fractions must be three positive numbers (train, calibration, test) "
            f"that add up to 1; got {tuple(fractions)}."
        )
    return values / values.sum()


def _class_name(value: object) -> str:
    """One label value written the way :mod:`core.data` writes it."""
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        return str(int(number)) if number == np.round(number) else repr(number)
    return str(value).strip()


def encode_labels(series: pd.Series) -> tuple[np.ndarray, tuple[str, ...]]:
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


def check_class_sizes(label: str, y: np.ndarray, classes: tuple[str, ...]) -> None:
    counts = np.bincount(y, minlength=len(classes))
    small = [(c, int(k)) for c, k in zip(classes, counts, strict=True) if k < MIN_CLASS_ROWS]
    if small:
        listed = ", ".join(f"'{c}' ({k} row{'s' if k != 1 else ''})" for c, k in small)
        raise DataError(
            f"Label column '{label}' has classes with fewer than {MIN_CLASS_ROWS} rows: "
            f"{listed}. Each class needs a row in train, calibration and test for a "
            "stratified split; merge rare classes or remove their rows."
        )


def allocate_rows(count: int, fractions: np.ndarray, deficit: np.ndarray) -> np.ndarray:
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
    index order) and cut into parts of sizes given by :func:`allocate_rows`, so each part's class
    proportions match the whole table's to within one row per class.
    """
    shares = check_fractions(fractions)
    y = np.asarray(y)
    rng = np.random.default_rng(seed)
    parts = np.empty(y.shape[0], dtype=object)
    allocated = np.zeros(len(SPLIT_PARTS), dtype=np.int64)
    for cls in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == cls))
        deficit = shares * (allocated.sum() + rows.size) - allocated - np.floor(shares * rows.size)
        sizes = allocate_rows(rows.size, shares, deficit)
        allocated += sizes
        for name, chunk in zip(SPLIT_PARTS, np.split(rows, np.cumsum(sizes)[:-1]), strict=True):
            parts[chunk] = name
    return parts
