"""E-processes for the calibration of a binary forecaster monitored row by row: the mean gap,
a binned calibration e-process (Arnold, Henzi & Ziegel 2023), a dispersion e-process that
bets on the calibration slope (Cox 1958), their average, and the same per group with a
family-wise guarantee.

**Guarantee.** Rows are in the order their outcomes were observed and each forecast ``p_t``
was issued before its outcome ``y_t``. Under the null hypothesis that the forecaster is
calibrated at every time given the past,

    H₀: E[y_t | F_{t−1}, p_t] = p_t   for every t,

each ``e_t`` below is a nonnegative martingale with ``e_0 = 1`` (a test martingale), so
``P(∃t: e_t ≥ 1/α) ≤ α`` (Ville's inequality): the chance of *ever* raising a false alarm
stays ≤ α however often the e-value is read — after every row, every month — and whatever
rule decides when to stop. ``F_{t−1}`` may hold anything known before ``y_t``: past rows,
``p_t`` itself, the row's group.

**The e-processes** (each a mixture of betting martingales, :mod:`core.monitor.betting`;
``x_t = y_t − p_t ∈ [−1, 1]``, ``λ_j`` the grid of bets):

* mean gap — ``M_t = mean_j ∏_{s≤t} (1 + λ_j x_s)``: bets that the average gap is not 0
  (a shift of the model's logit moves the gap everywhere in the same direction);
* binned — the forecasts are cut into ``B`` fixed bins of ``[0, 1]`` and each bin bets on its
  own rows, ``C_t = ∏_b C^b_t`` with ``C^b_t = ½ + ½ mean_j ∏_{s≤t, p_s ∈ b} (1 + λ_j x_s)``.
  The bin of ``p_s`` is known before ``y_s``, so this is the product e-process of Arnold et
  al. (2023, §3: e-values ``1 + λ_s(p_s)(y_s − p_s)`` whose bet depends on the forecast),
  and it tests ``E[y | p] = p`` bin by bin: an overconfident model (gaps of opposite sign
  in the low and high bins, mean gap 0) is found by it and not by ``M_t``. Half of every
  bin's wealth is held back (the bet 0), so a calibrated bin costs at most a factor 2;
* dispersion — ``D_t = mean_j ∏_{s≤t} (1 + λ_j x_s h_s)`` with the forecast-dependent
  weight ``h_s = clip((logit p_s − m) / (2 σ_{s−1}), −1, 1)``, the centre ``m = 0`` and the
  predictable scale ``σ²_{s−1} = (1 + Σ_{i<s} (logit p_i − m)²) / s`` (the root mean square
  of the past logits, one pseudo-row of 1 before the first). ``h_s`` is known before
  ``y_s``, so each factor has conditional mean 1 under H₀ (the construction of Arnold et
  al. 2023 with the bet ``λ_j h_s(p_s)``), and ``x_s h_s ∈ [−1, 1]``. It bets on the
  calibration slope: in Cox's (1958) recalibration model ``logit P(y = 1 | p) = a + b
  logit p`` the score of ``b`` at ``(a, b) = (0, 1)`` is ``Σ (y_s − p_s) logit p_s``, so
  ``D_t`` grows when the truth is more extreme than the forecasts (``b > 1``, an
  underconfident model) or less (``b < 1``, overconfident) — a change of the logit's scale,
  which leaves the mean gap near 0 and which neither ``M_t`` nor a coarse bin finds
  quickly. The line ``a + b z`` turns about ``z = 0`` in that model, hence ``m = 0``;
* combined (the default of :func:`calibration_eprocess`) — ``e_t = (M_t + C_t + D_t) / 3``,
  an average of test martingales on the same rows, hence a test martingale, at least a
  third of the best of the three.

**Per group** (:func:`group_eprocesses`): group g's e-process bets only on its rows. A group
alarms when its e-value reaches ``G/α`` (Bonferroni over the ``G`` groups monitored), so
``P(any group ever alarms falsely) ≤ Σ_g α/G = α``; the study in
``benchmarks/monitor_study.py`` measures this family-wise rate.

**Batches.** :class:`CalibrationState` and :class:`GroupState` carry every component's state
(each arm's wealth, each bin's and group's held wealth, the dispersion's running scale) from
one batch of rows to the next, so a table read in batches gets the e-values of one pass, bit
for bit; :func:`calibration_eprocess` and :func:`group_eprocesses` read their rows as one
batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logit

from core.data.validation import check_choice, check_count, check_fraction, check_probs_labels
from core.monitor.betting import (
    CellWealth,
    HeldSeries,
    MixtureWealth,
    anytime_p_values,
    bet_grid,
    e_values_of,
    first_crossing,
)

#: The e-processes of :func:`calibration_eprocess`.
METHODS = ("combined", "mean-gap", "binned", "dispersion")
#: The components each method averages.
COMPONENTS = {"combined": ("mean-gap", "binned", "dispersion"), "mean-gap": ("mean-gap",),
              "binned": ("binned",), "dispersion": ("dispersion",)}
#: Bins of the binned e-process: equal-width bins of [0, 1].
DEFAULT_BINS = 10
#: Forecasts are clipped to [ε, 1 − ε] before the dispersion's logit (|logit| ≤ 13.8).
LOGIT_CLIP = 1e-6
#: The centre ``m`` of the dispersion's weight: the logit about which Cox's recalibration line
#: ``a + b·logit p`` turns.
DISPERSION_CENTRE = 0.0


@dataclass(frozen=True)
class CalibrationEProcess:
    """A running e-value of calibration, its alarm and its anytime-valid p-value.

    Attributes
    ----------
    e_values : numpy.ndarray
        ``e_t`` after each row ``t = 1 … n`` (index ``t − 1``); in a
        :class:`~core.monitor.monitoring.MonitorResult` of a streamed table, at its kept
        ``rows`` only.
    alarm : int or None
        The first row index (0-based) where ``e_t ≥ threshold``, or None.
    alpha : float
        The level: the chance of ever alarming on a calibrated stream is at most ``alpha``.
    threshold : float
        The alarm line, ``1/alpha`` (``G/alpha`` for one of G groups).
    method : str
        Which e-process (:data:`METHODS`).
    components : dict of str to numpy.ndarray
        The e-processes averaged into ``e_values`` (``mean-gap``, ``binned``,
        ``dispersion``), at the same rows.
    peaks : numpy.ndarray or None
        ``max_{s≤t} e_s`` at the rows of ``e_values`` when they are not every row (a
        streamed table); None: every row, the peaks follow from ``e_values``.
    """

    e_values: np.ndarray
    alarm: int | None
    alpha: float
    threshold: float
    method: str
    components: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    peaks: np.ndarray | None = field(default=None, repr=False)

    @property
    def p_values(self) -> np.ndarray:
        """The anytime-valid p-value after each row, ``min(1, 1 / max_{s≤t} e_s)``."""
        if self.peaks is None:
            return anytime_p_values(np.log(self.e_values))
        return np.minimum(1.0, np.exp(-np.log(self.peaks)))

    @property
    def p_value(self) -> float:
        """The anytime-valid p-value after the last row."""
        return float(self.p_values[-1])

    @property
    def max_e_value(self) -> float:
        """The largest e-value so far."""
        return float(np.max(self.e_values) if self.peaks is None else self.peaks[-1])


def binary_forecast(probs: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validated ``P(y = 1)`` as ``(n,)`` and 0/1 labels; an ``(n, 2)`` matrix gives its
    second column. More classes raise ValueError (monitor each class one-vs-rest)."""
    p, labels = check_probs_labels(probs, y)
    if p.ndim == 2:
        if p.shape[1] != 2:
            raise ValueError(
                f"Monitoring over time is for binary forecasts; probs has {p.shape[1]} classes. "
                "Monitor each class's probability against 'label == class' instead.")
        p = p[:, 1]
    return p, labels


