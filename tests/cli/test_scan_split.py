"""``scan DIR`` and ``scan --jsonl`` shared with forked workers: same output, fail closed."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers import github_token
from domestique.cli import _split
from domestique.cli._split import Failed, _shares, split_map

DOMESTIQUE = str(Path(sys.executable).with_name("domestique"))
TOKEN = github_token("Zq8Lm3Rt7Xw2Vb9Nc4Hd6Jf1Gs5Pa0")
FILLER = "def handler(request):\n    return render(request, 'page.html', {'n': 1})\n" * 900


@pytest.fixture
def split_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split from a few bytes on, with three processes."""
    monkeypatch.setattr(_split, "SPLIT_MIN_BYTES", 10)
    monkeypatch.setattr(_split, "WARM_MAX_BYTES", 3)
    monkeypatch.setenv(_split.WORKERS_ENV, "3")


def test_shares_cover_the_rest_in_order_about_evenly() -> None:
    sizes = [5, 1, 1, 1, 1, 1, 1, 1, 1, 9, 2, 2]
    for start in range(len(sizes)):
        for count in range(1, 5):
            cuts = _shares(sizes, start, count)
            assert cuts[0][0] == start
            assert cuts[-1][1] == len(sizes)
            assert all(a[1] == b[0] for a, b in itertools.pairwise(cuts))
            assert all(lo < hi for lo, hi in cuts)
            assert len(cuts) <= count
    assert _shares([10] * 8, 0, 2) == [(0, 4), (4, 8)]
    assert _shares([10] * 9, 0, 3) == [(0, 3), (3, 6), (6, 9)]


def _tagged(item: int) -> list[int]:
    return [item * item, os.getpid()]


def test_results_come_in_order_from_this_process_and_workers(split_small: None) -> None:
    items = list(range(40))
    out = list(split_map(_tagged, items, [1] * len(items)))
    assert [r[0] for r in out] == [i * i for i in items]  # type: ignore[index]
    pids = list(dict.fromkeys(r[1] for r in out))  # type: ignore[index]
    assert pids[0] == os.getpid()
    assert len(pids) == 3


