"""The audit gate masks with the shipped rules whatever the rule cache holds: a cache emptied of
every keyword by someone without the install key, or garbage, cannot switch the masking off.

Each case runs in its own interpreter (the compiled rules are kept once per process), with the
cache file prepared before it starts.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from _helpers import child_env, github_token
from domestique.detect import rule_cache

TOKEN = github_token("Hd1Jf6Gs3Pa5Lz0Qm7Rt2Xw9Vb4Nc8")
CHILD = """
import dataclasses, sys
from pathlib import Path
from _helpers.records import make_record
from domestique.audit._mask import mask_record
from domestique.records import Ancestor, to_canonical_json
record = make_record()
parent = Ancestor(pid=1, name="sh", cmdline="sh -c 'deploy --token " + sys.argv[2] + "'")
record = dataclasses.replace(
    record, subject=dataclasses.replace(record.subject, ancestry=(parent,))
)
sys.stdout.write(to_canonical_json(mask_record(record, Path(sys.argv[1]))).decode())
"""


def _emptied_rules_under_another_key(home: Path) -> None:
    files = rule_cache.rule_files()
    tables = [(name, rule_cache.rule_tables(data.decode(), name)) for name, data in files]
    for _, ts in tables:
        for t in ts:
            t["keywords"], t["regex"] = ["zzzz-never"], "a^"
    key = rule_cache.cache_key(files)
    assert rule_cache.write_cache(rule_cache.cache_path(home), key, b"\x01" * 32, tables)


def _garbage(home: Path) -> None:
    path = rule_cache.cache_path(home)
    path.parent.mkdir(parents=True)
    path.write_bytes(rule_cache.MAGIC + b"\xff" * 100)


@pytest.mark.slow
@pytest.mark.parametrize(
    "prepare",
    [
        pytest.param(_emptied_rules_under_another_key, id="tampered-without-key"),
        pytest.param(_garbage, id="garbage"),
    ],
)
def test_the_gate_masks_an_ancestor_token_whatever_the_cache_holds(
    tmp_path: Path, prepare: Callable[[Path], None]
) -> None:
    """The token on the parent's command line is stored masked, and the cache file left behind
    is a valid one for this install."""
    home = tmp_path / "home"
    home.mkdir()
    prepare(home)
    env = child_env()
    env["DOMESTIQUE_HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(home), TOKEN],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert TOKEN not in done.stdout
    assert f"{TOKEN[:4]}…{TOKEN[-4:]}" in done.stdout
    files = rule_cache.rule_files()
    secret = rule_cache.mac_key(home)
    path = rule_cache.cache_path(home)
    assert rule_cache.read_cache(path, rule_cache.cache_key(files), secret) is not None
