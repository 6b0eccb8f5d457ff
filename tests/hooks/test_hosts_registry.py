"""The host registry: every host module is found by name and is internally consistent."""

from __future__ import annotations

from pathlib import Path

import pytest

from domestique.hooks import hosts
from domestique.hooks.install import hook_command, settings_of
from domestique.hooks.paths import is_guard_file


@pytest.mark.parametrize("name", hosts.HOSTS)
def test_each_host_module_is_registered_under_its_name(name: str) -> None:
    assert hosts.get(name).name == name


@pytest.mark.parametrize("name", hosts.HOSTS)
def test_each_hosts_own_settings_files_are_protected_from_edits(
    name: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files ``domestique install`` writes for a host are in that host's self-protection
    globs: an edit tool cannot switch the hook off by rewriting them."""
    monkeypatch.delenv("CODEX_HOME", raising=False)
    settings = settings_of(name)
    for path in (settings.user_file(Path("/home/dev")), settings.project_file(Path("/src/app"))):
        files = [path / e for e in settings.script_events] if settings.script_events else [path]
        for file in files:
            assert is_guard_file(str(file), home), file


@pytest.mark.parametrize("name", hosts.HOSTS)
def test_each_host_has_an_entry_and_a_probe_it_stops(name: str) -> None:
    """Every host installs at least one entry (or script) and reads its own deny as a stop."""
    host = hosts.get(name)
    settings = host.settings
    assert settings.entries("domestique hook x") or settings.script_events
    out, _err, code = hosts.render(name, "", "deny", "m")
    assert host.stops(out, code)
    out, _err, code = hosts.render(name, "", "allow", "m")
    assert not host.stops(out, code)
    assert host.probe("git status", "/src/app")


def test_the_fallback_command_is_the_hosts_own() -> None:
    """A host without a fail-closed switch gets its blocking fallback after the command."""
    assert hook_command("codex", portable=True, python=None) == "domestique hook codex || exit 2"
    assert hook_command("claude-code", portable=True, python=None) == "domestique hook claude-code"