def test_no_split_when_asked_for_one_process_or_small_input(
    split_small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(_split.WORKERS_ENV, "1")
    assert {r[1] for r in split_map(_tagged, range(20), [1] * 20)} == {os.getpid()}  # type: ignore[index]
    monkeypatch.setenv(_split.WORKERS_ENV, "2")
    monkeypatch.setattr(_split, "SPLIT_MIN_BYTES", 1000)
    assert {r[1] for r in split_map(_tagged, range(20), [1] * 20)} == {os.getpid()}  # type: ignore[index]


PARENT = os.getpid()


def _dies_in_worker(item: int) -> int:
    if os.getpid() != PARENT and item >= 30:
        os._exit(3)  # a worker that crashes on its share's items
    return item


def _killed_in_worker(item: int) -> int:
    if os.getpid() != PARENT and item == 35:
        os.kill(os.getpid(), signal.SIGKILL)
    return item


def _raises_in_worker(item: int) -> int:
    if os.getpid() != PARENT and item == 22:
        raise RuntimeError("boom")
    return item


@pytest.mark.parametrize(
    ("work", "why"),
    [
        (_dies_in_worker, "exited 3"),
        (_killed_in_worker, f"signal {int(signal.SIGKILL)}"),
        (_raises_in_worker, "exited 1"),
    ],
)
def test_a_failed_worker_gives_failed_for_each_of_its_items(
    split_small: None, work: object, why: str
) -> None:
    items = list(range(40))
    out = list(split_map(work, items, [1] * len(items)))  # type: ignore[arg-type]
    assert len(out) == len(items)
    failed = [i for i, r in zip(items, out, strict=True) if isinstance(r, Failed)]
    assert failed, "the failing worker's items must not pass as results"
    assert all(why in r.why for r in out if isinstance(r, Failed))
    # The other items carry their own results; the failed ones are one contiguous share.
    assert [r for r in out if not isinstance(r, Failed)] == [i for i in items if i not in failed]
    assert failed == list(range(failed[0], failed[-1] + 1))


def _big_tree(top: Path) -> None:
    """~1.6 MB of files, secrets in some, a binary among them."""
    top.mkdir()
    for i in range(24):
        body = FILLER
        if i % 5 == 1:
            body += f"TOKEN = '{TOKEN}'\npassword = 'Wq8#zL2!pR7vK9m'\n"
        (top / f"mod{i:02d}.py").write_text(body)
    (top / "blob.bin").write_bytes(b"\0\1\2" + TOKEN.encode())


def _run(args: list[str], env: dict[str, str], cwd: Path, stdin: str = "") -> tuple[object, ...]:
    done = subprocess.run(
        [DOMESTIQUE, "scan", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def test_directory_and_jsonl_give_the_same_output_with_workers(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The commands' stdout, stderr and exit code with 2 and 3 processes are those of one."""
    _big_tree(tmp_path / "tree")
    lines = [json.dumps({"id": i, "text": FILLER + (TOKEN if i % 3 else "")}) for i in range(16)]
    lines.insert(7, "{not json")
    stream = "\n".join(lines) + "\n"
    runs = [
        (["--json", "tree"], ""),
        (["tree"], ""),
        (["--jsonl"], stream),
    ]
    for args, stdin in runs:
        single = _run(args, {**env, _split.WORKERS_ENV: "1"}, tmp_path, stdin)
        assert single[0] == (2 if "--jsonl" in args else 1)  # the bad line: an error
        assert TOKEN not in str(single)
        for n in ("2", "3"):
            assert _run(args, {**env, _split.WORKERS_ENV: n}, tmp_path, stdin) == single, args


CRASHING_SCAN = """
import os, sys
from domestique.detect.engine import Scanner
parent = os.getpid()
scan = Scanner.scan
def crash(self, text):
    if os.getpid() != parent:
        os.kill(os.getpid(), 9)
    return scan(self, text)
Scanner.scan = crash
from domestique.cli import main
sys.exit(main(["scan", *sys.argv[1:]]))
"""


def test_a_crashed_worker_is_an_error_exit_never_a_skip(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A worker killed mid-scan: its files and lines are reported as not scanned, exit 2."""
    top = tmp_path / "tree"
    top.mkdir()
    for i in range(12):
        (top / f"mod{i:02d}.py").write_text(FILLER + (f"T = '{TOKEN}'\n" if i == 11 else ""))
    lines = [json.dumps({"id": f"x{i}", "text": FILLER}) for i in range(12)]
    child_env = {**env, _split.WORKERS_ENV: "2"}
    cmd = [sys.executable, "-c", CRASHING_SCAN]
    done = subprocess.run(
        [*cmd, "--json", "tree"], capture_output=True, text=True, env=child_env, cwd=tmp_path,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    report = json.loads(done.stdout)
    assert report["errors"]
    assert all("not scanned (scan worker killed" in e for e in report["errors"])
    assert report["files_scanned"] + len(report["errors"]) == 12
    assert "tree/mod11.py: not scanned" in " ".join(report["errors"])  # the file with the token
    done = subprocess.run(
        [*cmd, "--jsonl"], input="\n".join(lines) + "\n", capture_output=True, text=True,
        env=child_env, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o["id"] for o in out] == [f"x{i}" for i in range(12)]
    assert any("not scanned: scan worker killed" in o.get("error", "") for o in out)
    assert all(("findings" in o) != ("error" in o) for o in out)


def test_workers_one_by_default_auto_one_per_idle_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_split.WORKERS_ENV, raising=False)
    assert _split.workers() == 1
    monkeypatch.setenv(_split.WORKERS_ENV, "auto")
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3})
    for load, expected in ((0.2, 4), (1.0, 4), (1.5, 3), (3.2, 1), (9.0, 1)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, 0.0, 0.0))
        assert _split.workers() == expected, load
    monkeypatch.setenv(_split.WORKERS_ENV, "2")
    assert _split.workers() == 2  # set: whatever the load
    monkeypatch.setenv(_split.WORKERS_ENV, "many")
    assert _split.workers() == 1
