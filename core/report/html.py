"""The audit report as one self-contained HTML file.

Everything the file needs is inside it: the figures as base64 ``data:`` images (SVG, or PNG)
— or, for an interactive report, plotly.js inline once and each figure as a ``<div>`` — and
the style sheet in a ``<style>`` element. No ``src`` or ``href`` points to another host, so the
report opens offline and prints to PDF unchanged (:mod:`core.report.pdf`).

Contents, top to bottom: the plain-language summary (:mod:`core.report.summary`), the data's
fingerprint (rows, columns used, hash), every setting, every metric with its interval, every
test with statistic, p-value, null hypothesis and B, the per-group diagnostics, the local
findings (KLCE grid verdict, LCB, MLCE), the miscalibrated slices with the error rate they
control, the recalibration comparison and, for an ensemble, the credal-set test.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from html import escape

import numpy as np
import pandas as pd
import plotly.io as pio

import core
from core.audit.results import AuditResult
from core.audit.verdicts import audit_verdicts
from core.data.audit_data import AuditData
from core.ensembles.summary import CredalComparison
from core.metrics.intervals import ESTIMATE_CAPTION, shown_metrics
from core.report.charts import AuditFigure, slug
from core.report.provenance import provenance
from core.report.schema import NULL_HYPOTHESES, SCHEMA_VERSION, check_comparison
from core.report.summary import findings
from core.stattests.result import format_p_value

#: What each setting means, for the settings table.
SETTING_HELP = {
    "part": "rows audited (the test split by default)",
    "notion": "calibration notion of the binned metrics (None: positive for binary, "
              "top-label otherwise)",
    "class_index": "class tested one-vs-rest (None: the positive class)",
    "n_bins": "bins of the reliability diagram and binned metrics",
    "strategy": "uniform: equal-width bins; quantile: equal-mass bins",
    "interval": "binomial interval of each bin's frequency",
    "n_bootstrap": "bootstrap resamples of the metric intervals",
    "bootstrap_method": "basic or percentile bootstrap interval",
    "test_resamples": "resamples B of the SKCE consistency test",
    "group_bins": "most bins per group in the group diagnostics",
    "features": "audit features of the local tests (None: all mapped)",
    "null": "null distribution of the KLCE test",
    "grid_resamples": "resamples B shared by the KLCE bandwidth grid",
    "embedding": "map of the audit features for the LCE",
    "gamma": "LCE kernel bandwidth γ (standard deviations of the map)",
    "slice_ranges": "quantile ranges of each numeric column in the slices",
    "slice_depth": "most columns combined in one slice",
    "slice_resamples": "consistency resamples B of the slices' max-|T| null",
    "slice_notion": "what the slices test for several classes (None: every class one vs "
                    "rest)",
    "error_rate": "error rate the slice findings control: fwer (family-wise) or fdr (false "
                  "discovery rate)",
    "alpha": "test level α of every verdict",
    "seed": "seed of every random step",
    "slice_alpha": "level α of the slice findings when it differs from the verdicts' (None: "
                   "alpha)",
}
#: Columns of the slice table in the HTML report (the CSV and JSON files hold them all).
SLICE_COLUMNS = ("slice", "class", "rows", "observed", "predicted", "gap", "ci_low", "ci_high",
                 "p_adjusted", "listed_under")

STYLE = """
:root { --ink: #1d2329; --muted: #55606b; --line: #d9dee3; --ok: #0b7a4b; --bad: #b3261e;
        --info: #0072B2; }
* { box-sizing: border-box; }
body { font-family: Inter, "Helvetica Neue", Arial, "DejaVu Sans", sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1080px; padding: 24px 32px 48px; line-height: 1.45;
       font-size: 14px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 32px 0 8px; border-bottom: 2px solid var(--line);
     padding-bottom: 4px; break-after: avoid; }
h3 { font-size: 16px; margin: 20px 0 6px; break-after: avoid; }
p.meta, p.caption, .muted { color: var(--muted); font-size: 12.5px; }
ul.findings { list-style: none; padding: 0; }
ul.findings li { border-left: 5px solid var(--info); background: #f4f7fa; margin: 6px 0;
                 padding: 8px 12px; break-inside: avoid; }
ul.findings li.problem { border-color: var(--bad); background: #fbf1f0; }
ul.findings li.ok { border-color: var(--ok); background: #eef7f2; }
table.verdicts td.status { font-weight: 600; text-transform: uppercase; font-size: 11.5px; }
table.verdicts tr.fail td.status { color: var(--bad); }
table.verdicts tr.pass td.status { color: var(--ok); }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 12.5px;
        break-inside: auto; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 8px; text-align: left;
         vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { background: #f0f3f6; }
tr { break-inside: avoid; }
figure { margin: 12px 0 18px; break-inside: avoid; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 12px; }
code { font-size: 12px; word-break: break-all; }
@page { size: A4; margin: 14mm 12mm; }
@media print { body { padding: 0; max-width: none; font-size: 11.5px; } h2 { margin-top: 20px; } }
"""


# --------------------------------------------------------------------------- small pieces


def number(value: object, digits: int = 4) -> str:
    """A number for a table cell: ``—`` for missing, integers with separators, else
    ``digits`` significant digits."""
    if value is None:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return "—"
        if np.isinf(value):
            return "∞" if value > 0 else "−∞"
        return f"{float(value):.{digits}g}"
    return str(value)


def table_html(frame: pd.DataFrame, digits: int = 4, headers: Mapping[str, str] | None = None
               ) -> str:
    """An HTML table of ``frame``: text escaped, numbers right-aligned."""
    headers = headers or {}
    head = "".join(f"<th>{escape(str(headers.get(c, c)))}</th>" for c in frame.columns)
    rows = []
    for record in frame.itertuples(index=False):
        cells = []
        for value in record:
            numeric = isinstance(value, (int, float, np.integer, np.floating)) and \
                not isinstance(value, (bool, np.bool_))
            css = ' class="num"' if numeric else ""
            cells.append(f"<td{css}>{escape(number(value, digits))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def key_value_html(pairs: Sequence[tuple[str, object]]) -> str:
    """A two-column table of labels and values."""
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(number(v))}</td></tr>"
                   for k, v in pairs)
    return f"<table><tbody>{rows}</tbody></table>"


def image_html(data: bytes, alt: str) -> str:
    """An ``<img>`` with the image inline as a base64 ``data:`` URI (PNG or SVG)."""
    mime = "image/png" if data.startswith(b"\x89PNG") else "image/svg+xml"
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img alt="{escape(alt)}" src="data:{mime};base64,{encoded}">'


def figure_block(item: AuditFigure, images: Mapping[str, bytes] | None) -> str:
    """One figure: the embedded image (static) or the plotly ``<div>`` (interactive)."""
    if images is not None:
        body = image_html(images[item.key], item.title)
    else:
        body = pio.to_html(item.figure, full_html=False, include_plotlyjs=False,
                           config={"displaylogo": False, "responsive": True})
    # the caption line is inside the figure itself; the figcaption names it
    note = f". {escape(item.note)}" if item.note else ""
    return f"<figure>{body}<figcaption>{escape(item.title)}{note}</figcaption></figure>"


# --------------------------------------------------------------------------- sections


def verdicts_section(result: AuditResult, comparison: pd.DataFrame | None) -> str:
    """The answers first: one row per question (:func:`core.audit.verdicts.audit_verdicts`)."""
    rows = "".join(
        f'<tr class="{escape(v.status.replace(" ", "-"))}"><td>{escape(v.question)}</td>'
        f'<td class="status">{escape(v.status)}</td><td>{escape(v.answer)}'
        + "".join(f'<br><span class="muted">{escape(e)}</span>' for e in v.evidence)
        + f'</td><td>{escape(v.number)}</td><td class="muted">{escape(v.error_rate)}</td></tr>'
        for v in audit_verdicts(result, comparison))
    return ("<h2>Verdicts</h2><table class=\"verdicts\"><tr><th>question</th><th>verdict</th>"
            "<th>answer</th><th>primary test</th><th>error rate</th></tr>" + rows + "</table>")


def summary_section(result: AuditResult, comparison: pd.DataFrame | None,
                    credal: CredalComparison | None = None) -> str:
    items = "".join(f'<li class="{escape(f.level)}">{escape(f.text)}</li>'
                    for f in findings(result, comparison, credal))
    return f"<h2>Summary of findings</h2><ul class=\"findings\">{items}</ul>"


def dataset_section(result: AuditResult, audit: AuditData) -> str:
    mapping = audit.mapping
    pairs: list[tuple[str, object]] = [
        ("dataset", result.dataset), ("fingerprint (SHA-256 of the validated data)",
                                      result.fingerprint),
        ("rows in the data", result.stream.rows if result.stream is not None else audit.n),
        ("rows audited", f"{result.rows:,} ({result.part})"),
        ("classes", ", ".join(audit.classes)),
    ]
    if mapping is not None:
        pairs += [("label column", mapping.label),
                  ("probability columns", ", ".join(mapping.probs)
                   + (" (logits)" if mapping.logits else "")),
                  ("feature columns", ", ".join(mapping.features) or "none"),
                  ("group columns", ", ".join(mapping.groups) or "none"),
                  ("split column", mapping.split or "none")]
    pairs.append(("audit features used", ", ".join(result.features) or "none"))
    notes = "".join(f"<li>{escape(n.message)}</li>" for n in audit.report)
    notes_html = f"<h3>Validation notes</h3><ul>{notes}</ul>" if notes else \
        "<p class=\"muted\">Validation found nothing to repair.</p>"
    return f"<h2>Data</h2>{key_value_html(pairs)}{notes_html}{stream_section(result)}"


def stream_section(result: AuditResult) -> str:
    """How a streamed audit read the table: what came from every row, what from the seeded
    sample, and each pass's time ('' for an audit in memory)."""
    info = result.stream
    if info is None:
        return ""
    passes = "".join(f"<tr><td>{escape(name)}</td><td class=\"num\">{seconds:,.1f} s</td></tr>"
                     for name, seconds in info.passes)
    exact = "".join(f"<li>{escape(item)}</li>" for item in info.exact)
    sampled = "".join(f"<li>{escape(item)}</li>" for item in info.sampled)
    return (
        "<h3>How the data were read</h3>"
        f"<p>The table was streamed batch by batch from {escape(info.source)} on "
        f"{escape(info.engine)}; no step held more than a few batches' rows"
        + (f" ({escape(info.batching)})" if info.batching else "") + ".</p>"
        f"<p>Over every audited row:</p><ul>{exact}</ul>"
        f"<p>On a seeded sample of {info.sample_rows:,} of the {info.rows:,} rows (drawn by "
        f"row number, so the same wherever the partitions are read):</p><ul>{sampled}</ul>"
        + (f"<table><tr><th>pass</th><th>time</th></tr>{passes}</table>" if passes else ""))


def provenance_section(result: AuditResult, user: str | None) -> str:
    """Product and library versions, engine, data fingerprint and the signed-in user."""
    record = provenance(result, user)
    pairs: list[tuple[str, object]] = [
        ("product", f"Calibration Atlas {record['version']} (Python {record['python']})"),
        *((name, number) for name, number in record["libraries"].items()),
        ("compute engine", ", ".join(record["engine"])),
        ("data fingerprint", record["data_fingerprint"]),
        ("signed-in user", record["user"] or "none (no sign-in on this server)"),
    ]
    return f"<h2>Provenance</h2>{key_value_html(pairs)}"


def settings_section(result: AuditResult) -> str:
    rows = [{"setting": name, "value": "None" if value is None else
             (", ".join(value) if isinstance(value, tuple) else str(value)),
             "meaning": SETTING_HELP.get(name, "")}
            for name, value in dataclasses.asdict(result.settings).items()]
    return f"<h2>Settings</h2>{table_html(pd.DataFrame(rows))}"


def tests_frame(result: AuditResult) -> pd.DataFrame:
    """Every test of the Reliability section with statistic, p-value, null hypothesis and B."""
    rows = [{"test": name, "method": t.method, "null hypothesis": NULL_HYPOTHESES.get(name, ""),
             "statistic": t.statistic, "p-value": format_p_value(t.p_value, t.n_resamples),
             "B": t.n_resamples}
            for name, t in result.reliability.tests.items()]
    return pd.DataFrame(rows)


def reliability_section(result: AuditResult, blocks: Callable[[str], str]) -> str:
    section = result.reliability
    metrics = shown_metrics(section.metrics).rename(columns={"value": "plug-in value"})
    settings = result.settings
    return (f"<h2>Global calibration</h2>{blocks('reliability')}{blocks('class_balance')}"
            f"<h3>Metrics</h3>{table_html(metrics)}"
            f"<p class=\"caption\">{settings.n_bootstrap} bootstrap resamples, "
            f"{settings.bootstrap_method} 95% intervals; notion {escape(section.notion)}. "
            f"{ESTIMATE_CAPTION}</p>"
            f"<h3>Tests</h3>{table_html(tests_frame(result))}"
            "<p class=\"caption\">p-values of resampling tests are (1 + #{null ≥ observed}) / "
            "(1 + B); B = 0 marks tests without resampling.</p>")


def groups_section(result: AuditResult, blocks: Callable[[str], str]) -> str:
    if not result.reliability.groups:
        return ""
    parts = ["<h2>By group</h2>"]
    for group, (summary, _) in result.reliability.groups.items():
        parts.append(f"<h3>{escape(group)}</h3>{blocks(f'reliability_by_{slug(group)}')}"
                     f"{table_html(summary)}")
    return "".join(parts)


def klce_section(result: AuditResult, blocks: Callable[[str], str]) -> str:
    grid = result.klce_grid
    table = pd.DataFrame([[format_p_value(p, grid.n_resamples) for p in row]
                          for row in np.atleast_2d(grid.p_values)],
                         columns=[f"σ_x = {number(b, 3)}" for b in grid.feature_bandwidths])
    table.insert(0, "σ_p", [number(b, 3) for b in grid.prob_bandwidths])
    aggregated = grid.aggregated
    pairs = [("null hypothesis", "the model is locally calibrated over the audit features"),
             ("method", aggregated.method), ("statistic (largest standardised KLCE²)",
                                             aggregated.statistic),
             ("p-value", format_p_value(aggregated.p_value, aggregated.n_resamples)),
             ("B", aggregated.n_resamples),
             ("verdict at α = " + f"{result.settings.alpha:g}",
              "rejects" if aggregated.p_value <= result.settings.alpha else "does not reject")]
    return (f"<h2>Local calibration</h2><h3>KLCE test over the bandwidth grid</h3>"
            f"{key_value_html(pairs)}{blocks('klce_p_values')}"
            f"<p class=\"caption\">p-value at each (σ_p, σ_x) pair:</p>{table_html(table)}"
            f"{blocks('klce_aggregated_null')}")


def lcb_section(result: AuditResult, blocks: Callable[[str], str]) -> str:
    lcb = result.lcb
    missing = int(np.isnan(lcb.values).sum())
    pairs = [("rows", lcb.reference), ("σ_p (prediction)", lcb.spec.prob_bandwidth),
             ("σ_x (standardised features)", lcb.spec.feature_bandwidth),
             ("rows evaluated", int(lcb.values.size)), ("rows without neighbours", missing),
             ("computation", lcb.computation)]
    return f"<h3>Local calibration bias (LCB)</h3>{key_value_html(pairs)}{blocks('lcb')}"


def slices_section(result: AuditResult, blocks: Callable[[str], str]) -> str:
    """The flagged slices (findings first, the slices listed under them after), what was
    tested and the error rate controlled; every tested slice is in ``tables/slices.csv``."""
    slices = result.slices
    flagged = slices.significant
    columns = [c for c in SLICE_COLUMNS if c != "class" or len(slices.classes) > 1]
    body = table_html(flagged[columns]) if len(flagged) else \
        "<p>No slice is flagged at this level.</p>"
    interval = ("simultaneous (every gap inside its interval together)"
                if slices.error_rate == "fwer" else "false-coverage-rate adjusted")
    return (f"<h2>Findings: miscalibrated slices</h2><p>{escape(slices.statement())}</p>"
            f"<p>{escape(slices.summary())}</p>{blocks('slices_forest')}"
            f"{blocks('slices_treemap')}<h3>Flagged slices</h3>{body}"
            "<p class=\"caption\">gap = observed rate − mean prediction; ci_low–ci_high its "
            f"{escape(interval)} {1 - slices.alpha:.0%} interval; p_adjusted "
            f"{'max-|T| step-down' if slices.error_rate == 'fwer' else 'BH q-value'}; "
            "listed_under: the flagged parent whose interval overlaps (not a finding of its "
            f"own). {escape(slices.family.describe())}</p>")


def lce_section(result: AuditResult, blocks: Callable[[str], str]) -> str:
    lce = result.lce
    if lce is None:
        return "<h3>Local calibration error (LCE)</h3><p>No audit features: no LCE.</p>"
    pairs = [("MLCE at γ = " + f"{result.settings.gamma:g}", lce.mlce),
             ("global MCE (top-label, 15 bins)", lce.mce), ("map", lce.map),
             ("computation", lce.computation)]
    return (f"<h3>Local calibration error (LCE)</h3>{key_value_html(pairs)}"
            f"{blocks('mlce_curve')}{table_html(lce.curve)}")


def recalibration_section(comparison: pd.DataFrame | None) -> str:
    if comparison is None:
        return ("<h2>Recalibration</h2><p class=\"muted\">No recalibration comparison was "
                "run for this report.</p>")
    return (f"<h2>Recalibration</h2>{table_html(comparison)}"
            "<p class=\"caption\">Each method fitted on the calibration split and evaluated on "
            "the test split; klce_p is the KLCE test's p-value after recalibration, "
            "max_group_mce the largest group-wise MCE.</p>")


def credal_section(credal: CredalComparison | None, audit: AuditData) -> str:
    """The ensemble's credal-set tests (Jürgens et al., Algorithm 1, beside the mean and
    Mortier et al.'s sampled weights): verdict, each test with its p-value and the null used,
    and where the learned weights λ(x) put their trust."""
    if credal is None:
        if audit.members is None:
            return ""
        return ("<h2>Ensemble: credal-set test</h2><p class=\"muted\">The data has ensemble "
                "members, but the credal-set test was not run for this report (run it on the "
                "Ensembles page, or give the members with --member).</p>")
    settings = credal.settings
    learned = credal.results["learned"]
    parts = learned.parameters
    pairs = [("members", ", ".join(credal.members) or f"{learned.weights.shape[1]}"),
             ("features λ(x) depends on", ", ".join(credal.features) or "none (constant)"),
             ("estimator", settings.estimator), ("resamples B", settings.n_resamples),
             ("rows: optimisation / validation / test",
              f"{parts.get('n_optimisation', 0):,} / {parts.get('n_validation', 0):,} / "
              f"{learned.rows.size:,}"),
             ("α", settings.alpha), ("seed", settings.seed)]
    tests = credal.table().drop(columns=["weights"]).assign(**{
        "null hypothesis": [NULL_HYPOTHESES.get(r.method, "") for r in credal.results.values()]})
    verdict_class = "problem" if learned.rejects(settings.alpha) else "ok"
    return (f"<h2>Ensemble: credal-set test</h2>"
            f"<ul class=\"findings\"><li class=\"{verdict_class}\">{escape(credal.verdict())}"
            f"</li></ul>{key_value_html(pairs)}<h3>The three tests</h3>{table_html(tests)}"
            "<p class=\"caption\">All three test the same rows; p-values are (1 + #{null ≥ "
            "observed}) / (1 + B). The mean ignores the instance; the Dir(1)-sampled test "
            "minimises over constant weights; λ(x) is learned on separate rows.</p>"
            f"<h3>Learned weights λ(x)</h3>{table_html(credal.weights_table())}"
            "<p class=\"caption\">Mean weight of each member over the test rows, and the share "
            "of rows where it has the largest weight.</p>")


# --------------------------------------------------------------------------- the document


def report_html(result: AuditResult, audit: AuditData, figures: Sequence[AuditFigure],
                images: Mapping[str, bytes] | None = None,
                comparison: pd.DataFrame | None = None,
                created: dt.datetime | None = None, user: str | None = None,
                credal: CredalComparison | None = None,
                plotly_src: str | None = None) -> str:
    """The self-contained HTML report.

    Parameters
    ----------
    result : AuditResult
        From :func:`core.audit.run_audit`.
    audit : AuditData
        The data it ran on.
    figures : sequence of AuditFigure
        From :func:`core.report.charts.audit_figures` (a figure left out is left out of
        the report).
    images : mapping of str to bytes, optional
        Each figure's key → its SVG or PNG bytes, embedded as ``data:`` images. ``None``:
        an interactive report with plotly.js inline (about 4.5 MB larger; what a machine
        without Chromium gets), or, with ``plotly_src``, loaded from that relative path (a
        report folder's one copy of plotly.js, which its HTML figures share).
    comparison : pandas.DataFrame, optional
        The recalibration comparison (:data:`core.report.schema.COMPARISON_COLUMNS`).
    created : datetime, optional
        The time stamp (default: now, UTC).
    user : str, optional
        The signed-in user, recorded in the provenance section.
    credal : CredalComparison, optional
        The credal-set tests of the ensemble members (the data's members without it: a
        sentence that they were not run).

    Returns
    -------
    str
        The HTML document.
    """
    comparison = check_comparison(comparison)
    created = created or dt.datetime.now(dt.timezone.utc)
    by_key = {f.key: f for f in figures}

    def blocks(key: str) -> str:
        return figure_block(by_key[key], images) if key in by_key else ""

    script = "" if images is not None else \
        f'<script type="text/javascript">{pio_plotlyjs()}</script>' if plotly_src is None \
        else f'<script type="text/javascript" src="{escape(plotly_src)}"></script>'
    body = "".join([
        f"<h1>Calibration audit: {escape(result.dataset)}</h1>",
        f"<p class=\"meta\">Created {escape(created.strftime('%Y-%m-%d %H:%M UTC'))} by "
        f"Calibration Atlas {escape(core.__version__)} · report schema {SCHEMA_VERSION} · "
        f"{result.rows:,} rows ({escape(result.part)}) · fingerprint "
        f"<code>{escape(result.fingerprint[:16])}…</code></p>",
        verdicts_section(result, comparison),
        summary_section(result, comparison, credal),
        dataset_section(result, audit),
        provenance_section(result, user),
        settings_section(result),
        reliability_section(result, blocks),
        groups_section(result, blocks),
        klce_section(result, blocks),
        lcb_section(result, blocks),
        lce_section(result, blocks),
        slices_section(result, blocks),
        recalibration_section(comparison),
        credal_section(credal, audit),
        ("<h2>Notes</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in result.notes)
         + "</ul>") if result.notes else "",
    ])
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Calibration audit: {escape(result.dataset)}</title>"
            f"<style>{STYLE}</style>{script}</head><body>{body}</body></html>")


def pio_plotlyjs() -> str:
    """plotly.js, inline (the bundle shipped with the plotly package; no CDN)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()
