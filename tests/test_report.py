"""The figure template, figure export, the report's JSON, summary, HTML and PDF."""

from __future__ import annotations

import dataclasses
import http.server
import io
import json
import re
import threading
from html import escape
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from core.audit import run_audit
from core.data.audit_data import AuditData
from core.figures.style import (
    CAPTION_CHARS,
    PALETTE,
    TEMPLATE_NAME,
    apply_style,
    caption_text,
)
from core.report import build_report, check_formats, write_report
from core.report import export as export_module
from core.report.charts import audit_figures
from core.report.export import (
    ExportError,
    available_formats,
    export_figure,
    find_chromium,
    opaque_png,
    renderer,
    static_unavailable_reason,
)
from core.report.html import report_html
from core.report.pdf import html_to_pdf
from core.report.schema import (
    csv_text,
    escape_text,
    indented_json,
    jsonable,
    report_document,
    report_json,
)
from core.report.summary import findings
from tests.report_fixtures import (
    COMPARISON,
    FAST,
    audit_table,
    parse_svg,
    pdf_page_is_drawn,
    pdf_pages,
    png_size,
)
from tests.system_programs import missing_reason

SCRIPT = re.compile(r"<script[^>]*>.*?</script>", re.DOTALL | re.IGNORECASE)


def markup(html: str) -> str:
    """The document without the bodies of its inline scripts (plotly.js quotes map-tile URLs
    in its code; they are strings, not references, and these charts never load them)."""
    assert re.search(r"<script[^>]*\bsrc\s*=", html, re.IGNORECASE) is None
    assert re.search(r"<link\b", html, re.IGNORECASE) is None
    return SCRIPT.sub("<script></script>", html)


needs_chromium = pytest.mark.skipif(find_chromium() is None,
                                    reason=missing_reason("chromium"))
#: A src/href attribute or CSS url()/@import that would fetch from another host.
REMOTE = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?\s*(?:https?:)?//|"""
                    r"""@import\s+["']?(?:https?:)?//""", re.IGNORECASE)


@pytest.fixture(scope="module")
def audited():
    audit = AuditData.from_frame(audit_table(), label="y", prob="p", features=["age", "sex"],
                                 groups=["grp", "sex"], split="split", name="table.csv")
    return audit, run_audit(audit, FAST)


@pytest.fixture(scope="module")
def figures(audited):
    audit, result = audited
    return audit_figures(result, audit)


# --------------------------------------------------------------------------- the template


def test_template_is_registered_and_colour_blind_safe() -> None:
    template = pio.templates[TEMPLATE_NAME]
    assert tuple(template.layout.colorway) == PALETTE
    assert PALETTE[:3] == ("#0072B2", "#E69F00", "#009E73")  # Okabe–Ito


def test_apply_style_adds_caption_without_touching_the_original() -> None:
    figure = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]), layout=dict(height=300))
    caption = caption_text(notion="positive", bandwidths={"σ_p": 0.05, "σ_x": float("inf")},
                           split="test", n=5000)
    assert caption == "notion: positive · σ_p = 0.05, σ_x = ∞ · rows: test · n = 5,000"
    styled = apply_style(figure, caption)
    assert len(figure.layout.annotations) == 0 and figure.layout.height == 300
    assert styled.layout.annotations[-1].text == caption
    assert styled.layout.height > 300 and styled.layout.margin.b > 0
    assert tuple(styled.layout.template.layout.colorway) == PALETTE
    long = caption + " · " + " · ".join(f"part {k} of a long caption" for k in range(8))
    wrapped = apply_style(figure, long)
    lines = wrapped.layout.annotations[-1].text.split("<br>")
    assert len(lines) == 3 and " · ".join(lines) == long  # broken at separators
    assert all(len(line) <= CAPTION_CHARS for line in lines)
    assert wrapped.layout.height > styled.layout.height  # room for the second line


def test_every_audit_figure_carries_a_caption_with_n(figures) -> None:
    keys = [f.key for f in figures]
    assert keys[:2] == ["reliability", "class_balance"]
    assert {"reliability_by_grp", "reliability_by_sex", "klce_p_values",
            "klce_aggregated_null", "lcb", "mlce_curve", "slices_forest",
            "slices_treemap"} <= set(keys)
    for item in figures:
        caption = item.figure.layout.annotations[-1].text
        assert "n = " in caption and "rows: " in caption, (item.key, caption)
    assert "σ_p centre" in figures[keys.index("klce_p_values")].caption


