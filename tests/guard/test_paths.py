"""Where a path points: project, temp, home, system roots, devices, variables."""

from __future__ import annotations

import pytest

from domestique.guard.env import GuardEnv
from domestique.guard.paths import (
    CREDENTIAL_FILES,
    PERSISTENCE_FILES,
    Place,
    canonical_for_match,
    classify,
    guard_paths,
    normalize,
)

CWD = "/work/repo"
ENV = GuardEnv(home="/home/u")


@pytest.mark.parametrize(
    ("path", "place"),
    [
        ("/", Place.ROOT),
        ("/*", Place.ROOT),
        ("~", Place.ROOT),
        ("$HOME", Place.ROOT),
        ("${HOME}/", Place.ROOT),
        ("~/*", Place.ROOT),
        ("/etc", Place.ROOT),
        ("/home/alice", Place.ROOT),
        ("/???/", Place.ROOT),
        ("/etc/passwd", Place.SYSTEM),
        ("~/.cache/pip", Place.HOME),
        ("/tmp/x", Place.TEMP),
        ("$TMPDIR/x", Place.TEMP),
        ("$TMPDIR/../etc", Place.ROOT),
        ("/tmp", Place.ROOT),
        ("build", Place.PROJECT),
        ("/work/repo/build", Place.PROJECT),
        (".", Place.PROJECT_ROOT),
        ("*", Place.PROJECT_ROOT),
        ("/work/repo", Place.PROJECT_ROOT),
        ("../other", Place.OUTSIDE),
        ("$DIR/x", Place.VARIABLE),
        ("/dev/sda", Place.DEVICE),
        ("/srv/data/x", Place.SYSTEM),
        ("/data/x", Place.OUTSIDE),
    ],
)
def test_classify(path: str, place: Place) -> None:
    """Each path lands in the place the rm and chmod rules need."""
    assert classify(path, CWD, ENV) is place


def test_normalize_home_and_slashes() -> None:
    """$HOME and ${HOME} become ~; repeated and trailing slashes fold."""
    assert normalize("$HOME//.ssh/") == "~/.ssh"
    assert normalize("${HOME}/x") == "~/x"


def test_credential_files() -> None:
    """Private keys and cloud credentials match; public keys do not."""
    assert CREDENTIAL_FILES.search("~/.ssh/id_rsa")
    assert CREDENTIAL_FILES.search("~/.aws/credentials")
    assert not CREDENTIAL_FILES.search("~/.ssh/id_rsa.pub")
    assert not CREDENTIAL_FILES.search("src/credentials_form.py")


def test_persistence_files_include_folders() -> None:
    """Launch agent folders count, written as a folder or a file inside."""
    assert PERSISTENCE_FILES.search("~/Library/LaunchAgents")
    assert PERSISTENCE_FILES.search("~/.bashrc")
    assert not PERSISTENCE_FILES.search("docs/bashrc-notes.md")


def test_guard_paths_cover_hook_settings_and_home() -> None:
    """Hook settings of the agents and DOMESTIQUE_HOME are protected."""
    pattern = guard_paths("/var/lib/dq")
    env = GuardEnv(home="/home/u")
    assert pattern.search(canonical_for_match("/home/u/.claude/settings.json", None, env))
    assert pattern.search(canonical_for_match(".cursor/hooks.json", CWD, env))
    assert pattern.search("/var/lib/dq/audit.sqlite3")
    assert not pattern.search("/work/repo/.claude/commands/x.md")


def test_places_follow_the_home_and_tmpdir_given() -> None:
    """A place depends on the HOME and TMPDIR the guard is given, never on the process's
    (each answer is cached under the values it was worked out with)."""
    assert classify("/var/folders/zz/T/x.sh", CWD, GuardEnv()) is Place.SYSTEM
    tmp = GuardEnv(tmpdir="/var/folders/zz/T/")
    assert classify("/var/folders/zz/T/x.sh", CWD, tmp) is Place.TEMP
    assert classify("/var/folders/zz/T/x.sh", CWD, GuardEnv()) is Place.SYSTEM
    assert classify(".", "/home/u", GuardEnv(home="/home/u")) is Place.ROOT
    assert classify(".", "/home/u", GuardEnv(home="/home/v")) is Place.PROJECT_ROOT
    # A path that reads neither variable has the same answer whatever they are.
    assert classify("src/app.py", CWD, GuardEnv(home="/home/u")) is Place.PROJECT
    assert classify("src/app.py", CWD, GuardEnv(home="/work")) is Place.PROJECT


def test_the_process_environment_is_read_only_by_from_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GuardEnv.from_process is the guard's one reading of HOME, TMPDIR and DOMESTIQUE_HOME."""
    monkeypatch.setenv("HOME", "/home/z")
    monkeypatch.setenv("TMPDIR", "/t/")
    monkeypatch.setenv("DOMESTIQUE_HOME", "/dq")
    env = GuardEnv.from_process()
    assert (env.home, env.tmpdir, env.domestique_home) == ("/home/z", "/t/", "/dq")
    assert env.read_file is not None
    assert GuardEnv().read_file is None
    assert env.expand_user("~/x.sh") == "/home/z/x.sh"
    assert env.expand_user("~bob/x") == "~bob/x"
    # every change is seen by the next call (the guard keeps a decoded copy per raw value)
    monkeypatch.setenv("HOME", "/home/y")
    monkeypatch.delenv("TMPDIR")
    again = GuardEnv.from_process()
    assert (again.home, again.tmpdir, again.domestique_home) == ("/home/y", "", "/dq")
    monkeypatch.setenv("HOME", "/home/z")
    monkeypatch.setenv("TMPDIR", "/t/")
    assert GuardEnv.from_process() == env


@pytest.mark.parametrize(
    "path",
    ["~/./.ssh/./id_rsa", "/./etc/./shadow", "$HOME/./.aws/credentials", "./.ssh/./id_ed25519"],
)
def test_dot_segments_do_not_hide_a_credential_file(path: str) -> None:
    """``x/./y`` is ``x/y``: a ``.`` segment must not break the credential-file match."""
    assert CREDENTIAL_FILES.search(canonical_for_match(path, "/home/u", GuardEnv(home="/home/u")))
