"""The report as PDF: Chromium's own print to PDF of the self-contained HTML report.

The HTML is written to a private temporary folder and printed by a headless Chromium
(``--print-to-pdf``, A4 from the report's ``@page`` rule, no header or footer) with the
network switched off (``--proxy-server`` pointing nowhere), so the PDF shows exactly what
the offline HTML shows. A static report (no script) whose figures were just drawn is printed
on a tab of that figure browser instead (:meth:`~core.report.export.FigureRenderer.print_page`:
offline, scripts off, the same print options; the same pages pixel for pixel, measured on a
10⁶-row report) rather than by a browser started for it: 0.8 s instead of 1.5 s.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from pathlib import Path

from core.report.export import (
    ExportError,
    FigureRenderer,
    find_chromium,
    static_unavailable_reason,
)

#: Seconds Chromium may take to print one report.
PRINT_TIMEOUT = 180
#: Milliseconds of page time Chromium lets scripts run before printing (interactive reports).
SCRIPT_BUDGET_MS = 20_000


def print_command(browser: str, html: Path, pdf: Path, profile: Path) -> list[str]:
    """The Chromium command line that prints ``html`` to ``pdf``."""
    return [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
        f"--user-data-dir={profile}", "--run-all-compositor-stages-before-draw",
        f"--virtual-time-budget={SCRIPT_BUDGET_MS}", "--no-pdf-header-footer",
        f"--print-to-pdf={pdf}", html.as_uri(),
    ]


def html_to_pdf(html: str, browser: str | None = None, timeout: float = PRINT_TIMEOUT,
                renderer: FigureRenderer | None = None) -> bytes:
    """Print the HTML report to PDF with headless Chromium.

    Parameters
    ----------
    html : str
        A self-contained HTML document (:func:`core.report.html.report_html`).
    browser : str, optional
        The Chromium executable (default: :func:`core.report.export.find_chromium`).
    timeout : float, optional
        Seconds before giving up.
    renderer : FigureRenderer, optional
        A figure renderer whose browser prints a static ``html`` (no ``<script``) on a tab
        of its own (:meth:`~core.report.export.FigureRenderer.print_page`); otherwise, for
        a page with scripts, or where the tab fails, a Chromium is started for the print.

    Returns
    -------
    bytes
        The PDF file, starting with ``%PDF``.

    Raises
    ------
    ExportError
        Where no Chromium exists (the message says why) or printing fails.
    """
    browser = browser or find_chromium()
    if browser is None:
        raise ExportError(static_unavailable_reason().replace(
            "PNG, SVG and PDF need", "The PDF report needs"))
    with tempfile.TemporaryDirectory(prefix="atlas-report-") as folder:
        root = Path(folder)
        source, target = root / "report.html", root / "report.pdf"
        source.write_text(html, encoding="utf-8")
        if renderer is not None and renderer.prints_pages and "<script" not in html.lower():
            with contextlib.suppress(ExportError):  # else printed as below
                return renderer.print_page(source, timeout)
        command = print_command(browser, source, target, root / "profile")
        try:
            finished = subprocess.run(command, capture_output=True, timeout=timeout,
                                      check=False)
        except subprocess.TimeoutExpired:
            raise ExportError(f"Chromium did not finish printing the report to PDF within "
                              f"{timeout:g} s.") from None
        except OSError as error:
            raise ExportError(f"Chromium at {browser} could not be run to print the PDF "
                              f"({error.strerror}).") from None
        if not target.is_file() or target.stat().st_size == 0:
            tail = finished.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise ExportError("Chromium did not write the PDF (exit code "
                              f"{finished.returncode}): {' | '.join(tail) or 'no message'}.")
        return target.read_bytes()