# --------------------------------------------------------------------------- formula escaping


@pytest.mark.parametrize("text", ["=SUM(A1)", "+1", "-2", "@cmd", "\tx", "\rx"])
def test_formula_starts_are_escaped(text: str) -> None:
    assert escape_text(text) == "'" + text


@pytest.mark.parametrize("text", ["a", "1-2", "σ = 0.5", "", "'=already"])
def test_plain_text_is_left_alone(text: str) -> None:
    assert escape_text(text) == text


def test_csv_escapes_text_cells_and_headers_but_not_numbers() -> None:
    import pandas as pd

    frame = pd.DataFrame({"=name": ["=HYPERLINK(\"x\")", "safe", "-3"], "value": [-1.5, 2, 3]})
    lines = csv_text(frame).splitlines()
    assert lines[0] == "'=name,value"
    assert lines[1].startswith("\"'=HYPERLINK") and lines[1].endswith(",-1.5")
    assert lines[3] == "'-3,3.0"


# --------------------------------------------------------------------------- JSON


def test_json_holds_the_numbers_settings_and_fingerprint(audited) -> None:
    audit, result = audited
    document = json.loads(report_json(result, audit, COMPARISON))
    assert document["schema_version"] == "2.5"
    assert document["settings"] == json.loads(json.dumps(dataclasses.asdict(result.settings)))
    dataset = document["dataset"]
    assert dataset["fingerprint"] == audit.fingerprint and dataset["rows_audited"] == result.rows
    assert dataset["columns"]["label"] == "y" and dataset["columns"]["split"] == "split"
    tests = {t["name"]: t for t in document["reliability"]["tests"]}
    consistency = result.reliability.tests["consistency"]
    assert tests["consistency"]["p_value"] == pytest.approx(consistency.p_value)
    assert tests["consistency"]["n_resamples"] == FAST.test_resamples
    assert len(tests["consistency"]["null_statistics"]) == FAST.test_resamples
    assert "calibrated" in tests["hosmer-lemeshow"]["null_hypothesis"]
    metrics = {m["metric"]: m for m in document["reliability"]["metrics"]}
    ece = result.reliability.metrics.set_index("metric").loc["ECE (L1)"]
    assert metrics["ECE (L1)"]["value"] == pytest.approx(ece["value"])
    assert metrics["ECE (L1)"]["ci_low"] == pytest.approx(ece["ci_low"])
    grid = document["local"]["klce_grid"]
    assert grid["aggregated"]["p_value"] == pytest.approx(result.klce_grid.aggregated.p_value)
    assert len(grid["p_values"]) == 5 and len(grid["p_values"][0]) == 5
    assert document["local"]["lce"]["mlce"] == pytest.approx(result.lce.mlce)
    assert [r["method"] for r in document["recalibration"]["comparison"]] == \
        list(COMPARISON["method"])
    assert document["summary"][0]["topic"] == "global"
    lcb = document["local"]["lcb"]
    assert lcb["computation"] == result.lcb.computation
    assert lcb["rows"] == len(lcb["values"]) == result.lcb.values.size
    np.testing.assert_allclose(np.array(lcb["values"], dtype=float), result.lcb.values,
                               rtol=5e-7, equal_nan=True)  # 7 significant digits
    expected_rows = None if result.lcb.rows is None else (result.lcb.rows + 1).tolist()
    assert lcb["rows_evaluated"] == expected_rows


def test_json_writes_arrays_of_numbers_on_one_line() -> None:
    document = {"values": [0.25, None, 3], "grid": [[1.5, 2.5], [3.5, 4.5]],
                "text": ["a:1", "=b"], "flags": [True, False], "empty": [],
                "records": [{"x": 1}], "trap": "0123456789abcdef:0"}
    text = indented_json(jsonable(document))
    assert json.loads(text) == jsonable(document)  # the same document
    lines = text.splitlines()
    assert '  "values": [0.25, null, 3],' in lines
    assert '    [1.5, 2.5],' in lines  # each row of a grid on its own line
    assert '    "a:1",' in lines and '    true,' in lines  # text and booleans indented


