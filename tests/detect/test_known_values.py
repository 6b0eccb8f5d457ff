"""Known values: the developer's own secrets, held as keyed fingerprints, found anywhere."""

from __future__ import annotations

import base64
from pathlib import Path

from domestique.detect import Scanner
from domestique.detect.known_values import (
    KnownValues,
    parse_env_file,
    plausible_secret_value,
    secret_env_values,
)
from domestique.detect.ruleset import builtin_rules
from domestique.detect.sources import dotenv_values
from domestique.keys import Fingerprinter

SECRET = "corr3ct-h0rse-battery"
PASSWORD = "Zq8#wL2!vR"


def test_secret_env_names_are_selected() -> None:
    """*_TOKEN, *_KEY, *_SECRET, *PASSWORD* count; ordinary variables and short values do not."""
    env = {
        "MY_API_TOKEN": SECRET,
        "DB_PASSWORD": PASSWORD,
        "HOME": "/home/ada/projects",
        "EDITOR": "vim-is-my-editor",
        "SSH_AUTH_SOCK": "/tmp/ssh-abc/agent.1",
        "FEATURE_KEY": "on",
        "GIT_AUTHOR_NAME": "Ada Lovelace",
        "TOKENIZERS_PARALLELISM": "false-ish-value",
    }
    assert sorted(secret_env_values(env)) == sorted([SECRET, PASSWORD])


def test_plausible_values() -> None:
    """Booleans, paths, short and one-character values are not tracked."""
    assert plausible_secret_value(SECRET)
    assert not plausible_secret_value("true")
    assert not plausible_secret_value("aaaaaaaaaaaa")
    assert not plausible_secret_value("/usr/local/bin")
    assert not plausible_secret_value("short")


def test_parse_env_file_handles_export_quotes_and_comments() -> None:
    """``export``, quotes and trailing comments are handled like shells and dotenv do."""
    text = "# c\nexport A_TOKEN='x y z'\nB=\"q\" \nC=v # note\n\nbad line\n"
    assert list(parse_env_file(text)) == [("A_TOKEN", "x y z"), ("B", "q"), ("C", "v")]


def test_dotenv_values_from_cwd_and_parents_up_to_the_repo(tmp_path: Path) -> None:
    """.env files of the cwd and its parents (to the repo root) count; NODE_ENV does not."""
    repo = tmp_path / "repo"
    sub = repo / "pkg"
    sub.mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / ".env").write_text(f"API_SECRET={SECRET}\nNODE_ENV=production\n")
    (sub / ".env.local").write_text("OPAQUE=Yw1mXJft5isGXNwAMnEY\n")
    (sub / ".env.example").write_text("API_SECRET=NotReal-Example-Value1\n")
    (tmp_path / ".env").write_text("OUTSIDE_TOKEN=outside-the-repo-1234\n")
    values = dotenv_values(sub)
    assert sorted(values) == sorted([SECRET, "Yw1mXJft5isGXNwAMnEY"])


def _scanner(fp: Fingerprinter, values: list[str]) -> Scanner:
    return Scanner(builtin_rules(), fp, [KnownValues(fp, values)])


def test_known_value_found_in_any_format(fingerprinter: Fingerprinter) -> None:
    """The value is found bare, inside a URL, in JSON, and wrapped in base64."""
    s = _scanner(fingerprinter, [SECRET, PASSWORD])
    for text in (
        f"the token is {SECRET}.",
        f"https://u:{PASSWORD}@host/x",
        f'{{"k": "{SECRET}"}}',
        base64.b64encode(f"k={SECRET}".encode()).decode(),
        f"pw={PASSWORD}",
    ):
        codes = [f.code for f in s.scan(text)]
        assert "secret.known_value" in codes, text


def test_known_value_span_and_fingerprint(fingerprinter: Fingerprinter) -> None:
    """The span is exactly the value; the fingerprint is the keyed HMAC of it."""
    s = _scanner(fingerprinter, [SECRET])
    text = f"x {SECRET} y"
    (f,) = s.scan(text)
    assert (f.code, text[f.start : f.end]) == ("secret.known_value", SECRET)
    assert f.fingerprint == fingerprinter.fingerprint(SECRET)


def test_near_misses_are_not_known_values(fingerprinter: Fingerprinter) -> None:
    """A value differing in one character, or only a part of it, is not reported."""
    s = _scanner(fingerprinter, [SECRET])
    assert s.scan(SECRET[:-1] + "X") == []
    assert s.scan("h0rse") == []


def test_index_holds_no_raw_value(fingerprinter: Fingerprinter) -> None:
    """Nothing reachable from the detector is the value or a piece of it (only hashes, HMACs)."""
    kv = KnownValues(fingerprinter, [SECRET])
    blob = repr(vars(kv) if hasattr(kv, "__dict__") else kv) + repr(kv._index)
    for piece in ("corr3ct", "h0rse", "battery", SECRET):
        assert piece not in blob
