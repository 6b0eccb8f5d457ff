"""Validators that confirm a regex match is the thing a rule names, not a look-alike.

Each validator takes the captured value and returns True when the value passes. Validators are
pure and never raise on any input (a malformed value simply fails); the engine still wraps them,
so a bug here surfaces as ``engine.detector_error``, never as "clean".
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import zlib
from collections.abc import Callable
from urllib.parse import unquote_plus

from domestique.detect.entropy import shannon_entropy
from domestique.detect.reserved import (
    example_basic_credential,
    example_iban,
    example_password,
    fictional_phone,
    non_personal_email,
    published_test_card,
)

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_BASE62_INDEX = {c: i for i, c in enumerate(BASE62)}


def base62_encode(number: int, width: int) -> str:
    """``number`` in base 62 (digits, upper, lower), left-padded with ``0`` to ``width``."""
    out = []
    while number:
        number, rem = divmod(number, 62)
        out.append(BASE62[rem])
    return "".join(reversed(out)).rjust(width, "0")


def github_crc32(value: str) -> bool:
    """GitHub's 2021 token format: ``pfx_`` + 30 base62 chars + 6-char base62 CRC32 of those 30.

    Fine-grained tokens (``github_pat_``) carry no published checksum: they pass on shape alone.
    """
    if value.startswith("github_pat_"):
        return True
    _, sep, body = value.partition("_")
    if not sep or len(body) != 36 or any(c not in _BASE62_INDEX for c in body):
        return False
    payload, checksum = body[:30], body[30:]
    return base62_encode(zlib.crc32(payload.encode("ascii")), 6) == checksum


def luhn(value: str) -> bool:
    """The Luhn mod-10 check over the digits of ``value`` (separators ignored); 12-19 digits."""
    digits = [int(c) for c in value if c.isdigit() and c.isascii()]
    if not 12 <= len(digits) <= 19 or len(set(digits)) == 1:
        return False
    total = 0
    for i, digit in enumerate(reversed(digits)):
        d = digit * 2 if i % 2 == 1 else digit
        total += d - 9 if d > 9 else d
    return total % 10 == 0


# ISO 13616 lengths per country (the common ones; an unknown country fails closed to "not IBAN").
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20,
    "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18,
    "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IS": 26, "IT": 27, "JO": 30,
    "KW": 30, "KZ": 20, "LB": 28, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24,
    "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28,
    "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SE": 24, "SI": 19, "SK": 24,
    "SM": 27, "TN": 24, "TR": 26, "UA": 29, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_mod97(value: str) -> bool:
    """ISO 13616 IBAN: known country length and ISO 7064 mod 97-10 remainder of 1."""
    compact = "".join(c for c in value if not c.isspace() and c != "-").upper()
    if len(compact) < 15 or not compact.isascii() or not compact.isalnum():
        return False
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    digits = "".join(str(int(c, 36)) for c in rearranged)
    return int(digits) % 97 == 1


def us_ssn(value: str) -> bool:
    """US SSN ranges: area not 000, 666 or 900-999; group not 00; serial not 0000.

    Also rejects the few numbers the SSA has published as examples (078-05-1120, 219-09-9999)
    and runs of one digit, which are placeholders rather than personal data.
    """
    digits = "".join(c for c in value if c.isdigit() and c.isascii())
    if len(digits) != 9:
        return False
    area, group, serial = int(digits[:3]), int(digits[3:5]), int(digits[5:])
    if area in {0, 666} or area >= 900 or group == 0 or serial == 0:
        return False
    if digits in "01234567890123456789" or digits in ("078051120", "219099999"):
        return False
    return len(set(digits)) > 1


def _b64url_bytes(part: str) -> bytes:
    std = part.replace("-", "+").replace("_", "/")
    return base64.b64decode(std + "=" * (-len(std) % 4), validate=True)


def jwt_structure(value: str) -> bool:
    """A JWS compact token: header and payload are base64url of JSON objects.

    The header must decode to bytes that open a JSON object with a quoted key (``{"``); a header
    that parses as JSON must carry ``alg``. A damaged but JWT-shaped token still counts.
    """
    parts = value.split(".")
    if len(parts) != 3 or not parts[0] or not parts[1]:
        return False
    try:
        header_raw = _b64url_bytes(parts[0])
        payload_raw = _b64url_bytes(parts[1])
    except (ValueError, binascii.Error):
        return False
    if not header_raw.lstrip().startswith(b'{"') or not payload_raw.lstrip().startswith(b"{"):
        return False
    try:
        header = json.loads(header_raw)
    except (ValueError, UnicodeError, RecursionError):
        return True
    return isinstance(header, dict) and "alg" in header and not _never_valid(payload_raw)


# JSON Web Tokens were drafted from 2010 (the JWS drafts; RFC 7519 in 2015): a token whose
# ``exp`` falls before 2010-01-01, or before its own ``iat``, was expired when it was made, so
# it was written by hand for a page ("exp": 123456), never issued by a server to let anyone in.
_JWT_ERA = 1_262_304_000
_SECONDS_CAP = 100_000_000_000  # year 5138 in seconds; a time above it is in milliseconds


def _never_valid(payload_raw: bytes) -> bool:
    """True when the payload's ``exp`` claim is a time no server issued a live token for."""
    try:
        payload = json.loads(payload_raw)
    except (ValueError, UnicodeError, RecursionError):
        return False
    if not isinstance(payload, dict):
        return False
    exp, iat = payload.get("exp"), payload.get("iat")
    if not isinstance(exp, (int, float)) or isinstance(exp, bool):
        return False
    if exp < _JWT_ERA:
        return True
    # an iat written in milliseconds (an issuer's slip) says nothing against an exp in seconds
    return isinstance(iat, (int, float)) and not isinstance(iat, bool) and exp < iat < _SECONDS_CAP


def _jose_header(part: str) -> bool:
    """True when ``part`` is base64url of a JSON object with an ``alg``: a JWT's header."""
    try:
        header = json.loads(_b64url_bytes(part))
    except (ValueError, binascii.Error, UnicodeError, RecursionError):
        return False
    return isinstance(header, dict) and "alg" in header


def not_made_up_jwt(value: str) -> bool:
    """False for a JSON Web Token that was expired when made (see :func:`jwt_structure`), or
    a token's header with a cut payload and no signature (``eyJhbGciOi….eyJzdW``, shortened
    for a page), for the rules that read any token after a keyword (``Authorization: Bearer
    eyJ...``); True for every other value."""
    parts = value.split(".")
    if len(parts) == 2 and parts[0].startswith("eyJ"):
        return not _jose_header(parts[0])  # a header, a cut payload, no signature
    if len(parts) != 3 or not parts[1].startswith("eyJ"):
        return True
    try:
        payload_raw = _b64url_bytes(parts[1])
    except (ValueError, binascii.Error):
        return True
    return not _never_valid(payload_raw)


def basic_auth_b64(value: str) -> bool:
    """An ``Authorization: Basic`` credential: base64 of ``user:password``.

    A password, or a long user part with an empty password (API keys are often sent as the
    user name), counts; ``browser:`` does not. A few undecodable bytes are tolerated.
    """
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (ValueError, binascii.Error):
        return False
    decoded = raw.decode("utf-8", "replace")
    user, sep, password = decoded.partition(":")
    if not sep or not (password or len(user) >= 16) or example_basic_credential(user, password):
        return False
    return sum(c.isprintable() for c in decoded) >= 0.9 * len(decoded)


def aws_key_id(value: str) -> bool:
    """AWS access key ids: 4-letter type prefix then 16 characters of base32 (A-Z, 2-7)."""
    body = value[4:]
    return len(value) == 20 and all(c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567" for c in body)


def not_repetitive(value: str) -> bool:
    """Rejects one repeated character or a short repeated unit (``xxxx``, ``abab``)."""
    n = len(value)
    if n == 0:
        return False
    for unit in range(1, min(4, n // 2) + 1):
        if value == (value[:unit] * (n // unit + 1))[:n]:
            return False
    return True


_FILLER_RUN = re.compile(r"([Xx0*#])\1{7,}")


def no_filler_run(value: str) -> bool:
    """False for a value holding eight or more of one filler character in a row
    (``AKIAXXXXXXXXXXXXXXXX``, ``T00000000``): a format's placeholder, which a random token
    of these alphabets almost never holds (base32: one in 32**7 per position)."""
    return _FILLER_RUN.search(value) is None


def phone_digits(value: str) -> bool:
    """7 to 15 digits (E.164 maximum), not one repeated digit, not a run like 1234567."""
    digits = "".join(c for c in value if c.isdigit() and c.isascii())
    if not 7 <= len(digits) <= 15 or len(set(digits)) <= 2:
        return False
    return digits not in "01234567890123456789"


def card_layout(value: str) -> bool:
    """13-19 digits, written either without separators or in the groups cards are printed in."""
    groups = [g for g in value.replace("-", " ").split(" ") if g]
    digits = "".join(groups)
    if not 13 <= len(digits) <= 19:
        return False
    if len(groups) == 1:
        return True
    seps = {c for c in value if not c.isdigit()}
    if len(seps) != 1:
        return False
    lengths = [len(g) for g in groups]
    return lengths[:3] in ([4, 4, 4], [4, 6, 5], [4, 6, 4]) or lengths == [4, 4, 4, 4, 3]


def mixed_charset(value: str) -> bool:
    """At least two of: lower-case, upper-case, digits, other symbols (``_ . -`` not counted).

    Secrets are random; ``PYTHONCASEOK`` and ``_threading_local._localimpl`` are names.
    """
    classes = 0
    classes += any(c.islower() for c in value)
    classes += any(c.isupper() for c in value)
    classes += any(c.isdigit() for c in value)
    classes += any(not c.isalnum() and c not in "_.-" for c in value)
    return classes >= 2


# Names written in code: snake_case or kebab-case words with at most a short number at the end
# (test_schema_2, attr-name) or after a word (engine1_upgrades), or camelCase / PascalCase
# words (RemoteUserBackend), after leading underscores (_pullDefinitions); and prose:
# lower-case words separated by single spaces (value with quotes and spaces, development key).
_WORD_IDENTIFIER_RE = re.compile(
    r"^_*(?:[a-z]+(?:[_\-.:][a-z]+(?:[A-Z][a-z]+)*)*(?:[_\-.]\d{1,4})?|"
    r"[a-z]*(?:[A-Z]+[a-z]{2,})+[A-Z]{0,3}(?:_(?:[A-Z]+[a-z]{2,})+[A-Z]{0,3})*|"
    # words separated by spaces, of any case, snake_case ones too, with a slash or a dash
    # between them ("template data / text", "Twitter OAuth", "id_token token")
    r"[A-Za-z][a-z]*(?:[A-Z][a-z]+)?(?:_[a-z]+)*"
    r"(?: (?:[/&\-] )?[A-Za-z][a-z]*(?:[A-Z][a-z]+)?(?:_[a-z]+)*)+[.!?]?|"
    # a Django migration's name (0003_tokenproxy, 0002_auto_20160226_1747)
    r"\d{4}_[a-z0-9_]+|"
    # snake_case words with a short number after a word (engine1_upgrades, oauth2_scheme),
    # and at their end a model's code, a letter and a number (simulated_stripe_s700)
    r"[a-z]{2,}\d{0,2}(?:_[a-z]{2,}\d{0,2})+(?:_[a-z]\d{1,4})?)$"
)


def not_word_identifier(value: str) -> bool:
    """False for a value that reads as a name or as prose, not as generated: ``test_schema_2``,
    ``RemoteUserBackend``, ``development key`` (a secret-named field holding it is no secret)."""
    return not _WORD_IDENTIFIER_RE.match(value.strip().strip("\"'`"))


# What stands for a credential rather than being one, in a structure that proves the field is
# a credential (a connection string's Password=, NetworkCredential(user, pass), user:pass@host):
# a variable or template reference, a mask, an environment-variable name, or the field's own
# name written as its value. Anything else there is taken as the credential, words included
# ("secret", "open_sesame", "admin"): the structure, not the value's randomness, says so.
_TEMPLATE_RE = re.compile(
    r"\$\{|\{\{|#\{|%\([A-Za-z_]+\)[sd]|<[A-Za-z_][A-Za-z0-9_ \-]*>|&lt;[A-Za-z_][\w \-]*&gt;|"
    r"(?:^|[^{A-Za-z0-9])\{[A-Za-z_][A-Za-z0-9_.]*(?:![rsa])?(?::[^{}]*)?\}(?:[^}A-Za-z0-9]|$)|"
    r"(?i:your[_\- ]?(?:pass|secret|token|key)|changeme|change[_\-]me|placeholder|redacted|"
    r"example|sample|dummy|fake|(?:^|[^a-z0-9])xxx+$)|"
    # a mask or an ellipsis that opens or closes the value (sk-…, ****abcd); inside the value
    # (``x***Q7``) such runs are ordinary password characters
    r"^[*.\u2022\u2026]{3,}|[*.\u2022\u2026]{3,}$|\u2026"
)
_REFERENCE_RE = re.compile(
    # $NAME, $env:NAME, $obj.Prop, $(cmd), %NAME%, @name: the whole value, not just its start
    # ($up3rS3cr3t!, %Secr3t, @dm1nPass77 are passwords that open with the sigil)
    r"^(?:\$(?:env:)?[A-Za-z_]\w*(?:(?:\.|->|::)[A-Za-z_]\w*|\(\)|\[[^\]]*\])*|\$\([^()]*\)|"
    r"%[A-Za-z_][A-Za-z0-9_]*%|%[-0-9.]*[sdrx]|@[A-Za-z_][A-Za-z_.]*|\{[^{}]*\}|"
    r"(?:os\.(?:environ|getenv)|process\.env|ENV\[|(?:System\.)?getenv\s*\().*|[*xX.\u2022\u2026]+|"
    r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|"
    # a YAML tag that says where the value comes from (Ansible's !vault, !secret, !Ref)
    r"!(?:vault|secret|env_var|env|include|unsafe|encrypted|Ref|Sub|GetAtt|ImportValue|Join|"
    r"Select|FindInMap|Base64|GetAZs|If)\S*)$"
)
_FIELD_WORDS = frozenset(
    {"password", "passwd", "pass", "pwd", "passphrase", "username", "user", "login",
     "none", "null", "nil", "undefined", "empty", "string", "str", "required", "optional",
     "1234", "12345", "123456", "abc123", "foo", "bar", "baz", "qux"}
)  # fmt: skip


_NOT_ALNUM_RE = re.compile(r"[^a-z0-9]+")
_SPELLED_RE = re.compile(r"[ +_\-/]|%2[bB0]")
_SPELLED_WORDS = frozenset({"password", "passwd", "passphrase", "username", "secret"})


def spells_field_name(value: str) -> bool:
    """True when ``value`` is a field word written with separators or URL escapes
    (``pass word``, ``pass+word``, ``pass/word``, ``pass%2Bword``, ``user_name``): documentation
    about the field, not a value of it."""
    if not _SPELLED_RE.search(value):
        return False
    folded = _NOT_ALNUM_RE.sub("", unquote_plus(value).lower())
    return folded in _SPELLED_WORDS


# Text written where a value goes: an article and the field's word ("a secret", "my password",
# "the%20token"), the field's word in syntax notation's brackets ("[password]") or a counting
# run ("123 456", "abcdefghijklmnopqrstuvwxyzABCDEF"); and, for the rules that ask for a
# random-looking value, hexspeak ("deadbeef", "cafebabe": the hex placeholders of examples; a
# random hex value holds one about once in four billion).
_ARTICLE_FIELD_RE = re.compile(
    r"^(?:a|an|the|my|some|your)\s+(?:pass|passwd|password|pwd|passphrase|secret|token|key|"
    r"api\s?key)$"
)
_HEXSPEAK_RE = re.compile(r"deadbeef|cafebabe|feedface|baadf00d|8badf00d|deadc0de")
_COUNTING_RUNS = ("0123456789" * 3, "1234567890" * 3, "abcdefghijklmnopqrstuvwxyz" * 2)


_COUNT_PIECE_RE = re.compile(r"[a-z]{4,}|[0-9]{4,}")


def _counting_pieces(folded: str) -> bool:
    """The alphabet, 20 letters or more of it, and counted digits (``ABCDEFGHIJKLMNOPQRSTUVWXYZ
    1234567890``): nothing else. Shorter runs with hex letters (``1234567890abcdef``) are
    kept: such a value is reported where it stands."""
    pieces = _COUNT_PIECE_RE.findall(folded)
    return (
        len(pieces) >= 2
        and "".join(pieces) == folded
        and all(p in _ALPHABET or p in _DIGIT_RUNS for p in pieces)
        and any(len(p) >= 20 and p in _ALPHABET for p in pieces)
    )


_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
_DIGIT_RUNS = "01234567890123456789"


def placeholder_phrase(value: str) -> bool:
    """True for ``a secret``, ``my%20password``, ``[password]``, ``123 456``, ``abcdefgh…``:
    words or counting written in a value's place (``[password]``: syntax notation's optional
    part, ``redis://[[username]:[password]]@host``)."""
    text = unquote_plus(value).strip().lower()
    if _ARTICLE_FIELD_RE.match(text):
        return True
    bracketed = text.strip("[]")
    if bracketed != text and _NOT_ALNUM_RE.sub("", bracketed) in _FIELD_WORDS:
        return True
    folded = _NOT_ALNUM_RE.sub("", text)
    if len(folded) >= 6 and (
        any(run.startswith(folded) for run in _COUNTING_RUNS) or _counting_pieces(folded)
    ):
        return True
    # Three or more lower-case words that name the field, ending in its word or with a word
    # that stands in for a value: a description, not a value ("really secret password",
    # "a-token-string", "demo_refresh_token_12345"). Two words ("irc_pass", "fancy password")
    # or a phrase ("a secret sauce") may well be the password, unless the first word says it
    # stands in for one ("test-password").
    if _WORD_PHRASE_RE.match(value.strip()):
        words = [w for w in _PHRASE_SPLIT_RE.split(value.strip()) if not w.isdigit()]
        if len(words) == 2 and words[0] in _PHRASE_STAND_IN and words[1] in _PHRASE_FIELD_WORDS:
            return True  # "test-password", "dummy_token": the field named as a stand-in
        if len(words) < 3 or not any(w in _PHRASE_FIELD_WORDS for w in words):
            return False
        return words[-1] in _PHRASE_FIELD_WORDS or any(w in _PHRASE_STAND_IN for w in words)
    return False


_WORD_PHRASE_RE = re.compile(r"^[a-z]+(?:[ _\-](?:[a-z]+|\d+))+$")
_PHRASE_SPLIT_RE = re.compile(r"[ _\-]")
_PHRASE_STAND_IN = frozenset({"demo", "test", "string", "value", "dummy", "here", "goes"})
_PHRASE_FIELD_WORDS = frozenset(
    {"password", "passwd", "pass", "pwd", "passphrase", "secret", "token", "key", "apikey",
     "credential", "credentials"}
)  # fmt: skip


# Words a value written in a secret's place is made of ("mysecret123", "token12345678",
# "x-api-key-value1", "mywebhooksecret1"): the field's own words, possessives and stand-ins.
_FILLER_VOCABULARY = frozenset(
    {"my", "your", "our", "the", "a", "x", "api", "app", "key", "keys", "secret", "secrets",
     "token", "tokens", "password", "pass", "passwd", "pwd", "value", "val", "webhook", "hook",
     "signing", "sign", "client", "access", "auth", "test", "demo", "sample", "dummy", "fake",
     "here", "super", "top", "shared", "private", "bearer", "session", "refresh", "string",
     "placeholder", "default", "new", "some", "dev", "local"}
)  # fmt: skip
_FILLER_FIELD = frozenset({"key", "keys", "secret", "secrets", "token", "tokens", "password",
                           "pass", "passwd", "pwd", "auth"})  # fmt: skip
_LETTER_RUN_RE = re.compile(r"[a-z]+")
_FILLER_REST_RE = re.compile(r"^[a-z0-9_.\-]*$")


def _segments(run: str) -> list[str] | None:
    """``run`` cut into words of ``_FILLER_VOCABULARY`` (fewest pieces), or None."""
    best: list[list[str] | None] = [[]] + [None] * len(run)
    for i in range(1, len(run) + 1):
        for j in range(max(0, i - 11), i):
            prev = best[j]
            if prev is not None and run[j:i] in _FILLER_VOCABULARY:
                cand = [*prev, run[j:i]]
                cur = best[i]
                if cur is None or len(cand) < len(cur):
                    best[i] = cand
    return best[len(run)]


def not_field_words(value: str) -> bool:
    """False for a value made only of the field's words and filler digits (``mysecret123``,
    ``token12345678``, ``x-api-key-value1``): a stand-in written where a generated secret
    goes, in documentation's form data and examples."""
    v = value.strip().strip("\"'`").lower()
    if len(v) > 48 or not _FILLER_REST_RE.match(v):
        return True
    words: list[str] = []
    for run in _LETTER_RUN_RE.findall(v):
        pieces = _segments(run)
        if pieces is None:
            return True
        words.extend(pieces)
    return not any(w in _FILLER_FIELD for w in words)


def holds_a_digit(value: str) -> bool:
    """True when ``value`` has a digit: a token format whose every real value does."""
    return any(c.isdigit() for c in value)


def not_hexspeak(value: str) -> bool:
    """False for a value holding a hexspeak word (``deadbeef12346``, ``0xCAFEBABE``): for rules
    that take any random-looking value (a bearer token, a generic secret), not for structures
    that prove the credential (a URL's or Bundler's user:password)."""
    return not _HEXSPEAK_RE.search(value.lower())


def credential_literal(value: str) -> bool:
    """A literal credential value, not a reference to one (see ``_TEMPLATE_RE`` above), a
    field word (``password``, ``pass word``) or a well-known documentation example (``tiger``,
    ``tiger^5HHH``).

    A trailing ``,`` or ``;`` is the statement's, not the value's (``password=password,``)."""
    # Markup after the value closes its element (``tiger</pre>``): not part of it.
    v = value.split("</", 1)[0].strip().strip("\"'`") or value.strip()
    bare = v.rstrip(",;")
    if not v or bare.lower() in _FIELD_WORDS or spells_field_name(bare):
        return False
    if example_password(bare) or placeholder_phrase(bare):
        return False
    return not (_TEMPLATE_RE.search(v) or _REFERENCE_RE.match(bare))


# A password a person chose: two or more words (Velvet, river, copper) joined by one kind of
# separator, ending in a number of two or more digits and maybe a symbol (Velvet.river227,
# copper-saffron-falcon84, Maple-tractor-77, maple_tractor_77!). Code reads otherwise: an
# attribute path starts at an object (self., config.), an expression or a name has no number
# of two digits at its end, and no word of it is the field's own (form.password12).
_PASSPHRASE_RE = re.compile(
    r"^(?:[A-Z]?[a-z]{2,}|[A-Z]{3,})(?P<sep>[-._])(?:(?:[A-Z]?[a-z]{2,}|[A-Z]{3,})(?P=sep))*"
    r"(?:[A-Z]?[a-z]{2,}|[A-Z]{3,})?\d{2,6}[!#$%&*?@+]?$"
)
_PASSPHRASE_WORD_RE = re.compile(r"[A-Za-z]+")
_CODE_OBJECTS = frozenset(
    {"self", "this", "cls", "args", "kwargs", "request", "req", "params", "options", "opts",
     "config", "conf", "cfg", "settings", "env", "environ", "process", "secrets", "keyring",
     "vault", "props", "state", "ctx", "context", "app", "form", "data", "obj", "user"}
)  # fmt: skip


def passphrase(value: str) -> bool:
    """True for a password made of words and a number (``Velvet.river227``,
    ``copper-saffron-falcon84``): a literal, though its words and separators would read as an
    attribute path or an expression."""
    v = value.strip().rstrip(",;")
    m = _PASSPHRASE_RE.match(v)
    if m is None:
        return False
    words = [w.lower() for w in _PASSPHRASE_WORD_RE.findall(v)]
    if len(words) < 2 or words[0] in _CODE_OBJECTS or _CODE_WORD_RE.search(v):
        return False  # an object's attribute, or a code word's number (hashlib.sha256)
    return not any(w in _FIELD_WORDS or w in _PHRASE_FIELD_WORDS for w in words)


# Code that computes a value, where a literal was expected: self.password, cfg.get("pw"), x[0];
# and a type annotation (password: SecretStr, passwd: Optional[str]).
_CODE_RE = re.compile(
    r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$|^[A-Za-z_$][\w$.]*\s*[(\[]|"
    r"^(?:[A-Z][a-z]+)*(?:Str|String|Bytes|Field|Type|Input|Text|Column|Secret|Password)$|"
    r"^(?:str|bytes|string|text|int|bool)$"
)


# A lower-case name and the comma after it: an argument passed on in a call
# (``password=auth_password,``), not a value in a file of settings.
_PASSED_ON_RE = re.compile(r"^[a-z_][a-z0-9_]*_[a-z0-9_]+,$")


def not_code(value: str) -> bool:
    """False for a dotted name, a call or a subscript, or a snake_case name passed on as an
    argument: code that refers to the value (a password of words and a number,
    ``Velvet.river227``, is none)."""
    v = value.strip()
    return passphrase(value) or not (_CODE_RE.match(v.rstrip(",;")) or _PASSED_ON_RE.match(v))


def aws_secret_shape(value: str) -> bool:
    """40 base64 characters with upper case, lower case and digits (a hex digest or a word run
    is not an AWS secret access key), not one repeated unit."""
    return (
        len(value) == 40
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
        and not_repetitive(value)
    )


def password_like(value: str) -> bool:
    """A word in prose that reads as a password: letters with digits or symbols, not a name
    (``too_short_error``), a path, a URL or a version."""
    v = value.strip()
    if len(v) < 4 or not any(c.isalpha() for c in v) or not not_word_identifier(v):
        return False
    if v.startswith(("/", "~", "http", "www.")) or (v[0].isdigit() and "." in v):
        return False
    return any(c.isdigit() for c in v) or any(not c.isalnum() and c not in "_.-" for c in v)


def not_test_card(value: str) -> bool:
    """False for a card number published for testing, or a synthetic one (4242 4242 ...)."""
    return not published_test_card(value)


def not_fictional_phone(value: str) -> bool:
    """False for a number reserved for fiction (555-0123, 020 7946 0xxx)."""
    return not fictional_phone(value)


def not_example_iban(value: str) -> bool:
    """False for an IBAN printed as an example (DE89 3704 0044 0532 0130 00)."""
    return not example_iban(value)


def personal_email(value: str) -> bool:
    """False for an address at a reserved example domain or a service's no-reply sender."""
    return not non_personal_email(value)


# A feature or model name stamped with its date: lower-case pieces ending in a date, as API
# version and beta flags are written (claude-code-20250219, interleaved-thinking-2025-05-14,
# output-128k-2025-02-19). Generated keys are not stamped with a calendar date.
_DATED_NAME_RE = re.compile(
    r"^[a-z][a-z0-9]{0,15}(?:-[a-z0-9]{1,16})*-(?:19|20)\d\d-?[01]\d-?[0-3]\d$"
)


def not_dated_name(value: str) -> bool:
    """False for a dated feature or model name (``claude-code-20250219``), not a key."""
    return not _DATED_NAME_RE.match(value.strip("\"'`"))


# A PEM private key block, read between its BEGIN and END lines: header lines (Proc-Type:,
# DEK-Info:), line-break escapes, quotes and string joins are dropped; what is left must be
# base64, 32 characters at least (what the rule asks of a body without an END line). A body
# with an ellipsis or prose in it (``MIIEpQ…uyf. -----END``, ``...``) or none is documentation
# of the format, not a key.
_PEM_BLOCK_RE = re.compile(r"-----BEGIN [A-Z0-9 ]*?PRIVATE KEY(?: BLOCK)?-----(.*?)-----END", re.S)
_PEM_ESCAPE_RE = re.compile(r"\\+[nrt]")
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


_PEM_CUT_RE = re.compile(r"PRIVATE KEY(?: BLOCK)?-----(?:\\[nr]|[\s\"',+])*(?:\.\.\.|\u2026)$")
# A key's base64 body of this length uses most of the 64 characters; a body of a few repeated
# ones (s3cr3ts3cr3t…) is a stand-in written for a page.
_PEM_MIN_DISTINCT = 16


def pem_key_body(value: str) -> bool:
    """False for a PEM private key block whose body is not a key's (an ellipsis, prose, a few
    characters repeated, too short), or a BEGIN line followed by an ellipsis only; a block
    without its END line is judged by the rule's other shapes."""
    m = _PEM_BLOCK_RE.search(value)
    if m is None:
        return _PEM_CUT_RE.search(value) is None
    body = _PEM_ESCAPE_RE.sub("\n", m.group(1))
    kept = []
    for raw in body.splitlines():
        line = raw.strip(" \t\"',+;")
        if line and ":" not in line:
            kept.append(line.replace(" ", ""))
    b64 = "".join(kept)
    return (
        len(b64) >= 32 and all(c in _B64_CHARS for c in b64) and len(set(b64)) >= _PEM_MIN_DISTINCT
    )


# Discord snowflakes count milliseconds from the first second of 2015 in their top 42 bits.
_DISCORD_EPOCH_MS = 1_420_070_400_000
_DISCORD_LAST_MS = 4_102_444_800_000  # 2100-01-01: later ids are no real ones


def discord_bot_token(value: str) -> bool:
    """A Discord bot token: its first part is the base64 of the bot's user id, a snowflake of
    17 to 20 decimal digits whose timestamp falls after Discord's epoch; then a 6-character
    part and a 27 or more character HMAC. A random string of the same shape decodes to no id."""
    parts = value.split(".")
    if len(parts) != 3 or len(parts[1]) != 6 or len(parts[2]) < 25:
        return False
    try:
        raw = _b64url_bytes(parts[0])
    except (ValueError, binascii.Error):
        return False
    if not (17 <= len(raw) <= 20 and raw.isdigit() and raw[:1] != b"0"):
        return False
    ms = (int(raw) >> 22) + _DISCORD_EPOCH_MS
    return _DISCORD_EPOCH_MS < ms < _DISCORD_LAST_MS and not_repetitive(parts[2])


VALIDATORS: dict[str, Callable[[str], bool]] = {
    "no_filler_run": no_filler_run,
    "github_crc32": github_crc32,
    "luhn": luhn,
    "iban_mod97": iban_mod97,
    "us_ssn": us_ssn,
    "jwt": jwt_structure,
    "not_made_up_jwt": not_made_up_jwt,
    "basic_auth_b64": basic_auth_b64,
    "not_hexspeak": not_hexspeak,
    "holds_a_digit": holds_a_digit,
    "aws_key_id": aws_key_id,
    "not_repetitive": not_repetitive,
    "phone_digits": phone_digits,
    "card_layout": card_layout,
    "mixed_charset": mixed_charset,
    "credential_literal": credential_literal,
    "not_code": not_code,
    "not_word_identifier": not_word_identifier,
    "aws_secret_shape": aws_secret_shape,
    "password_like": password_like,
    "not_test_card": not_test_card,
    "not_fictional_phone": not_fictional_phone,
    "not_example_iban": not_example_iban,
    "personal_email": personal_email,
    "not_dated_name": not_dated_name,
    "not_field_words": not_field_words,
    "pem_key_body": pem_key_body,
    "discord_bot_token": discord_bot_token,
}


# --- random_token: a value next to a service's name that reads as a generated key -------------
# The named-service rules (rules/named.toml) see a name, then a value; the value alone must show
# it was generated: letters and digits interleaved (two or more switches between them, so words
# and bare numbers fail), enough entropy for its length, no placeholder word or alphabet run, not
# a host name, file name, version, date, hex literal or publishable key (pk., pk_: public by
# design). With only two switches it must also not be a code word (base64encode, sha256_digest).
_TOKEN_PLACEHOLDER_RE = re.compile(
    r"(?i)your[_\-]|example|sample|placeholder|changeme|redacted|xxxx|<|>|\$\{|\{\{|%[sd(]|"
    r"abcdefgh|ijklmnop|qrstuvwx|01234567|12345678|23456789"
)
_TOKEN_NOT_KEY_RE = re.compile(
    r"(?i)^(?:0x|https?|www\.|pk[._\-])|^v?\d+(?:\.\d+)+|^\d{4}-\d{2}-\d{2}|"
    r"^(?:[a-z0-9\-]+\.)+(?:com|net|org|io|dev|app|cloud|co|ai)$|"
    r"\.(?:html?|php|aspx?|jsp|json|xml|ya?ml|toml|txt|md|rst|py|js|ts|go|rb|java|c|h|png|jpe?g|"
    r"gif|svg|css|zip|gz|tar|pdf)$"
)
_CODE_WORD_RE = re.compile(
    r"(?i)base(?:16|32|58|64|85)|sha\d|md[45]|utf-?(?:8|16|32)|u?int(?:8|16|32|64)|float(?:32|64)|"
    r"x509|ipv[46]|http[23]|oauth[12]|pkcs\d|aes\d|rsa\d|v\d+[_.\-]?(?:api|beta|alpha)"
)


_TOKEN_SEPARATORS_RE = re.compile(r"[\-_./+=]+")
_NAME_PIECE_RE = re.compile(r"^[A-Za-z]*[0-9]*$")


def random_token(value: str) -> bool:
    """A generated-looking key: 2+ letter/digit switches, entropy; no placeholder, host, version."""
    v = value.strip("\"'`.,;")
    n = len(v)
    if n < 8 or _TOKEN_PLACEHOLDER_RE.search(v) or _TOKEN_NOT_KEY_RE.search(v):
        return False
    switches = 0
    last = ""
    for c in v:
        kind = "d" if c.isdigit() else "a" if c.isalpha() else ""
        if kind and last and kind != last:
            switches += 1
        last = kind or last
    if switches < 2 or (switches == 2 and _CODE_WORD_RE.search(v)):
        return False
    # Pieces between separators that are each a word with a number at most at its end are a
    # name (sqlalchemy2-stubs, ubuntu-22.04-arm64), not a generated key.
    pieces = _TOKEN_SEPARATORS_RE.split(v)
    if len(pieces) > 1 and all(_NAME_PIECE_RE.match(p) for p in pieces):
        return False
    # A random string of n characters has about log2(n) bits per character at most.
    return shannon_entropy(v) >= min(3.0, math.log2(n) - 1.0) and not_repetitive(v)


VALIDATORS["random_token"] = random_token
