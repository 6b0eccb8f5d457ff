"""``domestique scan DIR`` and ``scan --staged``: the detector before the commit."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers import github_token
from domestique.cli._tree import Skipped, _compile, _ignored, files_in, walk

DOMESTIQUE = str(Path(sys.executable).with_name("domestique"))
REPO_ROOT = Path(__file__).resolve().parents[2]


TOKEN = github_token("Zq8Lm3Rt7Xw2Vb9Nc4Hd6Jf1Gs5Pa0")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def scan(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DOMESTIQUE, "scan", *args],
        capture_output=True,
        text=True,
        env={**env, **GIT_ENV},
        cwd=cwd,
        timeout=120,
        check=False,
    )


def git(args: list[str], cwd: Path, env: dict[str, str]) -> None:
    subprocess.run(
        ["git", *args], cwd=cwd, env={**env, **GIT_ENV}, check=True, timeout=60, capture_output=True
    )


def _tree(top: Path) -> None:
    (top / "src").mkdir(parents=True)
    (top / "build").mkdir()
    (top / "src" / "settings.py").write_text(f"DEBUG = True\nTOKEN = '{TOKEN}'\n")
    (top / "src" / "clean.py").write_text("print('hello')\n")
    (top / "build" / "bundle.js").write_text(f"var t = '{TOKEN}';\n")
    (top / "debug.log").write_text(f"{TOKEN}\n")
    (top / "image.bin").write_bytes(b"\x89PNG\0\0" + TOKEN.encode())
    (top / ".gitignore").write_text("build/\n*.log\n")


def test_directory_outside_git_honours_gitignore_and_skips_binaries(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A walk: ignored files and folders are not read, a binary is skipped and counted, the
    finding names file, line and column; JSON keeps the Finding fields and adds the place."""
    top = tmp_path / "tree"
    _tree(top)
    done = scan(["tree"], env, tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        line for line in done.stdout.splitlines() if line.startswith("tree/src/settings.py:2:10: ")
    ]
    assert len(done.stdout.splitlines()) == 1
    assert TOKEN not in done.stdout + done.stderr
    assert "skipped 1 binary" in done.stderr
    data = json.loads(scan(["--json", "tree"], env, tmp_path).stdout)
    (finding,) = data["findings"]
    assert {"code", "start", "end", "fingerprint", "preview"} <= finding.keys()
    assert (finding["path"], finding["line"], finding["column"]) == ("tree/src/settings.py", 2, 10)
    assert data["files_scanned"] == 3  # settings.py, clean.py, .gitignore
    assert data["skipped"]["binary"] == ["tree/image.bin"]


def test_clean_directory_exits_zero_and_jsonl_with_directory_is_an_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text("nothing here\n")
    assert scan(["d"], env, tmp_path).returncode == 0
    assert scan(["--jsonl", "d"], env, tmp_path).returncode == 2


