"""run_audit adds no time over the calls it makes: both timed in one process.

    .venv/bin/python -m benchmarks.audit [--demo census] [--repeats 2]

Baseline: the section functions of :mod:`core.audit` called one after the other, as a page
session would call them through its caches. Measured: :func:`core.audit.run_audit` with the
same (default) settings. Ratio = run_audit / sum of the sections; the target is 1.00 within
the run-to-run noise (the best of ``--repeats`` runs is kept for both).
"""

from __future__ import annotations

import argparse

from benchmarks.common import measure, row
from core import audit as audit_module
from core.audit import AuditSettings, run_audit
from core.data.demo import DEMOS, load_demo


def sections(data, settings: AuditSettings) -> None:
    """The calls run_audit makes, made directly."""
    rows, _ = audit_module.audit_part(data, settings.part)
    features = audit_module.feature_columns(data, settings.features)
    audit_module.reliability_section(rows, settings.reliability())
    audit_module.trust_section(rows, settings.trust(features))
    audit_module.lcb_section(data, settings.local_bias(features))
    audit_module.slice_section(rows, settings.findings(audit_module.slice_names(data, features)))
    audit_module.lce_section(rows, settings.landscape(features))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo", default="census", choices=list(DEMOS))
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    data = load_demo(args.demo)
    settings = AuditSettings()
    base, _, _ = measure(lambda: sections(data, settings), repeats=args.repeats)
    full, peak, _ = measure(lambda: run_audit(data, settings), repeats=args.repeats)
    print(f"run_audit on the {args.demo} demo ({data.n:,} rows), best of {args.repeats}")
    print(row("sections", "run_audit", "ratio", "peak MiB", widths=(12, 12, 8, 10)))
    print(row(f"{base:.2f} s", f"{full:.2f} s", f"{full / base:.3f}", f"{peak:.0f}",
              widths=(12, 12, 8, 10)))


if __name__ == "__main__":
    main()
