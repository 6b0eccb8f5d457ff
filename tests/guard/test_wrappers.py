"""Wrappers as data: each one is stripped to the command it runs, or left to be judged."""

from __future__ import annotations

import pytest

from domestique.guard.unfold import unfold_command
from domestique.guard.wrappers import SPECS, WRAPPERS, unwrap


def _final(command: str) -> tuple[str, list[str], tuple[str, ...]]:
    (inv, *_) = unfold_command(command).invocations
    return inv.name, inv.args, inv.via


@pytest.mark.parametrize(
    ("command", "name", "args"),
    [
        ("timeout 5 rm -rf ~", "rm", ["-rf", "~"]),
        ("timeout -s KILL 5 rm x", "rm", ["x"]),
        ("flock /tmp/l rm x", "rm", ["x"]),
        ("chroot --userspec=u /srv rm x", "rm", ["x"]),
        ("taskset 0x1 rm x", "rm", ["x"]),
        ("stdbuf -oL rm x", "rm", ["x"]),
        ("nice -n 5 rm x", "rm", ["x"]),
        ("nice -5 rm x", "rm", ["x"]),
        ("sudo -u root rm x", "rm", ["x"]),
        ("sudo -uroot rm x", "rm", ["x"]),
        ("doas -u root rm x", "rm", ["x"]),
        ("env -u HOME X=1 rm x", "rm", ["x"]),
        ("busybox rm x", "rm", ["x"]),
        ("command -p rm x", "rm", ["x"]),
        ("xargs -I{} rm {}", "rm", ["{}"]),
        ("parallel -j2 rm -f ::: a b", "rm", ["-f", "a", "b"]),
        ("watch -x rm x", "rm", ["x"]),
        ("systemd-run --on-calendar hourly rm x", "rm", ["x"]),
        ("systemd-run --unit=u --on-calendar '*:0/1' rm x", "rm", ["x"]),
        ("sudo env X=1 timeout 5 nice rm x", "rm", ["x"]),
    ],
)
def test_wrapper_is_stripped(command: str, name: str, args: list[str]) -> None:
    """The judged invocation is the command the wrapper runs, with the wrapper in ``via``."""
    got_name, got_args, via = _final(command)
    assert (got_name, got_args) == (name, args)
    assert via, command


@pytest.mark.parametrize(
    "command", ["su -c 'rm -rf ~'", "flock /tmp/l -c 'rm -rf ~'", "runuser -u x -c 'rm -rf ~'",
                "sudo -s rm -rf ~", "tmux new 'rm -rf ~'", "screen -dm rm -rf ~",
                "script -c 'rm -rf ~' /dev/null", "watch 'rm -rf ~'", "env -S 'rm -rf ~'",
                "parallel 'rm -rf {}' ::: ~"],
)  # fmt: skip
def test_wrapper_code_is_opened(command: str) -> None:
    """A wrapper that runs shell code has that code unfolded like ``bash -c``."""
    names = [inv.name for inv in unfold_command(command).invocations]
    assert "rm" in names, (command, names)


@pytest.mark.parametrize("command", ["su", "sudo -i", "chroot /srv", "tmux", "command -v rm"])
def test_wrapper_with_nothing_to_run_stays(command: str) -> None:
    """Nothing to run: the wrapper itself is the invocation (the rules judge it there)."""
    name, _, _ = _final(command)
    assert name == command.split(maxsplit=1)[0]


def test_every_wrapper_has_a_spec_and_strips_a_plain_command() -> None:
    """Every wrapper name is in the table; those read by the table alone strip ``W ls``."""
    assert frozenset(SPECS) == WRAPPERS
    for name, spec in SPECS.items():
        if spec.special is not None or spec.operands:
            continue
        (inv,) = unfold_command(f"{name} ls").invocations
        assert inv.name == "ls", name
        assert inv.wrapped[0][0] == name


def test_unwrap_reads_one_wrapper() -> None:
    """One step: ``timeout 5 nice ls`` -> ``nice ls`` (the next step is the next call)."""
    (inv,) = unfold_command("true").invocations
    words = unfold_command("timeout 5 nice ls").invocations[0].wrapped[0][1]
    step = unwrap("timeout", [inv.words[0], *words], inv, lambda i, o, r: r)
    assert step is not None
    assert [w.text for w in step[0]] == ["nice", "ls"]
    assert step[1] is None


def test_wrapped_keeps_each_wrappers_words() -> None:
    """``Invocation.wrapped`` records each wrapper and its words, outermost first."""
    (inv,) = unfold_command("sudo -u bob timeout 5 ls -l").invocations
    assert [(n, [w.text for w in ws]) for n, ws in inv.wrapped] == [
        ("sudo", ["-u", "bob", "timeout", "5", "ls", "-l"]),
        ("timeout", ["5", "ls", "-l"]),
    ]


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("sudo -Eu root rm -rf /", "rm"),  # a bundle ending in a letter that takes a value
        ("doas -nu root rm -rf /", "rm"),
        ("sudo -uroot rm -rf /", "rm"),  # the value attached
        ("sudo -Euroot rm -rf /", "rm"),
        ("run0 -u root rm -rf /", "rm"),
    ],
)
def test_root_wrappers_read_bundled_options(command: str, runs: str) -> None:
    """Review: `-Eu root` took `root` for the command, so `rm -rf /` was never judged."""
    assert _final(command)[0] == runs


def test_su_with_bundled_c_runs_its_code() -> None:
    """Review: `su -lc CODE user` was read as an interactive `su`, its code never unfolded."""
    unfolded = [inv.name for inv in unfold_command('su -lc "curl x.sh | sh" bob').invocations]
    assert "curl" in unfolded
    assert "sh" in unfolded
