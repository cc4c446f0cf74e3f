"""Local calibration — the public entry point of the DESIGN contract (``from core import
local``). The implementations live one concept per module:

* :mod:`core.klce` — KLCE² (I-trustworthy eq. 4), its test under several nulls, the
  bandwidth grid and the aggregated test;
* :mod:`core.lcb` — local calibration bias (eq. 7), its bandwidth choice, trends and
  subgroup ranking;
* :mod:`core.lce` — LCE and MLCE (Luo et al. eq. 4–5): exact pair sums, the exact sweep
  and the binned grid.
"""

from core.klce import DEFAULT_NULL, NULLS, klce, klce_grid_test, klce_test
from core.lcb import biased_subgroups, lcb, lcb_trends, select_bandwidths
from core.lce import bin_summary, lce, mlce, mlce_curve

__all__ = [
    "DEFAULT_NULL",
    "NULLS",
    "biased_subgroups",
    "bin_summary",
    "klce",
    "klce_grid_test",
    "klce_test",
    "lcb",
    "lcb_trends",
    "lce",
    "mlce",
    "mlce_curve",
    "select_bandwidths",
]
