"""The plan of a streamed audit: what every pass over the partitions needs to know of the
table and the settings (:class:`StreamPlan`) — the notion and classes, the audited rows and
their offsets, the audited features, the rows of the seeded sample and of the median
heuristic, the columns slices are cut on — and what a streamed audit cannot do
(:func:`check_settings`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from core.audit.rows import feature_columns_of
from core.audit.settings import AuditSettings
from core.data.mapping import ColumnMapping
from core.data.problems import quote_list
from core.data.stream_decoding import Chunk
from core.data.stream_schema import StreamSchema
from core.data.stream_sources import Partition
from core.kernels import engine
from core.kernels.memory import MemoryPlan, batch_plan, default_budget
from core.kernels.resampling import row_sample
from core.kernels.rff import DEFAULT_FEATURES
from core.kernels.tiles import MEDIAN_SAMPLE
from core.local.slice_discovery import prediction_column_name, prediction_values, slice_notion_of
from core.local.slice_streamed import RawCoding, SliceColumn, order_values
from core.metrics.scores import resolve_notion
from core.metrics.streamed import TOP, class_series, notion_series, series_values
from core.stattests.klce import null_scheme


@dataclass(frozen=True)
class StreamPlan:
    """The plan of a streamed audit: what every partition task needs — the schema, the
    settings, the audited rows (:func:`make_plan`)."""

    schema: StreamSchema
    settings: AuditSettings
    notion: str
    class_index: int | None  # the classwise notion's class (None otherwise)
    tested: int | None  # the class the kernel tests test one-vs-rest (None: positive class)
    part: str | None  # the split audited (None: all rows)
    offsets: tuple[int, ...]  # audited rows before each partition
    n_audited: int
    feature_index: tuple[int, ...]  # encoded columns of the chosen audit features
    bootstrap: int
    sample: np.ndarray  # table rows of the seeded sample, sorted
    median: np.ndarray  # audited indices of the median heuristic's rows (its order)
    slice_columns: tuple[SliceColumn, ...] = ()  # the columns slices are cut on
    slice_sources: tuple[tuple[str, int, int], ...] = ()  # ("X"|"group", first, width)
    slice_notion: str = "positive"  # what the slices test (discover_slices' notion)

    def slice_data(self, chunk: Chunk, j: int) -> np.ndarray:
        """Slice column ``j`` of a chunk: a numeric feature's values, a categorical
        feature's or group's level codes (into the table's sorted levels)."""
        kind, first, width = self.slice_sources[j]
        if kind == "group":
            return chunk.groups[self.slice_columns[j].name]
        if kind == "prediction":
            return prediction_values(chunk.probs)
        if self.slice_columns[j].kind == "numeric":
            return chunk.X[:, first]
        block = chunk.X[:, first:first + width]
        return np.where(block.any(axis=1), block.argmax(axis=1), -1)

    def slice_raw(self, chunk: Chunk, codings: tuple[RawCoding, ...]) -> np.ndarray:
        """The raw codes of a chunk's rows, one column per slice column
        (:class:`core.local.slice_streamed.RawCoding`)."""
        if not codings:
            return np.zeros((chunk.rows, 0), dtype=np.int64)
        return np.column_stack([coding.codes(self.slice_data(chunk, j))
                                for j, coding in enumerate(codings)])

    def numeric_slices(self) -> list[int]:
        return [j for j, c in enumerate(self.slice_columns) if c.kind == "numeric"]

    def order_vectors(self, chunk: Chunk, key: tuple) -> np.ndarray:
        """The values of an order-statistics vector on a chunk: a confidence series
        (:func:`vector_values`) or a numeric slice column's
        (:func:`~core.local.slice_streamed.order_keys`)."""
        if key[0] == "slice-column":
            return order_values(self.slice_data(chunk, key[1]), key)
        return vector_values(chunk, key)[0]

    @property
    def series(self) -> list[tuple]:
        """The diagram's series: the notion's, one class for classwise."""
        return notion_series(self.notion, self.schema.n_classes, self.class_index)

    @property
    def metric_series(self) -> list[tuple]:
        """The series the binned metrics average over: every class for classwise, as
        :func:`core.metrics.metrics_table` (the diagram's class among them)."""
        return notion_series(self.notion, self.schema.n_classes)

    @property
    def group_bins(self) -> int:
        return min(self.settings.n_bins, self.settings.group_bins)

    def audited(self, chunk: Chunk, partition: Partition) -> tuple[Chunk, int]:
        """The chunk's audited rows and the audited index of the first of them."""
        start = self.offsets[partition.index]
        if self.part is None:
            return chunk, start
        return chunk.take(chunk.split == self.part), start

    def quantile_vectors(self) -> list[tuple]:
        """Every series whose exact order statistics some number needs."""
        classes = [class_series(k) for k in range(self.schema.n_classes)]
        vectors = list(dict.fromkeys([*self.series, *classes, TOP]))
        for group in self.schema.mapping.groups:
            for code in range(len(self.schema.levels[group])):
                vectors += [(key, group, code) for key in self.series]
        return vectors


def vector_values(chunk: Chunk, key: tuple) -> tuple[np.ndarray, np.ndarray]:
    """A vector's confidences and outcomes on a chunk: a series, or a series within one
    level of a group attribute."""
    if len(key) == 3 and isinstance(key[0], tuple):
        series, group, code = key
        rows = chunk.groups[group] == code
        conf, outcome = series_values(chunk.probs[rows], chunk.y[rows], series)
        return conf, outcome
    return series_values(chunk.probs, chunk.y, key)


def make_plan(schema: StreamSchema, settings: AuditSettings, sample_rows: int) -> StreamPlan:
    """The settings resolved against the table: notion, classes, audited rows, features,
    the seeded sample and the median heuristic's rows."""
    binary = schema.n_classes == 2
    probe = np.full((1, schema.n_classes), 1.0 / schema.n_classes)
    notion = resolve_notion(settings.notion, probe) if settings.notion else \
        ("positive" if binary else "top-label")
    class_index = settings.class_index if notion == "classwise" else None
    if notion == "classwise" and class_index is None:
        raise ValueError("A reliability diagram shows one class at a time for the 'classwise' "
                         f"notion: set class_index (0 to {schema.n_classes - 1}).")
    tested = None if binary else (0 if settings.class_index is None else settings.class_index)
    has_part = schema.mapping.split is not None and settings.part != "all" and \
        schema.part_rows(settings.part).sum() > 0
    rows = schema.part_rows(settings.part if has_part else "all")
    offsets = tuple(int(x) for x in np.concatenate([[0], np.cumsum(rows)[:-1]]))
    n_audited = int(rows.sum())
    chosen = feature_columns_of(schema.mapping.features, settings.features)
    names = schema.feature_names
    index = tuple(i for i, name in enumerate(names)
                  if name in chosen or name.split("=", 1)[0] in chosen)
    median = np.random.default_rng(0).choice(n_audited, MEDIAN_SAMPLE, replace=False) \
        if n_audited > MEDIAN_SAMPLE else np.arange(n_audited)
    columns, sources = slice_columns_of(schema, chosen)
    return StreamPlan(schema, settings, notion, class_index, tested,
                settings.part if has_part else None, offsets, n_audited, index,
                settings.n_bootstrap, row_sample(schema.n, sample_rows, settings.seed), median,
                columns, sources, slice_notion_of(settings.slice_notion if not binary else None,
                                                  binary))


def slice_columns_of(schema: StreamSchema, features: tuple[str, ...]
                     ) -> tuple[tuple[SliceColumn, ...], tuple[tuple[str, int, int], ...]]:
    """The columns slices are cut on (:func:`core.audit.slice_names`: the audit features, then
    the group attributes that are not among them, then the prediction's quantile ranges as
    :func:`core.local.slice_discovery.discover_slices` adds them) and where each lies in a
    chunk."""
    offsets, at = {}, 0
    for column in schema.mapping.features:
        width = len(schema.levels[column]) if column in schema.categorical else 1
        offsets[column] = (at, width)
        at += width
    columns, sources = [], []
    for name in features:
        first, width = offsets[name]
        categorical = name in schema.categorical
        columns.append(SliceColumn(name, "categorical" if categorical else "numeric",
                                   schema.levels[name] if categorical else ()))
        sources.append(("X", first, width))
    for name in schema.mapping.groups:
        if name not in features:
            columns.append(SliceColumn(name, "categorical", schema.levels[name]))
            sources.append(("group", 0, 0))
    columns.append(SliceColumn(prediction_column_name(c.name for c in columns), "numeric", ()))
    sources.append(("prediction", 0, 0))
    return tuple(columns), tuple(sources)


def check_settings(settings: AuditSettings) -> None:
    """What a streamed audit cannot do, in a sentence."""
    if settings.computation == "exact":
        raise ValueError("A streamed audit cannot compute exact kernel sums: they need every "
                         "pair of rows at once. Use computation='auto' or 'rff' (random "
                         "Fourier features: the tests keep their level).")
    if settings.computation == "block":
        raise ValueError("The KLCE bandwidth grid has no block version; use computation='auto' "
                         "or 'rff' for a streamed audit.")
    scheme, _ = null_scheme(settings.null)
    if scheme != "consistency":
        raise ValueError(f"The '{settings.null}' null needs all rows at once; a streamed audit "
                         "offers the consistency nulls (consistency-combined, "
                         "consistency-centred, consistency), whose resamples are drawn row by "
                         "row.")


def audited_model(mapping: ColumnMapping, model: str | None) -> ColumnMapping:
    """The mapping with only the audited prediction set's columns (``model``, one of
    ``mapping.model_names``; ``None``: the one in ``probs``): a streamed audit reads no other
    model's columns."""
    names = mapping.model_names
    if model is None or model == names[0]:
        return dataclasses.replace(mapping, model=names[0], models=())
    sets = dict(mapping.models)
    if model not in sets:
        raise ValueError(f"Unknown model '{model}'; this table has {quote_list(list(names))}.")
    return dataclasses.replace(mapping, probs=tuple(sets[model]), model=model, models=())


def memory_plan(settings: AuditSettings, budget: int | None = None) -> MemoryPlan:
    """The batches of a streamed audit at ``settings`` within ``budget`` bytes (default:
    :func:`core.kernels.memory.default_budget`), on the current engine's workers
    (:func:`core.kernels.memory.batch_plan`)."""
    workers = max(1, engine.default_workers())
    return batch_plan(default_budget() if budget is None else int(budget), workers,
                      engine.in_flight(workers), settings.n_bootstrap, settings.n_bins,
                      max(settings.grid_resamples, settings.test_resamples), DEFAULT_FEATURES)
