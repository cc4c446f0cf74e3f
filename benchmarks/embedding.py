"""Time PCA, t-SNE and UMAP maps of the census audit features, fitted and placed.

    .venv/bin/python -m benchmarks.embedding [--sizes 10000 50000] [--methods pca tsne umap]

For each size n the census demo is generated with n audit rows (the demo itself has 10,000)
and all seven of its person attributes are used as audit features: 15 encoded columns, about
16 as in a typical audit, with no repeated rows. They are z-scored
(:func:`core.local.embedding.prepare_features`) and embedded in 2-D with the default
``max_fit=20_000``: n = 10,000 fits every row, n = 50,000 fits 20,000 and places 30,000 with
the fitted map. A last line embeds the demo as shipped, whose audit features are age, sex and
race only (8 encoded columns, 642 distinct rows, so t-SNE and UMAP fit 642 points).

The fit and placement times are read off the progress callback. Before the timed runs UMAP
is run on both of its code paths (at least 4,096 fitted rows: approximate neighbours; fewer:
exact) with placement, so that numba's compilation (reported as "UMAP warm-up") is not
charged to the timed runs. "recall@10" is the share of the 10 nearest neighbours in feature
space of up to 1,000 random distinct rows that are also among their 10 nearest neighbours in
the map (1 = local structure fully kept).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from dataclasses import replace

import numpy as np
from sklearn.neighbors import NearestNeighbors

from core.data.audit_data import AuditData
from core.data.census_demo import CENSUS_AUDIT_FEATURES, CENSUS_FEATURES, census_simulation
from core.data.demo import demo_mapping
from core.local.embedding import METHODS, distinct_rows, embed, prepare_features

RECALL_QUERIES = 1_000
RECALL_K = 10
#: UMAP warm-up: approximate neighbours (≥ 4,096 fitted rows) with placement, then the exact
#: small-data path with placement, so that no timed run pays for numba's compilation.
WARM_UP_ROWS = 5_000
WARM_UP_FIT = 4_500
WARM_UP_SMALL = 1_000


def census_features(n: int, features: tuple[str, ...] = CENSUS_FEATURES) -> np.ndarray:
    """The z-scored encoded ``features`` of a census demo table with ``n`` audit rows."""
    mapping = replace(demo_mapping("census"), features=features)
    audit = AuditData.from_mapping(census_simulation(n_audit=n), mapping)
    return prepare_features(audit.X, audit.feature_names)


def neighbour_recall(X: np.ndarray, coords: np.ndarray, seed: int = 0) -> float:
    """Mean share of the k nearest feature-space neighbours kept among the k nearest in the map,
    over up to RECALL_QUERIES random distinct rows."""
    first = distinct_rows(X)[1]
    X, coords = X[first], coords[first]
    size = min(RECALL_QUERIES, X.shape[0])
    queries = np.random.default_rng(seed).choice(X.shape[0], size, replace=False)

    def neighbours(points: np.ndarray) -> np.ndarray:
        index = NearestNeighbors(n_neighbors=RECALL_K + 1).fit(points)
        return index.kneighbors(points[queries], return_distance=False)[:, 1:]

    kept = [np.intersect1d(a, b).size for a, b in zip(neighbours(X), neighbours(coords),
                                                      strict=True)]
    return float(np.mean(kept)) / RECALL_K


def timed_embedding(X: np.ndarray, method: str) -> dict:
    """Run :func:`embed` once; wall time of the fit, of the placement and in total.

    The fit ends at the last progress report before the first "placed …" report.
    """
    marks: list[tuple[float, str]] = []
    start = time.perf_counter()
    result = embed(X, method, progress=lambda f, m: marks.append((time.perf_counter(), m)))
    end = time.perf_counter()
    placed = [i for i, (_, message) in enumerate(marks) if "placed" in message]
    fit_end = marks[placed[0] - 1][0] if placed else end
    return {"result": result, "total": end - start, "fit": fit_end - start,
            "place": end - fit_end}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    args = parser.parse_args()
    warnings.simplefilter("ignore", ImportWarning)  # umap-learn: "Tensorflow not installed"
    print(f"cores: {os.cpu_count()}, load average at start: "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if "umap" in args.methods:
        start = time.perf_counter()
        embed(census_features(WARM_UP_ROWS), "umap", max_fit=WARM_UP_FIT)
        embed(census_features(WARM_UP_ROWS)[:WARM_UP_SMALL], "umap", max_fit=WARM_UP_SMALL // 2)
        print(f"UMAP warm-up (numba compilation, a {WARM_UP_FIT:,}-row map placing "
              f"{WARM_UP_ROWS - WARM_UP_FIT:,} rows and a {WARM_UP_SMALL // 2:,}-row map "
              f"placing {WARM_UP_SMALL // 2:,}): {time.perf_counter() - start:.1f} s")
    header = f"{'n':>7} {'d':>3} {'method':>6} {'fitted':>7} {'placed':>7} {'fit s':>7} " \
             f"{'place s':>8} {'total s':>8} {'recall@10':>9}"
    print(header)
    runs = [(n, CENSUS_FEATURES) for n in args.sizes] + [(10_000, CENSUS_AUDIT_FEATURES)]
    for n, features in runs:
        X = census_features(n, features)
        for method in args.methods:
            run = timed_embedding(X, method)
            result = run["result"]
            print(f"{n:>7,} {X.shape[1]:>3} {method:>6} {result.n_fit:>7,} "
                  f"{result.placed_rows.size:>7,} {run['fit']:>7.2f} {run['place']:>8.2f} "
                  f"{run['total']:>8.2f} {neighbour_recall(X, result.coords):>9.3f}", flush=True)


if __name__ == "__main__":
    main()
