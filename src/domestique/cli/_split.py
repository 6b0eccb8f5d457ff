"""Work on a list of items shared with forked worker processes, results in the items' order.

``domestique scan DIR`` and ``scan --jsonl`` scan many texts, each on its own: when asked for
(``DOMESTIQUE_SCAN_WORKERS``, see :func:`workers`) the list is cut by bytes and the later
shares are scanned by processes forked once the scanner is built (and warmed on the first
items, so they inherit its compiled patterns and the DFA states RE2 has built), while this
process scans the first share and writes its output. Each worker sends its results back as one
JSON document when it is done; they are yielded after this process's own, so the output is
the one a single process writes.

Fails closed: a worker that dies, exits non-zero, or sends a truncated or malformed reply
yields :class:`Failed` for each of its items (the caller reports each as an error and exits
2), never fewer results than items. Only plain JSON values (dicts, lists, str, int, bool,
None) pass between processes; the caller's ``work`` must return those.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

# Below this many bytes of input in all, the items are worked on here: a worker's fork and its
# own first use of patterns and DFA states cost more than it saves.
SPLIT_MIN_BYTES = 512 * 1024
# This process first works on items until it has done this share of the bytes (at most
# WARM_MAX_BYTES), then forks: the workers start with the patterns compiled and the DFA states
# built for those items.
WARM_SHARE = 0.1
WARM_MAX_BYTES = 256 * 1024
MAX_WORKERS = 8
WORKERS_ENV = "DOMESTIQUE_SCAN_WORKERS"


@dataclass(frozen=True)
class Failed:
    """The result of an item whose worker failed: why (names no item content)."""

    why: str


def workers() -> int:
    """How many processes share the work: ``DOMESTIQUE_SCAN_WORKERS``, a number (1 = no split,
    at most ``MAX_WORKERS``) or ``auto`` (one per core this process may run on that the load
    average leaves idle, plus this one); unset or unreadable: 1. 1 where there is no fork.

    Not split by default: on the 2-vCPU build machine two busy processes got ~1.1x the
    throughput of one (the cores are not really two), so a split only added the workers'
    first-use costs; see docs/benchmarks.md, Round 3 (issue 13)."""
    if not hasattr(os, "fork"):
        return 1
    raw = os.environ.get(WORKERS_ENV, "").strip().lower()
    if raw != "auto":
        try:
            wanted = int(raw) if raw else 1
        except ValueError:
            wanted = 1  # an unreadable setting: the plain, single-process way
        return max(1, min(wanted, MAX_WORKERS))
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        idle = int(cores - os.getloadavg()[0])
    except (AttributeError, OSError):
        idle = cores - 1
    return max(1, min(cores, 1 + idle, MAX_WORKERS))


def _shares(sizes: Sequence[int], start: int, count: int) -> list[tuple[int, int]]:
    """``[start, len(sizes))`` cut into at most ``count`` contiguous, non-empty ranges of about
    equal bytes (an item goes to the range its middle byte falls in)."""
    total = sum(sizes[start:])
    cuts: list[tuple[int, int]] = []
    lo = hi = start
    done = 0
    for k in range(1, count):
        target = total * k / count
        while hi < len(sizes) and done + sizes[hi] / 2 <= target:
            done += sizes[hi]
            hi += 1
        if hi > lo:
            cuts.append((lo, hi))
            lo = hi
    if lo < len(sizes):
        cuts.append((lo, len(sizes)))
    return cuts


def split_map(
    work: Callable[[T], object], items: Sequence[T], sizes: Sequence[int]
) -> Iterator[object]:
    """``work(item)`` for each of ``items``, in order; ``sizes``: each item's size in bytes.

    Items are worked on in this process until the split pays (see the module's constants);
    the rest is cut into one share per worker process, the first worked on here. A share whose
    worker failed gives a :class:`Failed` per item.
    """
    count = workers()
    total = sum(sizes)
    if count < 2 or len(items) < 2 or total < SPLIT_MIN_BYTES:
        for item in items:
            yield work(item)
        return
    warm = min(total * WARM_SHARE, WARM_MAX_BYTES)
    at, done = 0, 0
    while at < len(items) and done < warm:
        yield work(items[at])
        done += sizes[at]
        at += 1
    shares = _shares(sizes, at, count)
    if len(shares) < 2 or threading.active_count() > 1:  # (a fork copies one thread only)
        for item in items[at:]:
            yield work(item)
        return
    sys.stdout.flush()
    sys.stderr.flush()
    children: list[tuple[int, int, tuple[int, int]]] = []  # pid, read end, share
    try:
        for lo, hi in shares[1:]:
            children.append(_fork(work, items[lo:hi], (lo, hi), children))
        lo, hi = shares[0]
        for item in items[lo:hi]:
            yield work(item)
        while children:
            pid, fd, (lo, hi) = children[0]
            results = _collect(pid, fd, hi - lo)
            children.pop(0)
            yield from results
    finally:
        for pid, fd, _ in children:  # stopped early (an error here): no worker is left behind
            _stop(pid, fd)


def _fork(
    work: Callable[[T], object],
    share: Sequence[T],
    where: tuple[int, int],
    others: list[tuple[int, int, tuple[int, int]]],
) -> tuple[int, int, tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: its share, one reply, and out without running exit handlers
        status = 1
        try:
            os.close(read_fd)
            for _, fd, _ in others:
                os.close(fd)
            reply = json.dumps([work(item) for item in share]).encode("ascii")
            with os.fdopen(write_fd, "wb") as out:
                out.write(reply)
            status = 0
        except BaseException:  # noqa: BLE001, S110 - any failure is the exit status below
            pass
        finally:
            os._exit(status)
    os.close(write_fd)
    return pid, read_fd, where


def _collect(pid: int, fd: int, expected: int) -> list[object]:
    """A worker's results; ``Failed`` for each when it did not reply in full and exit 0."""
    chunks: list[bytes] = []
    try:
        with os.fdopen(fd, "rb") as reply:
            while chunk := reply.read(1 << 20):
                chunks.append(chunk)
    finally:
        _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        why = (
            f"scan worker killed by signal {os.WTERMSIG(status)}"
            if os.WIFSIGNALED(status)
            else f"scan worker exited {os.waitstatus_to_exitcode(status)}"
        )
        return [Failed(why)] * expected
    try:
        results = json.loads(b"".join(chunks))
    except ValueError:
        return [Failed("scan worker sent a malformed reply")] * expected
    if not isinstance(results, list) or len(results) != expected:
        return [Failed("scan worker sent a short reply")] * expected
    return results


def _stop(pid: int, fd: int) -> None:
    import signal

    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(fd)