def test_report_slices_are_the_librarys(audited) -> None:
    """The report's slice table (JSON, CSV and the flagged rows of the HTML) is what
    discover_slices returns for the audited rows at the audit's settings."""
    from core.audit import audit_part, slice_names
    from core.audit.rows import slice_frame
    from core.local import discover_slices
    from core.report.schema import result_tables

    audit, result = audited
    settings = result.settings
    data, _ = audit_part(audit, settings.part)
    library = discover_slices(
        data.probs, data.y, slice_frame(data, slice_names(data, result.features)),
        alpha=settings.alpha, error_rate=settings.error_rate, n_ranges=settings.slice_ranges,
        depth=settings.slice_depth, n_resamples=settings.slice_resamples,
        class_names=data.classes, seed=settings.seed)
    document = report_document(result, audit)
    record = document["local"]["slices"]
    assert record["table"] == json.loads(json.dumps(jsonable(library.table)))
    assert record["statement"] == library.statement() and record["n_tested"] == library.n_tested
    assert csv_text(result_tables(result)["slices"]) == csv_text(library.table)
    html = report_html(result, audit, [], images={})
    assert "Findings: miscalibrated slices" in html and library.statement() in html
    for name in library.significant["slice"]:
        assert f"<td>{escape(name)}</td>" in html
    topics = {f.topic: f for f in findings(result)}
    # an empty result is neutral (issue 31): nothing flagged is not "calibrated"
    assert topics["slices"].level == ("problem" if library.rejects() else "info")
    assert "|z|" not in html and "hard to explain" not in html


def test_json_escapes_user_text(audited) -> None:
    audit, result = audited
    document = report_document(result, audit)
    levels = {row["group"] for row in document["reliability"]["groups"]["grp"]["summary"]}
    assert levels == {"a", "b", "'=c"}
    assert "'=c" in document["reliability"]["groups"]["grp"]["bins"]
    text = json.dumps(document)
    assert '"=c' not in text


# --------------------------------------------------------------------------- summary and HTML


def test_summary_reads_the_results(audited) -> None:
    _, result = audited
    found = findings(result, COMPARISON)
    topics = [f.topic for f in found]
    assert topics[0] == "global" and "local" in topics and topics[-1] == "recalibration"
    local = next(f for f in found if f.topic == "local")
    rejects = result.klce_grid.aggregated.p_value <= result.settings.alpha
    assert local.level == ("problem" if rejects else "ok")
    assert "isotonic has the lowest ECE (0.015" in found[-1].text
    assert "no longer rejects" in found[-1].text


def test_comparison_table_is_checked(audited) -> None:
    audit, result = audited
    with pytest.raises(ValueError, match="lacks the column.*'klce_p'"):
        report_json(result, audit, COMPARISON.drop(columns=["klce_p"]))


def test_interactive_html_is_self_contained(audited, figures) -> None:
    audit, result = audited
    html = report_html(result, audit, figures, images=None, comparison=COMPARISON)
    assert REMOTE.search(markup(html)) is None
    assert html.count('class="plotly-graph-div"') == len(figures)
    assert "Plotly" in html and "<script src" not in html
    for name in dataclasses.asdict(result.settings):
        assert f"<td>{name}</td>" in html
    assert audit.fingerprint in html and "Recalibration" in html and "temperature" in html


# --------------------------------------------------------------------------- export


def test_opaque_png_keeps_the_pixels_in_fewer_bytes() -> None:
    from PIL import Image

    pixels = np.random.default_rng(0).integers(0, 256, (60, 80, 3), dtype=np.uint8)
    pixels[:, :40] = 255  # a white half, as a figure's background
    opaque = Image.fromarray(np.dstack([pixels, np.full((60, 80), 255, np.uint8)]), "RGBA")
    buffer = io.BytesIO()
    opaque.save(buffer, "PNG", compress_level=1)
    smaller = opaque_png(buffer.getvalue())
    assert len(smaller) < buffer.tell()
    with Image.open(io.BytesIO(smaller)) as image:
        assert image.mode == "RGB"
        np.testing.assert_array_equal(np.asarray(image), pixels)  # lossless
    seethrough = opaque.copy()
    seethrough.putpixel((0, 0), (1, 2, 3, 128))
    buffer = io.BytesIO()
    seethrough.save(buffer, "PNG")
    assert opaque_png(buffer.getvalue()) == buffer.getvalue()  # transparency is kept


