"""Values that are ciphertext, not secrets: whoever reads them learns nothing without a key
kept elsewhere, and such files are committed by design.

* a value that opens with an encryption tool's envelope: sops (``ENC[AES256_GCM,data:…]``),
  ansible-vault (``$ANSIBLE_VAULT;1.1;AES256``), an OpenPGP message, an age file;
* a value inside the ``encryptedData`` map of a Bitnami SealedSecret (YAML or JSON), which
  only the cluster's controller can decrypt.
"""

from __future__ import annotations

ENVELOPES = (
    "ENC[AES256_GCM,",
    "ENC[PGP,",
    "$ANSIBLE_VAULT;",
    "-----BEGIN PGP MESSAGE-----",
    "-----BEGIN AGE ENCRYPTED FILE-----",
)
_KEY = "encryptedData"
# How far back the map's key is looked for: a SealedSecret's ciphertexts are long (~700
# characters each), a dozen of them fit.
REACH = 16 * 1024


def encrypted_value(value: str) -> bool:
    """True when ``value`` opens with an encryption tool's envelope."""
    return value.lstrip("\"'").startswith(ENVELOPES)


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def _indent(text: str, start: int) -> int:
    n = len(text)
    j = start
    while j < n and text[j] in " \t":
        j += 1
    return j - start


def under_encrypted_data(text: str, s: int) -> bool:
    """True when the value at ``s`` is one of the entries of an ``encryptedData`` map: in YAML,
    the key's line is the nearest line above indented less than every line between (the map
    holds the value); in JSON, the map's ``{`` is not closed before the value."""
    k = text.rfind(_KEY, max(0, s - REACH), s)
    if k < 0:
        return False
    after = k + len(_KEY)
    rest = text[after : after + 8].lstrip("\"' \t")
    if not rest.startswith(":"):
        return False
    brace = text.find("{", after, s)
    if brace >= 0 and text[after:brace].strip("\"' \t:") == "":
        return "}" not in text[brace:s]  # JSON: still inside the map
    key_line = _line_start(text, k)
    if text[key_line:k].strip(" \t\"'") != "":
        return False  # not a YAML key at the start of its line
    base = _indent(text, key_line)
    line = text.find("\n", k, s)
    if line < 0:
        return False  # the value is on the key's own line: not an entry of the map
    while line >= 0 and line < s:
        start = line + 1
        nxt = text.find("\n", start)
        end = nxt if nxt >= 0 else len(text)
        if text[start:end].strip() and _indent(text, start) <= base:
            return False  # the map ended before the value
        line = nxt
    return True
