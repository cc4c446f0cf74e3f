"""False alarms and detection delays of the monitoring e-processes (core.monitor), against the
fixed-sample test read again every period.

    .venv/bin/python -m benchmarks.monitor_study [--reps 400] [--n 20000] [--looks 20]
        [--onset 10000] [--window 4000] [--alpha 0.05] [--seed 0]

Streams are ``core.monitor.drifting_stream``: forecasts ``σ(z)``, ``z ~ N(−0.9, 1.2²)``,
outcomes from ``σ(z)`` (calibrated) or, from row ``--onset``, from ``σ(scale·z + shift)``.

1. **False alarms.** ``--reps`` calibrated streams of ``--n`` rows, every e-process read
   after every row (alarm: ever ``e_t ≥ 1/α``), next to the naive fixed-sample tests read
   after each of ``--looks`` equal periods ("monthly": 20 looks of 1,000 rows) on all rows so
   far — the z-test of the mean gap ``Σ(y − p)/√Σ p(1 − p)`` and Hosmer–Lemeshow (10 bins) —
   and read once at the end. Alarm rate ± binomial SE √(r(1 − r)/R).
2. **Detection.** Logit shift 0.5 and 0.3, logit scale 1.3 and 1/1.3 from ``--onset``: the
   share of streams alarmed within ``--window`` rows of the onset, the median delay, the
   share never alarmed by row n, and the share alarmed before the onset (false alarms). Each
   e-process of ``calibration_eprocess`` (combined, and its mean-gap, binned and dispersion
   components alone), and the dispersion e-process with another centre — the running mean
   of the past logits instead of 0 — to show why the library's centre is 0.
3. **Groups.** Five groups of shares 0.58/0.19/0.14/0.06/0.03 (the census demo's races),
   calibrated: the family-wise rate of any group alarming with Bonferroni (each at G/α)
   against each group at 1/α; then a logit shift of 0.5 for the group of share 0.14 from
   the onset: who alarms and when.
4. **Confidence sequences.** The share of calibrated streams whose gap sequence ever
   excludes 0 (bound: α).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import logit
from scipy.stats import norm

from core.monitor import calibration_eprocess, gap_confidence_sequence, group_eprocesses
from core.monitor.betting import bet_grid, first_crossing, log_mixture_wealth
from core.monitor.eprocesses import LOGIT_CLIP
from core.monitor.simulate import drifting_stream
from core.stattests.goodness_of_fit import hosmer_lemeshow

GROUP_SHARES = (0.58, 0.19, 0.14, 0.06, 0.03)
DRIFTS = {"shift 0.5": {"shift": 0.5}, "shift 0.3": {"shift": 0.3},
          "scale 1.3": {"scale": 1.3}, "scale 1/1.3": {"scale": 1 / 1.3}}
METHODS = ("combined", "mean-gap", "binned", "dispersion", "dispersion, m = running mean")


def cell(rate: float, reps: int) -> str:
    """``'0.043 ± 0.010'``: a rate and its binomial standard error."""
    return f"{rate:.3f} ± {np.sqrt(rate * (1 - rate) / reps):.3f}"


def running_centre_dispersion(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``log D_t`` of the dispersion e-process centred at the running mean of the past logits
    (``m_t = mean_{i<t} logit p_i``, 0 before the first row) instead of 0, with the same
    scale ``σ²_{t−1} = (1 + Σ_{i<t} (logit p_i − m_i)²) / t``: also a test martingale (both
    are known before ``y_t``)."""
    z = logit(np.clip(p, LOGIT_CLIP, 1 - LOGIT_CLIP))
    t = np.arange(p.shape[0])
    centre = np.concatenate([[0.0], np.cumsum(z)[:-1] / np.maximum(t[1:], 1)])
    centred = z - centre
    scale = np.sqrt(np.concatenate([[1.0], 1.0 + np.cumsum(centred ** 2)[:-1]]) / (t + 1))
    return log_mixture_wealth((y - p) * np.clip(centred / (2 * scale), -1, 1), bet_grid())


def alarms_of(p: np.ndarray, y: np.ndarray, alpha: float) -> dict[str, int | None]:
    """The first alarm row of the combined e-process, of each component alone and of the
    dispersion e-process centred at the running mean."""
    result = calibration_eprocess(p, y, alpha)
    out = {"combined": result.alarm}
    for name, values in result.components.items():
        hits = np.flatnonzero(values >= 1 / alpha)
        out[name] = int(hits[0]) if hits.size else None
    out[METHODS[-1]] = first_crossing(running_centre_dispersion(p, y), 1 / alpha)
    return out


def naive_rejections(p: np.ndarray, y: np.ndarray, looks: int, alpha: float) -> dict[str, bool]:
    """Whether the fixed-sample z-test of the mean gap and Hosmer–Lemeshow reject at any of
    ``looks`` equally spaced looks (all rows so far), and at the last look only."""
    n = p.shape[0]
    z_crit = norm.ppf(1 - alpha / 2)
    ends = np.linspace(n / looks, n, looks).astype(int)
    z_any = hl_any = False
    for end in ends:
        z = np.sum(y[:end] - p[:end]) / np.sqrt(np.sum(p[:end] * (1 - p[:end])))
        z_any |= abs(z) > z_crit
        hl_any |= hosmer_lemeshow(p[:end], y[:end]).p_value < alpha
    z_last = abs(np.sum(y - p) / np.sqrt(np.sum(p * (1 - p)))) > z_crit
    return {"z any": bool(z_any), "hl any": bool(hl_any), "z last": bool(z_last),
            "hl last": bool(hosmer_lemeshow(p, y).p_value < alpha)}