@needs_chromium
def test_static_exports_decode(figures, tmp_path: Path) -> None:
    item = figures[0]
    starts = renderer().started
    width, height = export_module.export_size(item.figure)
    assert png_size(export_figure(item.figure, "png")) == (2 * width, 2 * height)
    parse_svg(export_figure(item.figure, "svg"))
    pdf = tmp_path / "figure.pdf"
    pdf.write_bytes(export_figure(item.figure, "pdf"))
    assert pdf_page_is_drawn(pdf, tmp_path)
    html = export_figure(item.figure, "html", title="Reliability").decode()
    assert "<title>Reliability</title>" in html and REMOTE.search(markup(html)) is None
    # one browser for all four exports (another test may have closed an earlier one)
    assert renderer().started - starts <= 1


@needs_chromium
def test_png_and_pdf_are_made_from_the_figures_svg(figures) -> None:
    # a report draws each figure's SVG once and makes its PNG and PDF from that SVG
    # (FigureRenderer.render(svg=...)): the PNG is byte for byte the one drawn from the
    # figure, the PDF page shows the same pixels
    for item in (figures[0], figures[-1]):
        svg = export_figure(item.figure, "svg")
        assert export_figure(item.figure, "png", svg=svg) == export_figure(item.figure, "png")
        from_svg = pdf_pages(export_figure(item.figure, "pdf", svg=svg), scale=2)[0]
        drawn = pdf_pages(export_figure(item.figure, "pdf"), scale=2)[0]
        np.testing.assert_array_equal(from_svg, drawn)
        assert (drawn < 200).mean() > 0.001  # a drawn page, not a blank one
    with pytest.raises(ExportError, match="could not be drawn as PDF"):
        export_figure(figures[0].figure, "pdf", svg=b"<svg this is not an image")


@needs_chromium
def test_figures_do_not_depend_on_those_drawn_before(figures, monkeypatch) -> None:
    # the page is reused between figures (kaleido would reload it after each): a figure's
    # PNG is byte for byte the same after other figures and formats were drawn on the page
    # as on a fresh one, and the reload every RELOAD_EVERY figures still happens
    first, other = figures[0].figure, figures[-1].figure
    fresh = export_module.FigureRenderer()
    try:
        before = fresh.render(first, "png")
        fresh.render(other, "pdf")
        fresh.render(other, "svg")
        fresh.render(other, "png")
        assert fresh.render(first, "png") == before
        monkeypatch.setattr(export_module, "RELOAD_EVERY", 2)
        reloads = []
        page = type(fresh._kaleido)
        original = page.__mro__[1]._return_kaleido_tab

        async def counted(self, tab):
            reloads.append(tab)
            await original(self, tab)

        monkeypatch.setattr(page.__mro__[1], "_return_kaleido_tab", counted)
        for _ in range(4):
            assert fresh.render(first, "png") == before
        assert len(reloads) == 2
        assert fresh.started == 1
    finally:
        fresh.close()


@needs_chromium
def test_report_files(audited, figures, tmp_path: Path) -> None:
    audit, result = audited
    chosen = [f for f in figures if f.key in ("reliability", "lcb")]
    report = build_report(result, audit, COMPARISON, formats=("svg", "html"), figures=chosen)
    assert report.notes == ()
    files = write_report(report, tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in files}
    assert {"report.html", "report.pdf", "results.json", "figures/lcb.svg",
            "figures/reliability.html", "tables/metrics.csv", "tables/recalibration.csv",
            "tables/groups_grp.csv"} <= names
    html = (tmp_path / "report.html").read_text()
    assert REMOTE.search(html) is None and "<link" not in html
    assert html.count('src="data:image/svg+xml;base64,') == 2
    assert "<script" not in html  # static figures: no JavaScript at all
    assert pdf_page_is_drawn(tmp_path / "report.pdf", tmp_path)
    assert "'=c" in (tmp_path / "tables" / "groups_grp.csv").read_text()
    assert json.loads((tmp_path / "results.json").read_text())["schema_version"] == "2.5"


@needs_chromium
def test_static_report_is_printed_on_the_figure_browser(audited, figures, monkeypatch) -> None:
    # a static report is printed on a tab of the browser that drew its figures, not by a
    # Chromium started for it: the same pages, pixel for pixel, as `chromium --print-to-pdf`
    audit, result = audited
    html = build_report(result, audit, formats=(), pdf=False, figures=figures[:2]).html
    assert "<script" not in html
    by_command = html_to_pdf(html)
    from core.report import pdf as pdf_module

    def no_command(*args, **kwargs):
        raise AssertionError("a Chromium was started to print a static page")

    monkeypatch.setattr(pdf_module.subprocess, "run", no_command)
    on_tab = html_to_pdf(html, renderer=renderer())
    pages, expected = pdf_pages(on_tab), pdf_pages(by_command)
    assert len(pages) == len(expected) >= 1
    for page, same in zip(pages, expected, strict=True):
        np.testing.assert_array_equal(page, same)


