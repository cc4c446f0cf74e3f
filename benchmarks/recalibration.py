"""Fit and predict time of every recalibration method, against scikit-learn where it has one.

    .venv/bin/python -m benchmarks.recalibration [--n 100000] [--n-multi 50000] [--classes 10]
                                                 [--methods platt,isotonic,...]

Each method is fitted on n calibration rows and predicts n further rows of a synthetic
problem: binary (an overconfident logistic model, 3 audit features, a group attribute with 5
levels) and multiclass (``--classes`` classes, overconfident softmax). Times are one run each
(wall clock, this machine as it is loaded at the time). Baselines in the same process:
scikit-learn's ``IsotonicRegression(out_of_bounds="clip")`` for ``isotonic`` and an
unpenalised ``LogisticRegression`` on the logit for ``platt`` (one-vs-rest for multiclass);
the ratio column is baseline time / ours (> 1: ours faster). The requirement (issue 8): no
method may need more than 10 s for fit + predict at n = 100,000 (binary).
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from benchmarks.common import measure, row
from core.data.validation import logit, sigmoid, softmax
from core.recalibration import RECALIBRATORS, make_recalibrator

LIMIT_SECONDS = 10.0
WIDTHS = (18, 10, 10, 10, 12, 8, 6)


def binary_problem(n: int, seed: int):
    """Overconfident logistic model blind to one feature's interaction with a group."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((2 * n, 3))
    groups = rng.choice(np.array(list("abcde")), 2 * n)
    z = X @ np.array([1.0, -0.5, 0.3])
    truth = sigmoid(z + 0.8 * (groups == "b") * X[:, 2])
    y = (rng.random(2 * n) < truth).astype(np.int64)
    return sigmoid(2.0 * z), y, X, groups


def multiclass_problem(n: int, m: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((2 * n, 3))
    logits = X @ rng.standard_normal((3, m)) + 0.5 * rng.standard_normal((2 * n, m))
    truth = softmax(logits)
    y = (rng.random(2 * n)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1)
    groups = rng.choice(np.array(list("abcde")), 2 * n)
    return softmax(2.0 * logits), np.minimum(y, m - 1), X, groups


def baseline(name: str, probs: np.ndarray, y: np.ndarray, n: int):
    """scikit-learn's fit + predict for isotonic and Platt, or None."""
    P = probs if probs.ndim == 2 else np.column_stack([1 - probs, probs])
    columns = range(P.shape[1]) if P.shape[1] > 2 else (1,)
    if name == "isotonic":
        def run():
            return [IsotonicRegression(out_of_bounds="clip").fit(P[:n, k], y[:n] == k)
                    .predict(P[n:, k]) for k in columns]
    elif name == "platt":
        def run():
            return [LogisticRegression(C=1e12, max_iter=1000)
                    .fit(logit(P[:n, k])[:, None], y[:n] == k)
                    .predict_proba(logit(P[n:, k])[:, None]) for k in columns]
    else:
        return None
    return measure(run)[0]


def time_method(name: str, probs, y, X, groups, n: int) -> tuple[float, float]:
    model = make_recalibrator(name)
    extras_fit = {"features": X[:n], "groups": groups[:n]}
    extras_new = {"features": X[n:], "groups": groups[n:]}
    fit_seconds, _, _ = measure(lambda: model.fit(probs[:n], y[:n], **extras_fit))
    predict_seconds, _, out = measure(lambda: model.predict(probs[n:], **extras_new))
    assert np.isfinite(out).all()
    return fit_seconds, predict_seconds


def run_problem(title: str, probs, y, X, groups, n: int, methods: list[str],
                binary: bool) -> list[str]:
    print(f"\n{title}")
    print(row("method", "fit s", "predict s", "total s", "sklearn s", "ratio", "≤10s",
              widths=WIDTHS))
    slow = []
    for name in methods:
        if not RECALIBRATORS[name].supports(binary) or (
                binary and name in ("vector", "matrix")):
            print(row(name, "—", "—", "—", "—", "—", "n/a", widths=WIDTHS))
            continue
        fit_s, predict_s = time_method(name, probs, y, X, groups, n)
        total = fit_s + predict_s
        base = baseline(name, probs, y, n)
        ok = total <= LIMIT_SECONDS
        if not ok:
            slow.append(name)
        print(row(name, f"{fit_s:.3f}", f"{predict_s:.3f}", f"{total:.3f}",
                  "—" if base is None else f"{base:.3f}",
                  "—" if base is None else f"{base / total:.2f}", "yes" if ok else "NO",
                  widths=WIDTHS), flush=True)
    return slow


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--n-multi", type=int, default=50_000)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--methods", default=",".join(RECALIBRATORS))
    args = parser.parse_args()
    methods = [m for m in args.methods.split(",") if m]
    for name in methods:
        if name not in RECALIBRATORS:
            parser.error(f"unknown method {name!r}; choose from {', '.join(RECALIBRATORS)}")
    slow = run_problem(f"binary, n = {args.n:,} calibration + {args.n:,} new rows",
                       *binary_problem(args.n, 0), args.n, methods, binary=True)
    run_problem(f"multiclass, n = {args.n_multi:,} + {args.n_multi:,} rows × {args.classes} "
                "classes", *multiclass_problem(args.n_multi, args.classes, 1), args.n_multi,
                methods, binary=False)
    print(f"\nbinary methods over {LIMIT_SECONDS:g} s: {', '.join(slow) if slow else 'none'}")


if __name__ == "__main__":
    main()
