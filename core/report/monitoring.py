"""The monitoring report: ``results.json`` (settings, verdict, the per-period table, the
e-processes at every period's end and along the rows), the per-period table as CSV, and one
self-contained HTML page (plotly.js inline, no request to another host) with the verdict,
the guarantee and its assumptions, the figures of :mod:`core.figures.over_time` and the table.
"""

from __future__ import annotations

import datetime as dt
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.io as pio

import core
from core.figures.over_time import (
    brier_sequence_figure,
    eprocess_figure,
    group_eprocess_figure,
    group_gap_figure,
    period_metric_figure,
)
from core.monitor.monitoring import GUARANTEE, MonitorResult
from core.monitor.series import FULL_SERIES_ROWS, shown_rows
from core.report.html import STYLE, key_value_html, pio_plotlyjs, table_html
from core.report.schema import csv_text, indented_json, jsonable


def _series_rows(result: MonitorResult) -> np.ndarray:
    if result.n <= FULL_SERIES_ROWS:
        return np.arange(result.n)
    alarms = [result.eprocess.alarm] + [p.alarm for family in result.groups.values()
                                        for p in family.processes.values()]
    return shown_rows(result.n, tuple(alarms))


def series_frame(result: MonitorResult) -> pd.DataFrame:
    """The e-processes and the gap's confidence sequence along the rows (every row up to
    :data:`FULL_SERIES_ROWS`, else evenly spaced rows plus the alarm rows)."""
    rows = _series_rows(result)
    at = result.positions(rows)
    columns = {"row": rows + 1, "period": result.periods[at],
               "e_value": result.eprocess.e_values[at],
               "gap_cs_low": result.gap_sequence.lower[at],
               "gap_cs_high": result.gap_sequence.upper[at]}
    for attribute, family in result.groups.items():
        for level, process in family.processes.items():
            columns[f"e_value[{attribute} = {level}]"] = process.e_values[at]
    if result.comparison is not None:
        columns["brier_difference_cs_low"] = result.comparison.sequence.lower[at]
        columns["brier_difference_cs_high"] = result.comparison.sequence.upper[at]
        columns["e_value_challenger_better"] = result.comparison.e_values[at]
    return pd.DataFrame(columns)


def _thinned_series(result: MonitorResult) -> dict:
    """The overall e-value at most ~3,000 evenly spaced rows and the alarm row (the full
    series is ``tables/eprocess.csv``)."""
    rows = shown_rows(result.n, (result.eprocess.alarm,))
    return {"row": rows + 1, "e_value": result.eprocess.e_values[result.positions(rows)]}


def monitor_document(result: MonitorResult, dataset: str) -> dict:
    """The ``results.json`` document of a monitoring run."""
    alarm = result.first_alarm
    groups = {attribute: {"threshold": family.threshold, "levels": {
        level: {"rows": family.rows[level], "alarm_row": None if p.alarm is None else p.alarm + 1,
                "alarm_period": None if p.alarm is None else result.period_of(p.alarm),
                "max_e_value": p.max_e_value, "p_value": p.p_value}
        for level, p in family.processes.items()}} for attribute, family in result.groups.items()}
    comparison = None
    if result.comparison is not None:
        c = result.comparison
        comparison = {"champion": result.model, "challenger": result.settings.challenger,
                      "difference": "Brier(champion) − Brier(challenger); > 0: challenger "
                                    "better",
                      "estimate": c.sequence.estimate[-1], "cs_low": c.sequence.lower[-1],
                      "cs_high": c.sequence.upper[-1],
                      "alarm_row": None if c.alarm is None else c.alarm + 1,
                      "p_value_challenger_better": c.p_value}
    return jsonable({
        "kind": "calibration monitoring",
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "version": core.__version__,
        "dataset": dataset, "model": result.model, "rows": result.n,
        "time_column": result.time_column, "rows_reordered_by_time": result.sorted_rows,
        "read": list(result.notes),
        "settings": result.settings,
        "verdict": result.verdict, "guarantee": GUARANTEE,
        "alarm": None if alarm is None else {"who": alarm[0], "row": alarm[1] + 1,
                                             "period": result.period_of(alarm[1])},
        "eprocess": {"method": result.eprocess.method, "threshold": result.eprocess.threshold,
                     "alarm_row": None if result.eprocess.alarm is None
                     else result.eprocess.alarm + 1,
                     "max_e_value": result.eprocess.max_e_value,
                     "p_value": result.eprocess.p_value,
                     "series": _thinned_series(result)},
        "groups": groups,
        "gap_confidence_sequence": {"estimate": result.gap_sequence.estimate[-1],
                                    "low": result.gap_sequence.lower[-1],
                                    "high": result.gap_sequence.upper[-1]},
        "comparison": comparison,
        "periods": result.table,
    })


def monitor_figures(result: MonitorResult) -> dict[str, object]:
    """The report's figures by file stem (the ones that apply to this result)."""
    figures = {"gap-per-period": period_metric_figure(result, "gap"),
               "ece-per-period": period_metric_figure(result, "ece"),
               "eprocess": eprocess_figure(result),
               "group-eprocesses": group_eprocess_figure(result),
               "group-gaps": group_gap_figure(result),
               "brier-difference": brier_sequence_figure(result)}
    return {name: figure for name, figure in figures.items() if figure is not None}


def monitor_html(result: MonitorResult, dataset: str) -> str:
    """The monitoring report as one self-contained HTML page."""
    blocks = "".join(
        "<figure>" + pio.to_html(figure, full_html=False, include_plotlyjs=False,
                                 config={"displaylogo": False, "responsive": True})
        + "</figure>" for figure in monitor_figures(result).values())
    settings = result.settings
    pairs = [("dataset", dataset), ("model (champion)", result.model),
             ("rows", result.n), ("time column", result.time_column),
             ("period", str(settings.period)), ("alpha", settings.alpha),
             ("e-process", settings.method), ("challenger", settings.challenger or "—"),
             ("rows put in time order", result.sorted_rows)]
    if result.notes:
        pairs.append(("how the table was read", " ".join(result.notes)))
    shown = result.table.drop(columns=["p_value"])
    body = (f"<h1>Calibration over time: {escape(dataset)}</h1>"
            f"<p class=\"meta\">Calibration Atlas {escape(core.__version__)} · "
            f"{dt.date.today().isoformat()}</p>"
            f"<ul class=\"findings\"><li class=\"{'problem' if result.first_alarm else 'ok'}\">"
            f"{escape(result.verdict)}</li></ul>"
            f"<h2>Guarantee</h2><p>{escape(GUARANTEE)}</p>"
            f"<h2>Settings</h2>{key_value_html(pairs)}"
            f"<h2>Figures</h2>{blocks}"
            f"<h2>Per period</h2>{table_html(shown)}")
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Calibration over time: {escape(dataset)}</title><style>{STYLE}</style>"
            f"<script>{pio_plotlyjs()}</script></head><body>{body}</body></html>")


def write_monitor_report(result: MonitorResult, dataset: str, out: Path) -> list[Path]:
    """Write ``results.json``, ``monitor.html``, ``tables/periods.csv`` and
    ``tables/eprocess.csv`` into ``out`` (created); returns the paths written."""
    tables = out / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    files = {out / "results.json": indented_json(monitor_document(result, dataset)),
             out / "monitor.html": monitor_html(result, dataset),
             tables / "periods.csv": csv_text(result.table),
             tables / "eprocess.csv": csv_text(series_frame(result))}
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return list(files)
