"""Reading uploaded tables: CSV (delimiter sniffed), TSV and Parquet.

Every failure raises :class:`core.data.problems.DataError` with a sentence for the person who
uploaded
the file. Text files are decoded as UTF-8 (a byte-order mark is accepted) and, failing that,
as Windows-1252/Latin-1; the fallback is reported in :attr:`LoadedTable.notes`. Repeated
column names are resolved by :func:`core.data.table.deduplicate_columns` (identical copies dropped,
differing ones kept as ``'name (column k)'``) and reported in the notes, never renamed
silently the way pandas would (``a.1``).
"""

from __future__ import annotations

import csv
import io
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from core.data.problems import DataError, describe_rows
from core.data.table import deduplicate_columns

TEXT_SUFFIXES = (".csv", ".txt", ".tsv", ".tab")
PARQUET_SUFFIXES = (".parquet", ".pq")
SUPPORTED_SUFFIXES = TEXT_SUFFIXES + PARQUET_SUFFIXES
DELIMITERS = ",;\t|"
SNIFF_BYTES = 64 * 1024


@dataclass(frozen=True)
class LoadedTable:
    """A table read from a file, with what the reader had to decide on the way.

    Attributes
    ----------
    frame : pandas.DataFrame
        The table, its repeated column names made unique.
    source : str
        Where it came from (the file name).
    notes : tuple of str
        What the reader decided (encoding, delimiter, dropped copies).
    """

    frame: pd.DataFrame
    source: str
    notes: tuple[str, ...] = ()


def read_table(source: str | Path | bytes, name: str | None = None) -> LoadedTable:
    """Read a CSV/TSV/Parquet file from a path or from raw bytes (then ``name`` gives the type).

    Parameters
    ----------
    source : str, pathlib.Path or bytes
        A file path, or the file's bytes (an upload).
    name : str, optional
        The file's name; its extension tells the type of raw bytes.

    Returns
    -------
    LoadedTable
        The table (``.frame``) and what was noted while reading it (encoding, delimiter).

    Raises
    ------
    DataError
        A sentence naming the problem when the file cannot be read.
    """
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
        return _loaded(_read_parquet(data, name), name, ())
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
    frame, trailing_note = _read_text(text, delimiter, name)
    notes = tuple(n for n in (encoding_note, _delimiter_note(delimiter), trailing_note) if n)
    return _loaded(frame, name, notes)


def check_limits(data: bytes, name: str, max_megabytes: float, max_rows: int) -> None:
    """Refuse a file over ``max_megabytes`` or with more than ``max_rows`` rows before it is
    parsed: a Parquet file's row count is read from its footer, a text file's rows are its
    line breaks (a quoted field may hold more, so the count can only be high), counted
    without parsing. Raises :class:`DataError` naming the size or rows and the limit.

    Parameters
    ----------
    data : bytes
        The file's contents.
    name : str
        Its name (for the message).
    max_megabytes : float
        The largest file accepted.
    max_rows : int
        The most rows accepted.
    """
    megabytes = len(data) / 1e6
    if megabytes > max_megabytes:
        raise DataError(
            f"The file '{name}' has {megabytes:,.1f} MB; this server takes files of at most "
            f"{max_megabytes:,.0f} MB (a limit its operator sets). Upload a sample of the rows, "
            "or save the table as Parquet, which is several times smaller than CSV.")
    if Path(name).suffix.lower() in PARQUET_SUFFIXES:
        try:
            import pyarrow.parquet as pq

            rows = pq.ParquetFile(io.BytesIO(data)).metadata.num_rows
        except Exception:  # noqa: BLE001 — an unreadable file gets read_table's message
            return
        about = ""
    else:
        rows = data.count(b"\n") - 1 + (not data.endswith(b"\n"))
        about = "about "
    if rows > max_rows:
        raise DataError(
            f"The file '{name}' has {about}{rows:,} rows; this server takes at most "
            f"{max_rows:,} rows (a limit its operator sets). Upload a sample of the rows, or "
            "audit the whole table with the command line (calibration-atlas audit).")


