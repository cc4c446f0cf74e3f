"""Figure export: PNG (scale 2), SVG and PDF through kaleido and the system Chromium, and
standalone HTML with plotly.js inline.

Static formats need a Chromium browser. One browser is started per process, on the first
static export, and reused for every later figure (kaleido ≥ 1.0 keeps a page open in it,
:data:`PAGES`, and renders each figure there, without reloading the page in between:
:data:`RELOAD_EVERY`): :func:`renderer` returns that process-wide
:class:`FigureRenderer`. Kaleido's own ``start_sync_server`` is not used because its calls
wait forever when the browser fails to start; here every call has a time limit and the
browser's failure becomes a :class:`ExportError` with a sentence saying why.

Where no Chromium exists, only HTML is offered, and :func:`static_unavailable_reason` says
why (the sentence the app and the command line show).
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import contextlib
import io
import os
import shutil
import threading
import zipfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go
import plotly.io as pio

from core.data.validation import check_choice

FORMATS = ("png", "svg", "pdf", "html")
STATIC_FORMATS = ("png", "svg", "pdf")
MIME_TYPES = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf",
              "html": "text/html", "json": "application/json", "csv": "text/csv",
              "zip": "application/zip"}
#: PNG exports are rendered at twice the figure's pixel size (print quality).
PNG_SCALE = 2
#: Figures without a width are exported this wide (pixels before the scale).
DEFAULT_WIDTH = 1000
DEFAULT_HEIGHT = 560
#: Seconds one figure may take to render (the first also starts the browser).
RENDER_TIMEOUT = 120.0
#: Most points of WebGL traces redrawn as vector scatter traces for static export.
VECTOR_POINTS = 20_000
CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class ExportError(RuntimeError):
    """A figure could not be exported; the message says why and what to do."""


def find_chromium() -> str | None:
    """The Chromium executable: ``$CHROMIUM_PATH`` if set, else the first of
    :data:`CHROMIUM_CANDIDATES` on the ``PATH``, else ``/usr/bin/chromium`` if it exists."""
    configured = os.environ.get("CHROMIUM_PATH")
    if configured:
        return configured if Path(configured).is_file() else None
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


def static_unavailable_reason() -> str | None:
    """Why PNG, SVG and PDF cannot be made here (``None`` when a Chromium exists)."""
    if find_chromium() is not None:
        return None
    configured = os.environ.get("CHROMIUM_PATH")
    where = (f"CHROMIUM_PATH points to {configured!r}, which is not a file"
             if configured else "no Chromium browser was found on this machine")
    return (f"PNG, SVG and PDF need a Chromium browser to draw the figure, and {where}. "
            "Install one (on Debian: apt-get install chromium) or set CHROMIUM_PATH to its "
            "executable; standalone HTML export works without it.")


def available_formats() -> tuple[str, ...]:
    """The formats this machine can export: all four with Chromium, else only ``html``."""
    return FORMATS if find_chromium() else ("html",)


def export_size(figure: go.Figure) -> tuple[int, int]:
    """Width and height in pixels (before the PNG scale): the figure's own, else defaults."""
    width = figure.layout.width or DEFAULT_WIDTH
    height = figure.layout.height or DEFAULT_HEIGHT
    return int(width), int(height)


def vector_traces(figure: go.Figure, max_points: int = VECTOR_POINTS) -> go.Figure:
    """The figure with its WebGL scatter traces drawn as SVG scatter traces when they hold at
    most ``max_points`` points in all, so SVG and PDF exports stay vector graphics (WebGL
    traces would be pasted in as a bitmap); larger figures are returned unchanged."""
    gl = [i for i, trace in enumerate(figure.data) if trace.type == "scattergl"]
    points = sum(len(figure.data[i].x) if figure.data[i].x is not None else 0 for i in gl)
    if not gl or points > max_points:
        return figure
    # Copies only: given the figure's own trace objects, plotly's Figure() pops "type" from
    # their live property dicts while it builds the new traces, and a report draws the same
    # figure in two formats at once (core.report.render_figures) — the other thread's
    # ``trace.type`` then raised KeyError('type').
    traces = [trace.to_plotly_json() | ({"type": "scatter"} if trace.type == "scattergl" else {})
              for trace in figure.data]
    return go.Figure(data=traces, layout=figure.layout.to_plotly_json())


