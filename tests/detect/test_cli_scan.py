"""``domestique scan`` as a process: output formats and exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

GITHUB = "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"


def run(
    home: Path, *args: str, stdin: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_TOKEN", "_KEY", "_SECRET"))}
    env["DOMESTIQUE_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "domestique", "scan", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or home,
        timeout=60,
        check=False,
    )


def test_human_output_is_masked_with_line_and_column(home: Path, tmp_path: Path) -> None:
    """Findings print as path:line:col: code preview fingerprint; the raw value never appears."""
    f = tmp_path / "cfg.env"
    f.write_text(f"# config\nGITHUB_TOKEN={GITHUB}\n")
    r = run(home, str(f))
    assert r.returncode == 1
    assert f"{f}:2:14: secret.github_token ghp_…m1IL hmac-sha256:" in r.stdout
    assert GITHUB not in r.stdout + r.stderr


def test_json_and_clean_exit_zero(home: Path) -> None:
    """--json prints {"findings": []} and exits 0 when nothing is found."""
    r = run(home, "--json", "-", stdin="nothing to see here\n")
    assert r.returncode == 0
    assert json.loads(r.stdout) == {"findings": []}


def test_json_findings_shape(home: Path) -> None:
    """--json findings carry code, start, end, fingerprint and preview (character offsets)."""
    text = f"é {GITHUB}"
    r = run(home, "--json", "-", stdin=text)
    assert r.returncode == 1
    (f,) = json.loads(r.stdout)["findings"]
    assert set(f) == {"code", "start", "end", "fingerprint", "preview"}
    assert text[f["start"] : f["end"]] == GITHUB


def test_jsonl_batch_and_bad_line_is_exit_two(home: Path) -> None:
    """--jsonl answers one line per input line; a malformed line is reported and exits 2."""
    lines = [
        json.dumps({"id": "a", "text": "clean"}),
        json.dumps({"id": "b", "text": f"t={GITHUB}"}),
        f"not json {GITHUB}",
    ]
    r = run(home, "--jsonl", stdin="\n".join(lines) + "\n")
    assert r.returncode == 2
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert out[0] == {"id": "a", "findings": []}
    assert out[1]["id"] == "b"
    assert out[1]["findings"][0]["code"] == "secret.github_token"
    assert "error" in out[2]
    assert GITHUB not in r.stdout + r.stderr


def test_jsonl_findings_exit_one(home: Path) -> None:
    """--jsonl with findings and no errors exits 1."""
    r = run(home, "--jsonl", stdin=json.dumps({"id": 1, "text": f"{GITHUB}"}) + "\n")
    assert r.returncode == 1


def test_errors_exit_two(home: Path, tmp_path: Path) -> None:
    """A missing file, a bad flag and an invalid policy all exit 2, never 0. (A directory is
    walked now: tests/cli/test_scan_tree.py.)"""
    assert run(home, str(tmp_path / "missing.txt")).returncode == 2
    assert run(home, "--json", "--jsonl", "-").returncode == 2
    bad = tmp_path / "bad.toml"
    bad.write_text("version = 1\n[[rules]]\nid = 'x'\ncodes = ['secret.*']\naction = 'maybe'\n")
    assert run(home, "--policy", str(bad), "-", stdin="clean").returncode == 2


def test_policy_allowing_a_code_drops_those_findings(home: Path, tmp_path: Path) -> None:
    """--policy: findings the policy allows for the firewall are not reported; others are."""
    policy = tmp_path / "allow-email.toml"
    policy.write_text(
        'version = 1\n[[rules]]\nid = "let-emails-through"\ncodes = ["pii.email"]\n'
        'action = "allow"\ncomponents = ["proxy"]\n'
    )
    text = "write to ada.lovelace@analytical-engines.co.uk\n"
    assert run(home, "--json", "-", stdin=text).returncode == 1
    allowed = run(home, "--json", "--policy", str(policy), "-", stdin=text)
    assert allowed.returncode == 0
    assert json.loads(allowed.stdout) == {"findings": []}
    both = run(home, "--json", "--policy", str(policy), "-", stdin=text + f"t={GITHUB}\n")
    assert [f["code"] for f in json.loads(both.stdout)["findings"]] == ["secret.github_token"]


def test_undecodable_bytes_are_scanned_and_printed(home: Path, tmp_path: Path) -> None:
    """Invalid UTF-8 around a secret: still found, output printable, exit 1 (not a crash)."""
    f = tmp_path / "blob.bin"
    f.write_bytes(b"\xff\xfe" + GITHUB.encode() + b"\xff\n")
    r = run(home, str(f))
    assert r.returncode == 1
    assert "secret.github_token" in r.stdout


def test_damaged_records_is_exit_two(home: Path) -> None:
    """A detector that cannot load its data makes the scan an error, not "nothing found"."""
    (home / "records").mkdir()
    (home / "records" / "x.json").write_text("{}")
    r = run(home, "--json", "-", stdin="hello")
    assert r.returncode == 2
    assert json.loads(r.stdout)["findings"][0]["code"] == "engine.detector_error"


def test_identifiers_the_policy_allows_are_reported_only_with_all(home: Path) -> None:
    """The builtin policy lets infra.* identifiers leave: scan exits 0 on an ARN unless --all."""
    text = 'role = "arn:aws:iam::493820175523:role/deploy-prod"\n'
    quiet = run(home, "--json", "-", stdin=text)
    assert quiet.returncode == 0, quiet.stderr
    assert json.loads(quiet.stdout) == {"findings": []}
    every = run(home, "--json", "--all", "-", stdin=text)
    assert every.returncode == 1
    codes = [f["code"] for f in json.loads(every.stdout)["findings"]]
    assert codes
    assert all(c.startswith("infra.") for c in codes)


def test_user_policy_applies_without_flag_and_a_broken_one_exits_two(home: Path) -> None:
    """The user's policy in DOMESTIQUE_HOME filters findings; a typo in it is exit 2, not 0."""
    text = "write to ada.lovelace@analytical-engines.co.uk\n"
    user = home / "policy.toml"
    user.write_text(
        'version = 1\n[[rules]]\nid = "let-emails-through"\ncodes = ["pii.email"]\n'
        'action = "allow"\ncomponents = ["proxy"]\n'
    )
    assert run(home, "--json", "-", stdin=text).returncode == 0
    user.write_text("version = 1\n[[rules]]\nid = 'x'\ncodes = ['pii.*']\naction = 'alow'\n")
    broken = run(home, "--json", "-", stdin=text)
    assert broken.returncode == 2
    assert "policy.toml" in broken.stderr
