"""The previous_response_id vault: encrypted on disk, bound to its id, expiring."""

from __future__ import annotations

import os
import time
from pathlib import Path

from domestique.proxy.vault import PlaceholderVault

KEY = b"v" * 32
MAPPING = {"[REDACTED:t:0011aabb]": "ghp_SuperSecretValue"}


def test_round_trip(tmp_path: Path) -> None:
    """A stored mapping comes back for its response id, and only for it."""
    vault = PlaceholderVault(tmp_path, KEY)
    vault.put("resp_1", MAPPING)
    assert vault.get("resp_1") == MAPPING
    assert vault.get("resp_2") == {}


def test_nothing_readable_on_disk(tmp_path: Path) -> None:
    """Neither the value, the placeholder nor the response id appear in the files."""
    PlaceholderVault(tmp_path, KEY).put("resp_1", MAPPING)
    (file,) = list(tmp_path.iterdir())
    data = file.read_bytes()
    assert b"ghp_" not in data
    assert b"REDACTED" not in data
    assert "resp_1" not in file.name
    assert (file.stat().st_mode & 0o777) == 0o600


def test_other_key_or_moved_file_reads_nothing(tmp_path: Path) -> None:
    """Another install key cannot read it; a file moved to another id fails its check."""
    PlaceholderVault(tmp_path, KEY).put("resp_1", MAPPING)
    assert PlaceholderVault(tmp_path, b"w" * 32).get("resp_1") == {}
    vault = PlaceholderVault(tmp_path, KEY)
    vault.put("resp_2", {"[REDACTED:t:00000000]": "other"})
    first = vault._path("resp_1")
    os.replace(vault._path("resp_2"), first)
    assert vault.get("resp_1") == {}
    assert not first.exists()  # the undecryptable entry is removed


def test_entries_expire(tmp_path: Path) -> None:
    """After the TTL an entry is gone, on read and by sweep."""
    vault = PlaceholderVault(tmp_path, KEY, ttl_s=10)
    now = time.time()
    vault.put("resp_1", MAPPING, now=now)
    assert vault.get("resp_1", now=now + 5) == MAPPING
    assert vault.get("resp_1", now=now + 11) == {}
    vault.put("resp_2", MAPPING, now=now)
    assert vault.sweep(now=time.time() + 11) == 1


def test_empty_mapping_is_not_stored(tmp_path: Path) -> None:
    """Nothing to restore, nothing written."""
    PlaceholderVault(tmp_path / "v", KEY).put("resp_1", {})
    assert not (tmp_path / "v").exists()
