"""Shared fixtures: paths and small tables."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "dashboard" / "app.py"


def open_demo_page(page: str, demo: str = "census", timeout: int = 300,
                   widgets: dict | None = None):
    """An AppTest of ``views/{page}.py`` on a demo, run once; ``widgets`` preset widget values
    by key. Fails on a page exception."""
    from streamlit.testing.v1 import AppTest

    from dashboard.state import cached_demo, set_active

    at = AppTest.from_file(str(APP), default_timeout=timeout)
    set_active(cached_demo(demo), f"demo: {demo}", session=at.session_state)
    for key, value in (widgets or {}).items():
        at.session_state[key] = value
    at.run()
    at.switch_page(f"views/{page}.py")
    at.run()
    assert not at.exception, at.exception
    return at


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


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def no_page_failure(request):
    """Fail any test during which a page failed behind the page guard (dashboard/guard.py).

    The guard turns a page's exception into a message, so ``AppTest.exception`` stays empty;
    its server-side log record is what proves a page failed. Tests that provoke a failure on
    purpose request ``expected_page_failures`` instead.
    """
    handler = _Records()
    logger = logging.getLogger("calibration_atlas.pages")
    logger.addHandler(handler)
    request.node.page_failures = handler.records
    yield
    logger.removeHandler(handler)
    if handler.records and "expected_page_failures" not in request.fixturenames:
        record = handler.records[0]
        detail = logging.Formatter().formatException(record.exc_info) if record.exc_info else ""
        pytest.fail(f"{record.getMessage()}\n{detail}")


@pytest.fixture
def expected_page_failures(request, no_page_failure) -> list[logging.LogRecord]:
    """The page-guard log records of this test (a failure is expected, not an error)."""
    return request.node.page_failures
