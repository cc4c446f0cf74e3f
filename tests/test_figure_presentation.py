"""How the charts of the Findings, Local bias, Recalibration and LCE landscape pages present
their numbers (issue 31, found 6): checked on the plotly figure objects, never on pixels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.figures.findings import FLAGGED_LINE, TREEMAP_RULE, slice_treemap_figure
from core.figures.lce import SPREAD_JITTER, lce_scatter_figure, spread_coordinates
from core.figures.local_bias import facet_bias, lcb_figure
from core.figures.palette import BASELINE_COLOR, method_colors
from core.figures.recalibration import (
    klce_pvalue_figure,
    lcb_before_after_figure,
    mlce_comparison_figure,
)
from core.figures.reliability import reliability_grid
from core.local import discover_slices
from core.recalibration import RECALIBRATORS, UNCALIBRATED


@pytest.fixture(scope="module")
def planted_discovery():
    """A small slice (about 1/16 of the rows) whose rate is 0.35 above the predictions."""
    rng = np.random.default_rng(3)
    n = 4_000
    frame = pd.DataFrame({"g": rng.choice(list("abcd"), n), "h": rng.choice(list("wxyz"), n)})
    p = rng.uniform(0.2, 0.6, n)
    planted = ((frame["g"] == "a") & (frame["h"] == "w")).to_numpy()
    y = (rng.random(n) < np.clip(p + 0.35 * planted, 0, 1)).astype(int)
    return discover_slices(p, y, frame, n_resamples=100, prediction_ranges=False)


def test_treemap_tiles_are_rows_times_gap_and_flagged_tiles_come_first(planted_discovery):
    table = planted_discovery.table.set_index("slice")
    tree = slice_treemap_figure(planted_discovery).data[0]
    ids, parents, values = list(tree.ids), list(tree.parents), np.asarray(tree.values, float)
    sizes = dict(zip(planted_discovery.family.names, planted_discovery.family.sizes,
                     strict=True))
    leaves = [i for i, p in enumerate(parents) if p not in ("", "all")]
    flagged = [i for i in leaves if tree.labels[i].endswith("★")]
    assert flagged, "the planted slice is flagged"
    for i in leaves:  # area: the outcomes the model misses, rows × |gap|
        name = next(n for n in sizes if ids[i].endswith("/" + n))
        assert values[i] == pytest.approx(sizes[name] * abs(table.loc[name, "gap"]))
    for i in range(1, len(ids)):  # a parent's value is the sum of its children's
        children = [k for k, p in enumerate(parents) if p == ids[i]]
        if children:
            assert values[i] == pytest.approx(values[children].sum())
    # the flagged tile is first in its group, its group first, and larger than its share of
    # the rows would make it
    first_group = next(i for i, p in enumerate(parents) if p == "all")
    assert ids[flagged[0]].startswith(ids[first_group] + "/")
    siblings = [i for i in leaves if parents[i] == parents[flagged[0]]]
    assert siblings[0] == flagged[0]
    row_share = sizes[next(n for n in sizes if ids[flagged[0]].endswith("/" + n))] / sum(
        sizes[next(n for n in sizes if ids[i].endswith("/" + n))] for i in siblings)
    assert values[flagged[0]] / values[siblings].sum() > 2 * row_share
    assert tree.sort is False  # plotly keeps this order
    assert tree.marker.line.color[flagged[0]] == FLAGGED_LINE[0]
    assert tree.marker.line.width[flagged[0]] == FLAGGED_LINE[1]
    assert "rows × |gap|" in tree.hovertemplate
    assert slice_treemap_figure(planted_discovery).layout.title.text == TREEMAP_RULE


def lcb_points() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    levels = np.repeat(["alpha", "beta", "gamma", "delta"], 200)
    bias = pd.Series(levels).map({"alpha": 0.01, "beta": 0.2, "gamma": -0.05,
                                  "delta": 0.1}).to_numpy()
    points = pd.DataFrame({"age": rng.uniform(20, 80, levels.size), "race": levels,
                           "sex": rng.choice(["F", "M"], levels.size),
                           "lcb": bias + rng.normal(0, 0.01, levels.size)})
    trends = pd.DataFrame({"group": ["beta | F"] * 2, "x": [20.0, 80.0], "fit": [0.2, 0.2],
                           "low": [0.15, 0.15], "high": [0.25, 0.25]})
    return points, trends


def test_lcb_facets_by_bias_on_one_scale_with_the_legend_below():
    points, trends = lcb_points()
    figure = lcb_figure(points, trends, "age", color="sex", facet="race")
    titles = [a.text for a in figure.layout.annotations if a.text.startswith("race = ")]
    assert [t.split(" · ")[0] for t in titles] == ["race = beta", "race = delta",
                                                   "race = gamma", "race = alpha"]
    assert list(facet_bias(points, "race").index) == ["beta", "delta", "gamma", "alpha"]
    assert titles[0].endswith(f"mean |LCB| {points.lcb[points.race == 'beta'].abs().mean():.3f}")
    layout = figure.to_dict()["layout"]
    y_axes = [k for k in layout if k.startswith("yaxis")]
    assert len(y_axes) == 6  # 2 rows × 3 columns
    assert all(layout[k].get("matches") == "y" for k in y_axes if k != "yaxis")
    legend = layout["legend"]
    assert legend["orientation"] == "h" and legend["yanchor"] == "top" and legend["y"] < 0
    # under the x-axis title (about 50 pixels) and inside the bottom margin
    plot_height = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    assert 50 <= -legend["y"] * plot_height <= layout["margin"]["b"] - 25
    top_title = max(a.y for a in figure.layout.annotations if a.text.startswith("race = "))
    assert legend["y"] < 0 < top_title  # nowhere near the panels' titles


def test_recalibration_methods_keep_one_distinct_colour_on_every_chart():
    names = [UNCALIBRATED, *RECALIBRATORS]
    colors = method_colors(names)
    assert colors[UNCALIBRATED] == BASELINE_COLOR
    assert len(set(colors.values())) == len(names)  # every registry method its own colour
    chosen = [UNCALIBRATED, "temperature", "isotonic", "bbq", "lore", "lcb"]
    colors = method_colors(chosen)
    curve = pd.DataFrame({"gamma": [0.1, 0.2], "mlce": [0.1, 0.08]})
    mlce = mlce_comparison_figure({m: curve for m in chosen}, 0.2, colors)
    assert {t.name: t.line.color for t in mlce.data} == colors
    table = pd.DataFrame({"method": chosen, "klce_p": [0.001, 0.2, 0.5, 0.01, 0.3, 0.04]})
    bars = klce_pvalue_figure(table, 0.05, colors).data[0]
    assert list(bars.marker.color) == [colors[m] for m in chosen]
    assert list(bars.marker.pattern.shape) == ["/", "", "", "/", "", "/"]  # rejections
    grid = reliability_grid({m: pd.DataFrame({
        "count": [5, 5], "mean_confidence": [0.2, 0.7], "frequency": [0.25, 0.6],
        "ci_low": [0.1, 0.5], "ci_high": [0.4, 0.7], "bin_lower": [0.0, 0.5],
        "bin_upper": [0.5, 1.0], "band_low": np.nan, "band_high": np.nan}) for m in chosen},
        colors=colors)
    observed = [t for t in grid.data if t.mode == "lines+markers"]
    assert [t.marker.color for t in observed] == [colors[m] for m in chosen]
    trends = pd.DataFrame({"group": ["before"] * 2 + ["after: isotonic"] * 2,
                           "x": [0.0, 1.0] * 2, "fit": [0.1, 0.1, 0.0, 0.0],
                           "low": [0.0] * 4, "high": [0.2] * 4})
    lines = [t for t in lcb_before_after_figure(trends, "age", colors).data if t.mode == "lines"
             and t.name]
    assert [t.line.color for t in lines] == [colors[UNCALIBRATED], colors["isotonic"]]


def test_lce_map_spreads_tied_points_without_changing_a_value():
    rng = np.random.default_rng(1)
    n = 3_000  # one numeric and one one-hot column: two stripes, most of the square empty
    coords = np.column_stack([rng.normal(size=n) * 0.1 + 3 * rng.integers(0, 2, n),
                              np.round(rng.normal(size=n), 1)])
    values = rng.uniform(-0.2, 0.2, n)
    in_bin = rng.random(n) < 0.4
    plain = lce_scatter_figure(coords, values, in_bin, signed=True)
    spread = lce_scatter_figure(coords, values, in_bin, signed=True, spread=True)
    for a, b in zip(plain.data, spread.data, strict=True):  # the same rows, the same LCE
        np.testing.assert_array_equal(np.asarray(a.marker.color), np.asarray(b.marker.color))
    ranks = spread_coordinates(coords, jitter=0.0)
    assert ranks.min() == 0 and ranks.max() == 1
    for k in range(2):  # monotone: the order along each axis is kept, ties spread out
        assert np.all(np.diff(coords[:, k][np.argsort(ranks[:, k])]) >= 0)
        assert np.unique(ranks[:, k]).size == n
    jittered = spread_coordinates(coords)
    np.testing.assert_array_equal(jittered, spread_coordinates(coords))  # seeded
    assert 0 < np.abs(jittered - ranks).max() <= SPREAD_JITTER
    # every tenth of the x axis holds a tenth of the rows (the plain map: none in the middle)
    counts = np.histogram(ranks[:, 0], 10, range=(0, 1))[0]
    assert counts.min() >= n // 10 - 1
    assert np.histogram(coords[:, 0], 10)[0][4:6].sum() == 0
    assert "rank" in spread.layout.xaxis.title.text and "rank" not in plain.layout.xaxis.title.text
    context = spread.data[0].marker
    assert context.size >= 4 and context.opacity >= 0.4  # the other bins' points visible
