"""Decoding a partition of a table read partition by partition, against the table's
:class:`~core.data.stream_schema.StreamSchema`.

:func:`decode` validates and decodes a partition with the same checks and sentences as
:meth:`core.data.audit_data.AuditData.from_mapping` (the same functions: probability columns,
numeric values, splits), row numbers counted over the whole table
(:func:`core.data.problems.rows_from`), so a bad row in the 37th partition is named by its
row in the table. The decoded :class:`Chunk` concatenates (:func:`concatenate`), becomes an
:class:`AuditData` (:func:`audit_data`: a streamed audit's seeded sample) and has a digest
that adds over chunks (:func:`chunk_digest`, :func:`stream_fingerprint`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.audit_data import AuditData
from core.data.features import split_values
from core.data.mapping import ColumnMapping
from core.data.predictions import label_strings, probability_columns
from core.data.problems import ValidationNote, rows_from
from core.data.stream_schema import StreamSchema, levels_of
from core.data.table import numeric_values


@dataclass(frozen=True)
class Chunk:
    """One decoded partition (or part of one): rows ``start …`` of the table.

    ``probs`` ``(r, m)`` on the simplex, ``y`` class indices, ``X`` the encoded audit
    features (``schema.feature_names``), ``groups`` each group attribute's level index into
    ``schema.levels``, ``split`` the split of each row (or ``None``), ``notes`` what was
    repaired (clipped overshoots, renormalised rows), naming rows of the table.
    """

    start: int
    y: np.ndarray
    probs: np.ndarray
    X: np.ndarray
    groups: dict[str, np.ndarray]
    split: np.ndarray | None
    notes: tuple[ValidationNote, ...] = ()

    @property
    def rows(self) -> int:
        return int(self.y.shape[0])

    def take(self, rows: np.ndarray) -> Chunk:
        """The rows ``rows`` (indices or a mask) of this chunk (``start`` kept: the rows are
        no longer contiguous, so only the arrays are meaningful)."""
        return Chunk(self.start, self.y[rows], self.probs[rows], self.X[rows],
                     {g: v[rows] for g, v in self.groups.items()},
                     None if self.split is None else self.split[rows], self.notes)

def decode_columns(mapping: ColumnMapping) -> list[str]:
    """The columns :func:`decode` reads."""
    return list(dict.fromkeys([mapping.label, *mapping.probs, *mapping.features,
                               *mapping.groups, *([mapping.split] if mapping.split else [])]))

def decode(frame: pd.DataFrame, schema: StreamSchema, start: int) -> Chunk:
    """Validate and decode one partition (rows ``start + 1 …`` of the table) with the checks
    and sentences of :class:`AuditData`; raises DataError naming rows of the table."""
    mapping = schema.mapping
    notes: list[ValidationNote] = []
    with rows_from(start):
        probs = probability_columns(frame, mapping.probs, mapping.logits, "probability", notes)
        labels = label_strings(frame[mapping.label])
        lookup = schema.label_codes
        y = np.fromiter((lookup[v] for v in labels), dtype=np.int64, count=len(labels)) \
            if len(labels) < 64 else _codes_of(labels, lookup)
        if schema.reversed:
            probs = probs[:, ::-1]
        columns = []
        for column in mapping.features:
            if column in schema.categorical:
                codes = _codes_in(frame[column], schema.levels[column])
                columns += [(codes == k).astype(float) for k in range(len(schema.levels[column]))]
            else:
                columns.append(numeric_values(frame[column].reset_index(drop=True),
                                              "audit feature"))
        X = np.column_stack(columns) if columns else np.empty((len(frame), 0))
        groups = {g: _codes_in(frame[g], schema.levels[g]) for g in mapping.groups}
        split = split_values(frame, mapping.split) if mapping.split else None
    return Chunk(start, y, probs, X, groups, split, tuple(notes))

def _codes_of(labels: np.ndarray, lookup: dict[str, int]) -> np.ndarray:
    """Each label string's class (``lookup``), looked up once per distinct label (found by
    hashing, not by sorting the strings)."""
    inverse, values = pd.factorize(labels)  # label_strings: str objects
    return np.array([lookup[v] for v in values], dtype=np.int64)[inverse]

def _codes_in(series: pd.Series, levels: tuple[str, ...]) -> np.ndarray:
    """Each value's index among the table's sorted ``levels``."""
    codes, names = levels_of(series)
    index = {level: k for k, level in enumerate(levels)}
    return np.array([index.get(str(name), -1) for name in names], dtype=np.int64)[codes]

def audit_data(chunk: Chunk, schema: StreamSchema, name: str,
               notes: tuple = ()) -> AuditData:
    """An :class:`AuditData` of decoded rows (a streamed audit's seeded sample): the table's
    classes, encoded features and levels, whatever rows the chunk holds, with the whole
    table's validation ``notes``."""
    mapping = schema.mapping
    feature_frame = pd.DataFrame(index=pd.RangeIndex(chunk.rows))
    at = 0
    for column in mapping.features:
        if column in schema.categorical:
            width = len(schema.levels[column])
            codes = chunk.X[:, at:at + width].argmax(axis=1)
            feature_frame[column] = np.asarray(schema.levels[column], dtype=object)[codes]
            at += width
        else:
            feature_frame[column] = chunk.X[:, at]
            at += 1
    groups = pd.DataFrame({g: np.asarray(schema.levels[g], dtype=object)[chunk.groups[g]]
                           for g in mapping.groups}, index=pd.RangeIndex(chunk.rows))
    return AuditData(y=chunk.y, probs=chunk.probs, classes=schema.classes, X=chunk.X,
                     feature_names=schema.feature_names, feature_frame=feature_frame,
                     groups=groups, split=chunk.split, report=tuple(notes), mapping=mapping,
                     name=name)

def concatenate(chunks: Sequence[Chunk]) -> Chunk:
    """The rows of several chunks, in order, as one."""
    if not chunks:
        raise ValueError("No rows to concatenate.")
    first = chunks[0]
    return Chunk(first.start, np.concatenate([c.y for c in chunks]),
                 np.concatenate([c.probs for c in chunks]),
                 np.concatenate([c.X for c in chunks]),
                 {g: np.concatenate([c.groups[g] for c in chunks]) for g in first.groups},
                 None if first.split is None else np.concatenate([c.split for c in chunks]),
                 tuple(n for c in chunks for n in c.notes))

def _mix(words: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (Steele, Lea & Flood 2014) on unsigned 64-bit words: every
    input bit changes about half of the output bits."""
    z = words + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))

def chunk_digest(chunk: Chunk) -> np.ndarray:
    """A digest of a chunk's decoded rows that does not depend on how the table was cut:
    each row's values and global row number are mixed into one 64-bit word
    (:func:`_mix`), and the digest is two sums of the rows' words mod 2⁶⁴ (of the words,
    and of the words mixed again). Chunks' digests add (``+``, wrapping), so the digest of
    a table is the same whatever its batches, row groups or files."""
    with np.errstate(over="ignore"):
        h = _mix(np.arange(chunk.start, chunk.start + chunk.rows, dtype=np.uint64))
        for array in (chunk.y, chunk.probs, chunk.X, *chunk.groups.values()):
            words = np.ascontiguousarray(array, dtype=np.float64 if array.dtype.kind == "f"
                                         else np.int64).reshape(chunk.rows, -1).view(np.uint64)
            for column in words.T:
                h = _mix(h ^ column)
        if chunk.split is not None:
            values, codes = np.unique(np.asarray(chunk.split, dtype=str), return_inverse=True)
            words = np.array([int.from_bytes(hashlib.sha1(v.encode()).digest()[:8], "little")
                              for v in values], dtype=np.uint64)
            h = _mix(h ^ words[codes.ravel()])
        return np.array([h.sum(dtype=np.uint64), _mix(h).sum(dtype=np.uint64)],
                        dtype=np.uint64)

def stream_fingerprint(digest: np.ndarray, schema: StreamSchema) -> str:
    """The fingerprint of a streamed table from the sum of its chunks' digests
    (:func:`chunk_digest`)."""
    hashed = hashlib.sha1(b"stream")
    hashed.update(np.asarray(digest, dtype=np.uint64).tobytes())
    hashed.update(repr((schema.classes, schema.feature_names)).encode())
    return hashed.hexdigest()[:16]

def merge_notes(notes: Sequence[ValidationNote], limit: int = 8) -> tuple[ValidationNote, ...]:
    """The partitions' repair notes, at most ``limit`` (then one saying how many more)."""
    unique = list(dict.fromkeys(notes))
    if len(unique) <= limit:
        return tuple(unique)
    return (*unique[:limit], ValidationNote(
        "warning", f"… and {len(unique) - limit:,} more notes of the same kinds in later "
        "partitions."))