@needs_chromium
def test_printing_on_the_figure_browser_fetches_nothing_runs_nothing(monkeypatch) -> None:
    # the tab is offline and runs no script: a page naming a server gets it no request, and a
    # page with a script is printed by the command's own offline Chromium instead
    requests = []

    class Probe(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            requests.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Probe)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        page = (f'<html><body><p>probe</p><img src="{url}/image.png">'
                f'<link rel="stylesheet" href="{url}/style.css"></body></html>')
        assert html_to_pdf(page, renderer=renderer())[:5] == b"%PDF-"
        printed = []
        monkeypatch.setattr(renderer(), "print_page", lambda *a: printed.append(a))
        scripted = f"<html><body><script>fetch('{url}/script')</script><p>x</p></body></html>"
        assert html_to_pdf(scripted, renderer=renderer())[:5] == b"%PDF-"
        assert printed == []  # a page with a script never reaches the figure browser
    finally:
        server.shutdown()
    assert requests == []


def test_without_chromium_only_html(audited, figures, monkeypatch, tmp_path: Path) -> None:
    audit, result = audited
    monkeypatch.setenv("CHROMIUM_PATH", str(tmp_path / "no-chromium"))
    assert available_formats() == ("html",)
    reason = static_unavailable_reason()
    assert "CHROMIUM_PATH" in reason and "HTML" in reason
    fresh = export_module.FigureRenderer()
    with pytest.raises(ExportError, match="need a Chromium browser"):
        fresh.render(figures[0].figure, "png")
    with pytest.raises(ExportError, match="The PDF report needs a Chromium browser"):
        html_to_pdf("<html></html>")
    report = build_report(result, audit, formats=("png", "html"), figures=figures[:1])
    assert report.pdf is None and set(report.figures["reliability"]) == {"html"}
    assert any("need a Chromium browser" in note for note in report.notes)
    assert "Plotly" in report.html and REMOTE.search(markup(report.html)) is None


def test_formats_are_checked() -> None:
    assert check_formats(["PNG", "svg", "png"]) == ("png", "svg")
    with pytest.raises(ValueError, match="Unknown figure format 'gif'"):
        check_formats(["gif"])
    with pytest.raises(ValueError, match="Unknown figure format 'jpg'"):
        export_figure(go.Figure(), "jpg")


def test_credal_section_verdict_tests_null_and_weights(audited) -> None:
    """Issue 20: the report's credal-set section — the verdict under the null used, the three
    tests with p-values, the learned weights per member — and a sentence when the data has
    members but the test was not run. Member names are user text: escaped."""
    from core.ensembles import simulate
    from core.ensembles.summary import CredalSettings, compare_weights
    from core.report.schema import result_tables

    audit, result = audited
    assert "credal-set test" not in report_html(result, audit, [], images={})
    with_members = dataclasses.replace(audit, members=np.full((audit.n, 2, 2), 0.5))
    html = report_html(result, with_members, [], images={})
    assert "the credal-set test was not run for this report" in html

    members, y, X, _ = simulate("binary-h0-instance", n=300, seed=2)
    credal = dataclasses.replace(
        compare_weights(members, y, X, CredalSettings(n_resamples=20)),
        members=("<b>net</b>", "=tree"), features=("x",))
    html = report_html(result, with_members, [], images={}, credal=credal)
    section = html[html.index("Ensemble: credal-set test"):]
    assert escape(credal.verdict()) in section
    assert "&lt;b&gt;net&lt;/b&gt;" in section and "<b>net</b>" not in section
    learned = credal.results["learned"]
    assert f"{learned.p_value:.4g}" in section and "Algorithm 1" in section
    document = json.loads(report_json(result, with_members, credal=credal))
    assert document["credal"]["members"] == ["<b>net</b>", "'=tree"]
    assert document["credal"]["tests"]["learned"]["p_value"] == learned.p_value
    weights = result_tables(result, credal=credal)["credal_weights"]
    np.testing.assert_allclose(weights["mean_weight"], learned.weights.mean(axis=0))
    assert weights["mean_weight"].sum() == pytest.approx(1.0)
    assert any(f["topic"] == "ensemble" for f in document["summary"])