def _loaded(frame: pd.DataFrame, name: str, notes: tuple[str, ...]) -> LoadedTable:
    """The table with unique column names; what that took is added to the notes."""
    deduplicated = deduplicate_columns(frame)
    return LoadedTable(deduplicated.frame, name, notes + deduplicated.notes)


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


def _read_text(text: str, delimiter: str, name: str) -> tuple[pd.DataFrame, str | None]:
    """The table, and a note when lines ended with empty fields beyond the header's.

    ``index_col=False``: pandas would otherwise turn the first column into the row index,
    silently shifting every value one column left, when all lines have one field more than
    the header (a trailing delimiter, or an unnamed first column).
    """
    try:
        header = next(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter,
                                 skipinitialspace=True), [])
    except csv.Error as error:
        raise DataError(f"The file '{name}' could not be read as a table ({error}).") from None
    header = [h.strip() for h in header]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            frame = pd.read_csv(io.StringIO(text), sep=delimiter, skipinitialspace=True,
                                index_col=False)
    except pd.errors.EmptyDataError:
        raise DataError(f"The file '{name}' has no columns. Choose a file with a header line.") \
            from None
    except (pd.errors.ParserError, csv.Error, ValueError) as error:
        raise DataError(_unreadable(name, error)) from None
    warned = any(issubclass(w.category, pd.errors.ParserWarning) for w in caught)
    note = _extra_fields(text, delimiter, name, frame.shape[1]) if warned else None
    # pandas renames a repeated header ('a', 'a.1'); give every column its name from the file
    # (an empty header keeps pandas' 'Unnamed: k') so that the repeats can be resolved openly.
    parsed = [str(c).strip() for c in frame.columns]
    if len(header) == len(parsed):
        parsed = [h if h else p for h, p in zip(header, parsed, strict=True)]
    frame.columns = parsed
    if frame.shape[1] == 0:
        raise DataError(f"The file '{name}' has no columns. Choose a file with a header line.")
    return frame, note


def _extra_fields(text: str, delimiter: str, name: str, width: int) -> str:
    """Lines longer than the header: a note if the extra fields are empty, else a DataError."""
    try:  # read again without the header: a lone carriage return can split lines unevenly
        body = pd.read_csv(io.StringIO(text), sep=delimiter, skipinitialspace=True,
                           header=None, skiprows=1, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, csv.Error, ValueError) as error:
        raise DataError(_unreadable(name, error)) from None
    extra = body.iloc[:, width:].apply(lambda column: column.str.strip() != "")
    filled = extra.to_numpy().any(axis=1)
    if filled.any():
        raise DataError(
            f"The file '{name}' could not be read as a table: {describe_rows(filled)} have more "
            f"fields than the header's {width}. Check that every line has the same number of "
            "fields as the header (a missing column name?)."
        )
    return "Lines end with a delimiter after the last column; the empty last field was ignored."


def _unreadable(name: str, error: Exception) -> str:
    """The sentence for a text file the CSV parser gave up on."""
    return (f"The file '{name}' could not be read as a table ({_first_line(error)}). Check "
            "that every line has the same number of fields as the header.")


def _read_parquet(data: bytes, name: str) -> pd.DataFrame:
    try:
        frame = _parquet_frame(data)
    except Exception as error:  # pyarrow raises many types for corrupt files
        raise DataError(
            f"The file '{name}' could not be read as Parquet ({_first_line(error)}). Export it "
            "again, or save it as CSV."
        ) from None
    frame.columns = [str(c) for c in frame.columns]
    return frame


def _parquet_frame(data: bytes) -> pd.DataFrame:
    """The Parquet file as a frame; repeated field names (which pandas cannot read) are read
    positionally and restored, for :func:`core.data.table.deduplicate_columns` to resolve."""
    import pyarrow.parquet as pq

    table = pq.ParquetFile(io.BytesIO(data)).read()
    names = [str(n) for n in table.column_names]
    if len(set(names)) == len(names):
        return table.to_pandas()
    positional = table.rename_columns([f"column {i}" for i in range(len(names))])
    frame = positional.replace_schema_metadata(None).to_pandas()
    frame.columns = names
    return frame


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