def test_directory_in_a_git_repository_uses_git_ls_files(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Inside a work tree: tracked and untracked-not-ignored files (git's own rules, including
    .git/info/exclude)."""
    top = tmp_path / "repo"
    _tree(top)
    git(["init", "-q"], top, env)
    (top / ".git" / "info" / "exclude").write_text("src/settings.py\n")
    (top / "src" / "other.py").write_text(f"key = '{TOKEN}'\n")
    done = scan(["."], env, top)
    assert done.returncode == 1
    assert [line.split(":")[0] for line in done.stdout.splitlines()] == ["src/other.py"]
    assert sorted(p.name for p in files_in(top)) == [
        ".gitignore",
        "clean.py",
        "image.bin",
        "other.py",
    ]


def test_staged_scans_the_index_not_the_working_tree(env: dict[str, str], tmp_path: Path) -> None:
    """--staged reads the staged version: a secret staged then removed from the working tree is
    still found; one only in the working tree is not."""
    top = tmp_path / "repo"
    top.mkdir()
    git(["init", "-q"], top, env)
    (top / "a.py").write_text(f"x = '{TOKEN}'\n")
    git(["add", "a.py"], top, env)
    (top / "a.py").write_text("x = 'clean'\n")
    (top / "b.py").write_text(f"y = '{TOKEN}'\n")  # not staged
    done = scan(["--staged"], env, top)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("a.py:1:6: secret.github_token ")
    assert "b.py" not in done.stdout
    git(["add", "a.py"], top, env)  # now the clean version is staged
    assert scan(["--staged"], env, top).returncode == 0
    assert scan(["--staged", "a.py"], env, top).returncode == 2


def test_staged_outside_a_repository_is_an_error(env: dict[str, str], tmp_path: Path) -> None:
    done = scan(["--staged"], env, tmp_path)
    assert done.returncode == 2
    assert "not inside a git repository" in done.stderr


def test_pre_commit_hook_stops_a_commit_with_a_secret(env: dict[str, str], tmp_path: Path) -> None:
    """A real git commit with the hook installed: a staged secret stops it, a clean one passes."""
    top = tmp_path / "repo"
    top.mkdir()
    git(["init", "-q"], top, env)
    hook = top / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nexec {DOMESTIQUE} scan --staged\n")
    hook.chmod(0o755)
    (top / "a.py").write_text(f"x = '{TOKEN}'\n")
    git(["add", "a.py"], top, env)
    blocked = subprocess.run(
        ["git", "commit", "-qm", "add"],
        cwd=top,
        env={**env, **GIT_ENV},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert blocked.returncode != 0
    assert "a.py:1:6: secret.github_token" in blocked.stdout + blocked.stderr
    (top / "a.py").write_text("x = 'clean'\n")
    git(["add", "a.py"], top, env)
    git(["commit", "-qm", "add"], top, env)


def test_pre_commit_hooks_manifest() -> None:
    """The repository ships a pre-commit framework entry running ``scan --staged``."""
    import yaml

    hooks = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = hooks
    assert hook["id"] == "domestique-scan"
    assert hook["entry"] == "domestique scan --staged"
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is False


@pytest.mark.parametrize(
    ("patterns", "path", "is_dir", "ignored"),
    [
        (["*.log"], "a/b/debug.log", False, True),
        (["build/"], "build", True, True),
        (["build/"], "build", False, False),
        (["/top.txt"], "top.txt", False, True),
        (["/top.txt"], "sub/top.txt", False, False),
        (["docs/*.md"], "docs/a.md", False, True),
        (["docs/*.md"], "docs/x/a.md", False, False),
        (["**/gen/*.py"], "a/b/gen/x.py", False, True),
        (["*.log", "!keep.log"], "keep.log", False, False),
        (["secret[0-9].txt"], "secret7.txt", False, True),
        (["secret[!0-9].txt"], "secret7.txt", False, False),
        (["# comment", ""], "# comment", False, False),
    ],
)
def test_gitignore_fallback_rules(
    patterns: list[str], path: str, is_dir: bool, ignored: bool
) -> None:
    compiled = [p for line in patterns if (p := _compile(line)) is not None]
    assert _ignored(path, is_dir, [("", compiled)]) is ignored


def test_nested_gitignore_applies_below_its_folder(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / ".gitignore").write_text("*.txt\n")
    (tmp_path / "a" / "x.txt").write_text("x")
    (tmp_path / "b" / "x.txt").write_text("x")
    (tmp_path / "a" / "link.txt").symlink_to(tmp_path / "b" / "x.txt")
    (tmp_path / "link").symlink_to(tmp_path / "b")
    names = sorted(p.relative_to(tmp_path).as_posix() for p in walk(tmp_path))
    assert names == ["a/.gitignore", "b/x.txt"]
    assert Skipped().binary == []


def test_git_is_asked_only_where_a_dot_git_entry_can_be_found(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Outside any work tree (no ``.git`` here or above, no GIT_DIR) the walk starts without
    starting git; inside one, git is still asked (its list, not the walk, is what is read)."""
    real = shutil.which("git")
    assert real is not None
    shims = tmp_path / "shims"
    shims.mkdir()
    log = tmp_path / "git-calls"
    shim = shims / "git"
    shim.write_text(f'#!/bin/sh\necho "$@" >> {shlex.quote(str(log))}\nexec {real} "$@"\n')
    shim.chmod(0o755)
    shimmed = {**env, "PATH": f"{shims}{os.pathsep}{env.get('PATH', '')}"}
    outside = tmp_path / "tree"
    _tree(outside)
    done = scan(["tree"], shimmed, tmp_path)
    assert done.returncode == 1, done.stderr
    assert not log.exists()
    inside = tmp_path / "repo"
    inside.mkdir()
    git(["init", "-q"], inside, env)
    (inside / "nested").mkdir()
    (inside / "nested" / "a.py").write_text(f"x = '{TOKEN}'\n")
    (inside / "ignored.log").write_text(f"{TOKEN}\n")
    (inside / ".gitignore").write_text("*.log\n")
    done = scan(["nested"], shimmed, inside / "nested" / "..")
    assert done.returncode == 1, done.stderr
    assert "ls-files" in log.read_text()
