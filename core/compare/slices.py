"""Where the challenger differs: per-group and per-slice paired differences with simultaneous
inference over the whole family of slices.

The slices are the findings work's slice space (:func:`core.local.slice_space.enumerate_slices`,
one :class:`~core.local.slice_space.SliceFamily` for both): every level of each group
attribute (``race = Asian``), the quartile ranges of each numeric audit feature and the levels
of each categorical one (``age 60–90``), and the intersections of any two of these columns
(``sex = Male ∧ race = Asian``), each with at least ``min_rows`` rows, a set of rows that an
earlier slice already holds left out. Group attributes are taken level by level whatever
their type. The slice "all rows" is the global comparison and is not repeated here.

For per-row score differences ``d_i = s_B,i − s_A,i`` (:mod:`core.compare.paired`), slice s
with ``n_s`` rows has the mean difference ``D_s``, the standard error ``se_s = √(s_s²/n_s)``
of its rows' sample variance and ``T_s = D_s / se_s``. Simultaneous inference is the
single-step max-|T| of Westfall & Young (1993) with the joint law of the T_s — slices overlap,
so they are correlated — from a Gaussian multiplier bootstrap (Chernozhukov, Chetverikov &
Kato 2013): with ξ_i ~ N(0, 1) drawn per row,

    T*_s = Σ_{i∈s} ξ_i (d_i − D_s) / (n_s se_s) = (Σ_{i∈s} ξ_i d_i − D_s Σ_{i∈s} ξ_i) / (n_s se_s),

the same ξ for every criterion compared (Brier score and log loss), so the maximum runs over
every slice *and* criterion. The sums over every slice of ``ξ∘d`` and ``ξ`` are the findings
work's chunked slice sums (:func:`core.local.slice_resampling.slice_sums`: tile-engine tasks,
each chunk's multipliers drawn from a generator seeded by ``(seed, chunk)``, with
:func:`multiplier_draw` as the per-row draw); the adjusted p-values and the critical value are
:func:`core.stattests.multiple_testing.single_step_p_values` and
:func:`~core.stattests.multiple_testing.max_t_critical` of the observed and resampled |T|.

A studentised mean of n_s rows has Student-t tails, heavier than the Gaussian multipliers' far
tail where a maximum over many slices is decided, so each |T_s| is compared on the normal scale
of its own tail probability, ``z_s = Φ⁻¹(1 − F_{t, n_s−1}(|T_s|))`` (without this the
family-wise error was 0.066 ± 0.008 instead of 0.05 in the study). The adjusted p-value of
slice s is ``(1 + #{max* ≥ z_s})/(1 + R)`` over R multiplier draws, and ``D_s ± h_s·se_s``
with ``h_s = F⁻¹_{t, n_s−1}(Φ(c))`` and c the max-|T| critical value are simultaneous
intervals: with probability about 1 − α all of them cover at once, so the family-wise error
rate of any slice flagged, by either criterion, is about α (measured in
``benchmarks/compare_study.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.distributions import norm_isf, norm_sf, t_isf, t_sf
from core.local.slice_resampling import RowScores, slice_sums
from core.local.slice_space import DEFAULT_RANGES, SliceFamily, enumerate_slices
from core.stattests.multiple_testing import max_t_threshold, single_step_p_values

#: Slices with fewer rows are not tested (a mean of fewer rows is too far from normal).
MIN_SLICE_ROWS = 50
#: Multiplier draws of the max-|T| null (adjusted p-values resolve 1/2001).
MULTIPLIER_DRAWS = 2000
COLUMNS = ["slice", "kind", "rows", "value_a", "value_b", "difference", "ci_low", "ci_high",
           "p_value", "p_adjusted", "direction", "bias_a", "bias_b", "criterion"]


@dataclass(frozen=True)
class ComparedSlices:
    """The slices compared: the shared ``family``, the indices ``tested`` of its slices other
    than "all rows", and each tested slice's ``kinds`` (``group``, ``feature``, ``group ×
    feature``, …: which kinds of column its conditions are on)."""

    family: SliceFamily | None
    tested: np.ndarray
    kinds: tuple[str, ...]

    @property
    def names(self) -> list[str]:
        return [] if self.family is None else [self.family.slices[k].name for k in self.tested]


def slice_family(groups: pd.DataFrame | None, features: pd.DataFrame | None,
                 min_rows: int = MIN_SLICE_ROWS) -> ComparedSlices:
    """The slices of the group attributes (each level, as text) and audit features (quartile
    ranges or levels) and of every pair of them (module docstring). A feature with the name of
    a group attribute is the group attribute."""
    parts = []
    if groups is not None and groups.shape[1]:
        parts.append(groups.reset_index(drop=True).astype("string"))
    group_names = set() if not parts else {str(c) for c in parts[0].columns}
    if features is not None and features.shape[1]:
        extra = [c for c in features.columns if str(c) not in group_names]
        if extra:
            parts.append(features[extra].reset_index(drop=True))
    if not parts:
        return ComparedSlices(None, np.zeros(0, dtype=np.int64), ())
    frame = pd.concat(parts, axis=1)
    frame.columns = [str(c) for c in frame.columns]
    family = enumerate_slices(frame, DEFAULT_RANGES, depth=2, min_rows=min_rows)
    tested = np.array([k for k, s in enumerate(family.slices) if s.depth > 0], dtype=np.int64)
    kinds = tuple(" × ".join("group" if c.feature in group_names else "feature"
                             for c in family.slices[k].conditions) for k in tested)
    return ComparedSlices(family, tested, kinds)


def multiplier_draw(arrays: tuple[np.ndarray, ...], rng: np.random.Generator,
                    n_resamples: int) -> np.ndarray:
    """A chunk's columns for :func:`core.local.slice_resampling.slice_sums`: for per-row
    differences ``arrays = (d⁽¹⁾, …, d⁽ᶜ⁾)`` and multipliers ξ ~ N(0, 1) (one per row and
    draw, shared by the criteria), the blocks ``[ξ∘d⁽¹⁾ | … | ξ∘d⁽ᶜ⁾ | ξ]``, each R wide."""
    rows, width = arrays[0].shape[0], n_resamples
    xi = rng.standard_normal((rows, width), dtype=np.float32)
    out = np.empty((rows, (len(arrays) + 1) * width), dtype=np.float32)
    for k, d in enumerate(arrays):
        np.multiply(xi, d[:, None].astype(np.float32), out=out[:, k * width:(k + 1) * width])
    out[:, len(arrays) * width:] = xi
    return out


def slice_differences(
    compared: ComparedSlices, scores: dict[str, tuple[np.ndarray, np.ndarray]],
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
    if compared.family is None or compared.tested.size == 0 or not scores:
        return pd.DataFrame(columns=COLUMNS), float("nan")
    S = compared.family.incidence()[compared.tested].astype(np.float64)
    size = np.asarray(S.sum(axis=1)).ravel()
    differences = {c: b - a for c, (a, b) in scores.items()}
    sums = slice_sums(compared.family, RowScores(tuple(differences.values()), multiplier_draw,
                                                 draws, (len(differences) + 1) * draws),
                      seed=0 if seed is None else seed)[compared.tested]
    xi_sums = sums[:, len(differences) * draws:]
    df = np.maximum(size - 1, 1)
    parts, observed, null = {}, [], []
    for k, (criterion, d) in enumerate(differences.items()):
        mean = S @ d / size
        variance = np.maximum(S @ (d * d) - size * mean**2, 0.0) / df
        se = np.sqrt(variance / size)
        safe = np.where(se > 0, se, 1.0)
        t = np.where(se > 0, mean / safe, 0.0)
        # Student-t tails on the normal scale of the Gaussian multipliers (module docstring)
        observed.append(norm_isf(t_sf(np.abs(t), df)))
        resampled = sums[:, k * draws:(k + 1) * draws] - mean[:, None] * xi_sums
        null.append(np.abs(resampled / (size * safe)[:, None]))
        parts[criterion] = (mean, se, t)
    null_matrix = np.vstack(null)
    adjusted_all = single_step_p_values(np.concatenate(observed), null_matrix)
    critical = max_t_threshold(null_matrix, alpha)
    half = t_isf(norm_sf(critical), df)  # the critical tail, back on t's scale
    names, tables = compared.names, []
    for k, (criterion, (mean, se, t)) in enumerate(parts.items()):
        adjusted = adjusted_all[k * size.size:(k + 1) * size.size]
        significant = adjusted <= alpha
        direction = np.where(significant & (mean > 0), "worse",
                             np.where(significant & (mean < 0), "better",
                                      "no significant difference"))
        scores_a, scores_b = scores[criterion]
        tables.append(pd.DataFrame({
            "slice": names, "kind": compared.kinds, "rows": size.astype(int),
            "value_a": S @ scores_a / size, "value_b": S @ scores_b / size, "difference": mean,
            "ci_low": mean - half * se, "ci_high": mean + half * se,
            "p_value": 2.0 * norm_sf(np.abs(t)), "p_adjusted": adjusted,
            "direction": direction, "bias_a": S @ bias_a / size, "bias_b": S @ bias_b / size,
            "criterion": criterion,
        }))
    return pd.concat(tables, ignore_index=True), critical
