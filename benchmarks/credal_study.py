"""Type-I and Type-II error of the credal-set tests on the paper's simulations (Figs. 3–4).

    python -m benchmarks.credal_study [--reps 100] [--resamples 100] [--jobs 2]
                                      [--settings binary-h0-constant,...] [--estimators ce2,...]
                                      [--null bootstrap|consistency|refit] [--sizes 400,400,400]
                                      [--oracle] [--start 0]

For each setting of :data:`core.ensembles.SETTINGS`, each repetition draws a fresh data set of
``--sizes`` rows — by default 1,200, split into 400 optimisation, 400 validation and 400 test
rows (the paper, App. E.1 and Fig. 3: N_opt = N_test = 400; the validation rows, for early
stopping, are ours) — and runs the three tests — learned λ(x) (Algorithm 1), the ensemble
mean ("Avg. + npbe") and constant Dir(1)-sampled weights (Mortier et al.) — with each
estimator on the same test rows, B = ``--resamples`` bootstrap resamples, rejecting at
p ≤ α = 0.05. Under H0 the rejection rate is the Type-I error; under H1 one minus it is the
Type-II error. Each rate r over R repetitions is printed with its binomial standard error
√(r(1 − r)/R) (at r = 0 or 1: the standard error at α, √(α(1 − α)/R), as a scale).

``--oracle`` adds, on the H0 settings, the same bootstrap test of the *true* combination f*
(the simulation's truth, which lies in the credal set) on the same test rows. It needs no
weights to be learned, so its rejection rate separates the two sources of a liberal learned
test: an estimator bias the bootstrap does not reproduce (the oracle is liberal too) and the
learned weights' generalisation error (only the learned test is). ``--sizes`` changes the
three parts, e.g. ``--sizes 1600,400,400`` for four times as many optimisation rows.
``--start`` is the first repetition (its data set has seed 10,000 + start), so a study can be
extended: ``--start 100 --reps 100`` adds repetitions 100–199 to a 100-repetition run.
``--null refit`` gives the learned test the null of the whole procedure (labels of every row
redrawn from f_λ̂ and λ(x) learned again in each resample, :func:`core.ensembles.test.refit_null`);
the oracle and the two baselines then keep their test rows, as with ``consistency``.

Repetitions run in ``--jobs`` worker processes (each with single-threaded BLAS). The last
column compares the mean seconds per test with the mean test's, measured in the same run.
The measured tables, the commands that produced them and what they show are in the README
("The credal-set test on the paper's simulations").
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor
from itertools import product

if __name__ == "__main__":  # one BLAS thread per worker; left alone when imported (tests)
    for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

from core.ensembles import (  # noqa: E402
    ESTIMATORS,
    NULLS,
    SETTINGS,
    WEIGHTS,
    credal_test,
    simulate,
)
from core.ensembles.test import bootstrap_null  # noqa: E402
from core.stattests.result import resampling_p_value

ALPHA = 0.05
SIZES = (400, 400, 400)
ESTIMATOR_KEYS = ("ce2", "cekl", "skce")
ORACLE = "oracle"


def oracle_p_value(truth: np.ndarray, y: np.ndarray, rows: np.ndarray, estimator: str,
                   resamples: int, null: str, seed: int) -> float:
    """p-value of the bootstrap test (Algorithm 1, lines 5–19) of the true combination f* on
    the test rows: no weights learned."""
    F = truth[rows] if truth.ndim == 2 else np.column_stack([1 - truth[rows], truth[rows]])
    spec = ESTIMATORS[estimator]
    h = spec.bandwidth_for(F, None)
    values = bootstrap_null(F, estimator, h, resamples, np.random.default_rng(seed), null=null)
    return resampling_p_value(spec.value(F, y[rows], h), values)


def one_repetition(task: tuple[str, int, tuple[str, ...], int, str, tuple[int, int, int], bool]
                   ) -> dict:
    """p-values and seconds of every (estimator, weights) test on one simulated data set."""
    setting, rep, estimators, resamples, null, sizes, oracle = task
    n = sum(sizes)
    members, y, X, truth = simulate(setting, n=n, seed=10_000 + rep)
    split = tuple(part / n for part in sizes)
    out = {}
    for estimator, weights in product(estimators, WEIGHTS):
        start = time.perf_counter()
        result = credal_test(members, y, X, estimator=estimator, weights=weights,
                             n_resamples=resamples, split=split, seed=rep, null=null)
        out[(estimator, weights)] = (result.p_value, time.perf_counter() - start)
        if oracle and weights == "mean":
            start = time.perf_counter()
            p = oracle_p_value(truth, y, result.rows, estimator, resamples, null, 20_000 + rep)
            out[(estimator, ORACLE)] = (p, time.perf_counter() - start)
    return out


def study(settings: list[str], estimators: tuple[str, ...], reps: int, resamples: int,
          jobs: int, null: str = "bootstrap", sizes: tuple[int, int, int] = SIZES,
          oracle: bool = False, first: int = 0) -> list[dict]:
    rows = []
    with ProcessPoolExecutor(jobs) as pool:
        for setting in settings:
            start = time.perf_counter()
            with_oracle = oracle and SETTINGS[setting].null_true
            tasks = [(setting, rep, estimators, resamples, null, sizes, with_oracle)
                     for rep in range(first, first + reps)]
            results = list(pool.map(one_repetition, tasks))
            done = len(rows)
            columns = (*WEIGHTS, ORACLE) if with_oracle else WEIGHTS
            for estimator, weights in product(estimators, columns):
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
    """Markdown: one row per setting × estimator, Type-I (H0) or Type-II (H1) error ± SE, and
    the repetitions; an oracle column when any row has one ("—" where not run)."""
    keyed = {(r["setting"], r["estimator"], r["weights"]): r for r in rows}
    columns = (*WEIGHTS, ORACLE) if any(r["weights"] == ORACLE for r in rows) else WEIGHTS
    lines = ["| setting | truth | estimator | reps | error | " + " | ".join(columns) + " |",
             "|---|---|---|---:|---|" + "---:|" * len(columns)]
    for setting, estimator in dict.fromkeys((r["setting"], r["estimator"]) for r in rows):
        spec = SETTINGS[setting]
        kind = "Type I" if spec.null_true else "Type II"
        cells = []
        for weights in columns:
            r = keyed.get((setting, estimator, weights))
            if r is None:
                cells.append("—")
                continue
            error = r["rate"] if spec.null_true else 1 - r["rate"]
            cells.append(f"{error:.3f} ± {standard_error(r['rate'], r['reps']):.3f}")
        reps = keyed[(setting, estimator, WEIGHTS[0])]["reps"]
        lines.append(f"| {setting} | {spec.label} | {estimator} | {reps} | {kind} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--settings", default=",".join(SETTINGS))
    parser.add_argument("--estimators", default=",".join(ESTIMATOR_KEYS))
    parser.add_argument("--null", default="bootstrap", choices=NULLS,
                        help="the null: test rows drawn with replacement (Algorithm 1), kept "
                             "(consistency), or the learned weights refitted in every "
                             "resample (refit; B network fits per learned test)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        help="optimisation, validation and test rows")
    parser.add_argument("--start", type=int, default=0,
                        help="first repetition (extends an earlier run with other data sets)")
    parser.add_argument("--oracle", action="store_true",
                        help="also test the true combination on the H0 settings")
    args = parser.parse_args()
    settings = args.settings.split(",")
    estimators = tuple(args.estimators.split(","))
    sizes = tuple(int(part) for part in args.sizes.split(","))
    if len(sizes) != 3:
        parser.error("--sizes takes three row counts: optimisation, validation, test")
    print(f"Credal-set tests: {args.reps} repetitions from {args.start}, B = {args.resamples}, "
          f"n = {sum(sizes)} ({' / '.join(map(str, sizes))}), α = {ALPHA}, null: {args.null}")
    started = time.perf_counter()
    rows = study(settings, estimators, args.reps, args.resamples, args.jobs, args.null, sizes,
                 args.oracle, args.start)
    print(table(rows))
    print()
    print("Seconds per test (mean over repetitions) and ratio to the mean-weights test:")
    for r in rows:
        print(f"  {r['setting']:<24} {r['estimator']:<5} {r['weights']:<8} "
              f"{r['seconds']:6.2f} s  ×{r['ratio']:.2f}")
    print(f"Wall time: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
