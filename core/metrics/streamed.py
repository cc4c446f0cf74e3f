"""The global measures of a table streamed partition by partition: per-bin and per-row sums
accumulated in one pass, and from them the same reliability tables and metric values as the
in-memory functions of :mod:`core.metrics.binned`, to rounding (the sums are added in another
order).

Every binned number is a formula of the per-bin sums ``(n_b, Σ c_i, Σ o_i)``
(:mod:`core.metrics.binning`), and accuracy, Brier and log loss are means of per-row terms; a
partition adds its rows' sums (:class:`BinnedSums`, :class:`RowSums`) and partitions add up.
Bins are given by thresholds — a row's bin is the number of thresholds below its confidence
(:meth:`Binning.ids`): the inner edges ``k/K`` of equal-width bins, or, for equal-mass bins,
the largest confidence below each cut, from the exact order statistics of
:mod:`core.metrics.order_statistics` and the tie rule of :func:`core.metrics.binning.run_sides`
(:func:`quantile_binning`), so equal-mass bins are exactly those of the in-memory path.

Two things cannot be the in-memory path's random draws, which need all rows at once, and are
replaced by schemes that do not hold the rows:

* **bootstrap intervals** — the Poisson bootstrap: resample b gives row i an independent
  Poisson(1) weight, drawn at the row's global number
  (:func:`core.kernels.resampling.row_poisson_weights`), so every bin of every resample is a
  weighted sum accumulated with the others. Equal-mass cuts are those of the data, not
  recomputed inside each resample. Its coverage against the in-memory bootstrap is measured
  by ``benchmarks/streaming.py``;
* **the consistency band** of the reliability diagram — the calibrated bin count is a sum of
  independent Bernoulli(c_i), whose mean Σc, variance Σc(1 − c) and third cumulant
  Σc(1 − c)(1 − 2c) are sums over rows; the band is its Cornish–Fisher quantiles
  ``μ + σ(z + γ(z² − 1)/6)`` over n_b (Cornish & Fisher 1938), where the in-memory path
  draws the counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.validation import probability_matrix
from core.kernels.resampling import row_poisson_weights
from core.metrics.binning import (
    ace_from_sums,
    cut_positions,
    debiased_from_sums,
    ece_from_sums,
    mce_from_sums,
    percent_levels,
    plugin_squared_from_sums,
    run_sides,
)
from core.metrics.descriptions import METRIC_DESCRIPTIONS, METRIC_KEYS, describe
from core.metrics.intervals import binomial_interval, cornish_fisher_band, reported_estimate
from core.metrics.order_statistics import OrderStatistics
from core.metrics.scores import brier_rows, correct, nll_rows

#: The notions' series: ``("class", k)`` (P(y = k) against 1[y = k]) and ``("top",)`` (the
#: top-label confidence against correctness).
TOP = ("top",)


def class_series(k: int) -> tuple[str, int]:
    return ("class", int(k))


def series_values(probs: np.ndarray, y: np.ndarray, key: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The confidence and outcome of series ``key`` for rows ``(probs, y)`` — exactly
    :func:`core.metrics.scores.confidence_outcome_of`."""
    P = probability_matrix(probs)
    if key == TOP:
        pred = np.argmax(P, axis=1)
        return P[np.arange(P.shape[0]), pred], (pred == y).astype(np.float64)
    return P[:, key[1]], (y == key[1]).astype(np.float64)


def notion_series(notion: str, n_classes: int, class_index: int | None = None) -> list[tuple]:
    """The series a notion's binned metric averages over (:func:`core.metrics.scores.scores`)."""
    if notion == "positive":
        return [class_series(1)]
    if notion == "top-label":
        return [TOP]
    if class_index is not None:
        return [class_series(class_index)]
    return [class_series(k) for k in range(n_classes)]


# --------------------------------------------------------------------------- binning


@dataclass(frozen=True)
class Binning:
    """Bins by thresholds: a row's bin is ``#{thresholds < c}`` (right-closed bins, the first
    including 0: :func:`core.metrics.binning.bin_indices`). ``edges`` are the reliability
    table's (equal-mass: as :func:`core.metrics.binning.bin_edges`)."""

    thresholds: np.ndarray
    edges: np.ndarray

    @property
    def n_bins(self) -> int:
        return int(self.thresholds.shape[0]) + 1

    def ids(self, conf: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.thresholds, conf, side="left")


def uniform_binning(n_bins: int) -> Binning:
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return Binning(edges[1:-1], edges)


