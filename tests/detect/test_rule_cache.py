"""The rule cache saves the TOML parse and nothing else: whatever state its file is in, the rules
are the shipped rules, and detection finds what it finds without the cache."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

import domestique.detect.rule_cache as rc
from domestique.detect.engine import Scanner
from domestique.detect.ruleset import builtin_rules
from domestique.keys import Fingerprinter

AWS_KEY = "AKIAQ3EGRIYWJ7PLM2XD"
RULES = builtin_rules()


def _scanner_finds_aws_key(rules: tuple[object, ...]) -> bool:
    scanner = Scanner(rules, Fingerprinter(b"k" * 32))  # type: ignore[arg-type]
    return any(f.code == "secret.aws_access_key_id" for f in scanner.scan(f"key = {AWS_KEY}"))


def _no_toml(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make parsing the TOML files fail loudly: a call that still succeeds read the cache."""

    def refuse(text: str, source: str) -> list[object]:
        raise AssertionError(f"{source} parsed although the cache is valid")

    monkeypatch.setattr(rc, "rule_tables", refuse)


def test_first_call_parses_and_writes_a_private_cache(home: Path) -> None:
    """No cache yet: the rules are the TOML files' rules, and a 0600 cache file is written."""
    assert rc.cached_builtin_rules(home) == RULES
    path = rc.cache_path(home)
    assert path.is_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_bytes().startswith(rc.MAGIC)


def test_a_valid_cache_is_read_without_parsing_toml(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Second call: the same rules, with the TOML parser out of the way."""
    rc.cached_builtin_rules(home)
    _no_toml(monkeypatch)
    rules = rc.cached_builtin_rules(home)
    assert rules == RULES
    assert _scanner_finds_aws_key(rules)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="truncated"),
        pytest.param(lambda b: b[:-1] + bytes([b[-1] ^ 1]), id="one-bit-flipped"),
        pytest.param(lambda b: b"\x00" * len(b), id="zeroed"),
        pytest.param(lambda b: b"", id="empty"),
        pytest.param(lambda b: rc.MAGIC, id="header-only"),
        pytest.param(lambda b: b.replace(rc.MAGIC, b"domestique-rulez\n", 1), id="foreign-magic"),
    ],
)
def test_a_damaged_cache_is_ignored_and_rebuilt(home: Path, damage: object) -> None:
    """A damaged file never changes the rules: they are parsed again and the file rewritten."""
    rc.cached_builtin_rules(home)
    path = rc.cache_path(home)
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    rules = rc.cached_builtin_rules(home)
    assert rules == RULES
    assert _scanner_finds_aws_key(rules)
    files = rc.rule_files()
    assert rc.read_cache(path, rc.cache_key(files), rc.mac_key(home)) is not None  # rebuilt


def _tampered_tables() -> rc.Tables:
    """The shipped tables with every keyword removed and every regex made to match nothing."""
    tables = [(name, rc.rule_tables(data.decode(), name)) for name, data in rc.rule_files()]
    for _, ts in tables:
        for t in ts:
            t["keywords"] = ["zzzz-never"]
            t["regex"] = "a^"
    return tables


def test_a_cache_written_without_the_install_key_is_not_read(home: Path) -> None:
    """A cache whose HMAC is not under this install's key (someone emptying the rules without
    the key) is ignored: the shipped rules still detect."""
    files = rc.rule_files()
    path = rc.cache_path(home)
    assert rc.write_cache(path, rc.cache_key(files), b"x" * 32, _tampered_tables())
    rules = rc.cached_builtin_rules(home)
    assert rules == RULES
    assert _scanner_finds_aws_key(rules)


def test_a_cache_for_other_rule_files_is_not_read(home: Path) -> None:
    """A cache written for another version of the rule files (another key) is ignored."""
    other = [(name, data + b"\n# edited\n") for name, data in rc.rule_files()]
    path = rc.cache_path(home)
    assert rc.write_cache(path, rc.cache_key(other), rc.mac_key(home), _tampered_tables())
    assert rc.cached_builtin_rules(home) == RULES


def test_the_key_follows_every_byte_and_name_of_the_rule_files() -> None:
    """Any edit, rename, addition or removal of a rule file gives another key."""
    files = rc.rule_files()
    base = rc.cache_key(files)
    name, data = files[0]
    assert rc.cache_key([(name, data.replace(b"=", b"= ", 1)), *files[1:]]) != base
    assert rc.cache_key([("renamed.toml", data), *files[1:]]) != base
    assert rc.cache_key(files[1:]) != base
    assert rc.cache_key([*files, ("extra.toml", b"version = 1\n")]) != base
    assert rc.cache_key(list(files)) == base


def test_an_edited_rule_file_invalidates_the_cache(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rule file changes after the cache was written: the edited rule is what loads."""
    rc.cached_builtin_rules(home)
    files = rc.rule_files()
    edited = [
        (name, data.replace(b'description = "', b'description = "EDITED ', 1))
        if name == "cloud.toml"
        else (name, data)
        for name, data in files
    ]
    monkeypatch.setattr(rc, "rule_files", lambda: edited)
    rules = rc.cached_builtin_rules(home)
    first_cloud = next(r for r in rules if r.source == "cloud.toml")
    assert first_cloud.description.startswith("EDITED ")
    # and the cache now holds the edited tables, for the edited files' key
    tables = rc.read_cache(rc.cache_path(home), rc.cache_key(edited), rc.mac_key(home))
    assert tables is not None


