"""The flake runner reads each run's JUnit report: passed, failed (a failure or an error in a
fixture) and skipped tests by id, and exits 1 when any test failed in any run."""

from __future__ import annotations

from benchmarks import flake

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.test_a" name="test_passes" time="0.1"/>
<testcase classname="tests.test_a" name="test_fails" time="0.1"><failure message="x"/></testcase>
<testcase classname="tests.test_b" name="test_errs" time="0.1"><error message="y"/></testcase>
<testcase classname="tests.test_b" name="test_skipped" time="0"><skipped message="z"/></testcase>
</testsuite></testsuites>
"""


def test_outcomes_of_a_junit_report(tmp_path) -> None:
    path = tmp_path / "run.xml"
    path.write_text(REPORT)
    assert flake.outcomes(path) == {
        "tests.test_a::test_passes": "passed", "tests.test_a::test_fails": "failed",
        "tests.test_b::test_errs": "failed", "tests.test_b::test_skipped": "skipped"}


def test_runs_are_counted_and_a_failure_exits_1(tmp_path, monkeypatch, capsys) -> None:
    path = tmp_path / "one.xml"
    path.write_text(REPORT)
    monkeypatch.setattr(flake, "run_once", lambda paths, report, log: (1, flake.outcomes(path)))
    assert flake.main(["--runs", "2", "--logs", str(tmp_path), "tests/x.py"]) == 1
    out = capsys.readouterr().out
    assert "2 runs of tests/x.py: 2 with a failure" in out
    assert "| tests.test_a::test_fails | 2 | 2 |" in out


def test_busy_spinners_run_during_the_block_and_stop_after(tmp_path, monkeypatch,
                                                           capsys) -> None:
    import multiprocessing

    during = []
    path = tmp_path / "one.xml"
    path.write_text(REPORT)

    def run_once(paths, report, log):
        during.append(len(multiprocessing.active_children()))
        return 1, flake.outcomes(path)

    monkeypatch.setattr(flake, "run_once", run_once)
    flake.main(["--runs", "1", "--busy", "2", "--logs", str(tmp_path), "tests/x.py"])
    assert during == [2]
    assert multiprocessing.active_children() == []
    assert "2 busy" in capsys.readouterr().out
