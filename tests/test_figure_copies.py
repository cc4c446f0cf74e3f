"""A figure exported in two formats at once is only read, never changed (found by the wheel
test on Python 3.10: ``KeyError: 'type'`` in ``calibration-atlas demo``).

``core.report.render_figures`` draws a figure's PNG and SVG in two threads; both call
``vector_traces`` on the same figure. Given the figure's own trace objects, plotly's
``Figure()`` pops ``"type"`` from their live property dicts while it builds its copies and puts
it back after, so the other thread could read a trace without a type. The test watches those
dicts: nothing may remove a key from them.
"""

from __future__ import annotations

import plotly.graph_objects as go

from core.report.export import vector_traces

LIVE: list[dict] = []


class Watched(dict):
    """A trace's live property dict that fails the test when a key is removed from it."""

    def pop(self, *args):
        if any(self is live for live in LIVE):
            raise AssertionError(f"a key was popped from the figure's own trace: {args[0]!r}")
        return super().pop(*args)


def test_vector_traces_only_reads_the_figure() -> None:
    figure = go.Figure([go.Scattergl(x=[0.1, 0.5, 0.9], y=[0.2, 0.4, 0.8], name="rows"),
                        go.Scatter(x=[0, 1], y=[0, 1], name="diagonal"),
                        go.Bar(x=[0.5], y=[3], name="count")],
                       layout={"title": {"text": "LCB"}})
    for index, props in enumerate(figure._data):
        figure._data[index] = Watched(props)
        LIVE.append(figure._data[index])
    assert all(isinstance(trace._props, Watched) for trace in figure.data)  # the live dicts
    drawn = vector_traces(figure)
    assert [trace.type for trace in drawn.data] == ["scatter", "scatter", "bar"]
    assert [trace.type for trace in figure.data] == ["scattergl", "scatter", "bar"]
    assert drawn.layout.title.text == "LCB"
    LIVE.clear()