#: The file of plotly.js that the HTML figures of a report folder share.
PLOTLY_FILE = "plotly.min.js"


def figure_html(figure: go.Figure, title: str = "", shared_plotly: bool = False) -> bytes:
    """A standalone HTML page of the interactive figure, plotly.js embedded inline (no CDN,
    no request to another host); with ``shared_plotly``, loaded from :data:`PLOTLY_FILE`
    beside the page instead (a report folder holds one copy for all its figures)."""
    html = pio.to_html(figure, include_plotlyjs="directory" if shared_plotly else True,
                       full_html=True, config={"displaylogo": False, "responsive": True})
    if title:
        html = html.replace("<head>", f"<head><title>{_escape(title)}</title>", 1)
    return html.encode("utf-8")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def opaque_png(data: bytes) -> bytes:
    """A PNG whose pixels are all opaque (a plotly figure has a solid background) re-encoded
    without its alpha channel: the same pixels in about two thirds of Chromium's bytes
    (lossless; zlib level 6). Any other PNG is returned as it is."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        if image.mode != "RGBA" or image.getchannel("A").getextrema() != (255, 255):
            return data
        out = io.BytesIO()
        image.convert("RGB").save(out, "PNG", compress_level=6)
    return out.getvalue() if out.tell() < len(data) else data


#: Pages (tabs, each its own renderer process) the figure browser draws on at once. One:
#: opening a page costs about 2 CPU seconds (plotly.js loaded and parsed), and a second one
#: gained less wall time than that on two busy cores.
PAGES = 1
#: Figures a kaleido page draws before it is reloaded (kaleido itself reloads it after every
#: figure, which reparses plotly.js: two thirds of Chromium's time for a report's figures).
RELOAD_EVERY = 64


#: A kaleido page's script: the PNG of an SVG that plotly.js drew, by plotly.js's own
#: ``Snapshot.svgToImg`` (what ``Plotly.toImage`` calls once it has drawn the SVG), base64.
_PNG_FROM_SVG = r"""function(svg, width, height, scale) {
  return Plotly.Snapshot.svgToImg({svg: svg, format: 'png', width: width, height: height,
                                   scale: scale, canvas: document.createElement('canvas'),
                                   promise: true})
    .then(function(url) { return url.replace(/^data:image\/png;base64,/, ''); });
}"""
#: A kaleido page's script: the page set up to print an SVG as kaleido prints a PDF figure
#: (the SVG as the page's ``<img>``, an ``@page`` rule of the figure's size, no margin).
_PDF_PAGE_FROM_SVG = r"""function(svg, width, height, scale) {
  return new Promise(function(resolve, reject) {
    var img = document.getElementById('kaleido-image');
    document.getElementById('head-style').innerHTML =
      '@page { size: ' + width * scale + 'px ' + height * scale + 'px; } ' +
      'body { margin: 0; padding: 0; background-color: white; }';
    img.onload = function() { resolve(''); };
    img.onerror = function() { reject(new Error('the SVG did not load as an image')); };
    img.src = 'data:image/svg+xml,' + encodeURIComponent(svg);
  });
}"""


def _checked(response: dict) -> dict:
    """A DevTools response, or a RuntimeError with its error (a failed command, or a script
    that threw or rejected)."""
    problem = response.get("error") or response.get("result", {}).get("exceptionDetails")
    if problem:
        raise RuntimeError(str(problem)[:300])
    return response


def _kaleido_class(kaleido):
    """kaleido's ``Kaleido``, reloading its page after every :data:`RELOAD_EVERY`-th figure
    instead of after each one, and drawing a PNG or PDF from the figure's SVG.

    Each figure is drawn by ``Plotly.toImage`` on a graph div of its own that plotly.js
    removes again (a PDF also sets the page's ``<img>`` and ``@page`` rule, which the next PDF
    sets anew), so a figure does not depend on the figures drawn before it on the page: the
    PNG files are byte for byte those of a freshly loaded page, the PDF files draw the same
    pixels, and the SVG files differ only in plotly's random element ids (as any two
    drawings do). The occasional reload still bounds what a long-lived page (the app's
    renderer) accumulates.

    ``from_svg`` makes the PNG or PDF of a figure whose SVG is already drawn without laying
    the figure out again: ``Plotly.toImage`` draws a PNG as that SVG rasterised by
    ``Snapshot.svgToImg``, and kaleido prints a PDF from that SVG shown as the page's image,
    so the PNG is the same file and the PDF the same drawing (kaleido's own PDF path makes
    the paper transparent over a page of the paper's colour; here the paper is drawn on a
    white page). Measured on the nine figures of a 10⁶-row report: every PNG byte for byte
    the same, every PDF page the same pixels at 144 dpi (``tests/test_report.py`` checks
    both), in 0.6 s instead of 1.5 s of Chromium for the PNGs and 0.5 s instead of 1.1 s
    for the PDFs. Where this kaleido lacks these internals (another major version), its
    own class is used as it is and ``from_svg`` is absent.
    """
    base = kaleido.Kaleido
    if not hasattr(base, "_return_kaleido_tab"):
        return base
    try:
        from kaleido._kaleido_tab import _devtools_utils as tools
    except ImportError:
        tools = None

    class ReusedPage(base):
        async def _return_kaleido_tab(self, tab) -> None:
            self._drawn = getattr(self, "_drawn", 0) + 1
            queue = getattr(self, "tabs_ready", None)
            if queue is None or self._drawn % RELOAD_EVERY == 0:
                await super()._return_kaleido_tab(tab)  # kaleido's own: reload, then put back
            else:
                await queue.put(tab)

        async def from_svg(self, svg: str, fmt: str, width: int, height: int,
                           scale: float) -> bytes:
            script = _PNG_FROM_SVG if fmt == "png" else _PDF_PAGE_FROM_SVG
            tab = await self._get_kaleido_tab()
            try:
                response = _checked(await tools.exec_js_fn(tab.tab, tab._current_js_id, script,
                                                           svg, width, height, scale))
                data = response["result"]["result"]["value"]
                if fmt == "pdf":
                    data = await tools.print_pdf(tab.tab)
                return base64.b64decode(data)
            finally:
                await self._return_kaleido_tab(tab)

    if tools is None or not all(hasattr(tools, name) for name in ("exec_js_fn", "print_pdf")):
        del ReusedPage.from_svg
    return ReusedPage


#: What a static page printed by the figure browser may not do: fetch anything (the network
#: is switched off for its tab) or run a script.
_STATIC_PAGE = (("Network.enable", {}),
                ("Network.emulateNetworkConditions",
                 {"offline": True, "latency": 0, "downloadThroughput": -1,
                  "uploadThroughput": -1}),
                ("Emulation.setScriptExecutionDisabled", {"value": True}),
                ("Page.enable", {}))


async def _printed_page(browser, page: Path) -> bytes:
    """``page`` printed to PDF on a new tab of ``browser`` (closed again), offline and without
    scripts, with the options of ``chromium --print-to-pdf --no-pdf-header-footer``: the
    page's ``@page`` size, backgrounds, no header or footer."""
    tab = await browser.create_tab("about:blank")
    try:
        for command, params in _STATIC_PAGE:
            _checked(await tab.send_command(command, params=params))
        loaded = tab.subscribe_once("Page.loadEventFired")
        _checked(await tab.send_command("Page.navigate", params={"url": page.as_uri()}))
        await loaded
        response = _checked(await tab.send_command("Page.printToPDF", params={
            "printBackground": True, "preferCSSPageSize": True, "displayHeaderFooter": False}))
        return base64.b64decode(response["result"]["data"])
    finally:
        await browser.close_tab(tab)