def quantile_targets(n: int, n_bins: int) -> list[int]:
    """Sorted positions whose order statistics decide the equal-mass cuts and edges of ``n``
    confidences: each cut's run (:func:`core.metrics.binning.quantile_cuts`), its neighbours,
    and the two order statistics numpy's percentile interpolates between."""
    targets = (n - 1) * np.arange(1, n_bins) // n_bins
    virtual = (percent_levels(n_bins) / 100) * (n - 1)
    low = np.floor(virtual).astype(np.int64)
    return sorted({int(t) for t in np.concatenate([targets - 1, targets, targets + 1, low,
                                                   low + 1])})


def _lerp(a: float, b: float, t: float) -> float:
    """numpy's linear interpolation of ``percentile`` (``a + (b − a)t``, from ``b`` when
    ``t ≥ ½``)."""
    diff = b - a
    return float(b - diff * (1 - t)) if t >= 0.5 else float(a + diff * t)


def quantile_binning(order: OrderStatistics, key: object, n: int, n_bins: int
                     ) -> tuple[Binning | None, list[int]]:
    """The equal-mass :class:`Binning` of the ``n`` values of vector ``key`` from its order
    statistics, or ``(None, positions)`` with the further positions still needed (the
    neighbours of long tied runs)."""
    resolved = {p: r for (k, p), r in order.resolved.items() if k == key}
    targets = (n - 1) * np.arange(1, n_bins) // n_bins
    missing = [int(t) for t in targets if int(t) not in resolved]
    if missing:
        return None, missing
    first = np.array([resolved[int(t)].below for t in targets])
    size = np.array([resolved[int(t)].equal for t in targets])
    cuts = cut_positions(run_sides(first, size, n, n_bins), first, first + size)
    needed = [int(q) for c in cuts if 0 < c < n for q in (c - 1, c) if int(q) not in resolved]
    virtual = (percent_levels(n_bins) / 100) * (n - 1)
    low = np.floor(virtual).astype(np.int64)
    needed += [int(q) for q in np.concatenate([low, np.minimum(low + 1, n - 1)])
               if int(q) not in resolved]
    if needed:
        return None, sorted(set(needed))
    thresholds = np.array([-np.inf if c == 0 else np.inf if c == n else
                           resolved[int(c) - 1].value for c in cuts])
    raw = np.array([_lerp(resolved[int(lo)].value, resolved[int(min(lo + 1, n - 1))].value,
                          float(v - lo)) for lo, v in zip(low, virtual, strict=True)])
    inner = []
    for position in np.unique(cuts[(cuts > 0) & (cuts < n)]):
        u, w = resolved[int(position) - 1].value, resolved[int(position)].value
        edge = raw[1 + int(np.argmax(cuts == position))]
        if not u <= edge < w:
            edge = u + (w - u) / 2
            edge = edge if edge < w else u
        inner.append(edge)
    return Binning(thresholds, np.concatenate([[0.0], inner, [1.0]])), []


# --------------------------------------------------------------------------- sums


