"""Shared fixtures: paths and small tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "dashboard" / "app.py"


def upload_frame(n: int = 120, seed: int = 3) -> pd.DataFrame:
    """A small binary audit table as a user would upload it."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, n)
    return pd.DataFrame({
        "y": (rng.random(n) < p).astype(int),
        "p": np.round(p, 6),
        "age": rng.integers(18, 90, n),
        "sex": rng.choice(["female", "male"], n),
    })


@pytest.fixture
def upload_csv() -> bytes:
    return upload_frame().to_csv(index=False).encode()
