"""Reading uploaded tables: CSV (delimiter sniffed), TSV and Parquet.

Every failure raises :class:`core.data.DataError` with a sentence for the person who uploaded
the file. Text files are decoded as UTF-8 (a byte-order mark is accepted) and, failing that,
as Windows-1252/Latin-1; the fallback is reported in :attr:`LoadedTable.notes`. Duplicate
column names are rejected rather than silently renamed (pandas would call them ``a.1``).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from core.data import DataError

TEXT_SUFFIXES = (".csv", ".txt", ".tsv", ".tab")
PARQUET_SUFFIXES = (".parquet", ".pq")
SUPPORTED_SUFFIXES = TEXT_SUFFIXES + PARQUET_SUFFIXES
DELIMITERS = ",;\t|"
SNIFF_BYTES = 64 * 1024


@dataclass(frozen=True)
class LoadedTable:
    """A table read from a file, with what the reader had to decide on the way."""

    frame: pd.DataFrame
    source: str
    notes: tuple[str, ...] = ()


def read_table(source: str | Path | bytes, name: str | None = None) -> LoadedTable:
    """Read a CSV/TSV/Parquet file from a path or from raw bytes (then ``name`` gives the type)."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        name = name or path.name
        try:
            data = path.read_bytes()
        except OSError as error:
            raise DataError(f"The file '{path}' could not be opened: {error.strerror}.") from None
    else:
        data = bytes(source)
        name = name or "uploaded file"
    suffix = Path(name).suffix.lower()
    if not data.strip():
        raise DataError(f"The file '{name}' is empty. Choose a file that contains a table.")
    if suffix in PARQUET_SUFFIXES:
        return LoadedTable(_read_parquet(data, name), name)
    if suffix and suffix not in TEXT_SUFFIXES:
        raise DataError(
            f"The file '{name}' has the type '{suffix}', which cannot be read. Save it as CSV, "
            "TSV or Parquet."
        )
    text, encoding_note = _decode(data, name)
    if "\x00" in text[:SNIFF_BYTES]:
        raise DataError(
            f"The file '{name}' is not a text table (it contains binary data; a spreadsheet "
            "saved under a .csv name?). Export it as CSV, TSV or Parquet."
        )
    delimiter = "\t" if suffix in (".tsv", ".tab") else sniff_delimiter(text)
    frame = _read_text(text, delimiter, name)
    notes = tuple(n for n in (encoding_note, _delimiter_note(delimiter)) if n)
    return LoadedTable(frame, name, notes)


def _decode(data: bytes, name: str) -> tuple[str, str | None]:
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("cp1252")
        return text, f"'{name}' is not valid UTF-8; it was read as Windows-1252."
    except UnicodeDecodeError:
        return data.decode("latin-1"), f"'{name}' is not valid UTF-8; it was read as Latin-1."


def sniff_delimiter(text: str) -> str:
    """The field delimiter among ``, ; TAB |`` that splits the first lines most consistently."""
    sample = text[:SNIFF_BYTES]
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        lines = [line for line in sample.splitlines()[:20] if line.strip()]
        counts = {d: min((line.count(d) for line in lines), default=0) for d in DELIMITERS}
        best = max(counts, key=counts.get)
        return best if counts[best] > 0 else ","


def _delimiter_note(delimiter: str) -> str | None:
    if delimiter == ",":
        return None
    shown = {"\t": "tab", ";": "semicolon", "|": "vertical bar"}[delimiter]
    return f"Columns are separated by a {shown}."


def _read_text(text: str, delimiter: str, name: str) -> pd.DataFrame:
    try:
        header = next(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), [])
    except csv.Error as error:
        raise DataError(f"The file '{name}' could not be read as a table ({error}).") from None
    header = [h.strip() for h in header]
    duplicated = sorted({h for h in header if header.count(h) > 1})
    if duplicated:
        raise DataError(
            f"The file '{name}' has more than one column named "
            f"{', '.join(repr(h) for h in duplicated)}. Rename the duplicates so every column "
            "name is unique, then upload again."
        )
    try:
        frame = pd.read_csv(io.StringIO(text), sep=delimiter, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise DataError(f"The file '{name}' has no columns. Choose a file with a header line.") \
            from None
    except (pd.errors.ParserError, csv.Error, ValueError) as error:
        raise DataError(
            f"The file '{name}' could not be read as a table ({_first_line(error)}). Check that "
            "every line has the same number of fields as the header."
        ) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    if frame.shape[1] == 0:
        raise DataError(f"The file '{name}' has no columns. Choose a file with a header line.")
    return frame


def _read_parquet(data: bytes, name: str) -> pd.DataFrame:
    try:
        frame = pd.read_parquet(io.BytesIO(data))
    except Exception as error:  # pyarrow raises many types for corrupt files
        raise DataError(
            f"The file '{name}' could not be read as Parquet ({_first_line(error)}). Export it "
            "again, or save it as CSV."
        ) from None
    duplicated = frame.columns[frame.columns.duplicated()].unique()
    if len(duplicated):
        raise DataError(
            f"The file '{name}' has more than one column named "
            f"{', '.join(repr(str(h)) for h in duplicated)}. Rename the duplicates."
        )
    frame.columns = [str(c) for c in frame.columns]
    return frame


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
