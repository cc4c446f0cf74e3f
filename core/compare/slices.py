"""Where the challenger differs: per-group and per-slice paired differences with simultaneous
inference over the whole family of slices.

A *slice* is a set of rows: a level of a group attribute (``race = Asian``), a pair of levels
of two group attributes (``sex = Male & race = Asian``), a quartile bin of a numeric audit
feature or a level of a categorical one (``age in [60, 90]``), and each feature bin within
each group level. The family is held as a sparse slice-by-row incidence matrix S (k × n), the
form of the slice machinery of the findings work, so another family of slices plugs in as
another S.

For per-row score differences ``d_i = s_B,i − s_A,i`` (:mod:`core.compare.paired`), slice s
with ``n_s`` rows has the mean difference ``D_s``, the standard error ``se_s = √(s_s²/n_s)``
of its rows' sample variance and ``T_s = D_s / se_s``. Simultaneous inference is the
single-step max-|T| of Westfall & Young (1993) with the joint law of the T_s — slices overlap,
so they are correlated — from a Gaussian multiplier bootstrap (Chernozhukov, Chetverikov &
Kato 2013): with ξ_i ~ N(0, 1) drawn per row,

    T*_s = Σ_{i∈s} ξ_i (d_i − D_s) / (n_s se_s),        M* = max_s |T*_s|,

all slices at once as ``(S(ξ∘d) − D ∘ Sξ) / (n ∘ se)``, and the maximum also runs over the
criteria compared (Brier score and log loss, the same ξ for both). A studentised mean of n_s
rows has Student-t tails, heavier than the Gaussian multipliers' far tail where a maximum
over many slices is decided, so each |T_s| is compared on the normal scale of its own tail
probability, ``z_s = Φ⁻¹(1 − F_{t, n_s−1}(|T_s|))`` (without this the family-wise error was
0.066 ± 0.008 instead of 0.05 in the study). The adjusted p-value of slice s is
``(1 + #{M* ≥ z_s}) / (1 + R)`` over R multiplier draws, and ``D_s ± h_s·se_s`` with
``h_s = F⁻¹_{t, n_s−1}(Φ(c))`` and c the (1 − α) quantile of M* are simultaneous intervals:
with probability about 1 − α all of them cover at once, so the family-wise error rate of any
slice flagged, by either criterion, is about α (measured in ``benchmarks/compare_study.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse, stats

from core.data.table import is_categorical

#: Slices with fewer rows are not tested (a mean of fewer rows is too far from normal).
MIN_SLICE_ROWS = 50
#: Bins of a numeric audit feature (quantile bins; fewer when values tie).
FEATURE_BINS = 4
#: Multiplier draws of the max-|T| null (adjusted p-values resolve 1/2001).
MULTIPLIER_DRAWS = 2000
#: Most elements (rows × draws) of one block of multipliers.
_BLOCK_ELEMENTS = 20_000_000


@dataclass(frozen=True)
class SliceFamily:
    """Named slices of the rows: ``names[k]``, ``kinds[k]`` and row k of the sparse 0/1
    incidence ``matrix`` (slices × rows)."""

    names: tuple[str, ...]
    kinds: tuple[str, ...]
    matrix: sparse.csr_matrix

    @property
    def sizes(self) -> np.ndarray:
        return np.asarray(self.matrix.sum(axis=1)).ravel()


def _feature_bins(series: pd.Series) -> list[tuple[str, np.ndarray]]:
    """Quartile bins of a numeric column (``age in [18, 33]``), levels of a categorical one."""
    name = str(series.name)
    if is_categorical(series):
        values = series.astype(str).to_numpy()
        return [(f"{name} = {level}", values == level) for level in sorted(set(values))]
    values = series.to_numpy(dtype=float)
    edges = np.unique(np.quantile(values, np.linspace(0.0, 1.0, FEATURE_BINS + 1)))
    if edges.size < 2:
        return []
    index = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, edges.size - 2)
    bins = []
    for b in range(edges.size - 1):
        low, high = edges[b], edges[b + 1]
        closing = "]" if b == edges.size - 2 else ")"
        bins.append((f"{name} in [{low:.4g}, {high:.4g}{closing}", index == b))
    return bins


def slice_family(groups: pd.DataFrame | None, features: pd.DataFrame | None, n: int,
                 min_rows: int = MIN_SLICE_ROWS) -> SliceFamily:
    """Every group level, pair of levels of two group attributes, feature bin and feature bin
    within a group level with at least ``min_rows`` rows; identical row sets are kept once
    (first name wins)."""
    group_levels = []
    for column in ([] if groups is None else groups.columns):
        values = groups[column].astype(str).to_numpy()
        group_levels.append([(f"{column} = {level}", values == level)
                             for level in sorted(set(values))])
    candidates: list[tuple[str, str, np.ndarray]] = []
    for levels in group_levels:
        candidates += [(name, "group", mask) for name, mask in levels]
    for a in range(len(group_levels)):
        for b in range(a + 1, len(group_levels)):
            candidates += [(f"{na} & {nb}", "group × group", ma & mb)
                           for na, ma in group_levels[a] for nb, mb in group_levels[b]]
    bins = [] if features is None else [
        item for column in features.columns for item in _feature_bins(features[column])]
    candidates += [(name, "feature", mask) for name, mask in bins]
    candidates += [(f"{ng} & {nf}", "group × feature", mg & mf)
                   for levels in group_levels for ng, mg in levels for nf, mf in bins]
    names, kinds, rows, seen = [], [], [], set()
    for name, kind, mask in candidates:
        if mask.sum() < min_rows or mask.all():
            continue
        key = np.packbits(mask).tobytes()
        if key in seen:
            continue
        seen.add(key)
        names.append(name)
        kinds.append(kind)
        rows.append(np.flatnonzero(mask))
    indptr = np.cumsum([0, *(r.size for r in rows)])
    indices = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    matrix = sparse.csr_matrix((np.ones(indices.size), indices, indptr), shape=(len(rows), n))
    return SliceFamily(tuple(names), tuple(kinds), matrix)


def slice_differences(
    family: SliceFamily, scores: dict[str, tuple[np.ndarray, np.ndarray]],
    bias_a: np.ndarray, bias_b: np.ndarray, alpha: float, seed: int | None,
    draws: int = MULTIPLIER_DRAWS,
) -> tuple[pd.DataFrame, float]:
    """Per-slice paired differences of every criterion with max-|T| adjusted p-values and
    simultaneous intervals (module docstring), and the critical value c.

    ``scores`` maps a criterion to the two models' per-row scores ``(s_A, s_B)``; the maximum
    runs over every slice *and* every criterion, with the same multipliers ξ for all, so the
    family-wise error holds over the whole table. ``bias_*`` are per-row observed-minus-
    predicted residuals of each model's notion, averaged per slice for display.
    """
    S = family.matrix
    size = family.sizes
    columns = ["slice", "kind", "rows", "value_a", "value_b", "difference", "ci_low",
               "ci_high", "p_value", "p_adjusted", "direction", "bias_a", "bias_b", "criterion"]
    if S.shape[0] == 0 or not scores:
        return pd.DataFrame(columns=columns), float("nan")
    parts = {}
    for criterion, (scores_a, scores_b) in scores.items():
        d = scores_b - scores_a
        mean = S @ d / size
        variance = np.maximum(S @ (d * d) - size * mean**2, 0.0) / np.maximum(size - 1, 1)
        se = np.sqrt(variance / size)
        parts[criterion] = (d, mean, se, np.where(se > 0, se, 1.0))
    n = S.shape[1]
    rng = np.random.default_rng(seed)
    maxima = []
    block = int(np.clip(_BLOCK_ELEMENTS // n, 1, 250))
    for start in range(0, draws, block):
        xi = rng.standard_normal((n, min(block, draws - start)))
        sums = S @ xi
        largest = np.zeros(xi.shape[1])
        for d, mean, _, safe in parts.values():
            numerator = S @ (xi * d[:, None]) - mean[:, None] * sums
            largest = np.maximum(largest, np.max(np.abs(numerator / (size * safe)[:, None]),
                                                 axis=0))
        maxima.append(largest)
    maxima = np.concatenate(maxima)
    critical = float(np.quantile(maxima, 1.0 - alpha))
    tables = []
    for criterion, (_, mean, se, safe) in parts.items():
        t = np.where(se > 0, mean / safe, 0.0)
        # a studentised mean of n_s rows has Student's t tails, heavier than the Gaussian
        # multipliers' in the far tail where the maximum over many slices is decided: compare
        # the normal quantile of the same tail probability
        df = np.maximum(size - 1, 1)
        z = stats.norm.isf(stats.t.sf(np.abs(t), df))
        half = stats.t.isf(stats.norm.sf(critical), df)  # the same tail, back on t's scale
        adjusted = (1.0 + (maxima[None, :] >= z[:, None]).sum(axis=1)) / (1.0 + draws)
        significant = adjusted <= alpha
        direction = np.where(significant & (mean > 0), "worse",
                             np.where(significant & (mean < 0), "better",
                                      "no significant difference"))
        scores_a, scores_b = scores[criterion]
        tables.append(pd.DataFrame({
            "slice": family.names, "kind": family.kinds, "rows": size.astype(int),
            "value_a": S @ scores_a / size, "value_b": S @ scores_b / size, "difference": mean,
            "ci_low": mean - half * se, "ci_high": mean + half * se,
            "p_value": 2.0 * stats.norm.sf(np.abs(t)), "p_adjusted": adjusted,
            "direction": direction, "bias_a": S @ bias_a / size, "bias_b": S @ bias_b / size,
            "criterion": criterion,
        }))
    return pd.concat(tables, ignore_index=True), critical
