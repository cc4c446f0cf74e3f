"""Where is the model miscalibrated? Slice discovery with simultaneous inference.

:func:`discover_slices` tests every slice of the audit features and group attributes
(:func:`core.local.slice_space.enumerate_slices`: each level, quantile ranges of each numeric
column, their pairwise intersections by default) for a calibration gap, and says which
slices are miscalibrated with a stated error rate over the whole family.

**Per slice** S (n_S rows) and class (one-vs-rest for each class of a multiclass model, or
the top label), with ``p_i`` the predicted probability of the outcome and ``y_i`` the outcome:

    gap_S = (1/n_S) Σ_{i ∈ S} (y_i − p_i)          (observed rate − mean prediction)
    T_S   = Σ_{i ∈ S} (y_i − p_i) / √(Σ_{i ∈ S} p_i(1 − p_i))

**The null**: the model is calibrated on the slice's rows given their features, ``y_i ~
Bernoulli(p_i)`` independently — consistency resampling (Bröcker & Smith 2007) draws from it
exactly, given the predictions. B resamples of *all* rows at once give the joint null
distribution of every slice's statistic (:mod:`core.local.slice_resampling`: one sparse
slice-by-row incidence matrix times a row-by-resample outcome matrix, through the tile engine).

**Error rates** (:mod:`core.stattests.multiple_testing`):

* ``error_rate="fwer"`` (default): Westfall–Young step-down max-|T| adjusted p-values. The
  probability that *any* slice on which the model is calibrated gets flagged is at most α,
  whatever the other slices are (strong control): a slice's statistic depends only on its
  own rows, so the resampled statistics of the calibrated slices have their true joint law
  (subset pivotality). The ``significant`` flag is ``p_adjusted ≤ α``.
* ``error_rate="fdr"``: Benjamini–Hochberg q-values of the exact per-slice p-values (the
  Poisson-binomial tails of :mod:`core.stattests.poisson_binomial`, what infinitely many
  consistency resamples would give): on average at most a share α of the flagged slices are
  calibrated ones. More slices are flagged; each flag is weaker evidence.

**Intervals.** FWER: simultaneous intervals from the single-step max-|T| critical value c —
every slice's gap, the worst one included, lies in its interval together with probability
≥ 1 − α, so the size of the worst slice is not inflated by its selection (its point estimate
is: read the interval). FDR: false-coverage-rate intervals (Benjamini & Yekutieli 2005) at
level 1 − Rα/N for R flagged of N tests, from the normal quantile.

*Studentisation.* The statistic is studentised by the *null* variance Σp(1 − p), which is
right for testing gap = 0 but wrong for a gap that is not 0: a rate p + δ has variance
Σ(p + δ)(1 − p − δ). The interval therefore inverts the test of each candidate gap δ under
the predictions shifted by δ on the slice, with that shifted model's own variance — all δ with

    (n_S (gap_S − δ))² ≤ c² · Σ_{i ∈ S} (p_i + δ)(1 − p_i − δ),

a quadratic in δ (Wilson's score interval when all p_i are equal). At δ = 0 it is the test
itself, so an interval excludes 0 exactly when single-step max-|T| rejects. The interval
assumes the shift is shared by the slice's rows; where the true rates are more alike than
the predictions the variance is larger and the coverage somewhat lower (measured by
``benchmarks/slices_study.py``). The step-down can flag a slice whose single-step interval
touches 0 (it gains power once stronger slices are set aside). The redundancy rule below
uses these intervals.

**Redundancy.** A flagged slice with a flagged parent (one condition less: ``race = Black``
for ``race = Black ∧ age 62–90``) whose interval overlaps its own says nothing the parent does
not: it is ``listed_under`` that parent (the most significant such) and is not a finding of
its own. A child whose gap differs from every flagged parent's beyond their intervals is a
finding. "All rows" is the root: a globally miscalibrated model shows as one finding with
the slices that share its gap listed under it.

**What a finding does not mean.** A slice that is not flagged is *not* shown to be
calibrated — its interval says how large a gap the data still allow; slices below the
minimum size, other features and other intersections were not tested at all. A flag
rejects calibration on the slice's rows; the gap describes their average, and a slice whose
rows err in both directions can be flagged with a small gap.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import ndtri

from core.data.validation import check_choice, check_count, check_fraction, check_probs_labels
from core.kernels import engine
from core.local.slice_resampling import RowScores, bernoulli_draw, categorical_draw, slice_sums
from core.local.slice_space import DEFAULT_RANGES, SliceFamily, enumerate_slices
from core.metrics.scores import confidence_outcome_of
from core.stattests.multiple_testing import (
    benjamini_hochberg,
    max_t_threshold,
    step_down_max_t,
)
from core.stattests.poisson_binomial import slice_moments, two_sided_p_values

ERROR_RATES = ("fwer", "fdr")
#: The column of the prediction's quantile ranges, a slicing dimension by default.
PREDICTION_COLUMN = "predicted probability"
NOTIONS = ("positive", "top-label", "classwise")
#: Consistency resamples of the max-|T| null.
DEFAULT_RESAMPLES = 1000
#: Columns of :attr:`SliceDiscovery.table`.
COLUMNS = ("slice", "depth", "class", "rows", "observed", "predicted", "gap", "ci_low",
           "ci_high", "statistic", "p_value", "p_adjusted", "significant", "finding",
           "listed_under")

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class SliceDiscovery:
    """What :func:`discover_slices` found.

    ``table`` has one row per tested (slice, class), most significant first, with the
    columns of :data:`COLUMNS`: the slice's name and depth, the class tested, its rows, the
    observed rate and mean prediction, ``gap`` (observed − predicted) with its interval
    ``ci_low``–``ci_high`` (simultaneous for FWER, FCR-adjusted for FDR), the standardised
    ``statistic`` T, the per-slice ``p_value`` (exact Poisson-binomial tail, unadjusted),
    ``p_adjusted`` (step-down max-``|T|`` for FWER, a BH q-value for FDR), ``significant``
    (``p_adjusted ≤ α``), ``finding`` (significant and not explained by a flagged parent) and
    ``listed_under`` (that parent's name, else empty). ``n_tested`` is the number of tests
    (slices × classes tested).

    Attributes
    ----------
    table : pandas.DataFrame
        Every tested (slice, class), as above.
    n_tested : int
        Hypotheses tested.
    alpha : float
        The level.
    error_rate : {"fwer", "fdr"}
        What is controlled.
    notion : str
        The calibration notion.
    classes : tuple of str
        The classes tested.
    n_resamples : int
        B of the max-``|T|`` null.
    critical_value : float
        The simultaneous intervals' critical value.
    null_maxima : numpy.ndarray
        The resampled maxima.
    family : SliceFamily
        The slices.
    seed : int
        Seed of the null.
    engine : str
        Where the sums ran.
    scope : str
        Which rows were tested.
    """

    table: pd.DataFrame
    n_tested: int
    alpha: float
    error_rate: str
    notion: str
    classes: tuple[str, ...]
    n_resamples: int
    critical_value: float  # |T| beyond which intervals exclude 0
    null_maxima: np.ndarray = field(repr=False)  # max |T̃| over the family, per resample
    family: SliceFamily = field(repr=False)
    seed: int = 0
    engine: str = "threads"
    scope: str = ""  # where the sums and the resamples came from, when not all rows in memory

    @property
    def n_slices(self) -> int:
        return self.family.n_slices

    @property
    def significant(self) -> pd.DataFrame:
        return self.table[self.table["significant"]]

    @property
    def findings(self) -> pd.DataFrame:
        """The flagged slices not explained by a flagged parent, most significant first."""
        return self.table[self.table["finding"]]

    def rejects(self) -> bool:
        """Whether any slice is flagged at α under the chosen error rate."""
        return bool(self.table["significant"].any())

    def listed(self, name: str, class_name: str | None = None) -> pd.DataFrame:
        """The flagged slices listed under slice ``name`` (of the class ``class_name``), and
        under those in turn."""
        table = self.table
        if class_name is not None:
            table = table[table["class"] == class_name]
        found, frontier = [], [name]
        while frontier:
            rows = table[table["listed_under"].isin(frontier)]
            found.append(rows)
            frontier = list(rows["slice"])
        return pd.concat(found) if found else table.iloc[:0]

    def findings_view(self) -> pd.DataFrame:
        """The findings, each with ``listed``: how many flagged slices are listed under it
        (directly or under those)."""
        found = self.findings.copy()
        found["listed"] = [len(self.listed(name, cls))
                           for name, cls in zip(found["slice"], found["class"], strict=True)]
        return found

    def statement(self) -> str:
        """What was tested and which error rate is controlled, in two sentences."""
        if self.n_tested == 0:
            return (f"No slice was tested: none of the columns' levels, ranges or intersections "
                    f"(nor all rows) has the {self.family.min_rows:,} rows a slice needs.")
        classes = "" if len(self.classes) <= 1 else \
            f" ({self.n_slices:,} slices × {len(self.classes)} classes, one vs rest)"
        if self.error_rate == "fwer":
            control = (f"family-wise error rate controlled at α = {self.alpha:g} by the "
                       f"Westfall–Young max-|T| step-down over B = {self.n_resamples:,} "
                       "consistency resamples: the chance that any slice on which the model "
                       f"is calibrated gets flagged is at most {self.alpha:.0%}. Intervals are "
                       "simultaneous: "
                       f"all {self.n_tested:,} gaps lie inside their intervals together with "
                       f"probability at least {1 - self.alpha:.0%}")
        else:
            control = (f"false discovery rate controlled at α = {self.alpha:g} by "
                       "Benjamini–Hochberg on exact per-slice p-values: on average at most "
                       f"{self.alpha:.0%} of the flagged slices are in fact calibrated. "
                       "Intervals are adjusted for the selection (false coverage rate, "
                       "Benjamini–Yekutieli)")
        return f"{self.n_tested:,} tests{classes}; {control}." + \
            (f" {self.scope}" if self.scope else "")

    def coverage(self) -> str:
        """What was and what was not tested, for an empty result (nothing flagged).

        Returns
        -------
        str
            Two sentences: the columns sliced (the prediction's quantile ranges among them when
            they were) and how deep; then what no slice test sees — slices under the minimum
            size, deeper intersections, and miscalibration without a mean gap on any slice —
            with the test that does (the Trust page's KLCE test).
        """
        family = self.family
        columns = [c.feature for c in family.codings]
        ranges = [c for c in columns if c.startswith(PREDICTION_COLUMN)]
        named = ", ".join(c for c in columns if c not in ranges) or "no feature"
        depth = {1: "alone", 2: "alone and in pairs", 3: "alone, in pairs and in triples"}.get(
            family.depth, f"up to {family.depth} at a time")
        prediction = (f", and {family.n_ranges} quantile ranges of the {PREDICTION_COLUMN} "
                      "(where an over- or under-confident model's gaps are)" if ranges else
                      f"; the {PREDICTION_COLUMN} was not a slicing dimension")
        return (f"Tested: {self.n_tested:,} slices of {named}{prediction}, {depth}. "
                f"Not tested: slices under {family.min_rows:,} rows ({family.n_small:,} "
                f"candidate{'s' if family.n_small != 1 else ''}), deeper intersections, and "
                "miscalibration that has no mean gap on any slice (a gap that changes sign "
                "within a slice, or varies smoothly with the features) — the Trust test's "
                "KLCE test looks for that.")

    def summary(self) -> str:
        """The count of flags and findings, and what an unflagged slice does not mean."""
        flagged, findings = int(self.table["significant"].sum()), int(self.table["finding"].sum())
        if self.n_tested == 0:
            return "Nothing was tested, so nothing is known about any slice's calibration."
        if not flagged:
            head = f"No slice is flagged at α = {self.alpha:g}."
        else:
            listed = flagged - findings
            head = (f"{flagged:,} slice{'s' if flagged != 1 else ''} flagged at "
                    f"α = {self.alpha:g}: {findings:,} finding{'s' if findings != 1 else ''}"
                    + (f", {listed:,} listed under a flagged parent whose gap they share."
                       if listed else "."))
        return (head + " A slice that is not flagged is not shown to be calibrated: its "
                "interval says how large a gap the data still allow.")


# --------------------------------------------------------------------------- the computation


def prediction_values(probs: np.ndarray) -> np.ndarray:
    """The prediction that slices are cut on: ``P(y = 1)`` of a binary model, the top-label
    confidence ``max_c P(y = c)`` of a multiclass one.

    Parameters
    ----------
    probs : numpy.ndarray
        ``(n,)`` P(y = 1), or ``(n, m)`` probabilities.

    Returns
    -------
    numpy.ndarray
        ``(n,)`` float64.
    """
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim == 1:
        return p
    return p[:, 1] if p.shape[1] == 2 else p.max(axis=1)


def prediction_column_name(columns: object) -> str:
    """:data:`PREDICTION_COLUMN`, suffixed with ``" (model)"`` while it names a column of
    the table already."""
    name, taken = PREDICTION_COLUMN, {str(c) for c in columns}
    while name in taken:
        name += " (model)"
    return name


def with_prediction(frame: pd.DataFrame, probs: np.ndarray) -> pd.DataFrame:
    """``frame`` with the prediction (:func:`prediction_values`) as one more numeric column,
    cut into quantile ranges like any numeric feature — alone and, at depth 2, crossed with
    every other column. An over-confident model (too low at the bottom of its range, too
    high at the top) has calibrated means over every feature slice; its prediction ranges
    show the gaps.

    Parameters
    ----------
    frame : pandas.DataFrame
        The slicing columns, one row per prediction.
    probs : numpy.ndarray
        The predictions of the same rows.

    Returns
    -------
    pandas.DataFrame
        A new frame; the added column is named by :func:`prediction_column_name`.
    """
    values = prediction_values(probs)
    return frame.assign(**{prediction_column_name(frame.columns): values})


def _features_frame(features: object, n: int) -> pd.DataFrame:
    if isinstance(features, pd.DataFrame):
        frame = features.reset_index(drop=True)
    else:
        try:
            matrix = np.asarray(features)
        except (TypeError, ValueError) as err:
            raise ValueError("features must be a DataFrame of audit features and group "
                             "attributes, one row per prediction.") from err
        matrix = matrix[:, None] if matrix.ndim == 1 else matrix
        if matrix.ndim != 2:
            raise ValueError("features must be a table: one row per prediction, one column "
                             "per feature.")
        frame = pd.DataFrame(matrix, columns=[f"x{j}" for j in range(matrix.shape[1])])
    if len(frame) != n:
        raise ValueError(f"features has {len(frame)} rows but there are {n} predictions; give "
                         "one row of features per prediction.")
    return frame


def slice_notion_of(notion: str | None, binary: bool) -> str:
    """The notion a slice search tests: ``positive`` for a binary model and ``classwise`` for
    a multiclass one by default (unlike :func:`core.metrics.scores.resolve_notion`, whose
    multiclass default is ``top-label``), else ``notion`` checked."""
    if notion is None:
        return "positive" if binary else "classwise"
    check_choice(notion, NOTIONS, "notion", "choose 'positive' (binary), 'top-label' or "
                 "'classwise'")
    if notion == "positive" and not binary:
        raise ValueError("The 'positive' notion needs a binary model; for several classes use "
                         "'classwise' (each class one vs rest) or 'top-label'.")
    return notion


def standardized(counts: np.ndarray, mean: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """``(S − μ)/√V`` row by row (``counts`` is ``(K,)`` or ``(K, B)``); a slice whose null
    variance is 0 (every prediction 0 or 1) gets 0 where the count equals its mean and ±inf
    where it does not (an outcome the model called impossible)."""
    counts = np.asarray(counts, dtype=np.float64)
    shape = (-1,) + (1,) * (counts.ndim - 1)
    deviation = counts - mean.reshape(shape)
    sd = np.sqrt(variance).reshape(shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = deviation / sd
    degenerate = np.broadcast_to(sd == 0, t.shape)
    exact = np.abs(deviation) <= 1e-9
    t[degenerate & exact] = 0.0
    t[degenerate & ~exact] = np.copysign(np.inf, deviation[degenerate & ~exact])
    return t


def gap_intervals(rows: np.ndarray, mean: np.ndarray, variance: np.ndarray, gap: np.ndarray,
                  critical: float) -> tuple[np.ndarray, np.ndarray]:
    """All δ with ``(n(gap − δ))² ≤ c²·Σ(p_i + δ)(1 − p_i − δ)`` (module doc), clipped to the
    gaps a rate can have, ``[−p̄, 1 − p̄]``. Where the shifted model cannot hold the observed
    rate — ``Σ(p_i + gap)(1 − p_i − gap) ≤ 0``, an observed rate at 0 or 1 with spread
    predictions — Wilson's interval, with variance ``n·q(1 − q)`` (the largest a shared rate
    q can have), is used instead."""
    n = np.asarray(rows, dtype=np.float64)
    pbar = mean / n
    lowest, highest = -pbar, 1.0 - pbar
    if not math.isfinite(critical):
        return lowest, highest
    scaled = critical**2 / n
    a = 1.0 + scaled
    b = -(2.0 * gap + scaled * (1.0 - 2.0 * pbar))

    def roots(spread: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        c = gap**2 - scaled * spread
        disc = b * b - 4.0 * a * c
        root = np.sqrt(np.maximum(disc, 0.0))
        return (-b - root) / (2.0 * a), (-b + root) / (2.0 * a), disc

    spread = variance / n
    low, high, disc = roots(spread)
    wilson_low, wilson_high, _ = roots(pbar * (1.0 - pbar))
    fallback = (disc < 0) | (spread + gap * (1.0 - 2.0 * pbar) - gap**2 <= 0)
    low = np.where(fallback, wilson_low, low)
    high = np.where(fallback, wilson_high, high)
    return np.clip(low, lowest, highest), np.clip(high, lowest, highest)


def listed_under(parents: list[tuple[int, ...]], significant: np.ndarray, low: np.ndarray,
                 high: np.ndarray, order_key: np.ndarray) -> np.ndarray:
    """For each test, the flagged parent whose interval overlaps its own (the most
    significant: smallest ``order_key``), or −1: the redundancy rule of the module doc."""
    under = np.full(significant.size, -1, dtype=np.int64)
    for e in np.flatnonzero(significant):
        candidates = [q for q in parents[e]
                      if significant[q] and low[e] <= high[q] and low[q] <= high[e]]
        if candidates:
            under[e] = min(candidates, key=lambda q: order_key[q])
    return under


def discover_slices(
    probs: np.ndarray,
    y: np.ndarray,
    features: pd.DataFrame,
    *,
    alpha: float = 0.05,
    error_rate: str = "fwer",
    n_ranges: int = DEFAULT_RANGES,
    depth: int = 2,
    min_rows: int | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    notion: str | None = None,
    class_names: tuple[str, ...] | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    prediction_ranges: bool = True,
) -> SliceDiscovery:
    """Find the slices where the model is miscalibrated, with a controlled error rate.

    Parameters
    ----------
    probs : array of shape (n,) or (n, m)
        P(y = 1) of a binary model, or one probability per class.
    y : array of shape (n,)
        Labels ``0..m−1``.
    features : pandas.DataFrame
        Audit features and group attributes (numeric or categorical), one row per
        prediction.
    alpha : float
        Level of the error rate (default 0.05).
    error_rate : {"fwer", "fdr"}
        Family-wise error rate (max-``|T|`` step-down, the default) or false discovery rate
        (Benjamini–Hochberg).
    n_ranges : int
        Quantile ranges of each numeric column (default 4).
    depth : int
        Columns per slice: 1, 2 (pairwise intersections, default) or 3.
    min_rows : int, optional
        Smallest slice tested (default ``max(30, 1 % of rows)``).
    n_resamples : int
        Consistency resamples B of the max-``|T|`` null (default 1,000; p-values are at least
        ``1/(1 + B)``).
    notion : {"positive", "top-label", "classwise"}, optional
        What is calibrated: P(y = 1) (binary default), the top label, or every class one vs
        rest (multiclass default).
    class_names : tuple of str, optional
        Names of the classes for the table (default ``"0", "1", …``).
    seed : int
        Seed of the resamples.
    progress : callable, optional
        ``progress(fraction, message)``.
    prediction_ranges : bool
        Slice on ``n_ranges`` quantile ranges of the prediction as well (default; the column
        of :func:`with_prediction`), alone and crossed with every feature: the slices where
        an over- or under-confident model's gaps are.

    Returns
    -------
    SliceDiscovery
        Its ``table`` ranks the tests most significant first; ``n_tested`` counts them.
    """
    p, labels, frame, alpha, n_resamples, seed, notion, names = checked_inputs(
        probs, y, features, alpha, error_rate, n_resamples, seed, notion, class_names,
        prediction_ranges)

    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(fraction, message)

    report(0.0, "Enumerating the slices…")
    family = enumerate_slices(frame, n_ranges, depth, min_rows)
    scores, targets = slice_targets(p, labels, notion, names, n_resamples)
    report(0.05, f"Resampling {family.n_slices:,} slices × {len(targets)} "
                 f"class{'es' if len(targets) > 1 else ''}, B = {n_resamples:,}…")
    sums = slice_sums(family, scores, seed,
                      lambda f: report(0.05 + 0.8 * f, f"Resampling: {f:.0%} of the rows"))
    report(0.85, "Per-slice p-values and adjustment…")
    chunks = family.chunks  # a re-iterable walk: family.chunks() starts it again
    parts, nulls = [], []
    for t, (class_name, q) in enumerate(targets):
        block = sums[:, t * (n_resamples + 1):(t + 1) * (n_resamples + 1)]
        sizes, mean, variance = slice_moments(chunks, q)
        counts = block[:, 0]
        parts.append({
            "class": class_name, "rows": sizes, "mean": mean, "variance": variance,
            "counts": counts,
            "p_value": two_sided_p_values(chunks, q, counts, (sizes, mean, variance)),
        })
        nulls.append(standardized(block[:, 1:], mean, variance))
    result = finish_discovery(family, parts, np.concatenate(nulls), alpha, error_rate, notion,
                              n_resamples, seed)
    report(1.0, "Slices tested")
    return result


def checked_inputs(probs, y, features, alpha: float, error_rate: str, n_resamples: int,
                   seed: int, notion: str | None, class_names, prediction_ranges=True) -> tuple:
    """:func:`discover_slices`' arguments checked, ``frame`` with the prediction's column."""
    p, labels = check_probs_labels(probs, y)
    frame = _features_frame(features, p.shape[0])
    if prediction_ranges:
        frame = with_prediction(frame, p)
    alpha = check_fraction("alpha", alpha)
    check_choice(error_rate, ERROR_RATES, "error rate", "choose 'fwer' (family-wise) or "
                 "'fdr' (false discovery rate)")
    n_resamples = check_count("n_resamples", n_resamples, 1)
    seed = check_count("seed", seed, 0)
    notion = slice_notion_of(notion, p.ndim == 1 or p.shape[1] == 2)
    m = 2 if p.ndim == 1 else p.shape[1]
    names = tuple(str(c) for c in (class_names or range(m)))
    if len(names) != m:
        raise ValueError(f"class_names has {len(names)} names for {m} classes.")
    return p, labels, frame, alpha, n_resamples, seed, notion, names


def slice_targets(p: np.ndarray, labels: np.ndarray, notion: str, names: tuple[str, ...],
                  n_resamples: int) -> tuple[RowScores, list[tuple[str, np.ndarray]]]:
    """What is summed over each slice (:class:`RowScores`: observed outcomes and B consistency
    resamples) and the tested classes with each row's probability of the outcome: every
    class one vs rest (``classwise``), else one target (the positive class or the top
    label)."""
    m = len(names)
    if notion == "classwise" and m > 2:
        return (RowScores((p, labels), categorical_draw, n_resamples, m * (n_resamples + 1)),
                [(names[c], p[:, c]) for c in range(m)])
    conf, outcome = confidence_outcome_of(p, labels, notion, None)
    return (RowScores((conf, outcome), bernoulli_draw, n_resamples, n_resamples + 1),
            [(names[1] if notion == "positive" else "top label", conf)])


def finish_discovery(family: SliceFamily, parts: list[dict], null: np.ndarray, alpha: float,
                     error_rate: str, notion: str, n_resamples: int, seed: int,
                     scope: str = "") -> SliceDiscovery:
    """The :class:`SliceDiscovery` of per-slice sums: ``parts`` one dict per tested class
    (``class``, ``rows``, ``mean`` Σp, ``variance`` Σp(1 − p), ``counts`` Σy, ``p_value``)
    and ``null`` the ``(tests, B)`` resampled standardised statistics, stacked class by
    class; ``scope`` says where sums and resamples came from (a streamed audit's)."""
    for part in parts:
        part["t"] = standardized(part["counts"], part["mean"], part["variance"])
    observed = np.concatenate([part["t"] for part in parts])
    null = np.abs(null)
    p_value = np.concatenate([part["p_value"] for part in parts])
    if error_rate == "fwer":
        adjusted = step_down_max_t(observed, null)
        critical = max_t_threshold(null, alpha)
    else:
        adjusted = benjamini_hochberg(p_value)
        flagged = max(1, int(np.count_nonzero(adjusted <= alpha)))
        critical = float(ndtri(1.0 - flagged * alpha / (2.0 * adjusted.size))) \
            if adjusted.size else math.inf
    table = _table(family, parts, observed, p_value, adjusted, critical, alpha)
    return SliceDiscovery(table, int(adjusted.size), alpha, error_rate, notion,
                          tuple(part["class"] for part in parts), n_resamples, critical,
                          null.max(axis=0) if null.size else np.zeros(n_resamples), family,
                          seed, engine.current().describe(), scope)


def _table(family: SliceFamily, parts: list[dict], observed: np.ndarray, p_value: np.ndarray,
           adjusted: np.ndarray, critical: float, alpha: float) -> pd.DataFrame:
    K = family.n_slices
    rows = np.concatenate([part["rows"] for part in parts])
    mean = np.concatenate([part["mean"] for part in parts])
    variance = np.concatenate([part["variance"] for part in parts])
    counts = np.concatenate([part["counts"] for part in parts])
    gap = (counts - mean) / rows
    low, high = gap_intervals(rows, mean, variance, gap, critical)
    significant = adjusted <= alpha
    order_key = np.lexsort((-np.abs(observed), adjusted)).argsort()
    parents = [tuple(t * K + q for q in family.parents[k])
               for t in range(len(parts)) for k in range(K)]
    under = listed_under(parents, significant, low, high, order_key)
    names = family.names * len(parts)
    table = pd.DataFrame({
        "slice": names,
        "depth": np.tile([s.depth for s in family.slices], len(parts)),
        "class": np.repeat([part["class"] for part in parts], K),
        "rows": rows.astype(np.int64), "observed": counts / rows, "predicted": mean / rows,
        "gap": gap, "ci_low": low, "ci_high": high, "statistic": observed,
        "p_value": p_value, "p_adjusted": adjusted, "significant": significant,
        "finding": significant & (under < 0),
        "listed_under": [names[u] if u >= 0 else "" for u in under],
    }, columns=list(COLUMNS))
    table["_key"] = order_key
    return table.sort_values("_key", kind="stable").drop(columns="_key").reset_index(drop=True)
