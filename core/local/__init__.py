"""Local diagnostics: where, and for whom, a model is miscalibrated.

This is the public face (``from core import local``); one concept per module:

* :mod:`core.local.lcb_estimate` — the local calibration bias (I-trustworthy eq. 7), its
  computation plan and its bandwidths by leave-one-out cross-validation;
  :mod:`core.local.lcb_trends` — its per-group polynomial trends (none for tiny groups:
  :func:`trend_note`);
* :mod:`core.local.lce_estimate` — LCE and MLCE (Luo et al. eqs. 4–5), with the exact sweep
  (:mod:`core.local.lce_sweep`), the binned grid (:mod:`core.local.lce_grid`), the choice
  between them (:mod:`core.local.lce_plan`) and per-bin summaries
  (:mod:`core.local.lce_summary`);
* :mod:`core.local.embedding` — PCA, t-SNE and UMAP maps of the audit features;
* :mod:`core.local.groups` — the binned diagnostics within each level of a group attribute;
* :mod:`core.local.slice_discovery` — which slices (levels, ranges and their intersections)
  are miscalibrated, with family-wise or false-discovery error control and simultaneous
  intervals; it enumerates the slices with :mod:`core.local.slice_space` and sums per-row
  scores over all of them and all resamples at once with
  :mod:`core.local.slice_resampling` (the seam model comparison reuses with its own scores).
* :mod:`core.local.slice_streamed` — the same slices and their exact sums from a table read
  partition by partition (a streamed audit's findings, :mod:`core.stream`);
  :mod:`core.local.slice_sampled` — its method on rows in memory (sums over all rows, the
  ``max-|T|`` null on a seeded sample): the audit's findings above
  ``SAMPLE_ROWS`` (200,000) rows.

The KLCE statistic and its tests live in :mod:`core.stattests`; ``klce``, ``klce_test`` and
``klce_grid_test`` are re-exported here, where the DESIGN contract has always named them.
"""

from core.local.groups import group_calibration_table, group_reliability_tables
from core.local.lcb_estimate import lcb, lcb_estimate, select_bandwidths
from core.local.lcb_trends import lcb_trends, trend_note
from core.local.lce_estimate import LceResult, lce, lce_result, mlce, mlce_curve
from core.local.lce_inputs import confidence_bins
from core.local.lce_plan import LceMethod, plan_method
from core.local.lce_summary import bin_lce_cdf, bin_summary
from core.local.slice_discovery import SliceDiscovery, discover_slices
from core.local.slice_resampling import RowScores, slice_sums
from core.local.slice_space import SliceFamily, enumerate_slices
from core.stattests.klce import DEFAULT_NULL, NULLS, klce, klce_test
from core.stattests.klce_grid import klce_grid_test

__all__ = [
    "DEFAULT_NULL",
    "NULLS",
    "LceMethod",
    "LceResult",
    "RowScores",
    "SliceDiscovery",
    "SliceFamily",
    "bin_lce_cdf",
    "bin_summary",
    "confidence_bins",
    "discover_slices",
    "enumerate_slices",
    "group_calibration_table",
    "group_reliability_tables",
    "klce",
    "klce_grid_test",
    "klce_test",
    "lcb",
    "lcb_estimate",
    "lcb_trends",
    "lce",
    "lce_result",
    "mlce",
    "mlce_curve",
    "plan_method",
    "select_bandwidths",
    "slice_sums",
    "trend_note",
]
