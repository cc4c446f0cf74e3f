"""Type-I and Type-II error of the credal-set tests on the paper's simulations (Figs. 3–4).

    python -m benchmarks.credal_study [--reps 100] [--resamples 100] [--jobs 2]
                                      [--settings binary-h0-constant,...] [--estimators ce2,...]
                                      [--null bootstrap|consistency]

For each setting of :data:`core.ensembles.SETTINGS`, each repetition draws a fresh data set of
1,200 rows, split into 400 optimisation, 400 validation and 400 test rows (the paper:
N_opt = N_test = 400), and runs the three tests — learned λ(x) (Algorithm 1), the ensemble
mean ("Avg. + npbe") and constant Dir(1)-sampled weights (Mortier et al.) — with each
estimator on the same test rows, B = ``--resamples`` bootstrap resamples, rejecting at
p ≤ α = 0.05. Under H0 the rejection rate is the Type-I error; under H1 one minus it is the
Type-II error. Each rate r over R repetitions is printed with its binomial standard error
√(r(1 − r)/R) (at r = 0 or 1: the standard error at α, √(α(1 − α)/R), as a scale).

Repetitions run in ``--jobs`` worker processes (each with single-threaded BLAS). The last
column compares the mean seconds per test with the mean test's, measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor
from itertools import product

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from core.ensembles import SETTINGS, WEIGHTS, credal_test, simulate  # noqa: E402

ALPHA = 0.05
N_ROWS = 1200
SPLIT = (1 / 3, 1 / 3, 1 / 3)
ESTIMATOR_KEYS = ("ce2", "cekl", "skce")


def one_repetition(task: tuple[str, int, tuple[str, ...], int, str]) -> dict:
    """p-values and seconds of every (estimator, weights) test on one simulated data set."""
    setting, rep, estimators, resamples, null = task
    members, y, X, _ = simulate(setting, n=N_ROWS, seed=10_000 + rep)
    out = {}
    for estimator, weights in product(estimators, WEIGHTS):
        start = time.perf_counter()
        result = credal_test(members, y, X, estimator=estimator, weights=weights,
                             n_resamples=resamples, split=SPLIT, seed=rep, null=null)
        out[(estimator, weights)] = (result.p_value, time.perf_counter() - start)
    return out


def study(settings: list[str], estimators: tuple[str, ...], reps: int, resamples: int,
          jobs: int, null: str = "bootstrap") -> list[dict]:
    rows = []
    with ProcessPoolExecutor(jobs) as pool:
        for setting in settings:
            start = time.perf_counter()
            tasks = [(setting, rep, estimators, resamples, null) for rep in range(reps)]
            results = list(pool.map(one_repetition, tasks))
            done = len(rows)
            for estimator, weights in product(estimators, WEIGHTS):
                p = np.array([r[(estimator, weights)][0] for r in results])
                seconds = np.mean([r[(estimator, weights)][1] for r in results])
                base = np.mean([r[(estimator, "mean")][1] for r in results])
                rows.append({"setting": setting, "estimator": estimator, "weights": weights,
                             "rate": float(np.mean(p <= ALPHA)), "reps": reps,
                             "seconds": float(seconds), "ratio": float(seconds / base)})
            print(table(rows[done:]), flush=True)
            print(f"# {setting}: {time.perf_counter() - start:.0f} s", flush=True)
    return rows


def standard_error(rate: float, reps: int) -> float:
    r = rate if 0 < rate < 1 else ALPHA
    return float(np.sqrt(r * (1 - r) / reps))


def table(rows: list[dict]) -> str:
    """Markdown: one row per setting × estimator, Type-I (H0) or Type-II (H1) error ± SE."""
    lines = ["| setting | truth | estimator | error | " + " | ".join(WEIGHTS) + " |",
             "|---|---|---|---|" + "---:|" * len(WEIGHTS)]
    keyed = {(r["setting"], r["estimator"], r["weights"]): r for r in rows}
    for setting, estimator in dict.fromkeys((r["setting"], r["estimator"]) for r in rows):
        spec = SETTINGS[setting]
        kind = "Type I" if spec.null_true else "Type II"
        cells = []
        for weights in WEIGHTS:
            r = keyed[(setting, estimator, weights)]
            error = r["rate"] if spec.null_true else 1 - r["rate"]
            cells.append(f"{error:.3f} ± {standard_error(r['rate'], r['reps']):.3f}")
        lines.append(f"| {setting} | {spec.label} | {estimator} | {kind} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--settings", default=",".join(SETTINGS))
    parser.add_argument("--estimators", default=",".join(ESTIMATOR_KEYS))
    parser.add_argument("--null", default="bootstrap", choices=("bootstrap", "consistency"),
                        help="rows drawn with replacement (Algorithm 1) or kept")
    args = parser.parse_args()
    settings = args.settings.split(",")
    estimators = tuple(args.estimators.split(","))
    print(f"Credal-set tests: {args.reps} repetitions, B = {args.resamples}, n = {N_ROWS} "
          f"(400 / 400 / 400), α = {ALPHA}, null: {args.null}")
    rows = study(settings, estimators, args.reps, args.resamples, args.jobs, args.null)
    print(table(rows))
    print()
    print("Seconds per test (mean over repetitions) and ratio to the mean-weights test:")
    for r in rows:
        print(f"  {r['setting']:<24} {r['estimator']:<5} {r['weights']:<8} "
              f"{r['seconds']:6.2f} s  ×{r['ratio']:.2f}")


if __name__ == "__main__":
    main()
