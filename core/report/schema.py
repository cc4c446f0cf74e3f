"""The audit's numbers for machines: a versioned JSON document and CSV tables.

The layout is documented in ``docs/report-schema.md``; :data:`SCHEMA_VERSION` changes its
major number whenever a field is removed or changes meaning, its minor number when fields
are added. Every number of an :class:`~core.audit.AuditResult` is here, with the settings
and the data's fingerprint. Missing values (NaN) are written as ``null``; infinite
bandwidths (a constant kernel) as the string ``"inf"``.

Text cells never start a spreadsheet formula: a string beginning with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return gets a leading ``'`` (:func:`escape_text`), in the JSON
(values and keys) and in the CSV tables, because those files are opened in spreadsheet
programs and their text comes from the user's table (column names, group levels).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import re
import secrets
from collections.abc import Mapping

import numpy as np
import pandas as pd

import core
from core.audit.results import AuditResult
from core.audit.verdicts import audit_verdicts
from core.data.audit_data import AuditData
from core.ensembles.summary import CredalComparison
from core.ensembles.test import WEIGHT_LABELS, null_description
from core.report.provenance import provenance
from core.report.summary import findings
from core.stattests.result import TestResult

SCHEMA_VERSION = "2.5"
SCHEMA_ID = "calibration-atlas/audit-report"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: Columns a recalibration comparison table must have (core.recalibration.ranking).
COMPARISON_COLUMNS = ("method", "accuracy", "brier", "nll", "ece", "mce", "mlce", "klce_p",
                      "max_group_mce", "fit_seconds")
#: What each test's null hypothesis says, by the key of ReliabilitySection.tests.
NULL_HYPOTHESES = {
    "consistency": "the model is calibrated (canonical notion); labels redrawn from the "
                   "model's own probabilities",
    "block": "the model is calibrated (canonical notion); block SKCE is asymptotically normal",
    "bound": "the model is calibrated (canonical notion); distribution-free Hoeffding bound",
    "hosmer-lemeshow": "the model is calibrated on the chosen notion; chi-squared over "
                       "probability deciles",
    "spiegelhalter": "the model is calibrated on the chosen notion; the standardised Brier "
                     "score is asymptotically normal (two-sided)",
    "cox": "calibration slope 1 and intercept 0 on the chosen notion (likelihood ratio, "
           "2 degrees of freedom)",
    "cumulative-ks": "the model is calibrated on the chosen notion; the largest deviation of "
                     "the cumulative differences from 0 (Kolmogorov–Smirnov)",
    "cumulative-kuiper": "the model is calibrated on the chosen notion; the range of the "
                         "cumulative differences (Kuiper)",
    "credal-learned": "some convex combination of the members, with weights λ(x) learned on "
                      "other rows, is calibrated in distribution (Jürgens et al., Algorithm 1)",
    "credal-mean": "the members' plain mean is calibrated in distribution",
    "credal-sampled": "some constant convex combination of the members is calibrated in "
                      "distribution (Mortier et al.)",
}


#: What each slice's test assumes (the report's JSON and the Findings page say it).
SLICE_NULL = ("the model is calibrated on the slice's rows given their features: y_i ~ "
              "Bernoulli(p_i), independently (consistency resampling)")


def escape_text(text: str) -> str:
    """``text`` with a leading ``'`` when it would start a spreadsheet formula."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def jsonable(value: object) -> object:
    """``value`` as plain JSON types, text escaped (:func:`escape_text`), NaN as ``None``,
    ±inf as ``"inf"``/``"-inf"``, arrays as (nested) lists, frames as lists of records."""
    if isinstance(value, str):
        return escape_text(value)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isnan(number):
            return None
        if math.isinf(number):
            return "inf" if number > 0 else "-inf"
        return number
    if isinstance(value, pd.DataFrame):
        return [jsonable(row) for row in value.to_dict(orient="records")]
    if isinstance(value, (pd.Series, np.ndarray)):
        return [jsonable(v) for v in np.asarray(value).tolist()]
    if isinstance(value, Mapping):
        return {jsonable(str(k)): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return escape_text(str(value))


def test_entry(name: str, test: TestResult) -> dict:
    """One test: statistic, p-values, null hypothesis, method, B, parameters, null sample."""
    parameters = {k: v for k, v in test.parameters.items() if k != "spec"}
    return {
        "name": name, "statistic": test.statistic, "p_value": test.p_value,
        "p_value_paper": test.p_value_paper,
        "null_hypothesis": NULL_HYPOTHESES.get(name, "the model is locally calibrated"),
        "method": test.method, "n_resamples": test.n_resamples, "parameters": parameters,
        "null_statistics": test.null,
    }


def credal_record(comparison: CredalComparison) -> dict:
    """The credal-set comparison: members, features, settings, the verdict, and per test its
    entry (statistic, p-values, null hypothesis, parameters, null statistics) with its label,
    the null used and the verdict; the learned weights per member."""
    settings = comparison.settings
    return {
        "members": comparison.members, "features": comparison.features, "settings": settings,
        "test_rows": int(comparison.results["learned"].rows.size),
        "verdict": comparison.verdict(),
        "tests": {key: {"label": WEIGHT_LABELS[key], **test_entry(result.method, result),
                        "null_used": null_description(settings.null, key),
                        "rejects": result.rejects(settings.alpha)}
                  for key, result in comparison.results.items()},
        "weights": comparison.weights_table(),
    }


def check_comparison(table: pd.DataFrame | None) -> pd.DataFrame | None:
    """The recalibration comparison table, checked for its columns (``None`` passes)."""
    if table is None:
        return None
    missing = [c for c in COMPARISON_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"The recalibration comparison table lacks the column(s) "
                         f"{', '.join(map(repr, missing))}; it needs "
                         f"{', '.join(COMPARISON_COLUMNS)} (core.recalibration.compare).")
    return table


def dataset_record(result: AuditResult, audit: AuditData) -> dict:
    """The data's fingerprint: name, hash, rows (all and audited), columns used by role."""
    mapping = audit.mapping
    columns = None if mapping is None else {
        "label": mapping.label, "probabilities": list(mapping.probs),
        "logits": mapping.logits, "features": list(mapping.features),
        "groups": list(mapping.groups), "split": mapping.split,
    }
    return {
        "name": result.dataset, "fingerprint": result.fingerprint,
        "rows_total": result.stream.rows if result.stream is not None else audit.n,
        "rows_audited": result.rows, "part": result.part, "classes": list(audit.classes),
        "columns": columns, "audit_features": list(result.features),
        "validation_notes": [note.message for note in audit.report],
    }


#: Significant digits of the per-row LCB values in the JSON: float32's precision, far finer
#: than one value's sampling noise (about ±0.01 on large data, stated in ``computation``).
LCB_DIGITS = 7


def significant(values: np.ndarray, digits: int) -> list[float | None]:
    """``values`` rounded to ``digits`` significant digits (NaN stays NaN)."""
    return [float(f"{value:.{digits}g}") for value in np.asarray(values, dtype=np.float64)]


def local_record(result: AuditResult) -> dict:
    """KLCE grid and aggregated test, LCB, MLCE over γ, and the slice findings."""
    grid, lcb, lce = result.klce_grid, result.lcb, result.lce
    return {
        "klce_grid": {
            "null": grid.null, "n_resamples": grid.n_resamples,
            "prob_bandwidths": grid.prob_bandwidths,
            "feature_bandwidths": grid.feature_bandwidths,
            "statistics": grid.statistics, "p_values": grid.p_values,
            "centre": {"prob_bandwidth": grid.spec.prob_bandwidth,
                       "feature_bandwidth": grid.spec.feature_bandwidth,
                       "standardize": grid.spec.standardize,
                       "class_index": grid.spec.class_index},
            "aggregated": test_entry("klce-aggregated", grid.aggregated),
            "rejects": bool(grid.aggregated.p_value <= result.settings.alpha),
        },
        "lcb": {
            "reference": lcb.reference,
            "prob_bandwidth": lcb.spec.prob_bandwidth,
            "feature_bandwidth": lcb.spec.feature_bandwidth,
            "cross_validation": lcb.cv_table,
            "computation": lcb.computation,
            "rows": int(lcb.values.size),
            "rows_without_neighbours": int(np.isnan(lcb.values).sum()),
            "rows_evaluated": None if lcb.rows is None else lcb.rows + 1,
            "values": significant(lcb.values, LCB_DIGITS),
        },
        "lce": None if lce is None else {
            "gamma": result.settings.gamma, "mlce": lce.mlce, "mce": lce.mce, "map": lce.map,
            "curve": lce.curve,
        },
        "slices": slices_record(result),
    }


def slices_record(result: AuditResult) -> dict:
    """The slice findings: what was tested, the error rate, and every tested slice."""
    slices = result.slices
    family = slices.family
    return {
        "null_hypothesis": SLICE_NULL, "statement": slices.statement(),
        "error_rate": slices.error_rate, "alpha": slices.alpha, "notion": slices.notion,
        "classes": slices.classes, "n_tested": slices.n_tested, "n_slices": slices.n_slices,
        "n_resamples": slices.n_resamples, "critical_value": slices.critical_value,
        "depth": family.depth, "n_ranges": family.n_ranges, "min_rows": family.min_rows,
        "left_out_small": family.n_small, "left_out_duplicates": family.n_duplicates,
        "engine": slices.engine, "seed": slices.seed, "rejects": slices.rejects(),
        "table": slices.table,
    }


def report_document(result: AuditResult, audit: AuditData,
                    comparison: pd.DataFrame | None = None,
                    created: dt.datetime | None = None, user: str | None = None,
                    credal: CredalComparison | None = None) -> dict:
    """The whole report as a JSON-ready dict (see ``docs/report-schema.md``).

    Parameters
    ----------
    result : AuditResult
        From :func:`core.audit.run_audit`.
    audit : AuditData
        The data it ran on (for the columns used and the validation notes).
    comparison : pandas.DataFrame, optional
        The recalibration comparison (:data:`COMPARISON_COLUMNS`); ``None``: not run.
    created : datetime, optional
        The report's time stamp (default: now, UTC).
    user : str, optional
        The signed-in user, for the provenance record (:mod:`core.report.provenance`).
    credal : CredalComparison, optional
        The credal-set tests of the ensemble members (:func:`credal_record`); ``None``: not
        run.

    Returns
    -------
    dict
        Plain JSON types only, text escaped against formula injection.
    """
    comparison = check_comparison(comparison)
    section = result.reliability
    created = created or dt.datetime.now(dt.timezone.utc)
    document = {
        "schema": SCHEMA_ID, "schema_version": SCHEMA_VERSION,
        "generator": {"name": "calibration-atlas", "version": core.__version__},
        "created": created.isoformat(timespec="seconds"),
        "provenance": provenance(result, user),
        "dataset": dataset_record(result, audit),
        "settings": dataclasses.asdict(result.settings),
        "verdicts": [v.as_record() for v in audit_verdicts(result, comparison)],
        "summary": [{"level": f.level, "topic": f.topic, "text": f.text}
                    for f in findings(result, comparison, credal)],
        "reliability": {
            "notion": section.notion, "bins": section.table,
            "metrics": section.metrics.drop(columns=["description"], errors="ignore"),
            "tests": [test_entry(name, test) for name, test in section.tests.items()],
            "groups": {group: {"summary": summary,
                               "bins": {level: table for level, table in tables.items()}}
                       for group, (summary, tables) in section.groups.items()},
        },
        "local": local_record(result),
        "recalibration": None if comparison is None else {"comparison": comparison},
        "credal": None if credal is None else credal_record(credal),
        "notes": list(result.notes),
        "stream": stream_record(result),
    }
    return jsonable(document)


def stream_record(result: AuditResult) -> dict | None:
    """How a streamed audit read its table (``None`` for an audit in memory): source,
    rows, partitions (batches), engine, the rows of a batch and the peak the batches were
    sized for, the seeded sample, what came from all rows and what from the sample, and the
    seconds of each pass."""
    info = result.stream
    if info is None:
        return None
    return {"source": info.source, "rows": info.rows, "partitions": info.partitions,
            "engine": info.engine, "sample_rows": info.sample_rows,
            "sample_fingerprint": info.sample_fingerprint, "all_rows": list(info.exact),
            "sample": list(info.sampled), "batch_rows": info.batch_rows,
            "memory_target_bytes": info.memory_target,
            "memory_budget_bytes": info.memory_budget, "batching": info.batching,
            "passes": [{"pass": name, "seconds": seconds} for name, seconds in info.passes]}


def report_json(result: AuditResult, audit: AuditData, comparison: pd.DataFrame | None = None,
                created: dt.datetime | None = None, user: str | None = None,
                credal: CredalComparison | None = None) -> str:
    """:func:`report_document` as indented JSON text (:func:`indented_json`)."""
    return indented_json(report_document(result, audit, comparison, created, user=user,
                                         credal=credal))


def indented_json(document: object) -> str:
    """A :func:`jsonable` document as JSON text (UTF-8, no NaN literals) indented by two
    spaces, except that every array of numbers (``null`` among them) is written on one line:
    a per-row vector then takes one line instead of one line, with its indent, a number."""
    token = secrets.token_hex(8)  # marks the arrays: 64 random bits no text will hold
    inline: list[str] = []

    def mark(value: object) -> object:
        if isinstance(value, dict):
            return {key: mark(item) for key, item in value.items()}
        if isinstance(value, list):
            if value and all(item is None or (isinstance(item, (int, float))
                                              and not isinstance(item, bool)) for item in value):
                inline.append(json.dumps(value, allow_nan=False))
                return f"{token}:{len(inline) - 1}"
            return [mark(item) for item in value]
        return value

    text = json.dumps(mark(document), indent=2, ensure_ascii=False, allow_nan=False)
    return re.sub(f'"{token}:(\\d+)"', lambda found: inline[int(found.group(1))], text)


def escape_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with every text cell and column name escaped (:func:`escape_text`)."""
    out = frame.copy()
    out.columns = [escape_text(str(c)) for c in out.columns]
    for column in out.columns:
        if out[column].dtype == object or isinstance(out[column].dtype,
                                                     (pd.CategoricalDtype, pd.StringDtype)):
            out[column] = [escape_text(v) if isinstance(v, str) else v
                           for v in out[column].astype(object)]
    return out


def csv_text(frame: pd.DataFrame) -> str:
    """``frame`` as CSV with text cells escaped against formula injection.

    Parameters
    ----------
    frame : DataFrame
        The table.
    """
    return escape_frame(frame).to_csv(index=False)


def result_tables(result: AuditResult, comparison: pd.DataFrame | None = None,
                  credal: CredalComparison | None = None) -> dict[str, pd.DataFrame]:
    """The report's tables by file stem: metrics, tests, reliability bins, group summaries,
    the KLCE grid, the tested slices, the MLCE curve, the recalibration comparison and the
    credal-set tests with their learned weights."""
    section = result.reliability
    tests = pd.DataFrame([{k: v for k, v in test_entry(name, t).items()
                           if k not in ("parameters", "null_statistics")}
                          for name, t in section.tests.items()])
    grid = result.klce_grid
    rows = [{"prob_bandwidth": sp, "feature_bandwidth": sx,
             "statistic": grid.statistics[i, j], "p_value": grid.p_values[i, j]}
            for i, sp in enumerate(grid.prob_bandwidths)
            for j, sx in enumerate(grid.feature_bandwidths)]
    tables = {"metrics": section.metrics, "tests": tests, "reliability_bins": section.table,
              "klce_grid": pd.DataFrame(rows), "slices": result.slices.table}
    for group, (summary, _) in section.groups.items():
        tables[f"groups_{group}"] = summary
    if result.lce is not None:
        tables["mlce_curve"] = result.lce.curve
    if comparison is not None:
        tables["recalibration"] = check_comparison(comparison)
    if credal is not None:
        tables["credal"] = credal.table()
        tables["credal_weights"] = credal.weights_table()
    return tables
