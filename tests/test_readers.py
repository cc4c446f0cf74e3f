"""Reading uploaded files: delimiters, encodings, Parquet, and the readable failures."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from core.data.problems import DataError
from core.data.readers import read_table, sniff_delimiter

TABLE = pd.DataFrame({"y": [0, 1, 1], "p": [0.2, 0.7, 0.9], "city": ["Zürich", "Köln", "Oslo"]})


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_csv_delimiter_is_sniffed(sep: str) -> None:
    loaded = read_table(TABLE.to_csv(index=False, sep=sep).encode(), "t.csv")
    pd.testing.assert_frame_equal(loaded.frame, TABLE, check_dtype=False)
    assert (sep == ",") == (not any("separated" in n for n in loaded.notes))


def test_tsv_by_suffix_and_path(tmp_path) -> None:
    path = tmp_path / "table.tsv"
    path.write_text(TABLE.to_csv(index=False, sep="\t"), encoding="utf-8")
    loaded = read_table(path)
    assert loaded.source == "table.tsv"
    pd.testing.assert_frame_equal(loaded.frame, TABLE, check_dtype=False)


def test_utf8_bom_and_latin1_fallback() -> None:
    text = TABLE.to_csv(index=False)
    bom = read_table(b"\xef\xbb\xbf" + text.encode("utf-8"), "t.csv")
    assert list(bom.frame.columns) == ["y", "p", "city"] and not bom.notes
    latin = read_table(text.encode("cp1252"), "t.csv")
    assert latin.frame["city"].tolist() == ["Zürich", "Köln", "Oslo"]
    assert any("Windows-1252" in n for n in latin.notes)


def test_parquet_roundtrip() -> None:
    buffer = io.BytesIO()
    TABLE.to_parquet(buffer)
    loaded = read_table(buffer.getvalue(), "t.parquet")
    pd.testing.assert_frame_equal(loaded.frame, TABLE, check_dtype=False)


def test_empty_file() -> None:
    with pytest.raises(DataError, match="empty"):
        read_table(b"", "t.csv")
    with pytest.raises(DataError, match="empty"):
        read_table(b"  \n\n", "t.csv")


def test_header_only_gives_an_empty_table() -> None:
    assert len(read_table(b"y,p\n", "t.csv").frame) == 0


def test_duplicate_header_names_are_kept_apart_and_reported_not_renamed_silently() -> None:
    # issue 14: such files are accepted; differing duplicates keep both, named by position
    loaded = read_table(b"y,p,p\n0,0.1,0.2\n", "t.csv")
    assert list(loaded.frame.columns) == ["y", "p (column 2)", "p (column 3)"]
    assert loaded.frame["p (column 3)"].tolist() == [0.2]
    assert any("more than one column named 'p'" in note for note in loaded.notes)


def test_ragged_rows_are_unreadable() -> None:
    with pytest.raises(DataError, match="same number of fields"):
        read_table(b"y,p\n0,0.1\n1,0.2,7,8\n", "t.csv")


def test_corrupt_parquet_and_unknown_type() -> None:
    with pytest.raises(DataError, match="Parquet"):
        read_table(b"this is not parquet", "t.parquet")
    with pytest.raises(DataError, match="'.xlsx'"):
        read_table(b"PK\x03\x04", "t.xlsx")


def test_missing_path() -> None:
    with pytest.raises(DataError, match="could not be opened"):
        read_table("/nonexistent/table.csv")


def test_sniffer_falls_back_to_counting() -> None:
    assert sniff_delimiter("a;b;c\n1;2;3\n") == ";"
    assert sniff_delimiter("single\n1\n2\n") == ","


def test_numbers_survive_roundtrip() -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"y": rng.integers(0, 2, 50), "p": rng.random(50)})
    loaded = read_table(frame.to_csv(index=False).encode(), "t.csv")
    np.testing.assert_allclose(loaded.frame["p"], frame["p"], rtol=1e-15)