def false_alarms(options: argparse.Namespace) -> None:
    reps, alpha = options.reps, options.alpha
    counts = dict.fromkeys([*METHODS, "z any", "hl any", "z last", "hl last"], 0)
    for r in range(reps):
        p, y, _ = drifting_stream(options.n, options.seed + r)
        for name, alarm in alarms_of(p, y, alpha).items():
            counts[name] += alarm is not None
        for name, rejected in naive_rejections(p, y, options.looks, alpha).items():
            counts[name] += rejected
    se = np.sqrt(alpha * (1 - alpha) / reps)
    print(f"\n## False alarms: {reps} calibrated streams of {options.n:,} rows, α = {alpha}"
          f" (α + 2 SE = {alpha + 2 * se:.3f})\n")
    print("| test | read | alarm rate ± SE |\n|---|---|---|")
    for name in METHODS:
        print(f"| e-process, {name} | after every row ({options.n:,} looks) | "
              f"{cell(counts[name] / reps, reps)} |")
    print(f"| z-test of the mean gap | after every period ({options.looks} looks) | "
          f"{cell(counts['z any'] / reps, reps)} |")
    print(f"| Hosmer–Lemeshow (10 bins) | after every period ({options.looks} looks) | "
          f"{cell(counts['hl any'] / reps, reps)} |")
    print(f"| z-test of the mean gap | once, at the end | {cell(counts['z last'] / reps, reps)} |")
    print(f"| Hosmer–Lemeshow (10 bins) | once, at the end | "
          f"{cell(counts['hl last'] / reps, reps)} |")


def detection(options: argparse.Namespace) -> None:
    reps, onset, window = options.reps, options.onset, options.window
    print(f"\n## Detection: drift from row {onset:,} of {options.n:,}, {reps} streams each\n")
    print(f"| drift | e-process | alarmed within {window:,} rows | median delay | never | "
          "before the onset |\n|---|---|---|---|---|---|")
    for label, drift in DRIFTS.items():
        delays = {name: [] for name in METHODS}
        for r in range(reps):
            p, y, _ = drifting_stream(options.n, options.seed + 10_000 + r, onset=onset,
                                      **drift)
            for name, alarm in alarms_of(p, y, options.alpha).items():
                delays[name].append(np.inf if alarm is None else alarm - onset)
        for name in METHODS:
            d = np.array(delays[name])
            within = np.mean((d >= 0) & (d <= window))
            median = np.median(d[d >= 0]) if np.any(d >= 0) else np.inf
            shown = f"{median:,.0f}" if np.isfinite(median) else "∞"
            print(f"| {label} | {name} | {cell(within, reps)} | {shown} | "
                  f"{np.mean(np.isinf(d)):.3f} | {np.mean(d < 0):.3f} |")


def groups(options: argparse.Namespace) -> None:
    reps, alpha = options.reps, options.alpha
    bonferroni = naive = 0
    for r in range(reps):
        p, y, g = drifting_stream(options.n, options.seed + 20_000 + r,
                                  group_shares=GROUP_SHARES)
        family = group_eprocesses(p, y, g, alpha)
        bonferroni += family.first_alarm is not None
        naive += any(np.any(e.e_values >= 1 / alpha) for e in family.processes.values())
    print(f"\n## Groups: {len(GROUP_SHARES)} groups (shares {GROUP_SHARES}), {reps} calibrated "
          f"streams of {options.n:,} rows\n")
    print("| alarm rule | family-wise false-alarm rate ± SE |\n|---|---|")
    print(f"| Bonferroni: each group at G/α = {len(GROUP_SHARES) / alpha:g} | "
          f"{cell(bonferroni / reps, reps)} |")
    print(f"| each group at 1/α = {1 / alpha:g} (no correction) | {cell(naive / reps, reps)} |")
    first, delays = [], []
    for r in range(reps):
        p, y, g = drifting_stream(options.n, options.seed + 30_000 + r, onset=options.onset,
                                  shift=0.5, group_shares=GROUP_SHARES, drift_group=2)
        alarm = group_eprocesses(p, y, g, alpha).first_alarm
        first.append(None if alarm is None else alarm[0])
        delays.append(np.inf if alarm is None else alarm[1] - options.onset)
    d = np.array(delays)
    right = np.mean([f == "2" for f in first])
    print(f"\nShift 0.5 for the group of share 0.14 from row {options.onset:,}: the first "
          f"group to alarm is the drifting one in {cell(right, reps)} of streams; median "
          f"delay {np.median(d[np.isfinite(d)]) if np.isfinite(d).any() else np.inf:,.0f} "
          f"rows; alarmed within {options.window:,} rows in "
          f"{cell(np.mean((d >= 0) & (d <= options.window)), reps)}; never "
          f"{np.mean(np.isinf(d)):.3f}.")


def sequences(options: argparse.Namespace) -> None:
    reps = options.reps
    misses = sum(gap_confidence_sequence(*drifting_stream(options.n, options.seed + 40_000 + r)
                                         [:2], options.alpha).excludes_zero().any()
                 for r in range(reps))
    print(f"\n## Confidence sequence of the running gap: {reps} calibrated streams of "
          f"{options.n:,} rows\n\nEver excludes 0 (bound α = {options.alpha}): "
          f"{cell(misses / reps, reps)}.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--looks", type=int, default=20)
    parser.add_argument("--onset", type=int, default=10_000)
    parser.add_argument("--window", type=int, default=4_000)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    start = time.perf_counter()
    for section in (false_alarms, detection, groups, sequences):
        section(options)
    print(f"\n(total {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
