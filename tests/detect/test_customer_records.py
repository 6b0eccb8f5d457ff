"""Customer records: exact-data-match over fingerprints; no raw cell value stored anywhere."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from domestique.detect import Scanner
from domestique.detect.customer_records import RecordsError, normalise_cell
from domestique.detect.ruleset import builtin_rules
from domestique.detect.sources import add_records, list_records, load_records, remove_records
from domestique.keys import Fingerprinter

ROWS = [
    ("email", "name", "account_id", "plan"),
    ("grace.hopper@navy.example.mil", "Grace Hopper", "ACC-7731-XQ", "gold"),
    ("alan.turing@bletchley.example.uk", "Alan Mathison Turing", "ACC-1912-AT", "silver"),
]


@pytest.fixture
def csv_file(tmp_path: Path) -> Path:
    path = tmp_path / "customers.csv"
    path.write_text("\n".join(",".join(r) for r in ROWS) + "\n", encoding="utf-8")
    return path


def _scanner(fp: Fingerprinter, home: Path) -> Scanner:
    return Scanner(builtin_rules(), fp, [load_records(fp, home)])


def test_normalisation() -> None:
    """Case, width and whitespace do not matter; surrounding punctuation is dropped."""
    assert normalise_cell("  Grace\tHOPPER. ") == "grace hopper"
    assert normalise_cell("ＡＣＣ-1") == "acc-1"


def test_two_fields_of_one_row_are_a_finding(
    csv_file: Path, home: Path, fingerprinter: Fingerprinter
) -> None:
    """An e-mail plus the account id of the same row: both are records.customer findings."""
    add_records(csv_file, ["email", "name", "account_id"], fingerprinter, home=home)
    s = _scanner(fingerprinter, home)
    text = "Ticket from grace.hopper@navy.example.mil about account ACC-7731-XQ being locked."
    found = [f for f in s.scan(text) if f.code == "records.customer"]
    assert sorted(text[f.start : f.end] for f in found) == [
        "ACC-7731-XQ",
        "grace.hopper@navy.example.mil",
    ]


def test_multi_word_names_match_across_whitespace(
    csv_file: Path, home: Path, fingerprinter: Fingerprinter
) -> None:
    """A name written with different case and spacing still matches, with the account id."""
    add_records(csv_file, ["email", "name", "account_id"], fingerprinter, home=home)
    s = _scanner(fingerprinter, home)
    text = "Customer Alan  Mathison Turing (acc-1912-at) asked for a refund."
    found = {text[f.start : f.end] for f in s.scan(text) if f.code == "records.customer"}
    assert found == {"Alan  Mathison Turing", "acc-1912-at"}


def test_one_field_alone_or_fields_of_different_rows_are_not_findings(
    csv_file: Path, home: Path, fingerprinter: Fingerprinter
) -> None:
    """One value alone, or values from two different rows, do not identify a record."""
    add_records(csv_file, ["name", "account_id"], fingerprinter, home=home)
    s = _scanner(fingerprinter, home)
    assert [f for f in s.scan("Grace Hopper wrote COBOL") if f.code == "records.customer"] == []
    mixed = "Grace Hopper and ACC-1912-AT"
    assert [f for f in s.scan(mixed) if f.code == "records.customer"] == []


def test_no_raw_cell_value_is_stored_under_home(
    csv_file: Path, home: Path, fingerprinter: Fingerprinter
) -> None:
    """Every byte written under DOMESTIQUE_HOME is free of every cell value (any case)."""
    add_records(csv_file, ["email", "name", "account_id", "plan"], fingerprinter, home=home)
    blobs = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file()).lower()
    for row in ROWS[1:]:
        for cell in row:
            for part in [cell, *cell.split(), *cell.split("@"), *cell.split("-")]:
                if len(part) >= 4:
                    assert part.lower().encode() not in blobs, part
    (stored,) = (home / "records").glob("*.json")
    assert oct(stored.stat().st_mode & 0o777) == "0o600"
    doc = json.loads(stored.read_text())
    assert all(k.startswith("hmac-sha256:") for k in doc["cells"])


def test_list_and_remove(csv_file: Path, home: Path, fingerprinter: Fingerprinter) -> None:
    """Sets are listed by name with row counts and removed by name."""
    add_records(csv_file, ["email"], fingerprinter, name="crm", home=home)
    (info,) = list_records(home)
    assert (info.name, info.rows, info.columns) == ("crm", 2, ("email",))
    assert remove_records("crm", home)
    assert not remove_records("crm", home)
    assert list_records(home) == []


def test_bad_input_is_an_error_naming_no_value(
    csv_file: Path, home: Path, fingerprinter: Fingerprinter, tmp_path: Path
) -> None:
    """A missing column or a bad set name is a RecordsError; the message holds no cell value."""
    with pytest.raises(RecordsError, match="no column") as exc:
        add_records(csv_file, ["phone"], fingerprinter, home=home)
    assert "grace" not in str(exc.value).lower()
    with pytest.raises(RecordsError, match="name"):
        add_records(csv_file, ["email"], fingerprinter, name="../x", home=home)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(RecordsError, match="empty"):
        add_records(empty, ["email"], fingerprinter, home=home)


def test_damaged_index_fails_loading(home: Path, fingerprinter: Fingerprinter) -> None:
    """A damaged index raises on load (the default scanner turns that into detector errors)."""
    d = home / "records"
    d.mkdir()
    (d / "bad.json").write_text("{not json")
    os.chmod(d / "bad.json", 0o600)
    with pytest.raises(RecordsError):
        load_records(fingerprinter, home)
