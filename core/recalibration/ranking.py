"""The comparison workflow: fit every chosen method on calibration rows, score it on test rows
(the table :func:`core.recalibration.decision.recommend` ranks the methods by).

Models of what a comparison shows: the I-trustworthy paper's Fig. 4 (every global method
lowers the ECE, yet the KLCE test still rejects local calibration) and Luo et al.'s Tables 1
and 3 (LoRe and group-wise methods lower the worst group's MCE most).

For every split, each method is fitted on the calibration rows only (labels, audit features
and groups of those rows) and predicts the test rows; the test labels are used only to score.
Scores per method (the ``table`` columns):

* ``accuracy``, ``brier``, ``nll``, ``ece``, ``mce`` — :mod:`core.metrics` with 15 equal-width
  bins on the default notion (P(y = 1) for binary problems, top-label otherwise);
* ``mlce`` — Luo et al. eq. 5 (top-label, 15 bins) at ``gamma`` on the LCE landscape page's
  space: a 2-D PCA of the z-scored audit features, coordinates z-scored; map and statistics
  fitted on the calibration rows;
* ``klce_p`` — the aggregated bandwidth-grid KLCE test
(:func:`core.stattests.klce_grid.klce_grid_test`,
  3 × 3 grid: the median heuristic × (½, 1, 2) for each kernel, ``n_resamples`` shared
  resamples, default null, ``computation="auto"`` with :data:`core.kernels.rff.TEST_FEATURES`
  random features when approximate) over the chosen features, on at most
  :data:`KERNEL_ROWS` test rows (:func:`core.kernels.resampling.row_sample`); for multiclass
  problems on the top-label pair (confidence, correct);
* ``brier_worse_p`` — the one-sided paired z-test (Diebold–Mariano, per-row Brier scores on
  the same test rows) of "the method's Brier score is worse than the uncalibrated model's":
  with ``d_i = b_i(method) − b_i(uncalibrated)``, ``z = d̄ / (s_d/√n)`` and
  ``p = 1 − Φ(z)`` (1 for the uncalibrated row itself);
* ``max_group_mce`` — the largest MCE (5 equal-width bins, :data:`GROUP_BINS`) over the
  levels with at least 30 test rows of each chosen group attribute (Luo et al., Table 1);
* ``fit_seconds`` — wall time of ``fit``.

With ``n_splits > 1`` the calibration and test rows are pooled and split again at random
(stratified by label, halves, seeds ``seed, seed + 1, …``), and the table gives the mean over
splits with ``*_sd`` columns (the sample standard deviation), as Luo et al. report.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core import metrics
from core.data.audit_data import AuditData
from core.data.distributions import norm_sf
from core.data.groups import iter_groups
from core.data.validation import check_choice, check_count, check_positive, check_seed
from core.kernels.computation import choose
from core.kernels.resampling import row_sample
from core.kernels.rff import TEST_FEATURES
from core.kernels.spec import kernel_inputs
from core.kernels.tiles import Standardizer
from core.local.embedding import fit_embedding
from core.local.lce_estimate import mlce
from core.metrics.scores import brier_rows
from core.recalibration.registry import RECALIBRATORS
from core.stattests.klce_grid import bandwidth_grid, klce_grid_test

Progress = Callable[[float, str], None]

UNCALIBRATED = "uncalibrated"
#: γ of the MLCE column when none is given: the LCE landscape page's default.
DEFAULT_GAMMA = 0.2
#: Resamples of the KLCE grid test.
DEFAULT_RESAMPLES = 200
#: Group levels with fewer test rows are left out of max_group_mce.
MIN_GROUP_ROWS = 30
N_BINS = 15
#: Bins of the group-wise MCE: Luo et al. (App. A) use 5 equal-width bins where a data set
#: has hundreds of rows, as a group level here does; 15 bins leave bins of one or two rows
#: whose gap is noise.
GROUP_BINS = 5
#: Bandwidth factors of the KLCE grid: a 3 × 3 grid around the median heuristic (the Trust
#: page's 5 × 5 grid costs 25 kernel passes per method; 9 keep a comparison of many methods
#: within a minute at 5,000 test rows).
KLCE_FACTORS = (0.5, 1.0, 2.0)
#: At most this many test rows (a seeded sample, the same for every method) enter the KLCE
#: test: a valid test on a random subset, with ample power at this size; above it the test's
#: kernel passes would dominate a comparison of many methods at 10⁵–10⁶ rows.
KERNEL_ROWS = 20_000
METRICS = ("accuracy", "brier", "nll", "ece", "mce", "mlce", "klce_p", "max_group_mce",
           "brier_worse_p", "fit_seconds")
#: Direction of "better" for every column: +1 higher is better, −1 lower is better, 0 neither
#: (a p-value is evidence, not a score: higher means less evidence of local miscalibration).
BETTER = {"accuracy": 1, "brier": -1, "nll": -1, "ece": -1, "mce": -1, "mlce": -1,
          "klce_p": 1, "max_group_mce": -1, "brier_worse_p": 1, "fit_seconds": -1}


@dataclass(frozen=True, eq=False)
class Comparison:
    """The result of :func:`compare`.

    ``table``: one row per method (``"uncalibrated"`` first) with the columns of
    :data:`METRICS` (means over splits) and, when ``n_splits > 1``, ``*_sd`` columns.
    ``probs``: method → test probabilities of the first split, in the layout of
    ``audit.probs`` (``(n, m)``). ``test``: the first split's test rows. ``coords``: their
    standardised 2-D PCA coordinates of the MLCE (``None`` without features). ``skipped``:
    method → why it could not run. ``notes``: how the rows were split.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per method.
    probs : dict of str to numpy.ndarray
        Test probabilities of the first split, by method.
    test : AuditData
        The first split's test rows.
    coords : numpy.ndarray or None
        Their 2-D coordinates of the MLCE.
    features, groups : tuple of str
        The audit features and group attributes used.
    gamma : float
        The MLCE's bandwidth.
    n_splits, n_resamples : int
        Repeated splits and resamples.
    skipped : dict of str to str
        Methods that could not run, and why.
    notes : tuple of str
        How the rows were split.
    """

    table: pd.DataFrame
    probs: dict[str, np.ndarray]
    test: AuditData
    coords: np.ndarray | None
    features: tuple[str, ...]
    groups: tuple[str, ...]
    gamma: float
    n_splits: int
    n_resamples: int
    skipped: dict[str, str]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class CompareSettings:
    """Every choice of a comparison as one hashable value (a cache key; the page's settings).

    ``methods`` holds ``(name, ((parameter, value), …))`` pairs in the order chosen.
    """

    methods: tuple[tuple[str, tuple[tuple[str, object], ...]], ...]
    features: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    n_splits: int = 1
    seed: int = 0
    gamma: float | None = None
    n_resamples: int = DEFAULT_RESAMPLES

    @classmethod
    def of(cls, methods: Mapping[str, Mapping[str, object]], **options: object
           ) -> CompareSettings:
        """Settings from a mapping ``name → parameters`` and the keyword options."""
        pairs = tuple((name, tuple(sorted(dict(params).items())))
                      for name, params in methods.items())
        return cls(pairs, **options)  # type: ignore[arg-type]

    def run(self, audit: AuditData, progress: Progress | None = None) -> Comparison:
        """:func:`compare` with these settings."""
        return compare(audit, {name: dict(params) for name, params in self.methods},
                       self.features, self.groups, self.n_splits, self.seed, self.gamma,
                       progress, self.n_resamples)


# --------------------------------------------------------------------------- splits


def stratified_halves(y: np.ndarray, rows: np.ndarray, seed: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` split into calibration and test halves within every label (seeded)."""
    rng = np.random.default_rng(seed)
    calibration = []
    for label in np.unique(y[rows]):
        members = rng.permutation(rows[y[rows] == label])
        calibration.append(members[: (members.size + 1) // 2])
    cal = np.sort(np.concatenate(calibration))
    return cal, np.setdiff1d(rows, cal)


def make_splits(audit: AuditData, n_splits: int, seed: int
                ) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """Calibration/test row indices of every split and a sentence saying how they were made."""
    split = audit.split
    given = split is not None and {"calibration", "test"} <= set(split)
    if given and n_splits == 1:
        return [(np.flatnonzero(split == "calibration"), np.flatnonzero(split == "test"))], \
            "Fitted on the data's calibration split, scored on its test split."
    rows = np.flatnonzero(np.isin(split, ["calibration", "test"])) if given else \
        np.arange(audit.n)
    where = "its calibration and test rows pooled" if given else (
        "the data has no calibration/test split, so all rows")
    splits = [stratified_halves(audit.y, rows, seed + k) for k in range(n_splits)]
    return splits, (f"{n_splits} random calibration/test split{'s' if n_splits > 1 else ''}"
                    f" of {where}: halves stratified by label, seeds {seed}"
                    f"{f'–{seed + n_splits - 1}' if n_splits > 1 else ''}.")


# --------------------------------------------------------------------------- scoring


def _layout(audit: AuditData, probs: np.ndarray) -> np.ndarray:
    """(n, m) → the contract's layout: P(y = 1) for a binary problem."""
    return probs[:, 1] if audit.is_binary else probs


def top_label_pair(probs: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return metrics.confidence_outcome(probs, y, "top-label")


def mlce_space(calibration: AuditData, test: AuditData, features: tuple[str, ...]
               ) -> np.ndarray | None:
    """Test rows' coordinates in the MLCE space fitted on the calibration rows: a 2-D PCA
    (1-D for one column) of the z-scored features, coordinates z-scored."""
    if not features:
        return None
    X_cal, X_test = calibration.feature_matrix(features), test.feature_matrix(features)
    scaler = Standardizer.fit(X_cal)
    Z = scaler.transform(X_cal)
    if Z.shape[0] < 5 or not np.any(Z[0] != Z):
        return np.zeros((test.n, 1))
    pca = fit_embedding(Z, "pca", n_components=min(2, Z.shape[1]))
    coords = Standardizer.fit(pca.coords)
    return coords.transform(pca.transform(scaler.transform(X_test)))


def brier_worse_p_value(probs: np.ndarray, reference: np.ndarray, y: np.ndarray) -> float:
    """One-sided paired p-value of "``probs`` has a worse Brier score than ``reference``".

    With the per-row Brier scores ``d_i = b_i(probs) − b_i(reference)`` on the same rows,
    ``z = d̄ / (s_d / √n)`` (Diebold & Mariano 1995, the paired z-test) and
    ``p = 1 − Φ(z)``; identical scores give ``p = 1``.

    Parameters
    ----------
    probs, reference : numpy.ndarray
        ``(n, m)`` probabilities of the method and of the uncalibrated model.
    y : numpy.ndarray
        The labels of the same rows.

    Returns
    -------
    float
        The p-value; small when the method is worse.
    """
    d = brier_rows(probs, y) - brier_rows(reference, y)
    spread = float(np.std(d, ddof=1)) if d.size > 1 else 0.0
    if spread == 0.0:
        return 1.0 if float(np.mean(d)) <= 0 else 0.0
    return float(norm_sf(np.mean(d) / (spread / np.sqrt(d.size))))


def _scores(probs: np.ndarray, test: AuditData, coords: np.ndarray | None,
            kernel: tuple[np.ndarray, np.ndarray | None], groups: tuple[str, ...],
            gamma: float, n_resamples: int, seed: int, computation: str = "auto"
            ) -> dict[str, float]:
    """Every column of the table for one method's test probabilities; ``kernel`` holds the
    KLCE test's rows and their feature matrix (the same for every method of a split)."""
    y = test.y
    conf, correct = top_label_pair(probs, y)
    row = {"accuracy": metrics.accuracy(probs, y), "brier": metrics.brier(probs, y),
           "nll": metrics.nll(probs, y), "ece": metrics.ece(probs, y, N_BINS),
           "mce": metrics.mce(probs, y, N_BINS)}
    row["mlce"] = np.nan if coords is None else mlce(conf, correct, coords, gamma, N_BINS)
    p, t = (probs[:, 1], y) if test.is_binary else (conf, correct.astype(np.int64))
    rows, X = kernel
    row["klce_p"] = klce_p_value(p[rows], t[rows], X, n_resamples, seed, computation)
    worst = np.nan
    for column in groups:
        for _, mask in iter_groups(test.groups[column].to_numpy(), MIN_GROUP_ROWS):
            value = metrics.mce(probs[mask], y[mask], GROUP_BINS)
            worst = value if np.isnan(worst) else max(worst, value)
    row["max_group_mce"] = worst
    row["brier_worse_p"] = brier_worse_p_value(probs, test.probs, y)
    return row


def klce_computation(rows: int, n_resamples: int, tests: int) -> tuple[str, str]:
    """``(computation, reason)`` of a comparison's KLCE column, one choice for all its
    ``tests`` grid tests on ``rows`` test rows: :func:`core.kernels.computation.choose` with the
    columns of every test together, so the column is exact while the whole column takes
    about ``AUTO_SECONDS`` here, else random Fourier features (their level stays exact)."""
    label, reason = choose("auto", rows, tests * (n_resamples + 2) * len(KLCE_FACTORS) ** 2,
                           TEST_FEATURES)
    return ("exact" if label == "exact" else "rff"), f"{tests} tests: {reason}"


def klce_p_value(p: np.ndarray, t: np.ndarray, X: np.ndarray | None, n_resamples: int,
                 seed: int, computation: str = "auto") -> float:
    """Aggregated p-value of the KLCE grid test on a 3 × 3 grid: the median heuristic × (½,
    1, 2) for each kernel (the prediction kernel only without features)."""
    base = kernel_inputs(p, t, X)
    x_grid = bandwidth_grid(base.feature_bandwidth, KLCE_FACTORS) \
        if np.isfinite(base.feature_bandwidth) else None
    grid = klce_grid_test(p, t, X, prob_bandwidths=bandwidth_grid(base.prob_bandwidth,
                                                                  KLCE_FACTORS),
                          feature_bandwidths=x_grid, n_resamples=n_resamples, seed=seed,
                          n_features=TEST_FEATURES, computation=computation)
    return grid.aggregated.p_value


# --------------------------------------------------------------------------- the workflow


def _method_list(methods: Sequence[str] | Mapping[str, Mapping[str, object]]
                 ) -> dict[str, dict[str, object]]:
    items = methods.items() if isinstance(methods, Mapping) else \
        [(m, {}) if isinstance(m, str) else (m[0], dict(m[1])) for m in methods]
    chosen = {}
    for name, params in items:
        check_choice(name, tuple(RECALIBRATORS), "recalibration method")
        RECALIBRATORS[name].build(**dict(params))  # unknown or bad parameters raise here
        chosen[name] = dict(params)
    return chosen


def compare(
    audit: AuditData,
    methods: Sequence[str] | Mapping[str, Mapping[str, object]],
    features: Sequence[str] = (),
    groups: Sequence[str] = (),
    n_splits: int = 1,
    seed: int = 0,
    gamma: float | None = None,
    progress: Progress | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> Comparison:
    """Fit every method on calibration rows, score it on test rows (module docstring).

    Parameters
    ----------
    audit : AuditData
        The audited data; its ``split`` column (calibration/test) is used when present.
    methods : sequence of names, or mapping name → parameters
        Keys of :data:`RECALIBRATORS` (``make_recalibrator`` arguments as the values).
    features, groups : sequence of str
        Audit features (names of ``audit.feature_frame`` columns) for the local methods,
        the MLCE and the KLCE test; group attributes (``audit.groups`` columns) for the group
        methods and ``max_group_mce``.
    n_splits : int
        1: the data's own split (or one stratified seeded split when it has none); more:
        repeated random splits, mean and sd.
    seed : int
        Seed of the random splits and of the KLCE resamples.
    gamma : float, optional
        γ of the MLCE column (default 0.2, the LCE landscape page's).
    progress : callable, optional
        ``progress(fraction, message)`` after every method and split.
    n_resamples : int
        Resamples B of the KLCE grid test.

    Returns
    -------
    Comparison
        A method that cannot run on the data (multiclass-only on binary data, needs features
        or groups that are not chosen, or a fit that fails) is listed in ``skipped`` with the
        reason and left out of the table.
    """
    chosen = _method_list(methods)
    features = tuple(features)
    groups = tuple(groups)
    for name in features:
        check_choice(name, tuple(audit.feature_frame.columns), "audit feature")
    for name in groups:
        check_choice(name, tuple(audit.groups.columns), "group attribute")
    n_splits = check_count("n_splits", n_splits, 1)
    seed = check_seed(seed) or 0
    gamma = DEFAULT_GAMMA if gamma is None else check_positive("gamma", gamma, allow_inf=True)
    n_resamples = check_count("n_resamples", n_resamples, 1)
    splits, note = make_splits(audit, n_splits, seed)
    skipped = {name: reason for name in chosen if (reason := RECALIBRATORS[name].unavailable(
        audit.is_binary, bool(features), bool(groups))) is not None}
    runnable = [name for name in chosen if name not in skipped]
    steps = n_splits * (len(runnable) + 1)
    kernel_n = min(len(splits[0][1]), KERNEL_ROWS)
    computation, why = klce_computation(kernel_n, n_resamples, steps)
    rows: list[dict] = []
    first_probs: dict[str, np.ndarray] = {}
    first_test, first_coords = None, None
    done = 0
    for k, (cal_rows, test_rows) in enumerate(splits):
        calibration, test = audit.subset(cal_rows), audit.subset(test_rows)
        coords = mlce_space(calibration, test, features)
        if k == 0:
            first_test, first_coords = test, coords
        tested = row_sample(test.n, KERNEL_ROWS, seed + k)
        kernel = (tested, test.feature_matrix(features)[tested] if features else None)
        extras_cal = _extras(calibration, features, groups)
        extras_test = _extras(test, features, groups)
        outputs = {UNCALIBRATED: (test.probs, 0.0)}
        for name in runnable:
            if name in skipped:
                continue
            model = RECALIBRATORS[name].build(**chosen[name])
            start = time.perf_counter()
            try:
                model.fit(_layout(audit, calibration.probs), calibration.y, **extras_cal)
                seconds = time.perf_counter() - start
                q = np.asarray(model.predict(_layout(audit, test.probs), **extras_test))
            except ValueError as err:
                skipped[name] = str(err)
                continue
            outputs[name] = (q if q.ndim == 2 else np.column_stack([1.0 - q, q]), seconds)
        for name, (probs, seconds) in outputs.items():
            row = {"method": name, "split": k, **_scores(probs, test, coords, kernel, groups, gamma,
                                                         n_resamples, seed + k, computation),
                   "fit_seconds": seconds}
            rows.append(row)
            if k == 0:
                first_probs[name] = probs
            done += 1
            if progress is not None:
                progress(done / steps, f"split {k + 1} of {n_splits}: {name} scored")
    frame = pd.DataFrame(rows)
    frame = frame[frame["method"].isin([UNCALIBRATED, *[m for m in runnable
                                                        if m not in skipped]])]
    table = _summarise(frame, n_splits)
    first_probs = {name: first_probs[name] for name in table["method"]}
    sampled = () if first_test.n <= KERNEL_ROWS else (
        f"The KLCE test ran on a seeded sample of {KERNEL_ROWS:,} of the {first_test.n:,} test "
        "rows, the same rows for every method.",)
    approximate = () if computation == "exact" else (f"KLCE column: {why}.",)
    return Comparison(table, first_probs, first_test, first_coords, features, groups,
                      float(gamma), n_splits, n_resamples, skipped,
                      (note, *sampled, *approximate))


def _extras(data: AuditData, features: tuple[str, ...], groups: tuple[str, ...]) -> dict:
    return {"features": data.feature_matrix(features) if features else None,
            "groups": data.groups[list(groups)] if groups else None}


def _summarise(frame: pd.DataFrame, n_splits: int) -> pd.DataFrame:
    order = list(dict.fromkeys(frame["method"]))
    grouped = frame.groupby("method", sort=False)[list(METRICS)]
    table = grouped.mean().reindex(order)
    if n_splits > 1:
        sd = grouped.std(ddof=1).reindex(order).add_suffix("_sd")
        table = table.join(sd)
    return table.reset_index()
