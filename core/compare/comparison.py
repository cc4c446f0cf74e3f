"""Champion against challenger: two models' predictions on the same rows, compared with
paired inference (:func:`compare_models`, :func:`compare_audit`).

Two separate audits side by side are not a comparison: the two models' errors on a row are
correlated (same label, same hard case), and only a paired analysis says whether a difference
is real. Every criterion is a loss (lower is better) and every difference is B − A, the
challenger minus the champion, so a positive difference means the challenger is worse:

=============  ===========================================================================
criterion      paired inference
=============  ===========================================================================
brier          Diebold–Mariano z test of the per-row Brier terms (:mod:`.paired`)
log_loss       Diebold–Mariano z test of the per-row log losses (clipped at 1e−15)
ece            debiased ECE² (U-statistic over pairs of rows, the same equal-width bins for
               both), studentised wild bootstrap of the difference (:mod:`.squared_errors`)
smooth_ece     smooth ECE² (the squared L2 norm of the smoothed residual, each model's
               fixed-point σ), the same test
klce           KLCE² U-statistics with one kernel, the same test; beside it each model's own
               KLCE test of local calibration (consistency-combined null)
=============  ===========================================================================

Per group and per slice: the Brier and log-loss differences in every slice of
:mod:`.slices` with max-|T| simultaneous inference, so "the challenger is worse here" holds
its family-wise error rate over all slices listed. The verdict sentence says what is
established at level α and what is not (a difference that is not significant is not shown
to be zero). Measured level and power: ``benchmarks/compare_study.py`` and the README.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from core.compare.paired import PairedDifference, diebold_mariano, score_rows
from core.compare.slices import MIN_SLICE_ROWS, slice_differences, slice_family
from core.compare.squared_errors import (
    bin_kernel,
    gaussian_kernel,
    smooth_points,
    squared_error_difference,
)
from core.data.validation import (
    check_count,
    check_fraction,
    check_probs_labels,
    check_seed,
)
from core.kernels.resampling import row_sample
from core.kernels.spec import KernelSpec, inputs_for
from core.metrics.reliability import reliability_table
from core.metrics.scores import confidence_outcome_of, default_notion
from core.metrics.smooth import smooth_ece_of
from core.stattests.klce import klce_test

#: Every criterion, in table order; all are losses (lower is better).
CRITERIA = ("brier", "log_loss", "ece", "smooth_ece", "klce")
#: Display names.
CRITERION_NAMES = {
    "brier": "Brier score", "log_loss": "log loss", "ece": "ECE² (equal-width bins, debiased)",
    "smooth_ece": "smooth ECE² (debiased)", "klce": "KLCE²",
}
#: Criteria compared per group and per slice (means of per-row scores).
SLICE_CRITERIA = ("brier", "log_loss")
#: Most rows the kernel criteria (smooth ECE², KLCE²) are computed on (a seeded uniform
#: sample beyond).
KLCE_ROWS = 20_000
TABLE_COLUMNS = ("criterion", "name", "value_a", "value_b", "difference", "ci_low", "ci_high",
                 "p_value", "std_error", "variance", "method")

Progress = Callable[[float, str], None] | None


@dataclass(frozen=True)
class ComparisonResult:
    """The paired comparison of a challenger (B) with a champion (A).

    Attributes
    ----------
    champion, challenger
        the two models' names (A, B).
    n
        rows compared.
    alpha
        level of every test and interval (intervals are 1 − α).
    table
        one row a criterion: ``criterion`` (key), ``name``, ``value_a``, ``value_b``,
        ``difference`` (B − A), ``ci_low``, ``ci_high``, ``p_value``, ``std_error``,
        ``variance``, ``method``.
    klce_tests
        each model's KLCE test of local calibration (``model``, ``klce``,
        ``p_value``, ``null``), empty when the KLCE criterion was not asked for.
    slices
        per-slice differences (:func:`core.compare.slices.slice_differences`) with a
        ``criterion`` column; groups are the rows whose ``kind`` is ``"group"``.
    critical
        the max-``|T|`` critical value over every slice and slice criterion.
    reliability
        each model's reliability table on the same equal-width bins.
    verdict
        one paragraph: what is and what is not established.
    parameters
        the settings used.
    """

    champion: str
    challenger: str
    n: int
    alpha: float
    table: pd.DataFrame
    klce_tests: pd.DataFrame
    slices: pd.DataFrame
    critical: float
    reliability: dict[str, pd.DataFrame] = field(repr=False)
    verdict: str = ""
    parameters: dict = field(default_factory=dict)

    @property
    def groups(self) -> pd.DataFrame:
        """The per-group rows of :attr:`slices` (one level of one group attribute)."""
        return self.slices[self.slices["kind"] == "group"].reset_index(drop=True)

    def worse(self, criteria: Sequence[str] | None = None) -> list[str]:
        """Criteria (of ``criteria``, default all compared) on which the challenger is
        significantly worse: difference > 0 with p ≤ α."""
        rows = self.table if criteria is None else self.table[
            self.table["criterion"].isin(list(criteria))]
        bad = rows[(rows["difference"] > 0) & (rows["p_value"] <= self.alpha)]
        return list(bad["criterion"])

    def worse_slices(self) -> pd.DataFrame:
        """Slices where the challenger is significantly worse (adjusted p ≤ α), worst first."""
        rows = self.slices[self.slices["direction"] == "worse"]
        return rows.sort_values("p_adjusted", kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- inputs


def _check_models(y, models: Mapping[str, object]) -> tuple[list[str], list[np.ndarray],
                                                             np.ndarray]:
    if not isinstance(models, Mapping) or len(models) != 2:
        raise ValueError("models must be a mapping of exactly two names to predictions, "
                         "champion first: {'A': probs_a, 'B': probs_b}.")
    names = [str(k) for k in models]
    if names[0] == names[1]:
        raise ValueError("The two models need different names.")
    checked = [check_probs_labels(models[k], y) for k in models]
    probs = [p for p, _ in checked]
    labels = checked[0][1]
    shapes = [p.shape for p in probs]
    if shapes[0] != shapes[1]:
        raise ValueError(f"Model '{names[0]}' has predictions of shape {shapes[0]} and model "
                         f"'{names[1]}' {shapes[1]}; both must predict the same classes for "
                         "the same rows.")
    return names, probs, labels


def _frames(features, groups, n: int) -> tuple[np.ndarray | None, pd.DataFrame | None,
                                                pd.DataFrame | None]:
    """``(X for the kernel, feature frame for slices, group frame)``."""
    X = frame = None
    if features is not None:
        if isinstance(features, pd.DataFrame):
            frame = features.reset_index(drop=True)
            X = pd.get_dummies(frame, prefix_sep="=", dtype=float).to_numpy(dtype=float)
        else:
            X = np.asarray(features, dtype=float)
            X = X[:, None] if X.ndim == 1 else X
            frame = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(X.shape[1])])
        if X.shape[0] != n or not np.all(np.isfinite(X)):
            raise ValueError(f"features must have one finite row per label ({n} rows).")
    group_frame = None
    if groups is not None:
        group_frame = pd.DataFrame(groups).reset_index(drop=True)
        if len(group_frame) != n:
            raise ValueError(f"groups must have one row per label ({n} rows), not "
                             f"{len(group_frame)}.")
    return X, frame, group_frame


# --------------------------------------------------------------------------- the comparison


def compare_models(
    y,
    models: Mapping[str, object],
    features=None,
    *,
    groups=None,
    alpha: float = 0.05,
    criteria: Sequence[str] = CRITERIA,
    n_bins: int = 15,
    n_resamples: int = 200,
    seed: int | None = 0,
    spec: KernelSpec | None = None,
    klce_rows: int = KLCE_ROWS,
    min_slice_rows: int = MIN_SLICE_ROWS,
    progress: Progress = None,
) -> ComparisonResult:
    """Compare a challenger B with a champion A on the same rows (module docstring).

    Parameters
    ----------
    y
        ``(n,)`` labels ``0..m-1``.
    models
        ``{"A": probs_a, "B": probs_b}``: champion first, challenger second; each ``(n,)``
        P(y = 1) or ``(n, m)`` (DESIGN.md conventions).
    features
        Audit features: an ``(n, d)`` array or a DataFrame (categoricals one-hot encoded for
        the kernel); the KLCE kernel and the feature slices use them. ``None``: the KLCE
        kernel acts on the predictions only, and no feature slices.
    groups
        Group attributes (a DataFrame or a mapping of name → labels) for per-group and
        per-slice differences.
    alpha
        Level of every test; intervals are 1 − α.
    criteria
        Which of :data:`CRITERIA` to compare (default all).
    n_bins
        Equal-width bins of the ECE and the reliability tables.
    n_resamples, seed
        Wild-bootstrap draws of the squared-error tests (ECE², smooth ECE², KLCE²) and the
        KLCE tests' resamples; the seed of all resampling.
    spec
        Kernel settings of the KLCE (bandwidths resolved on the champion, used for both);
        for a multiclass problem ``spec.class_index`` picks the class (default: the most
        frequent label).
    klce_rows
        The kernel criteria (smooth ECE², KLCE²) on at most this many rows (a seeded uniform
        sample beyond).
    min_slice_rows
        Smallest slice tested.
    progress
        Optional ``progress(fraction, message)``.
    """
    names, probs, labels = _check_models(y, models)
    n = labels.shape[0]
    alpha = check_fraction("alpha", alpha)
    n_bins = check_count("n_bins", n_bins, 1)
    n_resamples = check_count("n_resamples", n_resamples, 2)
    seed = check_seed(seed)
    unknown = [c for c in criteria if c not in CRITERIA]
    if unknown or not criteria:
        raise ValueError(f"Unknown criteria {unknown}; choose among {', '.join(CRITERIA)}."
                         if unknown else "Choose at least one criterion.")
    X, frame, group_frame = _frames(features, groups, n)
    report = progress or (lambda fraction, message: None)
    notion = default_notion(probs[0])
    pairs = [confidence_outcome_of(p, labels, notion, None) for p in probs]

    rows: dict[str, PairedDifference] = {}
    scores = {c: [score_rows(c, p, labels) for p in probs] for c in SLICE_CRITERIA}
    for criterion in ("brier", "log_loss"):
        if criterion in criteria:
            rows[criterion] = diebold_mariano(*scores[criterion], alpha)
    residuals = [outcome - conf for conf, outcome in pairs]
    if "ece" in criteria:
        report(0.05, "Testing the ECE² difference…")
        rows["ece"] = squared_error_difference(
            bin_kernel(pairs[0][0], pairs[1][0], n_bins), *residuals, n_resamples, seed,
            alpha, "ECE²")
    kernel_rows = row_sample(n, check_count("klce_rows", klce_rows, 3), seed or 0)
    if "smooth_ece" in criteria:
        report(0.2, "Testing the smooth ECE² difference (tile engine)…")
        smooth = [smooth_points(conf[kernel_rows], smooth_ece_of(conf, outcome)[1])
                  for conf, outcome in pairs]
        rows["smooth_ece"] = squared_error_difference(
            gaussian_kernel(smooth[0][0], smooth[1][0], smooth[0][1], smooth[1][1]),
            *(e[kernel_rows] for e in residuals), n_resamples, seed, alpha, "smooth ECE²")
    klce_tests = pd.DataFrame(columns=["model", "klce", "p_value", "null"])
    parameters: dict = {"n_bins": n_bins, "bins": "equal-width, shared by both models",
                        "notion": notion, "n_resamples": n_resamples, "seed": seed,
                        "criteria": tuple(criteria), "min_slice_rows": min_slice_rows}
    if "klce" in criteria:
        report(0.5, "Testing the KLCE² difference and each model's KLCE (tile engine)…")
        rows["klce"], klce_tests, klce_parameters = _klce(
            probs, labels, X, spec, kernel_rows, n_resamples, seed, alpha, names)
        parameters.update(klce_parameters)

    table = pd.DataFrame([
        {"criterion": c, "name": CRITERION_NAMES[c], **dataclasses.asdict(rows[c])}
        for c in CRITERIA if c in rows], columns=list(TABLE_COLUMNS))

    report(0.85, "Comparing the models group by group and slice by slice…")
    compared = slice_family(group_frame, frame, min_slice_rows)
    bias = [o - c for c, o in pairs]
    slice_table, critical = slice_differences(compared, scores, *bias, alpha, seed)
    reliability = {name: reliability_table(p, labels, n_bins=n_bins, strategy="uniform",
                                           notion=notion)
                   for name, p in zip(names, probs, strict=True)}
    result = ComparisonResult(
        champion=names[0], challenger=names[1], n=n, alpha=alpha, table=table,
        klce_tests=klce_tests, slices=slice_table, critical=critical, reliability=reliability,
        parameters=parameters,
    )
    report(1.0, "Comparison done.")
    return _with_verdict(result, int(compared.tested.size))


def _klce(probs, labels, X, spec, rows, n_resamples, seed, alpha, names):
    """The KLCE² difference and each model's KLCE test, on the kernel criteria's ``rows``."""
    spec = spec or KernelSpec()
    if probs[0].ndim == 2 and probs[0].shape[1] > 2 and spec.class_index is None:
        spec = KernelSpec(spec.prob_bandwidth, spec.feature_bandwidth, spec.standardize,
                          int(np.argmax(np.bincount(labels))))
    Xs = None if X is None else X[rows]
    inputs_a = inputs_for(probs[0][rows], labels[rows], Xs, spec)
    inputs_b = inputs_for(probs[1][rows], labels[rows], Xs, inputs_a.spec)
    difference = squared_error_difference(
        gaussian_kernel(inputs_a.points, inputs_b.points), inputs_a.residuals,
        inputs_b.residuals, n_resamples, seed, alpha, "KLCE²")
    tests = []
    for name, p in zip(names, probs, strict=True):
        test = klce_test(p[rows], labels[rows], Xs, spec=inputs_a.spec,
                         n_resamples=n_resamples, seed=seed or 0, computation="exact")
        tests.append({"model": name, "klce": test.parameters["klce"], "p_value": test.p_value,
                      "null": test.method})
    parameters = {"klce_rows": int(rows.size), "klce_spec": inputs_a.spec}
    return difference, pd.DataFrame(tests), parameters


# --------------------------------------------------------------------------- the verdict


def _p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _with_verdict(result: ComparisonResult, n_slices: int) -> ComparisonResult:
    """The verdict paragraph: established differences (p ≤ α) by direction, then what is not
    established, then the slices where the challenger is worse."""
    a, b, level = result.champion, result.challenger, 1.0 - result.alpha
    better, worse, open_ = [], [], []
    for row in result.table.itertuples():
        text = (f"{row.name} {row.difference:+.3g} ({level:.0%} CI {row.ci_low:+.3g} to "
                f"{row.ci_high:+.3g}, {_p(row.p_value)})")
        if row.p_value <= result.alpha:
            (worse if row.difference > 0 else better).append(text)
        else:
            open_.append(text)
    parts = [f"Challenger '{b}' against champion '{a}' on {result.n:,} rows, differences "
             f"B − A (lower is better), level α = {result.alpha:g}."]
    if better:
        parts.append(f"Established: '{b}' is better on " + "; ".join(better) + ".")
    if worse:
        parts.append(f"Established: '{b}' is worse on " + "; ".join(worse) + ".")
    if open_:
        parts.append("Not established (the data do not show a difference, which does not "
                     "prove the two equal): " + "; ".join(open_) + ".")
    bad = result.worse_slices()
    if n_slices == 0:
        parts.append("No group attributes or audit features were given, so no group or slice "
                     "was compared.")
    elif bad.empty:
        parts.append(f"In none of the {n_slices} groups and slices compared is '{b}' "
                     "significantly worse (Brier score and log loss, max-|T| adjusted over all "
                     "slices).")
    else:
        named = bad.drop_duplicates("slice").head(5)
        listed = "; ".join(
            f"{r.slice} ({r.rows:,} rows, {CRITERION_NAMES[r.criterion]} {r.difference:+.3g},"
            f" adjusted {_p(r.p_adjusted)})" for r in named.itertuples())
        count = bad["slice"].nunique()
        parts.append(f"'{b}' is significantly worse in {count} of the {n_slices} groups and "
                     f"slices compared (max-|T| adjusted, family-wise error ≈ α): {listed}"
                     + (" …" if count > len(named) else "") + ".")
    return replace(result, verdict=" ".join(parts))


# --------------------------------------------------------------------------- from an AuditData


@dataclass(frozen=True)
class CompareSettings:
    """Everything a comparison of two prediction sets of one table depends on, as one
    hashable value (the page's cache key, the report's settings, the CLI's options).

    ``champion`` ``None`` means the audited model; ``features`` ``None`` all audit features.

    Attributes
    ----------
    challenger : str
        The challenger's prediction set (B).
    champion : str or None
        The champion's (A); ``None``: the audited model.
    features : tuple of str or None
        Audit features of the KLCE kernel and the feature slices; ``None``: all.
    part : str
        The split compared (``"test"``), or ``"all"``.
    alpha : float
        Level of every test and interval.
    criteria : tuple of str
        The criteria compared, from :data:`CRITERIA`.
    n_bins : int
        Equal-width bins of the ECE² difference.
    n_resamples : int
        Resamples of the paired bootstrap and the KLCE tests.
    seed : int
        Seed of every resample.
    """

    challenger: str
    champion: str | None = None
    features: tuple[str, ...] | None = None
    part: str = "test"
    alpha: float = 0.05
    criteria: tuple[str, ...] = CRITERIA
    n_bins: int = 15
    n_resamples: int = 200
    seed: int = 0

    def run(self, audit, progress: Progress = None) -> ComparisonResult:
        return compare_audit(
            audit, self.challenger, self.champion, features=self.features, part=self.part,
            alpha=self.alpha, criteria=self.criteria, n_bins=self.n_bins,
            n_resamples=self.n_resamples, seed=self.seed, progress=progress)



def compare_audit(audit, challenger: str, champion: str | None = None, *,
                  features: Sequence[str] | None = None, part: str = "test",
                  **kwargs) -> ComparisonResult:
    """:func:`compare_models` on two prediction sets of an :class:`core.data.AuditData`.

    ``champion`` defaults to the audited model (``audit.model``); ``features`` names audit
    features (default: all of the audit's); the ``test`` split is compared when the data has
    one (``part="all"`` for every row). Groups are the audit's group attributes.

    Parameters
    ----------
    audit : AuditData
        A table with at least two prediction sets.
    challenger : str
        The challenger's prediction set (B).
    champion : str, optional
        The champion's (A); default the audited model.
    features : sequence of str, optional
        Audit features; default all of the audit's.
    part : str, default "test"
        The split compared, or ``"all"``.
    **kwargs
        Passed to :func:`compare_models` (``criteria``, ``alpha``, ``n_resamples``, ``seed``, …).

    Returns
    -------
    ComparisonResult
    """
    for name in (challenger, champion):
        if name is not None and name not in audit.model_probs:
            raise ValueError(f"Unknown model '{name}'; this table has "
                             f"{', '.join(repr(k) for k in audit.model_probs)}.")
    champion = audit.model if champion is None else champion
    if champion == challenger:
        raise ValueError(f"Choose two different models; '{champion}' was given twice.")
    data = audit if part == "all" else audit.split_part(part)
    names = list(audit.feature_frame.columns) if features is None else list(features)
    frame = data.feature_frame[names] if names else None
    groups = data.groups if data.groups.shape[1] else None
    return compare_models(
        data.y, {champion: data.model_probs[champion], challenger: data.model_probs[challenger]},
        frame, groups=groups, **kwargs)