class BinnedSums:
    """Per-bin sums of one series under one binning, and of its Poisson bootstrap resamples:
    ``n_b``, ``Σ c``, ``Σ o``, ``Σ c(1 − c)``, ``Σ c(1 − c)(1 − 2c)``; ``boot`` the weighted
    ``(Σ w, Σ w c, Σ w o)`` of every resample (``(3, B, K)``)."""

    def __init__(self, n_bins: int, n_resamples: int = 0) -> None:
        self.sums = np.zeros((5, n_bins))
        self.boot = np.zeros((3, n_resamples, n_bins)) if n_resamples else None

    def add(self, conf: np.ndarray, outcome: np.ndarray, ids: np.ndarray,
            weights: np.ndarray | None = None) -> None:
        """Add rows with bins ``ids`` (and their ``(rows, B)`` Poisson weights)."""
        K = self.sums.shape[1]
        spread = conf * (1.0 - conf)
        for j, values in enumerate((None, conf, outcome, spread, spread * (1.0 - 2.0 * conf))):
            self.sums[j] += np.bincount(ids, weights=values, minlength=K)
        if self.boot is not None and weights is not None:
            onehot = np.zeros((ids.shape[0], K))
            onehot[np.arange(ids.shape[0]), ids] = 1.0
            for j, values in enumerate((None, conf, outcome)):
                weighted = weights if values is None else weights * values[:, None]
                self.boot[j] += (onehot.T @ weighted).T

    def merge(self, other: BinnedSums) -> BinnedSums:
        self.sums += other.sums
        if self.boot is not None:
            self.boot += other.boot
        return self

    @property
    def counts(self) -> np.ndarray:
        return self.sums[0]

    def triple(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(n_b, Σ c, Σ o)``, the argument of every binned formula."""
        return self.sums[0], self.sums[1], self.sums[2]


class RowSums:
    """Sums of per-row terms: rows, correct, Brier, log loss, each class's labels and
    predicted probabilities, and their Poisson-weighted versions per resample."""

    def __init__(self, n_classes: int, n_resamples: int = 0) -> None:
        self.sums = np.zeros(4)  # rows, correct, brier, nll
        self.labels = np.zeros(n_classes)
        self.probs = np.zeros(n_classes)
        self.boot = np.zeros((n_resamples, 4)) if n_resamples else None

    def add(self, probs: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> None:
        terms = np.column_stack([np.ones(y.shape[0]), correct(probs, y), brier_rows(probs, y),
                                 nll_rows(probs, y, 1e-15)])
        self.sums += terms.sum(axis=0)
        self.labels += np.bincount(y, minlength=self.labels.shape[0])
        self.probs += probability_matrix(probs).sum(axis=0)
        if self.boot is not None and weights is not None:
            self.boot += weights.T @ terms

    def merge(self, other: RowSums) -> RowSums:
        self.sums += other.sums
        self.labels += other.labels
        self.probs += other.probs
        if self.boot is not None:
            self.boot += other.boot
        return self

    @property
    def n(self) -> int:
        return int(self.sums[0])

    def class_balance(self, classes: Sequence[str]) -> pd.DataFrame:
        """:meth:`core.data.audit_data.AuditData.class_balance` of the summed rows."""
        return pd.DataFrame({"class": list(classes), "count": self.labels.astype(np.int64),
                             "share": self.labels / self.n,
                             "mean predicted probability": self.probs / self.n})


def poisson_weights(start: int, rows: int, n_resamples: int, seed: int) -> np.ndarray | None:
    """The rows' Poisson bootstrap weights (``None`` without resamples)."""
    return row_poisson_weights(start, start + rows, n_resamples, seed) if n_resamples else None


# --------------------------------------------------------------------------- tables


def consistency_band(sums: BinnedSums, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The central ``level`` range of each bin's frequency if the model were calibrated, by
    the Cornish–Fisher expansion of the bin count's law (module doc)."""
    return cornish_fisher_band(sums.sums[0], sums.sums[1], sums.sums[3], sums.sums[4], level)


def reliability_table_from(sums: BinnedSums, binning: Binning, notion: str, strategy: str,
                           interval: str = "wilson", level: float = 0.95,
                           class_index: int | None = None, n_resamples: int = 1000
                           ) -> pd.DataFrame:
    """:func:`core.metrics.reliability.reliability_table` from streamed sums (equal-mass bins
    emptied by the tie rule are dropped, as the in-memory table merges them); the band is
    the Cornish–Fisher one (``band`` column of ``attrs``)."""
    keep = np.ones(binning.n_bins, dtype=bool) if strategy == "uniform" else sums.counts > 0
    counts, s_conf, s_out = (a[keep] for a in sums.triple())
    filled = counts > 0
    mean_conf = np.divide(s_conf, counts, out=np.full(counts.shape, np.nan), where=filled)
    freq = np.divide(s_out, counts, out=np.full(counts.shape, np.nan), where=filled)
    ci_low, ci_high = binomial_interval(s_out, counts, interval, level)
    band_low, band_high = consistency_band(sums, level)
    table = pd.DataFrame({
        "bin_lower": binning.edges[:-1], "bin_upper": binning.edges[1:],
        "count": counts.astype(np.int64), "mean_confidence": mean_conf, "frequency": freq,
        "ci_low": ci_low, "ci_high": ci_high, "band_low": band_low[keep],
        "band_high": band_high[keep], "gap": freq - mean_conf})
    table.attrs.update(notion=notion, class_index=class_index, strategy=strategy,
                       interval=interval, level=level, n_resamples=n_resamples,
                       band="Cornish–Fisher")
    return table


def combine(values: list[np.ndarray], how: str) -> np.ndarray:
    """Classwise aggregation of per-series values (:mod:`core.metrics.binned`)."""
    stacked = np.asarray(values, dtype=np.float64)
    if how == "max":
        return stacked.max(axis=0)
    if how == "rms":
        return np.sqrt(np.mean(np.square(stacked), axis=0))
    return stacked.mean(axis=0)


def metric_values(rows: RowSums, notion_sums: dict[str, list[BinnedSums]],
                  class_quantile: list[BinnedSums], top_quantile: BinnedSums,
                  strategy: str) -> dict[str, float]:
    """The values of :func:`core.metrics.global_metrics.metrics_table` from sums: ``notion_sums``
    maps ``"uniform"``/``"quantile"`` to the notion's series' sums under that binning."""
    n = rows.sums[0]
    binned = notion_sums[strategy]
    quantile = notion_sums["quantile"]
    return {
        "accuracy": float(rows.sums[1] / n), "brier": float(rows.sums[2] / n),
        "nll": float(rows.sums[3] / n),
        "ece_l1": float(combine([ece_from_sums(*s.triple(), "l1") for s in binned], "mean")),
        "ece_l2": float(combine([ece_from_sums(*s.triple(), "l2") for s in binned], "rms")),
        "mce": float(combine([mce_from_sums(*s.triple()) for s in binned], "max")),
        "ace": float(combine([ace_from_sums(*s.triple()) for s in class_quantile], "mean")),
        "ace_top_label": float(ace_from_sums(*top_quantile.triple())),
        "ece_debiased": float(combine([debiased_from_sums(*s.triple()) for s in quantile],
                                      "mean")),
    }


def _boot_values(rows: RowSums, notion_sums: dict[str, list[BinnedSums]],
                 class_quantile: list[BinnedSums], top_quantile: BinnedSums,
                 strategy: str) -> dict[str, np.ndarray]:
    """Every metric on every Poisson resample (leading axis: resamples)."""
    def triple(s: BinnedSums) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return s.boot[0], s.boot[1], s.boot[2]

    weight = rows.boot[:, 0]
    binned, quantile = notion_sums[strategy], notion_sums["quantile"]
    return {
        "accuracy": rows.boot[:, 1] / weight, "brier": rows.boot[:, 2] / weight,
        "nll": rows.boot[:, 3] / weight,
        "ece_l1": combine([ece_from_sums(*triple(s), "l1") for s in binned], "mean"),
        "ece_l2": combine([ece_from_sums(*triple(s), "l2") for s in binned], "rms"),
        "mce": combine([mce_from_sums(*triple(s)) for s in binned], "max"),
        "ace": combine([ace_from_sums(*triple(s)) for s in class_quantile], "mean"),
        "ace_top_label": ace_from_sums(*triple(top_quantile)),
        "ece_debiased": combine([debiased_from_sums(*triple(s)) for s in quantile], "mean"),
    }


def metrics_table_from(rows: RowSums, notion_sums: dict[str, list[BinnedSums]],
                       class_quantile: list[BinnedSums], top_quantile: BinnedSums,
                       notion: str, n_bins: int, strategy: str, level: float = 0.95,
                       method: str = "basic") -> pd.DataFrame:
    """:func:`core.metrics.global_metrics.metrics_table` from streamed sums; the intervals from the
    Poisson bootstrap sums (NaN without resamples)."""
    values = metric_values(rows, notion_sums, class_quantile, top_quantile, strategy)
    estimate = dict(values)
    low = dict.fromkeys(METRIC_KEYS, np.nan)
    high = dict.fromkeys(METRIC_KEYS, np.nan)
    if rows.boot is not None:
        draws = _boot_values(rows, notion_sums, class_quantile, top_quantile, strategy)
        plugins = {"ece_debiased": float(combine(
            [plugin_squared_from_sums(*s.triple()) for s in notion_sums["quantile"]],
            "mean"))}
        for key, sample in draws.items():
            finite = np.asarray(sample, dtype=np.float64)
            finite = finite[np.isfinite(finite)]
            estimate[key], low[key], high[key] = reported_estimate(
                finite, values[key], level, method, METRIC_DESCRIPTIONS[key].bounds,
                plugins.get(key), METRIC_DESCRIPTIONS[key].biased)
    return pd.DataFrame({
        "metric": [METRIC_DESCRIPTIONS[key].name for key in METRIC_KEYS],
        "value": [values[key] for key in METRIC_KEYS],
        "estimate": [estimate[key] for key in METRIC_KEYS],
        "ci_low": [low[key] for key in METRIC_KEYS],
        "ci_high": [high[key] for key in METRIC_KEYS],
        "notion": [METRIC_DESCRIPTIONS[key].notion or notion for key in METRIC_KEYS],
        "description": [describe(key, n_bins, strategy) for key in METRIC_KEYS],
    })


def binned_value(sums: list[BinnedSums], formula: str) -> float:
    """ECE (ℓ1, classwise mean) or MCE (classwise max) of a notion's series' sums, as
    :func:`core.metrics.binned.ece` / :func:`core.metrics.binned.mce`."""
    if formula == "mce":
        return float(combine([mce_from_sums(*s.triple()) for s in sums], "max"))
    return float(combine([ece_from_sums(*s.triple(), "l1") for s in sums], "mean"))