def test_cached_tables_that_fail_the_rule_checks_are_parsed_again(home: Path) -> None:
    """A cache that is authentic but no longer passes the rule checks (an unknown field, as
    after a change to the checks) is not used: the files are parsed again."""
    files = rc.rule_files()
    tables = [(name, rc.rule_tables(data.decode(), name)) for name, data in files]
    tables[0][1][0]["no_such_field"] = True
    path = rc.cache_path(home)
    assert rc.write_cache(path, rc.cache_key(files), rc.mac_key(home), tables)
    assert rc.cached_builtin_rules(home) == RULES


def test_cache_data_of_the_wrong_shape_is_not_read(home: Path) -> None:
    """Authentic JSON that is not a list of (file, tables) pairs reads as no cache."""
    files = rc.rule_files()
    key, secret = rc.cache_key(files), rc.mac_key(home)
    path = rc.cache_path(home)
    for payload in ({"a": 1}, [["x.toml", "not tables"]], [["x.toml", [1, 2]]], [[1, []]]):
        body = json.dumps(payload).encode()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(rc.MAGIC + key + rc._mac(secret, body) + body)
        assert rc.read_cache(path, key, secret) is None
        assert rc.cached_builtin_rules(home) == RULES


def test_an_unwritable_cache_directory_is_skipped(home: Path) -> None:
    """The cache directory cannot be created (a file is in its place): the rules load, no
    cache is written, nothing raises."""
    (home / "cache").write_text("not a directory")
    rules = rc.cached_builtin_rules(home)
    assert rules == RULES
    assert _scanner_finds_aws_key(rules)
    assert (home / "cache").read_text() == "not a directory"


def test_no_usable_install_key_means_no_cache(home: Path) -> None:
    """A damaged install key: no cache can be authenticated, so none is read or written."""
    (home / "keys").mkdir(mode=0o700)
    (home / "keys" / "fingerprint.key").write_bytes(b"short")
    assert rc.cached_builtin_rules(home) == RULES
    assert not rc.cache_path(home).exists()


def test_a_rule_file_that_does_not_parse_still_raises(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken rule file is an error with or without a cache (never an empty rule set)."""
    rc.cached_builtin_rules(home)
    files = list(rc.rule_files())
    files[0] = (files[0][0], files[0][1] + b"\n[[rules]\n")
    monkeypatch.setattr(rc, "rule_files", lambda: files)
    with pytest.raises(rc.RuleError):
        rc.cached_builtin_rules(home)


@pytest.mark.slow
def test_processes_building_the_cache_at_once_all_get_the_rules(home: Path) -> None:
    """Six interpreters start on an empty cache at the same moment: each gets every shipped
    rule, and the file left behind is one whole, valid cache (no torn write)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from domestique.detect.rule_cache import cached_builtin_rules\n"
        "print(len(cached_builtin_rules(Path(sys.argv[1]))))\n"
    )
    rc.mac_key(home)  # the install key first: the processes then share one
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(home)], stdout=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs == [f"{len(RULES)}\n"] * 6
    files = rc.rule_files()
    assert rc.read_cache(rc.cache_path(home), rc.cache_key(files), rc.mac_key(home)) is not None
    assert [p.name for p in rc.cache_path(home).parent.iterdir()] == [rc.CACHE_NAME]