@dataclass
class FigureRenderer:
    """One Chromium, started on first use and reused, rendering figures through kaleido.

    The browser runs in a daemon thread with its own event loop; :meth:`render` submits one
    figure and waits at most ``timeout`` seconds. Safe to call from several threads (the
    Streamlit server's sessions): kaleido queues the figures on its ``pages`` pages, which
    draw side by side.
    """

    browser: str | None = None
    timeout: float = RENDER_TIMEOUT
    pages: int = PAGES

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._kaleido = None
        self._thread: threading.Thread | None = None
        self.started = 0  # how many browsers this renderer has started

    @property
    def running(self) -> bool:
        return self._kaleido is not None

    def _start(self) -> None:
        import kaleido

        path = self.browser or find_chromium()
        if path is None:
            raise ExportError(static_unavailable_reason())
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="figure-renderer",
                                  daemon=True)
        thread.start()

        async def open_browser():
            # mathjax=False: kaleido would otherwise load MathJax from a CDN
            browser = _kaleido_class(kaleido)(n=self.pages, timeout=self.timeout,
                                              path=path, mathjax=False)
            await browser.open()
            return browser

        try:
            self._kaleido = asyncio.run_coroutine_threadsafe(open_browser(), loop).result(
                self.timeout)
        except Exception as error:  # the browser's own exception types vary by version
            loop.call_soon_threadsafe(loop.stop)
            raise ExportError(f"The Chromium browser at {path} could not be started for "
                              f"figure export ({type(error).__name__}: {error}). Check that "
                              "it runs headless on this machine, or export as HTML.") from None
        self._loop, self._thread = loop, thread
        self.started += 1

    def warm_up(self) -> None:
        """Start the browser now, in a thread of its own, so that the first figure does not
        wait for it (about 1.5 s); where it fails, the first :meth:`render` tries again and
        raises the :class:`ExportError` that says why."""
        if find_chromium() is None:
            return

        def start() -> None:
            with self._lock:
                if self._kaleido is None:
                    with contextlib.suppress(ExportError):
                        self._start()

        threading.Thread(target=start, name="figure-renderer-start", daemon=True).start()

    def render(self, figure: go.Figure, fmt: str, scale: float | None = None,
               svg: bytes | None = None) -> bytes:
        """The figure as PNG, SVG or PDF bytes.

        Parameters
        ----------
        figure : plotly.graph_objects.Figure
            The figure, drawn at :func:`export_size`.
        fmt : {"png", "svg", "pdf"}
            The format.
        scale : float, optional
            Pixel scale; default :data:`PNG_SCALE` for PNG and 1 for the vector formats.
        svg : bytes, optional
            This figure's SVG as this renderer drew it (scale 1): a PNG or PDF is then made
            from it without drawing the figure again (:func:`_kaleido_class`).

        Returns
        -------
        bytes
            The file's content.
        """
        check_choice(fmt, STATIC_FORMATS, "static figure format",
                     "choose png, svg or pdf (html needs no browser: use figure_html)")
        figure = vector_traces(figure)
        width, height = export_size(figure)
        scale = scale if scale is not None else (PNG_SCALE if fmt == "png" else 1)

        def drawing(browser):
            if svg is not None and fmt != "svg" and hasattr(browser, "from_svg"):
                return browser.from_svg(svg.decode("utf-8"), fmt, width, height, float(scale))
            opts = {"format": fmt, "width": width, "height": height, "scale": scale}
            return browser.calc_fig(figure, opts=opts)

        data = self._run(drawing, self.timeout,
                         f"Drawing the figure as {fmt.upper()} took longer than "
                         f"{self.timeout:g} s; try HTML, or a figure with fewer points.",
                         f"The figure could not be drawn as {fmt.upper()}")
        return opaque_png(bytes(data)) if fmt == "png" else bytes(data)

    @property
    def prints_pages(self) -> bool:
        """Whether :meth:`print_page` can print here (the browser's tabs are reachable)."""
        return hasattr(self._kaleido, "create_tab") if self.running else \
            find_chromium() is not None

    def print_page(self, page: Path, timeout: float) -> bytes:
        """A static HTML file printed to PDF on a tab of this renderer's browser (started if
        need be), as ``chromium --print-to-pdf`` prints it, without starting a browser of its
        own: the tab is offline and runs no script (:data:`_STATIC_PAGE`).

        Parameters
        ----------
        page : Path
            The HTML file (no scripts: none would run).
        timeout : float
            Seconds before giving up.

        Returns
        -------
        bytes
            The PDF file.
        """
        return self._run(lambda browser: _printed_page(browser, page), timeout,
                         f"Chromium did not finish printing the report to PDF within "
                         f"{timeout:g} s.", "The report could not be printed to PDF")

    def _run(self, job: Callable[[object], Awaitable], timeout: float, too_long: str,
             failed: str) -> object:
        """``job(browser)`` awaited on the browser's loop (the browser started if need be),
        its result within ``timeout`` seconds; an :class:`ExportError` saying ``too_long``,
        or ``failed`` and why."""
        with self._lock:
            if self._kaleido is None:
                self._start()
            loop, browser = self._loop, self._kaleido
        future = asyncio.run_coroutine_threadsafe(job(browser), loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise ExportError(too_long) from None
        except Exception as error:
            raise ExportError(f"{failed} ({type(error).__name__}: {error}).") from None

    def close(self) -> None:
        """Close the browser (a later :meth:`render` starts a new one)."""
        with self._lock:
            if self._kaleido is None:
                return
            loop, browser = self._loop, self._kaleido
            self._kaleido = None
        with contextlib.suppress(Exception):  # a browser that already died
            asyncio.run_coroutine_threadsafe(browser.close(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)


_RENDERER: FigureRenderer | None = None
_RENDERER_LOCK = threading.Lock()


def renderer() -> FigureRenderer:
    """The process-wide renderer: one browser per process, closed when the process exits."""
    global _RENDERER
    with _RENDERER_LOCK:
        if _RENDERER is None:
            _RENDERER = FigureRenderer()
            atexit.register(_RENDERER.close)
        return _RENDERER


def export_figure(figure: go.Figure, fmt: str, title: str = "",
                  shared_plotly: bool = False, svg: bytes | None = None) -> bytes:
    """The figure in ``fmt`` (``png`` at scale 2, ``svg``, ``pdf`` or standalone ``html``).

    Parameters
    ----------
    figure : plotly.graph_objects.Figure
        What to export (style it first with :func:`core.figures.style.apply_style`).
    fmt : {"png", "svg", "pdf", "html"}
        The format.
    title : str, optional
        The HTML page's title.
    shared_plotly : bool, optional
        HTML only: load plotly.js from :data:`PLOTLY_FILE` beside the page.
    svg : bytes, optional
        PNG and PDF only: this figure's SVG as :func:`export_figure` made it, from which
        the file is drawn without laying the figure out again
        (:meth:`FigureRenderer.render`).

    Returns
    -------
    bytes
        The file's content.

    Raises
    ------
    ExportError
        For a static format where no Chromium exists (the message says why) or when the
        browser fails.
    """
    check_choice(fmt, FORMATS, "figure format", "choose png, svg, pdf or html")
    if fmt == "html":
        return figure_html(figure, title, shared_plotly)
    return renderer().render(figure, fmt, svg=svg)


def zip_archive(files: dict[str, bytes]) -> bytes:
    """A ZIP archive (deflated) of ``files``, file name → content.

    Parameters
    ----------
    files : dict of str to bytes
        Path in the archive → contents.
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()
