"""Tables at the edges the app must survive, and the generated stand-ins for public tables
(:mod:`core.data.public_tables`, re-exported here for the tests).

Every table is a pure function of its seed and is cached per process (``lru_cache``), so the
AppTest matrix and the unit tests share one copy. Callers must not modify them (copy first).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from core.data.mapping import ColumnMapping
from core.data.public_tables import (  # noqa: F401  (re-exported for the tests)
    COMPAS_AUDIT_FEATURES,
    COMPAS_COLUMNS,
    COMPAS_MODEL_FEATURES,
    GERMAN_AUDIT_FEATURES,
    GERMAN_MODEL_FEATURES,
    compas_like_frame,
    german_credit_like_frame,
)

# --------------------------------------------------------------------------- edge tables


def _binary(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    p = rng.uniform(0.05, 0.95, n)
    return (rng.random(n) < p).astype(np.int64), np.round(p, 6)


@lru_cache(maxsize=32)
def edge_table(kind: str, n: int = 300, seed: int = 5) -> tuple[pd.DataFrame, ColumnMapping]:
    """An uploaded table at an edge the app must survive, with its column mapping.

    Kinds: ``one-feature``, ``no-features``, ``no-groups``, ``one-group-level``,
    ``categorical-only``, ``multiclass-2``, ``multiclass-20``, ``test-split-only``,
    ``20-rows``, ``constant-predictions``, ``all-missing-column``.
    """
    rng = np.random.default_rng(seed)
    if kind == "20-rows":
        n = 20
    y, p = _binary(n, rng)
    frame = pd.DataFrame({"y": y, "p": p, "age": rng.integers(18, 90, n),
                          "income": np.round(rng.lognormal(10, 0.5, n)),
                          "sex": rng.choice(["female", "male"], n),
                          "race": rng.choice(["Black", "White", "Asian"], n)})
    mapping: dict = {"label": "y", "probs": ["p"], "features": ["age", "sex"],
                     "groups": ["race"]}
    if kind == "one-feature":
        mapping["features"] = ["age"]
    elif kind == "no-features":
        mapping["features"] = []
    elif kind == "no-groups":
        mapping["groups"] = []
    elif kind == "one-group-level":
        frame["site"] = "Leeds"
        mapping["groups"] = ["site"]
    elif kind == "categorical-only":
        mapping["features"] = ["sex", "race"]
    elif kind in ("multiclass-2", "multiclass-20"):
        m = 2 if kind == "multiclass-2" else 20
        n = 300 if m == 2 else 600
        probs = rng.dirichlet(np.full(m, 0.5), n)
        labels = np.array([rng.choice(m, p=row) for row in probs])
        frame = pd.DataFrame(probs, columns=[f"p_c{k}" for k in range(m)])
        frame.insert(0, "y", [f"c{k}" for k in labels])
        frame["age"] = rng.integers(18, 90, n)
        frame["sex"] = rng.choice(["female", "male"], n)
        mapping = {"label": "y", "probs": list(frame.columns[1:m + 1]),
                   "features": ["age", "sex"], "groups": ["sex"]}
    elif kind == "test-split-only":
        frame["split"] = "test"
        mapping["split"] = "split"
    elif kind == "constant-predictions":
        frame["p"] = 0.3
    elif kind == "all-missing-column":
        frame["notes"] = np.nan
        mapping["groups"] = ["race", "notes"]
    elif kind != "20-rows":
        raise ValueError(f"Unknown edge table {kind!r}.")
    return frame, ColumnMapping(
        label=mapping["label"], probs=tuple(mapping["probs"]),
        features=tuple(mapping["features"]), groups=tuple(mapping["groups"]),
        split=mapping.get("split"),
    )


EDGE_KINDS = ("one-feature", "no-features", "no-groups", "one-group-level", "categorical-only",
              "multiclass-2", "multiclass-20", "test-split-only", "20-rows",
              "constant-predictions", "all-missing-column")
