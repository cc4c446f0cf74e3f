"""Every hypothesis test of calibration, each returning one :class:`TestResult`.

This is the public face (``from core import stattests``); one concept per module:

* :mod:`core.stattests.result` — :class:`TestResult` and the resampling p-values
  ``(1 + #{null ≥ observed}) / (1 + B)`` (DESIGN.md) beside the papers' ``#{null > observed}/B``;
* :mod:`core.stattests.skce` — the SKCE consistency test, its block z-test and the
  distribution-free bound test (Widmann et al.);
* :mod:`core.stattests.goodness_of_fit` — Hosmer–Lemeshow;
* :mod:`core.stattests.clinical` — Cox's test and Spiegelhalter's z test;
* :mod:`core.stattests.cumulative` — the Kolmogorov–Smirnov and Kuiper tests of the
  cumulative differences;
* :mod:`core.stattests.klce` — KLCE² (I-trustworthy eq. 4) and its test under several nulls;
* :mod:`core.stattests.klce_grid` — the test over a bandwidth grid and its aggregation;
* :mod:`core.stattests.level_study` — rejection rates of the KLCE nulls on simulated data;
* :mod:`core.stattests.multiple_testing` — many tests at once: Westfall–Young step-down
  max-``|T|`` adjusted p-values, the max-``|T|`` critical value, Benjamini–Hochberg q-values;
* :mod:`core.stattests.poisson_binomial` — exact (saddlepoint) tails of sums of Bernoulli
  outcomes over many slices of rows.

The measures these tests are built on are in :mod:`core.metrics`; the local diagnostics that
use them (LCB, LCE, slices) in :mod:`core.local`.
"""

from core.stattests.clinical import cox_test, spiegelhalter_test
from core.stattests.cumulative import cumulative_test
from core.stattests.goodness_of_fit import hosmer_lemeshow
from core.stattests.klce import DEFAULT_NULL, NULL_EXPLANATIONS, NULLS, klce_test
from core.stattests.klce_grid import GridTestResult, bandwidth_grid, klce_grid_test
from core.stattests.multiple_testing import benjamini_hochberg, max_t_critical, step_down_max_t
from core.stattests.poisson_binomial import two_sided_p_values
from core.stattests.result import (
    TestResult,
    format_p_value,
    p_text,
    paper_p_value,
    resampling_p_value,
)
from core.stattests.skce import SKCE_METHODS, bound_test, skce_test

__all__ = [
    "DEFAULT_NULL",
    "NULLS",
    "NULL_EXPLANATIONS",
    "SKCE_METHODS",
    "GridTestResult",
    "TestResult",
    "bandwidth_grid",
    "benjamini_hochberg",
    "bound_test",
    "cox_test",
    "cumulative_test",
    "format_p_value",
    "hosmer_lemeshow",
    "klce_grid_test",
    "klce_test",
    "max_t_critical",
    "p_text",
    "paper_p_value",
    "resampling_p_value",
    "skce_test",
    "spiegelhalter_test",
    "step_down_max_t",
    "two_sided_p_values",
]
