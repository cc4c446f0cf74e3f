"""``calibration-atlas``: the audit without the app, from a terminal.

::

    calibration-atlas audit DATA --label COL (--prob COL | --probs COL,COL,...) [--logits]
        [--features COL,...] [--groups COL,...] [--split COL] [--out DIR]
        [--formats png,svg,pdf,html] [--resamples B] [--seed S] [--alpha A]
        [--error-rate fwer|fdr] [--slice-depth 1|2|3] [--fail-on local|slices|any]
        [--member COL[,COL...] ...] [--stream] [--sample-rows N]
        [--dask ADDRESS | --engine NAME]
    calibration-atlas demo [--out DIR] [--dask ADDRESS | --engine NAME]
    calibration-atlas credal DATA --label COL --member COL[,COL...] --member ...
        [--features COL,...] [--estimator ce2|cekl|skce]
        [--null bootstrap|consistency|refit] [--resamples B] [--alpha A] [--seed S] [--out DIR]
    calibration-atlas compare DATA --label COL (--models COL,COL | --model NAME=COL,... ...)
        [--features COL,...] [--groups COL,...] [--split COL] [--criteria C,...]
        [--fail-on worse] [--alpha A] [--resamples B] [--seed S] [--formats ...] [--out DIR]
    calibration-atlas app [--port N] [--address A] [--sign-in]
    calibration-atlas monitor DATA --time COL --prob COL --label COL [--group COL ...]
        [--period month] [--alpha A] [--challenger COL] [--fail-on alarm] [--out DIR]

``audit`` and ``demo`` write ``DIR/report.html``, ``DIR/report.pdf`` (where Chromium exists),
``DIR/results.json``, ``DIR/figures/*`` and ``DIR/tables/*.csv`` (with ``--member``, the
report includes the credal-set tests). ``credal`` runs the
Ensembles page's three credal-set tests (:func:`core.ensembles.compare_ensemble`) and writes
``DIR/credal.json``, ``DIR/credal.csv`` and ``DIR/credal-weights.csv``. ``compare`` compares
a challenger with a champion on the same rows (:func:`core.compare.compare_audit`) and writes
the Compare models page's sections (:mod:`core.report.comparison`); with ``--fail-on worse``
it exits 1 when the challenger is significantly worse on a compared criterion or slice.
``app`` serves the dashboard of the installed package with Streamlit
(:func:`core.cli.app.app_command`). ``monitor`` follows calibration over time with
anytime-valid alarms (:mod:`core.cli.monitor`). The audit is
:func:`core.audit.run_audit` — the computation the app's pages show — and the report is
:func:`core.report.build_report`. Exit status 0 on success; 2 on bad input, with the sentence
the app would show (the column, the rows, the fix) and no traceback; 1 when writing the
report fails (a full disk, a browser that crashes) — and 1 when ``--fail-on`` names a verdict
that rejects at α (the report is written first), so a CI pipeline can gate a model on its
audit.

A folder of Parquet files, a Parquet file whose audit in memory would exceed the memory
budget (``--memory GB``, default a quarter of this machine's memory, at most 2 GB:
:mod:`core.kernels.memory`), or any Parquet input with ``--stream`` is audited batch by
batch (:func:`core.stream.run_stream_audit`): batches sized to the budget whatever the
file's row groups, the same report, progress per batch, and with ``--dask ADDRESS`` every
row group is one task on the cluster.

Modules, one per command and the parts they share:

- :mod:`core.cli.entry` — the parser of every command and :func:`main`
- :mod:`core.cli.audit` — ``audit``; :mod:`core.cli.streamed` — ``audit`` batch by batch
- :mod:`core.cli.audit_report` — the audit's report and ``--fail-on`` gate (``audit``,
  ``demo``)
- :mod:`core.cli.demo`, :mod:`core.cli.credal`, :mod:`core.cli.compare`,
  :mod:`core.cli.monitor`, :mod:`core.cli.app` — the other commands
- :mod:`core.cli.options` — argparse types, the output and engine options, the options'
  audit settings
- :mod:`core.cli.progress` — the progress bar; :mod:`core.cli.engines` — ``--dask`` and
  ``--engine``
"""

from core.cli.entry import command, main

__all__ = ["command", "main"]
