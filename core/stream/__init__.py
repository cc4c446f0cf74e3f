"""The audit of a table larger than memory: a few passes over its partitions, on this
machine's threads or a Dask cluster, into the same :class:`~core.audit.AuditResult` as
:func:`core.audit.run_audit`.

No pass holds more than a few batches of rows (:mod:`core.data.stream_sources`): the table's row
groups or partitions are cut into batches whose size the memory plan gives
(:func:`core.kernels.memory.batch_plan`: the rows a batch's arrays allow within the budget),
whatever the file's layout. Each pass returns sums, and the batches' sums add up
(:func:`core.kernels.engine.map_partitions`); every draw and chunk is keyed to row numbers,
so the batch boundaries change no number:

1. **schema** — the label values, categorical levels and split counts (which rows each
   partition audits);
2. **sums** — every sum over rows that needs no Poisson bootstrap: the equal-width bins of
   the notion's series per group level, the Spiegelhalter sums, the audited features'
   moments (the kernel tests' standardisation), the first histogram of every exact order
   statistic (:mod:`core.metrics.order_statistics`; the numeric slice columns' quantile edges
   among them), the slice columns' tallies (:class:`~core.local.slice_streamed.ColumnTally`)
   and the rows of the seeded sample;
3. **random features** — the KLCE bandwidth grid, the SKCE consistency test and the SKCE
   value with its Poisson bootstrap, each resample's labels drawn per row from the
   counter-based generator at the row's number among the audited rows, so the sums equal the
   in-memory ones (:mod:`core.kernels.rff`); with the order statistics' second round;
4. **equal-mass bins and slices** — once the order statistics are exact (a further pass where
   long tied runs need one): ACE, top-label ACE, the debiased ECE and their bootstrap,
   equal-mass reliability tables, and Hosmer–Lemeshow's equal-size groups, overall and per
   group level; every slice's cell sums, from which the findings' family of slices and
   their exact sums are built as in memory (:mod:`core.local.slice_streamed`); and the sums
   over rows with a Poisson bootstrap — per-row scores (accuracy, Brier, log loss), the
   class balance and the notion's equal-width bins — which need nothing from an earlier
   pass but the same weights as the equal-mass bins', so each row's weights are drawn once
   (:func:`~core.stream.row_sums.bootstrap_sums`).

What is not a sum over rows — the smooth ECE, ICI, the calibration slope and Cox's test,
the CORP decompositions, the cumulative differences and their tests, the SKCE block test,
LCB and the LCE, and the slice findings' max-``|T|`` null (B consistency resamples of each row) —
is computed by the in-memory functions on a seeded sample of
:data:`SAMPLE_ROWS` rows of the table, drawn by row number (so it is the same sample
wherever the partitions are read), and the result says which numbers came from it
(:class:`~core.audit.StreamInfo`). The kernel tests run with random Fourier features: an exact
sum over all pairs of rows needs them all at once.

This is the public face (``from core.stream import run_stream_audit``); one concept per
module:

* :mod:`core.stream.plan` — :class:`~core.stream.plan.StreamPlan`, what every pass needs to
  know of the table and the settings, the batches' memory plan
  (:func:`~core.stream.plan.memory_plan`) and what a streamed audit cannot run;
* :mod:`core.stream.row_sums` — passes 1 and 2: the schema and every sum over rows, and how
  the partitions' sums add up;
* :mod:`core.stream.kernel_sums` — pass 3: the random-feature sums of the kernel tests and
  the SKCE, and the tests' results from them;
* :mod:`core.stream.quantile_sums` — the exact order statistics' rounds and pass 4: equal-mass
  bins, equal-size groups, the slices' cells;
* :mod:`core.stream.tables` — the metrics table's SKCE row and the group tables from the sums;
* :mod:`core.stream.assemble` — the :class:`~core.audit.AuditResult`: the sums, the sample's
  sections and the slice findings;
* :mod:`core.stream.runner` — :func:`run_stream_audit` (and :func:`stream_tests`, the kernel
  tests alone): the passes run over the partitions on the current engine.
"""

from core.audit.settings import SAMPLE_ROWS
from core.stream.runner import StreamedAudit, run_stream_audit, stream_tests

__all__ = [
    "SAMPLE_ROWS",
    "StreamedAudit",
    "run_stream_audit",
    "stream_tests",
]
