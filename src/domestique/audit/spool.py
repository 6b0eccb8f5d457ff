"""The audit spool: where a hook deciding in-process leaves its record for the store to chain.

A hook process with no daemon decides once and exits; opening the SQLite store for that one
append (``sqlite3``, ``hashlib``, the chain and the checkpoint) was the largest cost left on its
path. So it writes the record, already masked and in its canonical JSON, to a file of its own
under ``$DOMESTIQUE_HOME/spool/`` and answers; the next writer or reader of the store (the daemon
the hook starts, ``report``, ``audit verify``, an in-process append that opens the store, a hub
sync) ingests every spooled record into the hash chain, in name order, and only after the
commit removes the files.

One file per record, not one shared file: a record is written under a temporary name with
``O_EXCL | O_APPEND`` (mode 0600) and renamed to its final name, so a ``.rec`` file is always
complete (durability as the store's: see :func:`spool_line`), and ingestion can remove
exactly what it committed while other hooks go on spooling. The name is
``<time_ns>-<pid>-<record id>.rec``:
the order of ingestion, and the record id that makes ingestion idempotent (a record whose id is
in the store already is not chained twice, only its file removed: the crash between commit and
unlink). A ``.rec`` file that does not hold exactly one valid record is renamed ``.corrupt`` and
kept: ``audit verify`` reports it until someone looks (a lost decision record is not silently
dropped). The folder is 0700 and must be the user's own, or nothing is spooled there.

This module imports only ``os`` and ``time`` (and :mod:`domestique.records` to render): the
hook's path loads it.
"""

from __future__ import annotations

import os
import stat
import time

SPOOL_DIR_NAME = "spool"
RECORD_SUFFIX = ".rec"
TEMP_SUFFIX = ".tmp"
CORRUPT_SUFFIX = ".corrupt"
# A temporary file this old was left by a writer that died before its rename: ingested if it
# holds a whole record (the decision may have been answered), quarantined if not.
STALE_TEMP_S = 60.0
_SPOOL_KEY_LABEL = b"domestique audit spool v1"


class SpoolError(OSError):
    """The spool cannot be used (not a private folder of this user's); the store is used."""


def spool_dir(home: os.PathLike[str] | str) -> str:
    return os.path.join(os.fspath(home), SPOOL_DIR_NAME)


def _private_dir(path: str) -> str:
    """``path`` as a folder of this user's with mode 0700 (created so); SpoolError if not."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except FileNotFoundError:  # no DOMESTIQUE_HOME yet: made private, as the store makes it
        from pathlib import Path

        from domestique.keys import ensure_private_dir

        ensure_private_dir(Path(path))
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise SpoolError(f"audit spool {path} is not a private folder of this user's")
    return path


def spool_mac(home: os.PathLike[str] | str, canonical: bytes) -> str:
    """The MAC of a spooled record, under a key derived from the install key (the policy
    loader's signed cache computes the same, without ``hashlib``: :mod:`domestique.digest`)."""
    from pathlib import Path

    from domestique.digest import hmac_sha256
    from domestique.keys import install_key

    key = hmac_sha256(install_key(Path(home)), _SPOOL_KEY_LABEL)
    return hmac_sha256(key, canonical).hex()


def encode_line(mac: str, canonical: bytes) -> bytes:
    """A spool file's one line: ``{"mac":…,"record":<canonical JSON>}`` and a newline."""
    return b'{"mac":"' + mac.encode("ascii") + b'","record":' + canonical + b"}\n"


def spool_line(home: os.PathLike[str] | str, record_id: str, canonical: bytes) -> str:
    """Write one record (its canonical JSON) durably to the spool; the file's path.

    Raises OSError (SpoolError included) when it cannot: the caller appends to the store then.
    """
    if b"\n" in canonical or "/" in record_id or not record_id:
        raise SpoolError("record cannot be spooled")
    line = encode_line(spool_mac(home, canonical), canonical)
    folder = _private_dir(spool_dir(home))
    name = f"{time.time_ns():020d}-{os.getpid()}-{record_id}"
    temp = os.path.join(folder, f".{name}{TEMP_SUFFIX}")
    final = os.path.join(folder, name + RECORD_SUFFIX)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o600)
    try:
        data = memoryview(line)
        while data:
            data = data[os.write(fd, data) :]
    except BaseException:
        os.close(fd)
        os.unlink(temp)
        raise
    os.close(fd)
    # No fsync (file or folder): the store's own guarantee, no more (WAL with
    # synchronous=NORMAL syncs at checkpoints, not per commit): a spooled record survives its
    # writer being killed, a power cut may lose the last ones. Both fsyncs cost ~8 ms per call
    # on the measured disk, more than the whole store import this spool saves.
    os.rename(temp, final)
    return final


def spooled_names(home: os.PathLike[str] | str) -> list[str]:
    """The spooled records' file names in ingestion order (stale temporary files included)."""
    try:
        names = os.listdir(spool_dir(home))
    except FileNotFoundError:
        return []
    out = [n for n in names if n.endswith(RECORD_SUFFIX)]
    now = time.time()
    for n in names:
        if n.startswith(".") and n.endswith(TEMP_SUFFIX):
            try:
                age = now - os.lstat(os.path.join(spool_dir(home), n)).st_mtime
            except FileNotFoundError:
                continue
            if age > STALE_TEMP_S:
                out.append(n)
    return sorted(out, key=lambda n: n.lstrip("."))


def record_id_of(name: str) -> str:
    """The record id a spool file's name carries ('' when the name has none)."""
    stem = name.lstrip(".").rsplit(".", 1)[0]
    parts = stem.split("-", 2)
    return parts[2] if len(parts) == 3 else ""


def read_spooled(home: os.PathLike[str] | str, name: str) -> bytes | None:
    """A spool file's bytes; None when it is gone (another process ingested it)."""
    try:
        fd = os.open(os.path.join(spool_dir(home), name), os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def quarantine(home: os.PathLike[str] | str, name: str) -> None:
    """Keep a spool file that holds no valid record as ``<name>.corrupt`` (verify reports it)."""
    folder = spool_dir(home)
    try:  # noqa: SIM105 - contextlib is one import more on the hook's path
        os.rename(os.path.join(folder, name), os.path.join(folder, name + CORRUPT_SUFFIX))
    except FileNotFoundError:
        pass


def remove(home: os.PathLike[str] | str, names: list[str]) -> None:
    """Remove ingested spool files (after the commit); one already gone is fine."""
    folder = spool_dir(home)
    for name in names:
        try:  # noqa: SIM105 - contextlib is one import more on the hook's path
            os.unlink(os.path.join(folder, name))
        except FileNotFoundError:
            pass


def spool_problems(home: os.PathLike[str] | str) -> list[str]:
    """What is wrong with the spool, for ``audit verify``: quarantined files, records not
    ingested (the store could not take them), a folder that is not private."""
    folder = spool_dir(home)
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    except OSError as exc:
        return [f"audit spool {folder} cannot be read ({type(exc).__name__})"]
    problems = []
    try:
        _private_dir(folder)
    except OSError as exc:
        problems.append(str(exc))
    corrupt = [n for n in names if n.endswith(CORRUPT_SUFFIX)]
    if corrupt:
        problems.append(
            f"{len(corrupt)} spooled record(s) could not be read and were not chained, kept in "
            f"{folder}: {', '.join(corrupt[:3])}{' …' if len(corrupt) > 3 else ''}"
        )
    waiting = spooled_names(home)
    if waiting:
        problems.append(f"{len(waiting)} spooled record(s) in {folder} are not in the store yet")
    return problems
