"""The server-side store of a session's table: what survives a browser reload and a restart.

When a session makes a dataset active, the file it came from (the uploaded bytes unchanged,
or a Parquet file of a derived table: a reference model's predictions, recalibrated rows),
its column mapping and the session's page settings are written to a folder of their own,
named by a token from :func:`secrets.token_urlsafe` (256 random bits: not derivable from the
data). The token goes into the page's URL (``?table=TOKEN``); a reload, or a new server
process, finds the folder by it and rebuilds the dataset, whose fingerprint is the same, so
cached results come back. A session without the token cannot name the folder, and a token
is checked against :data:`TOKEN_PATTERN` before it touches a path, so nothing outside the
store can be reached through it.

A raw table (one with no probability column, for the reference-model workflow) is stored
under the session's token as soon as it is uploaded (:meth:`TableStore.save_raw`), beside
the active dataset's recipe or alone: a reload brings the upload back to the Train tab.

Retention: a folder unused for ``retention_days`` is deleted, and beyond ``max_tables``
folders the least recently used go (:meth:`TableStore.prune`, run whenever one is written).
Folders are created ``0700`` and files ``0600``.
"""

from __future__ import annotations

import io
import json
import re
import secrets
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from core.data import AuditData, ColumnMapping, ValidationNote

TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{43}")
QUERY_KEY = "table"
META, TABLE, RAW = "meta.json", "table", "raw"
KINDS = ("upload", "derived", "demo")


@dataclass(frozen=True)
class Recipe:
    """How to rebuild an active dataset: ``kind`` ``"upload"`` (``content`` is the file as
    uploaded, ``name`` its file name), ``"derived"`` (``content`` a Parquet file of a table
    the app made) or ``"demo"`` (``name`` is the demo's key); the ``mapping`` of the table's
    columns (none for a demo), the dataset's display name and the sidebar's source line."""

    kind: str
    name: str
    source: str
    mapping: ColumnMapping | None = None
    content: bytes = field(default=b"", repr=False)
    title: str = ""
    #: What was said before validation (the reference model's warnings, with their
    #: :class:`~core.data.problems.ValidationNote` level and topic): a rebuilt table's
    #: validation report opens with them again.
    notes: tuple[tuple[str, str, str], ...] = ()

    @classmethod
    def demo(cls, key: str, source: str) -> Recipe:
        return cls("demo", key, source)

    @classmethod
    def derived(cls, frame: pd.DataFrame, mapping: ColumnMapping, title: str,
                source: str, notes: tuple[ValidationNote, ...] = ()) -> Recipe:
        """A table the app made, kept as Parquet (the columns it maps, nothing else)."""
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False)
        return cls("derived", "table.parquet", source, mapping, buffer.getvalue(), title,
                   tuple((n.level, n.message, n.topic) for n in notes))

    def validation_notes(self) -> tuple[ValidationNote, ...]:
        """The notes said before validation, as the validation report's entries."""
        return tuple(ValidationNote(*note) for note in self.notes)


@dataclass(frozen=True)
class Stored:
    """A stored table: its token, recipe (``None`` while only a raw upload is kept) and the
    page settings saved with it."""

    token: str
    recipe: Recipe | None
    settings: dict
    #: A raw upload kept for the Train tab: ``(file name, bytes)``.
    raw: tuple[str, bytes] | None = None


def table_of(audit: AuditData) -> tuple[pd.DataFrame, ColumnMapping]:
    """A table and mapping that :meth:`AuditData.from_mapping` turns back into ``audit``'s
    labels, probabilities, features, groups and split: one probability column per class
    named after it, the features and groups under their own names. Binary data comes back
    with the same fingerprint; multiclass rows are renormalised on the way back, which can
    move a probability by rounding (1e-16) and so the fingerprint. Ensemble members are not
    kept."""
    frame = pd.DataFrame({"label": np.asarray(audit.classes, dtype=object)[audit.y]})
    taken = {"label", *audit.feature_frame.columns, *audit.groups.columns, "split"}
    probs = []
    for j, name in enumerate(audit.classes):
        column = f"p_{name}"
        while column in taken:
            column = "_" + column
        taken.add(column)
        probs.append(column)
        frame[column] = audit.probs[:, j]
    for column in audit.feature_frame.columns:
        frame[column] = audit.feature_frame[column].to_numpy()
    for column in audit.groups.columns:
        if column not in audit.feature_frame.columns:
            frame[column] = audit.groups[column].to_numpy()
    if audit.split is not None:
        frame["split"] = audit.split
    positive = audit.classes[1] if len(audit.classes) == 2 else None
    mapping = ColumnMapping(label="label", probs=tuple(probs), positive=positive,
                            features=tuple(audit.feature_frame.columns),
                            groups=tuple(audit.groups.columns),
                            split="split" if audit.split is not None else None)
    return frame, mapping


def valid_token(token: object) -> bool:
    """Whether ``token`` has the form of a token this store hands out (and so names no path
    outside it)."""
    return isinstance(token, str) and TOKEN_PATTERN.fullmatch(token) is not None


