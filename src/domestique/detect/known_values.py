"""Known values: the developer's own secrets, found wherever they appear.

Sources: environment variables whose names look secret (``*_TOKEN``, ``*_KEY``, ``*_SECRET``,
``*PASSWORD*`` ...) and the values in ``.env`` files of the working tree. The index holds no raw
value: for each value it keeps the keyed HMAC of the whole value (the proof), plus the process-
keyed ``hash()`` of one delimiter-free piece of it (the anchor), that piece's offset and the
value's length. Scanning splits the text on the same delimiters, intersects the token hashes
with the anchors in C, and confirms each candidate with the HMAC.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from domestique.detect.entropy import shannon_entropy
from domestique.digest import compare_digest
from domestique.keys import Fingerprinter

CODE = "secret.known_value"
MIN_LENGTH = 8
MIN_ANCHOR = 3
_DELIMITERS = " \t\r\n\f\v\"'`=:,;@/?&#()[]{}<>|\\!*$%^+~."
_SPLIT_TABLE = {ord(c): " " for c in _DELIMITERS}
_SPLIT_BYTES = bytes(32 if chr(i) in _DELIMITERS else i for i in range(256))
_SECRET_NAME = re.compile(
    r"(?i)(?:token|secret|passw|passwd|pwd|api_?key|access_?key|private_?key|credential|"
    r"auth|(?:^|_)key$|(?:^|_)pat$|(?:^|_)dsn$|signing|session_key|cookie)"
)
_NOT_SECRET_NAME = re.compile(
    r"(?i)(?:_sock$|_path$|_file$|_dir$|_url_base|_host$|_port$|_user(?:name)?$|_id$|"
    r"keyboard|keymap|^xauthority$|_keychain$|auth_sock|author|_email$|_name$|tokenizers_|^(?:old)?pwd$)"
)
_PATH_VALUE = re.compile(r"^(?:~|\.{1,2})?/[\w.\-/]*$")  # /usr/local/bin, ~/x, ./a (no spaces)
_ENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.\-]*)\s*[=:]\s*(.*?)\s*$")


def _pieces(value: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    pos = 0
    for tok in value.translate(_SPLIT_TABLE).split(" "):
        if tok:
            out.append((pos, tok))
        pos += len(tok) + 1
    return out


def plausible_secret_value(value: str) -> bool:
    """Long enough, not one repeated character, not a path, number or boolean."""
    if len(value) < MIN_LENGTH or len(set(value)) < 4:
        return False
    if value.lower() in ("true", "false", "none", "null", "production", "development"):
        return False
    if _PATH_VALUE.match(value):
        return False
    return not value.isdigit() or len(value) >= 12


def secret_env_values(env: Mapping[str, str]) -> list[str]:
    """Values of environment variables whose names look like they hold a secret."""
    return [
        v
        for k, v in env.items()
        if _SECRET_NAME.search(k) and not _NOT_SECRET_NAME.search(k) and plausible_secret_value(v)
    ]


def parse_env_file(text: str) -> Iterator[tuple[str, str]]:
    """``NAME=value`` pairs of a .env file (``export``, quotes and ``#`` comments handled)."""
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        m = _ENV_LINE.match(line)
        if not m:
            continue
        name, value = m.group(1), m.group(2)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        yield name, value


def secret_dotenv_values(text: str) -> list[str]:
    """Secret-looking values of one ``.env`` file's text.

    A value counts when its name looks secret or the value itself looks like a credential
    (12+ characters of entropy >= 3); ``NODE_ENV=production`` does not.
    """
    out: list[str] = []
    for name, value in parse_env_file(text):
        if not plausible_secret_value(value):
            continue
        named = bool(_SECRET_NAME.search(name)) and not _NOT_SECRET_NAME.search(name)
        if named or (len(value) >= 12 and shannon_entropy(value) >= 3.0):
            out.append(value)
    return out


def dotenv_files(cwd: Path) -> list[Path]:
    """The ``.env*`` files read for ``cwd``: in it and its parents up to the repository root
    (the first directory holding ``.git``), templates (``.example``/``.sample``/``.template``)
    left out."""
    out: list[Path] = []
    directory = cwd.resolve()
    for _ in range(32):
        try:
            entries = sorted(directory.glob(".env*"))
        except OSError:
            entries = []
        out.extend(
            p
            for p in entries
            if p.is_file() and not p.name.endswith((".example", ".sample", ".template"))
        )
        if (directory / ".git").exists() or directory.parent == directory:
            break
        directory = directory.parent
    return out


def dotenv_values(cwd: Path) -> list[str]:
    """Secret-looking values from ``.env*`` files in ``cwd`` and its parents up to the repo root
    (see :func:`~domestique.detect.known_values.secret_dotenv_values`)."""
    out: list[str] = []
    for path in dotenv_files(cwd):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out += secret_dotenv_values(text)
    return out


class KnownValues:
    """Finds known secret values in text; holds HMACs and hashes of them, never the values."""

    code = CODE
    priority = 100

    def __init__(self, fingerprinter: Fingerprinter, values: Iterable[str]) -> None:
        self._fp = fingerprinter
        self._index: dict[int, list[tuple[int, int, bytes]]] = {}
        self._bytes_keys: dict[int, int] = {}  # hash(anchor as bytes) -> hash(anchor)
        self._non_ascii = False
        count = 0
        for raw in values:
            value = raw.strip()
            if not plausible_secret_value(value):
                continue
            pieces = _pieces(value)
            if not pieces:
                continue
            # Inner pieces are delimited on both sides inside the value itself, so they appear as
            # whole tokens wherever the value does; the outer ones may be glued to the context.
            inner = pieces[1:-1] if len(pieces) > 2 else pieces
            offset, anchor = max(inner, key=lambda p: len(p[1]))
            if len(anchor) < MIN_ANCHOR:
                offset, anchor = max(pieces, key=lambda p: len(p[1]))
            if len(anchor) < MIN_ANCHOR:
                continue  # e.g. "a#b!c@d": no piece long enough to look up (a known escape)
            entry = (offset, len(value), fingerprinter.digest(value))
            bucket = self._index.setdefault(hash(anchor), [])
            if entry not in bucket:
                bucket.append(entry)
                count += 1
            if anchor.isascii():  # ASCII text is tokenised as bytes, whose hash differs
                self._bytes_keys[hash(anchor.encode("ascii"))] = hash(anchor)
            else:
                self._non_ascii = True
        self._keys = frozenset(self._index)
        self._bkeys = frozenset(self._bytes_keys)
        self.size = count

    def find(self, text: str) -> Iterator[tuple[int, int, str]]:
        if not self._keys or not text:
            return
        # ASCII anchors: tokenise the ASCII shadow as bytes ("?" stands for any non-ASCII
        # character and is a delimiter); the slower str path only for non-ASCII anchors.
        shadow = text.encode("ascii", "replace")
        btokens = set(shadow.translate(_SPLIT_BYTES).split())
        tokens = {b.decode("ascii") for b in btokens if hash(b) in self._bkeys}
        if self._non_ascii and not text.isascii():
            tokens |= set(text.translate(_SPLIT_TABLE).split())
        hits = self._keys.intersection(map(hash, tokens))
        if not hits:
            return
        seen: set[tuple[int, int]] = set()
        for tok in tokens:
            h = hash(tok)
            if h not in hits:
                continue
            start = text.find(tok)
            while start >= 0:
                for offset, length, digest in self._index[h]:
                    s = start - offset
                    if s < 0 or s + length > len(text) or (s, s + length) in seen:
                        continue
                    candidate = text[s : s + length]
                    if compare_digest(self._fp.digest(candidate), digest):
                        seen.add((s, s + length))
                        yield s, s + length, candidate
                start = text.find(tok, start + 1)