class DispersionWealth:
    """The dispersion e-process (module docstring) read batch by batch: its mixture's arms
    and the running sum of squared centred logits are carried."""

    def __init__(self) -> None:
        self.wealth = MixtureWealth(bet_grid())
        self.squares = 1.0  # one pseudo-row of (logit − m)² = 1 before the first row
        self.count = 1

    def update(self, p: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """``log D_t`` after each row of the batch."""
        z = logit(np.clip(p, LOGIT_CLIP, 1.0 - LOGIT_CLIP)) - DISPERSION_CENTRE
        before = np.cumsum(np.concatenate([[self.squares], z * z]))
        scale = np.sqrt(before[:-1] / (self.count + np.arange(p.shape[0])))
        self.squares, self.count = float(before[-1]), self.count + p.shape[0]
        return self.wealth.update((labels - p) * np.clip(z / (2.0 * scale), -1.0, 1.0))


class CalibrationState:
    """The components of one calibration e-process, read batch by batch in time order.

    Parameters
    ----------
    method : str
        One of :data:`METHODS`.
    n_bins : int
        Equal-width bins of the binned e-process.
    """

    def __init__(self, method: str, n_bins: int) -> None:
        self.n_bins = n_bins
        names = COMPONENTS[method]
        self.mean_gap = MixtureWealth(bet_grid()) if "mean-gap" in names else None
        self.binned = CellWealth(n_bins, bet_grid(), 0.5) if "binned" in names else None
        self.dispersion = DispersionWealth() if "dispersion" in names else None

    def update(self, p: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
        """``log e_t`` of each component after each row of the batch (unchecked inputs)."""
        x = labels - p
        parts = {}
        if self.mean_gap is not None:
            parts["mean-gap"] = self.mean_gap.update(x)
        if self.binned is not None:
            bins = np.minimum((p * self.n_bins).astype(np.int64), self.n_bins - 1)
            parts["binned"] = self.binned.update(x, bins).sum(axis=0)
        if self.dispersion is not None:
            parts["dispersion"] = self.dispersion.update(p, labels)
        return parts


def combine(parts: dict[str, np.ndarray]) -> np.ndarray:
    """``log`` of the average of the components' e-values."""
    return np.logaddexp.reduce(np.stack(list(parts.values())), axis=0) - np.log(len(parts))


def calibration_eprocess(probs: ArrayLike, y: ArrayLike, alpha: float = 0.05,
                         method: str = "combined",
                         n_bins: int = DEFAULT_BINS) -> CalibrationEProcess:
    """The running e-value of ``H₀: E[y_t | past, p_t] = p_t`` after every row, and its alarm.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` forecasts ``P(y_t = 1)`` (or an ``(n, 2)`` matrix), **in the order the
        outcomes were observed**; each issued before its outcome.
    y : array_like
        ``(n,)`` outcomes 0/1.
    alpha : float
        The level; the alarm line is ``1/alpha``.
    method : {'combined', 'mean-gap', 'binned', 'dispersion'}
        ``mean-gap``: ``M_t = mean_j ∏_{s≤t}(1 + λ_j (y_s − p_s))``; ``binned``: the product
        over ``n_bins`` bins of ``p`` of each bin's half-held mixture (Arnold et al. 2023);
        ``dispersion``: ``mean_j ∏_{s≤t}(1 + λ_j (y_s − p_s) h_s)`` with ``h_s`` the clipped,
        scaled logit of ``p_s`` (the calibration slope, Cox 1958); ``combined``:
        ``(M_t + C_t + D_t)/3`` (module docstring).
    n_bins : int
        Equal-width bins of the binned e-process.

    Returns
    -------
    CalibrationEProcess
        ``e_values`` (length n), ``alarm`` (first row index with ``e_t ≥ 1/alpha``, or
        None), the anytime-valid ``p_values``.

    Raises
    ------
    ValueError
        Probabilities outside [0, 1], labels other than 0/1, lengths that differ, an
        unknown method or a level outside (0, 1).
    """
    p, labels = binary_forecast(probs, y)
    alpha = check_fraction("alpha", alpha)
    check_choice(method, METHODS, "monitoring method")
    n_bins = check_count("n_bins", n_bins, 1)
    parts = CalibrationState(method, n_bins).update(p, labels)
    log_e = combine(parts)
    return CalibrationEProcess(
        e_values=e_values_of(log_e), alarm=first_crossing(log_e, 1.0 / alpha), alpha=alpha,
        threshold=1.0 / alpha, method=method,
        components={name: e_values_of(values) for name, values in parts.items()})


@dataclass(frozen=True)
class GroupEProcesses:
    """Per-group calibration e-processes with a family-wise alarm (Bonferroni).

    Attributes
    ----------
    levels : tuple of str
        The groups monitored, in order.
    processes : dict of str to CalibrationEProcess
        Each group's e-process at every row of the stream (constant on other groups' rows),
        with ``threshold = len(levels)/alpha``.
    rows : dict of str to int
        Each group's number of rows.
    alpha : float
        The family-wise level.
    """

    levels: tuple[str, ...]
    processes: dict[str, CalibrationEProcess]
    rows: dict[str, int]
    alpha: float

    @property
    def threshold(self) -> float:
        """Each group's alarm line, ``G/alpha``."""
        return len(self.levels) / self.alpha

    @property
    def first_alarm(self) -> tuple[str, int] | None:
        """The group that alarmed first and the row index, or None."""
        alarms = [(e.alarm, level) for level, e in self.processes.items() if e.alarm is not None]
        if not alarms:
            return None
        row, level = min(alarms)
        return level, row


class GroupState:
    """Per-group calibration e-processes along a stream read batch by batch: group k's
    :class:`CalibrationState` reads only its rows, and each component is held on the other
    groups' rows (:class:`~core.monitor.betting.HeldSeries`).

    Parameters
    ----------
    codes : sequence of int
        The group codes monitored.
    method : str
        One of :data:`METHODS`.
    n_bins : int
        Bins of the binned e-process.
    """

    def __init__(self, codes, method: str, n_bins: int) -> None:
        self.states = {int(k): CalibrationState(method, n_bins) for k in codes}
        self.held = {int(k): {name: HeldSeries() for name in COMPONENTS[method]}
                     for k in codes}

    def update(self, p: np.ndarray, labels: np.ndarray,
               codes: np.ndarray) -> dict[int, dict[str, np.ndarray]]:
        """Each group's components' ``log e_t`` at each row of the batch (``codes``: each
        row's group code)."""
        out = {}
        for k, state in self.states.items():
            rows = np.flatnonzero(codes == k)
            parts = state.update(p[rows], labels[rows])
            out[k] = {name: self.held[k][name].spread(values, rows, p.shape[0])
                      for name, values in parts.items()}
        return out


def group_eprocesses(probs: ArrayLike, y: ArrayLike, groups: ArrayLike, alpha: float = 0.05,
                     method: str = "combined", n_bins: int = DEFAULT_BINS,
                     min_rows: int = 1) -> GroupEProcesses:
    """One calibration e-process per group, alarms family-wise at level ``alpha``.

    Group g's e-process is :func:`calibration_eprocess` of its own rows, carried along the
    stream (a test martingale on the whole stream: the group of row t is known before
    ``y_t``). Group g alarms when ``e^g_t ≥ G/alpha``; by Ville and a union bound,
    ``P(∃g, t: e^g_t ≥ G/alpha) ≤ alpha`` under calibration in every group.

    Parameters
    ----------
    probs, y : array_like
        As in :func:`calibration_eprocess`, in time order.
    groups : array_like
        ``(n,)`` group of every row (any values; compared as text).
    alpha : float
        The family-wise level.
    method, n_bins
        As in :func:`calibration_eprocess`.
    min_rows : int
        Groups with fewer rows are not monitored (they do not count in G).

    Returns
    -------
    GroupEProcesses

    Raises
    ------
    ValueError
        As :func:`calibration_eprocess`, or ``groups`` of another length.
    """
    p, labels = binary_forecast(probs, y)
    alpha = check_fraction("alpha", alpha)
    check_choice(method, METHODS, "monitoring method")
    n_bins = check_count("n_bins", n_bins, 1)
    min_rows = check_count("min_rows", min_rows, 1)
    names = np.asarray(groups).astype(str)
    if names.shape != p.shape:
        raise ValueError(f"groups must hold one value per row: there are {p.shape[0]} "
                         f"forecasts and {names.size} group values.")
    levels, codes = np.unique(names, return_inverse=True)
    counts = np.bincount(codes, minlength=len(levels))
    kept = [k for k in range(len(levels)) if counts[k] >= min_rows]
    threshold = max(len(kept), 1) / alpha
    carried = GroupState(kept, method, n_bins).update(p, labels, codes)
    processes, rows = {}, {}
    for k in kept:
        log_e = combine(carried[k])
        level = str(levels[k])
        processes[level] = CalibrationEProcess(
            e_values=e_values_of(log_e), alarm=first_crossing(log_e, threshold), alpha=alpha,
            threshold=threshold, method=method,
            components={name: e_values_of(v) for name, v in carried[k].items()})
        rows[level] = int(counts[k])
    return GroupEProcesses(tuple(processes), processes, rows, alpha)