class TableStore:
    """Tables kept in ``folder``, one sub-folder per token (see the module docstring)."""

    def __init__(self, folder: Path, retention_days: float = 7.0, max_tables: int = 100):
        self.folder = Path(folder)
        self.retention_seconds = retention_days * 86_400
        self.max_tables = max_tables

    def _path(self, token: str) -> Path | None:
        if not valid_token(token):
            return None
        path = self.folder / token
        return path if path.parent == self.folder else None

    def save(self, recipe: Recipe, settings: dict, token: str | None = None) -> str:
        """Write ``recipe`` and ``settings`` under ``token`` (a new one when ``None`` or not
        valid); returns the token."""
        token, path = self._folder(token)
        table = path / TABLE
        if recipe.content:
            _write(table, recipe.content)
        elif table.exists():
            table.unlink()
        meta = {**self._meta(path), "kind": recipe.kind, "name": recipe.name,
                "source": recipe.source, "title": recipe.title, "settings": settings,
                "mapping": None if recipe.mapping is None else asdict(recipe.mapping),
                "notes": [list(note) for note in recipe.notes]}
        _write(path / META, json.dumps(meta).encode("utf-8"))
        self.prune(keep=token)
        return token

    def save_raw(self, name: str, content: bytes, settings: dict,
                 token: str | None = None) -> str:
        """Keep a raw upload (``name``, its bytes as uploaded) under ``token`` (a new one when
        ``None`` or not valid), beside the active dataset's recipe if one is stored; returns
        the token."""
        token, path = self._folder(token)
        _write(path / RAW, content)
        meta = self._meta(path) or {"kind": None, "settings": settings}
        meta["raw"] = {"name": name}
        _write(path / META, json.dumps(meta).encode("utf-8"))
        self.prune(keep=token)
        return token

    def _folder(self, token: str | None) -> tuple[str, Path]:
        token = token if valid_token(token) else secrets.token_urlsafe(32)
        path = self._path(token)
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.mkdir(exist_ok=True, mode=0o700)
        return token, path

    @staticmethod
    def _meta(path: Path) -> dict:
        """The folder's meta data, or an empty dict."""
        try:
            return json.loads((path / META).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def save_settings(self, token: str, settings: dict) -> None:
        """Replace the page settings stored with ``token`` (nothing when it is unknown)."""
        path = self._path(token)
        if path is None or not (path / META).is_file():
            return
        meta = json.loads((path / META).read_text(encoding="utf-8"))
        meta["settings"] = settings
        _write(path / META, json.dumps(meta).encode("utf-8"))

    def load(self, token: object) -> Stored | None:
        """The table stored under ``token``, or ``None`` (an invalid, unknown or expired
        token, or a folder that cannot be read); a load counts as a use for retention."""
        path = self._path(token) if isinstance(token, str) else None
        if path is None or not (path / META).is_file():
            return None
        try:
            meta = json.loads((path / META).read_text(encoding="utf-8"))
            recipe = None if meta.get("kind") is None else self._recipe(path, meta)
            raw = meta.get("raw")
            raw = None if raw is None else (str(raw["name"]), (path / RAW).read_bytes())
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if (recipe is not None and recipe.kind not in KINDS) or (recipe is None and raw is None):
            return None
        (path / META).touch()
        return Stored(token, recipe, dict(meta.get("settings") or {}), raw)

    @staticmethod
    def _recipe(path: Path, meta: dict) -> Recipe:
        content = (path / TABLE).read_bytes() if (path / TABLE).is_file() else b""
        mapping = meta.get("mapping")
        if mapping is not None:
            mapping = ColumnMapping(**{
                key: (tuple(tuple(m) for m in value) if key == "members" else
                      tuple(value) if isinstance(value, list) else value)
                for key, value in mapping.items()})
        notes = tuple((str(level), str(message), str(topic))
                      for level, message, topic in meta.get("notes") or ())
        return Recipe(meta["kind"], meta["name"], meta["source"], mapping, content,
                      meta.get("title", ""), notes)

    def forget(self, token: object) -> bool:
        """Delete the table stored under ``token``; whether there was one."""
        path = self._path(token) if isinstance(token, str) else None
        if path is None or not path.is_dir():
            return False
        shutil.rmtree(path, ignore_errors=True)
        return True

    def prune(self, keep: str | None = None, now: float | None = None) -> list[str]:
        """Delete folders unused for longer than the retention, then the least recently used
        beyond ``max_tables`` (never ``keep``); returns the tokens deleted."""
        if not self.folder.is_dir():
            return []
        now = time.time() if now is None else now
        used = []
        for path in self.folder.iterdir():
            if valid_token(path.name) and (path / META).is_file():
                used.append(((path / META).stat().st_mtime, path.name))
        used.sort(reverse=True)
        doomed = [token for i, (mtime, token) in enumerate(used) if token != keep
                  and (now - mtime > self.retention_seconds or i >= self.max_tables)]
        for token in doomed:
            self.forget(token)
        return doomed


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` readable by the server's user only, replacing it whole."""
    partial = path.with_name(path.name + ".partial")
    partial.touch(mode=0o600)
    partial.write_bytes(data)
    partial.replace(path)
