"""``calibration-atlas``: exit codes, messages, written files; once through a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core import cli
from core.audit import AuditSettings, run_audit
from core.cli import audit as audit_command
from core.cli import audit_report, entry
from core.cli import demo as demo_command
from core.data.audit_data import AuditData
from core.report.export import find_chromium
from tests.conftest import ROOT
from tests.report_fixtures import audit_table, parse_svg, pdf_page_is_drawn, png_size

SMALL = ["--resamples", "30"]


@pytest.fixture
def table_csv(tmp_path: Path) -> Path:
    path = tmp_path / "audit.csv"
    audit_table(300).to_csv(path, index=False)
    return path


def test_audit_writes_every_output(table_csv: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "report"
    status = cli.main(["audit", str(table_csv), "--label", "y", "--prob", "p",
                       "--features", "age,sex", "--groups", "grp", "--split", "split",
                       "--out", str(out), "--formats", "png,svg,html", "--seed", "3", *SMALL])
    err = capsys.readouterr().err
    assert status == 0, err
    assert "Audited 150 rows (test) of audit.csv" in err and " s (audit " in err
    assert "100%" in err  # the progress bar reached its end
    assert (out / "report.html").is_file() and (out / "results.json").is_file()
    document = json.loads((out / "results.json").read_text())
    assert document["settings"]["seed"] == 3 and document["settings"]["grid_resamples"] == 30
    tests = {t["name"]: t for t in document["reliability"]["tests"]}
    assert tests["consistency"]["parameters"]["seed"] == 3  # --seed reaches every random step
    assert document["local"]["klce_grid"]["aggregated"]["parameters"]["seed"] == 3
    assert document["dataset"]["columns"]["features"] == ["age", "sex"]
    figures = out / "figures"
    # the HTML figures share one plotly.js in the folder
    assert {p.suffix for p in figures.iterdir()} == ({".png", ".svg", ".html", ".js"}
                                                     if find_chromium() else {".html", ".js"})
    assert (figures / "plotly.min.js").is_file()
    if find_chromium():
        width, height = png_size((figures / "reliability.png").read_bytes())
        # 1000 × 560 px, plus 78 + 34 px for axis and caption under the old 10 px margin
        assert (width, height) == (2 * 1000, 2 * (560 + 78 + 34 - 10))
        parse_svg((figures / "lcb.svg").read_bytes())
        assert pdf_page_is_drawn(out / "report.pdf", tmp_path)
    assert (out / "tables" / "metrics.csv").is_file()


@pytest.mark.parametrize(("change", "expected"), [
    (lambda f: f.assign(p=f["p"].where(f.index != 6, 3.0)),
     "Column 'p' (probability) must hold probabilities between 0 and 1, but 1 row (row 7)"),
    (lambda f: f.drop(columns=["age"]),
     "Column 'age' (audit feature) is not in the table."),
])
def test_bad_table_exits_2_with_the_apps_sentence(change, expected, tmp_path: Path,
                                                  capsys) -> None:
    path = tmp_path / "bad.csv"
    change(audit_table(100)).to_csv(path, index=False)
    status = cli.main(["audit", str(path), "--label", "y", "--prob", "p", "--features", "age",
                       "--out", str(tmp_path / "out"), *SMALL])
    err = capsys.readouterr().err
    assert status == 2
    assert expected in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
    frame = change(audit_table(100))
    with pytest.raises(ValueError) as app_error:  # the app's message is the same sentence
        AuditData.from_frame(frame, label="y", prob="p", features=["age"])
    assert str(app_error.value) in err


@pytest.mark.parametrize(("arguments", "expected"), [
    (["--formats", "png,gif"], "Unknown figure format 'gif'"),
    (["--resamples", "0"], "'0' is not a whole number of at least 1"),
    (["--features", "age,,sex"], "has an empty column name"),
])
def test_bad_options_exit_2(arguments, expected, table_csv: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["audit", str(table_csv), "--label", "y", "--prob", "p", *arguments])
    assert exit_info.value.code == 2
    assert expected in capsys.readouterr().err


@pytest.mark.parametrize(("arguments", "expected"), [
    (["--fail-on", "global"], "argument --fail-on: invalid choice: 'global'"),
    (["--error-rate", "bonferroni"], "argument --error-rate: invalid choice: 'bonferroni'"),
    (["--slice-depth", "4"], "argument --slice-depth: invalid choice: 4"),
])
def test_bad_gate_options_exit_2(arguments, expected, table_csv: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["audit", str(table_csv), "--label", "y", "--prob", "p", *arguments])
    assert exit_info.value.code == 2
    assert expected in capsys.readouterr().err


def test_alpha_out_of_range_exits_2_with_a_sentence(table_csv: Path, tmp_path: Path,
                                                    capsys) -> None:
    status = cli.main(["audit", str(table_csv), "--label", "y", "--prob", "p",
                       "--alpha", "1.5", "--out", str(tmp_path / "out")])
    assert status == 2
    assert "--alpha must lie strictly between 0 and 1, not 1.5." in capsys.readouterr().err


def test_fail_on_gates_a_pipeline(table_csv: Path, tmp_path: Path, capsys) -> None:
    """The table's model underestimates the rate of group '=c' by 0.25 (150 audited rows,
    B = 30): --fail-on slices exits 1 after writing the report, naming the first finding;
    without it the same audit exits 0; --fail-on local/any follow their verdicts."""
    common = ["audit", str(table_csv), "--label", "y", "--prob", "p", "--features", "age",
              "--groups", "grp", "--formats", "html", *SMALL]
    out = tmp_path / "gated"
    assert cli.main([*common, "--out", str(out), "--fail-on", "slices"]) == 1
    err = capsys.readouterr().err
    assert (out / "report.html").is_file() and (out / "results.json").is_file()
    document = json.loads((out / "results.json").read_text())
    assert document["local"]["slices"]["rejects"] is True
    found = [row for row in document["local"]["slices"]["table"] if row["finding"]]
    assert f"--fail-on slices: findings: Miscalibrated in {len(found)} slice(s): " \
           f"{found[0]['slice']}" in err and "at alpha = 0.05" in err
    assert "Verdicts (alpha = 0.05):" in err and "FAIL" in err
    assert document["settings"]["slice_resamples"] == 30
    # the other gates read the same verdicts (the audit the command ran, run again here)
    options = entry.build_parser().parse_args([*common, "--out", str(out)])
    data = audit_command.load_audit(options)
    result = run_audit(data, audit_command.audit_settings_from_options(options, data))
    assert audit_report.failed_verdicts(result, None) == []
    assert len(audit_report.failed_verdicts(result, "slices")) == 1
    local = audit_report.failed_verdicts(result, "local")
    assert len(local) == int(document["local"]["klce_grid"]["rejects"])
    assert audit_report.failed_verdicts(result, "any")[-1] \
        == audit_report.failed_verdicts(result, "slices")[0]
    # calibrated outcomes at a strict level: nothing to gate on
    calibrated = audit_table(300)
    calibrated["y"] = (np.random.default_rng(1).random(300) < calibrated["p"]).astype(int)
    path = tmp_path / "calibrated.csv"
    calibrated.to_csv(path, index=False)
    assert cli.main(["audit", str(path), "--label", "y", "--prob", "p", "--groups", "grp",
                     "--formats", "html", "--out", str(tmp_path / "calm"), "--alpha", "0.01",
                     "--error-rate", "fdr", "--fail-on", "slices", *SMALL]) == 0
    calm = json.loads((tmp_path / "calm" / "results.json").read_text())
    assert calm["local"]["slices"]["error_rate"] == "fdr"
    assert calm["settings"]["alpha"] == 0.01


def test_missing_file_and_both_prob_options(tmp_path: Path, capsys) -> None:
    assert cli.main(["audit", str(tmp_path / "none.csv"), "--label", "y", "--prob", "p"]) == 2
    assert "could not be opened" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["audit", "x.csv", "--label", "y", "--prob", "p", "--probs", "a,b"])
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_help_documents_every_option_with_an_example(capsys) -> None:
    for command in (["audit", "--help"], ["demo", "--help"], ["credal", "--help"], ["--help"]):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(command)
        assert exit_info.value.code == 0
    parser = entry.build_parser()
    commands = parser._subparsers._group_actions[0].choices  # noqa: SLF001
    for name, sub in commands.items():
        for action in sub._actions:  # noqa: SLF001
            if action.dest == "help":
                continue
            assert "example" in (action.help or ""), (name, action.dest)
    text = capsys.readouterr().out
    assert "calibration-atlas audit predictions.csv --label y --prob p" in text
    assert "calibration-atlas demo --out demo-report" in text
    assert "calibration-atlas credal ensemble.csv --label y --member p_net" in text


def test_demo_command_without_chromium(monkeypatch, tmp_path: Path, capsys) -> None:
    """The demo wiring on a slice of the census demo with few resamples (the full demo audit
    takes minutes on two cores), on a machine without Chromium: HTML only, with the reason."""
    from core.data.demo import load_demo

    small = load_demo("census")
    small = small.subset(np.arange(0, small.n, 10))
    monkeypatch.setattr(demo_command, "load_demo", lambda key: small)
    monkeypatch.setattr(demo_command, "AuditSettings", lambda: AuditSettings(
        n_bootstrap=20, test_resamples=30, grid_resamples=20))
    monkeypatch.setenv("CHROMIUM_PATH", str(tmp_path / "no-chromium"))
    assert cli.main(["demo", "--out", str(tmp_path / "demo")]) == 0
    err = capsys.readouterr().err
    assert f"rows (test) of {small.name}" in err
    assert "note: PNG, SVG and PDF need a Chromium browser" in err
    assert "note: No PDF report: The PDF report needs a Chromium browser" in err
    figures = tmp_path / "demo" / "figures"
    assert {p.suffix for p in figures.iterdir()} == {".html", ".js"}  # one shared plotly.js
    assert not (tmp_path / "demo" / "report.pdf").exists()
    # the interactive report loads the folder's plotly.js instead of holding a copy
    html = (tmp_path / "demo" / "report.html").read_text(encoding="utf-8")
    assert 'src="figures/plotly.min.js"' in html and len(html) < 1_000_000


def test_console_entry_point_in_a_real_process(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    audit_table(60).drop(columns=["p"]).to_csv(path, index=False)
    finished = subprocess.run(
        [sys.executable, "-m", "core.cli", "audit", str(path), "--label", "y", "--prob", "p"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert finished.returncode == 2
    assert "Column 'p' (probability) is not in the table." in finished.stderr
    assert "Traceback" not in finished.stderr
    assert 'calibration-atlas = "core.cli:command"' in (ROOT / "pyproject.toml").read_text()


def test_recalibration_comparison_reaches_the_report(table_csv: Path, tmp_path: Path,
                                                     capsys) -> None:
    out = tmp_path / "report"
    status = cli.main(["audit", str(table_csv), "--label", "y", "--prob", "p",
                       "--features", "age,sex", "--groups", "grp", "--split", "split",
                       "--out", str(out), "--formats", "html", "--recalibrate",
                       "temperature,histogram", *SMALL])
    err = capsys.readouterr().err
    assert status == 0, err
    document = json.loads((out / "results.json").read_text())
    methods = [row["method"] for row in document["recalibration"]["comparison"]]
    assert methods[0] == "uncalibrated" and {"temperature", "histogram"} <= set(methods)
    # the repair verdict, with the rule behind it (issue 31)
    assert "Which recalibration repairs it?" in err
    assert "Recalibration rule: Among the methods" in err
    assert "Recalibration" in (out / "report.html").read_text(encoding="utf-8")
    assert cli.main(["audit", str(table_csv), "--label", "y", "--prob", "p",
                     "--recalibrate", "magic", "--out", str(tmp_path / "x")]) == 2
    assert "Unknown recalibration method 'magic'" in capsys.readouterr().err


@pytest.fixture
def ensemble_csv(tmp_path: Path) -> Path:
    import pandas as pd

    from core.ensembles import simulate

    members, y, X, _ = simulate("binary-h0-instance", n=600, seed=5)
    path = tmp_path / "ensemble.csv"
    pd.DataFrame({"y": y, "x": X[:, 0], "net": members[:, 0], "tree": members[:, 1]}).to_csv(
        path, index=False)
    return path


def test_credal_writes_the_three_tests(ensemble_csv: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "credal"
    status = cli.main(["credal", str(ensemble_csv), "--label", "y", "--member", "net",
                       "--member", "tree", "--features", "x", "--resamples", "20",
                       "--seed", "2", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 0, err
    assert "Tested 600 rows of ensemble.csv: wrote 3 files" in err and "100%" in err
    document = json.loads((out / "credal.json").read_text())
    assert document["members"] == ["net", "tree"] and document["features"] == ["x"]
    assert document["settings"]["seed"] == 2 and document["settings"]["null"] == "bootstrap"
    for key, test in document["tests"].items():
        assert 0 < test["p_value"] <= 1 and len(test["null_statistics"]) == 20, key
        assert test["p_value"] == (1 + sum(v >= test["statistic"]
                                           for v in test["null_statistics"])) / 21
    import pandas as pd

    weights = pd.read_csv(out / "credal-weights.csv")
    assert list(weights.columns) == ["row", "weight[net]", "weight[tree]", "combined[0]",
                                     "combined[1]"]
    assert len(weights) == 120 and weights["row"].between(1, 600).all()
    np.testing.assert_allclose(weights[["weight[net]", "weight[tree]"]].sum(axis=1), 1.0)
    table = pd.read_csv(out / "credal.csv")
    assert list(table["weights"]) == ["learned", "mean", "sampled"]
    # the same numbers as the library on the same rows
    from core.ensembles import CredalSettings, compare_weights

    frame = pd.read_csv(ensemble_csv)
    direct = compare_weights(frame[["net", "tree"]].to_numpy(), frame["y"].to_numpy(),
                             frame[["x"]].to_numpy(), CredalSettings(n_resamples=20, seed=2))
    assert direct.results["learned"].p_value == document["tests"]["learned"]["p_value"]


@pytest.mark.parametrize(("args", "expected"), [
    (["--member", "net"], "--member was given 1 time(s); a credal set needs at least two"),
    (["--member", "net", "--member", "forest"],
     "Column 'forest' (ensemble member probability) is not in the table"),
    (["--member", "net", "--member", "tree,x"], "Every --member must name the same number"),
    (["--member", "net", "--member", "y"], "Column 'y' is mapped both as the label and as an "
                                           "ensemble member column"),
    (["--member", "net", "--member", "tree", "--alpha", "1.5"],
     "--alpha must lie strictly between 0 and 1"),
    (["--member", "net", "--member", "tree", "--null", "permute"], "invalid choice: 'permute'"),
])
def test_credal_bad_input_names_the_argument(ensemble_csv: Path, tmp_path: Path, capsys,
                                             args: list[str], expected: str) -> None:
    try:
        status = cli.main(["credal", str(ensemble_csv), "--label", "y", *args,
                           "--out", str(tmp_path / "out")])
    except SystemExit as exit_:  # argparse's own usage errors
        status = exit_.code
    err = capsys.readouterr().err
    assert status == 2 and expected in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_credal_names_the_member_column_that_is_not_a_probability(ensemble_csv: Path,
                                                                   tmp_path: Path,
                                                                   capsys) -> None:
    import pandas as pd

    frame = pd.read_csv(ensemble_csv)
    frame.loc[6, "tree"] = 3.0
    frame.to_csv(ensemble_csv, index=False)
    status = cli.main(["credal", str(ensemble_csv), "--label", "y", "--member", "net",
                       "--member", "tree", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2
    assert "Column 'tree' (ensemble member probability) must hold probabilities" in err
    assert "row 7" in err


def test_credal_files_escape_spreadsheet_formulas(ensemble_csv: Path, tmp_path: Path) -> None:
    import pandas as pd

    frame = pd.read_csv(ensemble_csv).rename(columns={"tree": "=tree"})
    frame.to_csv(ensemble_csv, index=False)
    out = tmp_path / "credal"
    assert cli.main(["credal", str(ensemble_csv), "--label", "y", "--member", "net",
                     "--member", "=tree", "--resamples", "10", "--out", str(out)]) == 0
    header = (out / "credal-weights.csv").read_text().splitlines()[0]
    assert "'weight[=tree]" not in header and "weight[=tree]" in header  # not at a cell start
    document = json.loads((out / "credal.json").read_text())
    assert document["members"] == ["net", "'=tree"]


def test_a_parquet_folder_is_streamed_partition_by_partition(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "scores"
    folder.mkdir()
    table = audit_table(600)
    for k in range(3):
        table.iloc[200 * k:200 * (k + 1)].to_parquet(folder / f"part-{k}.parquet", index=False)
    out = tmp_path / "report"
    status = cli.main(["audit", str(folder), "--label", "y", "--prob", "p", "--features",
                       "age,sex", "--groups", "grp", "--split", "split", "--out", str(out),
                       "--formats", "html", "--sample-rows", "1000", *SMALL])
    err = capsys.readouterr().err
    assert status == 0, err
    assert "Streaming scores (3 Parquet files, 3 row groups, 600 rows)" in err
    # the three files' rows are read as one batch (the memory plan's batches are larger)
    assert "Sums over rows: 1 of 1 batches" in err  # a line per batch in a log
    assert "Passes: Reading the labels and levels" in err and "Peak memory" in err
    document = json.loads((out / "results.json").read_text())
    assert document["stream"]["rows"] == 600 and document["stream"]["partitions"] == 1
    assert document["stream"]["batch_rows"] >= 600
    assert document["dataset"]["rows_total"] == 600
    assert "How the data were read" in (out / "report.html").read_text()


def test_streaming_a_csv_file_is_refused_with_a_sentence(table_csv: Path, capsys) -> None:
    assert cli.main(["audit", str(table_csv), "--label", "y", "--prob", "p", "--stream"]) == 2
    err = capsys.readouterr().err
    assert "is not a Parquet file" in err and "Traceback" not in err


def test_audit_with_members_reports_the_credal_test(ensemble_csv: Path, tmp_path: Path,
                                                    capsys) -> None:
    """Issue 20: the report's credal-set section — verdict, p-values, the null used, the
    learned weights — from `audit --member`."""
    import pandas as pd

    frame = pd.read_csv(ensemble_csv)
    frame["p_mean"] = (frame["net"] + frame["tree"]) / 2
    frame.to_csv(ensemble_csv, index=False)
    out = tmp_path / "report"
    status = cli.main(["audit", str(ensemble_csv), "--label", "y", "--prob", "p_mean",
                       "--features", "x", "--member", "net", "--member", "tree",
                       "--out", str(out), "--formats", "html", *SMALL])
    err = capsys.readouterr().err
    assert status == 0, err
    document = json.loads((out / "results.json").read_text())
    credal = document["credal"]
    assert credal["members"] == ["net", "tree"] and credal["features"] == ["x"]
    assert set(credal["tests"]) == {"learned", "mean", "sampled"}
    learned = credal["tests"]["learned"]
    assert learned["null_used"].startswith("Algorithm 1")
    assert learned["null_hypothesis"].startswith("some convex combination of the members")
    assert [w["member"] for w in credal["weights"]] == ["net", "tree"]
    assert sum(w["mean_weight"] for w in credal["weights"]) == pytest.approx(1.0)
    assert any(f["topic"] == "ensemble" for f in document["summary"])
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Ensemble: credal-set test" in html and "Learned weights λ(x)" in html
    assert (out / "tables" / "credal.csv").exists()
    assert (out / "tables" / "credal_weights.csv").exists()
    assert cli.main(["audit", str(ensemble_csv), "--label", "y", "--prob", "p_mean",
                     "--member", "net", "--out", str(tmp_path / "x")]) == 2
    assert "a credal set needs at least two members" in capsys.readouterr().err
