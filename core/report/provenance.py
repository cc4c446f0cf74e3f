"""Where a report came from: the product and library versions, the engine that computed it,
the data's fingerprint and who asked for it.

An auditor who hands a report on must be able to say what produced each number: the
version of Calibration Atlas and of the numeric libraries it rests on (numpy, SciPy,
scikit-learn, pandas), the engine the kernel sums ran on (threads, a named Dask cluster, the
GPU — as the tests recorded it in their parameters, so an engine that fell back to threads
mid-audit says so), the fingerprint of the validated data, and, in a served app with
sign-in, the signed-in user.
"""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version

import core
from core.audit.results import AuditResult

#: The libraries whose versions the report records, by distribution name.
LIBRARIES = ("numpy", "scipy", "scikit-learn", "pandas")


def library_version(name: str) -> str:
    """The installed version of a distribution, or ``"not installed"``."""
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def engines_used(result: AuditResult) -> list[str]:
    """Every engine that the audit's kernel tests recorded (in order, once each)."""
    tests = [*result.reliability.tests.values(), result.klce_grid.aggregated]
    recorded = [t.parameters.get("engine") for t in tests]
    return list(dict.fromkeys(str(e) for e in recorded if e)) or ["threads"]


def provenance(result: AuditResult, user: str | None = None) -> dict:
    """The report's provenance record.

    Parameters
    ----------
    result : AuditResult
        The audit reported.
    user : str, optional
        The signed-in user who built the report (``None``: no sign-in).

    Returns
    -------
    dict
        ``product``, ``version``, ``python``, ``libraries`` (name → version), ``engine``
        (list of engine descriptions), ``data_fingerprint``, ``user``.
    """
    return {
        "product": "calibration-atlas", "version": core.__version__,
        "python": platform.python_version(),
        "libraries": {name: library_version(name) for name in LIBRARIES},
        "engine": engines_used(result), "data_fingerprint": result.fingerprint,
        "user": user,
    }
