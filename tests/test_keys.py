"""The per-install key, keyed fingerprints and masked previews."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domestique import keys
from domestique.keys import (
    Fingerprinter,
    KeyFileError,
    domestique_home,
    install_key,
    mask_preview,
)


def test_home_follows_the_environment(home: Path) -> None:
    """DOMESTIQUE_HOME decides where state lives."""
    assert domestique_home() == home


def test_key_is_created_once_with_mode_0600(home: Path) -> None:
    """The key file is made on first use (0600, in a 0700 dir) and read back unchanged."""
    key = install_key(home)
    path = home / "keys" / "fingerprint.key"
    assert len(key) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    keys._KEY_CACHE.clear()
    assert install_key(home) == key
    assert path.read_bytes() == key


def test_damaged_key_is_refused(home: Path) -> None:
    """A key file of the wrong length raises instead of fingerprinting under a bad key."""
    path = home / "keys" / "fingerprint.key"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"short")
    keys._KEY_CACHE.clear()
    with pytest.raises(KeyFileError):
        install_key(home)


@pytest.mark.slow
def test_concurrent_creation_agrees(home: Path) -> None:
    """Processes racing to create the key all end up with the same key."""
    script = (
        "from pathlib import Path;"
        "from domestique.keys import install_key;"
        f"print(install_key(Path({str(home)!r})).hex())"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    outs = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(outs) == 1
    assert bytes.fromhex(outs.pop()) == (home / "keys" / "fingerprint.key").read_bytes()


def test_fingerprints_are_keyed_and_stable() -> None:
    """Same key, same fingerprint; another key, another one; never the plain value."""
    a, b = Fingerprinter(b"k" * 32), Fingerprinter(b"j" * 32)
    value = "AKIAZ7QW3ERTYUIOPL4Q"
    fp = a.fingerprint(value)
    assert fp.startswith("hmac-sha256:")
    assert len(fp) == len("hmac-sha256:") + 32
    assert fp == a.fingerprint(value.encode())
    assert fp != b.fingerprint(value)
    assert value not in fp


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=80))
def test_mask_preview_never_shows_most_of_a_value(value: str) -> None:
    """Long values show 4+4 characters, medium 2+2, short only their length."""
    preview = mask_preview(value)
    n = len(value)
    if n >= 20:
        assert preview == f"{value[:4]}…{value[-4:]}"
    elif n >= 8:
        assert preview == f"{value[:2]}…{value[-2:]}"
    else:
        assert preview == f"…({n})"
    if n >= 8:
        assert value not in preview


def test_umask_does_not_widen_key_mode(home: Path) -> None:
    """Even with a permissive umask the key file stays 0600."""
    old = os.umask(0)
    try:
        keys._KEY_CACHE.clear()
        install_key(home)
    finally:
        os.umask(old)
    assert stat.S_IMODE((home / "keys" / "fingerprint.key").stat().st_mode) == 0o600


def test_home_and_key_folder_are_private_when_created(tmp_path: Path) -> None:
    """Creating the key also creates DOMESTIQUE_HOME itself with mode 0700, not only keys/."""
    home = tmp_path / "state" / "domestique"
    install_key(home)
    assert (home.stat().st_mode & 0o777) == 0o700
    assert ((home / "keys").stat().st_mode & 0o777) == 0o700
