"""What the text around a personal-data value says it is: context filters of the PII rules.

A rule lists them in ``context_filters``; each takes the text and the value's span and returns
True when the context says the value is *not* what the rule names, so it is not reported:

* ``named_otherwise`` (telephone numbers): the digits stand in a column whose header names
  something else (a CSV, TSV or Markdown table with ``order_number``, ``sku``, ``invoice_id``),
  after a label or a word that names an identifier (``tracking_number: …``, ``Order #…``), or
  under a comment that does (``# tracking numbers``). A header or label that names a telephone
  (``phone``, ``mobile``, ``tel``, ``fax``, ``contact``) keeps the finding, and so do digits
  nothing names.
* ``not_run_on`` (telephone numbers): digits that go on after a dot, a dash or a slash.
* ``key_file_placeholder`` (a cloud key file): the file's key id and key are placeholders.
* ``key_comment`` (e-mail addresses): the address is the comment of a public key (an SSH
  ``ssh-ed25519 AAAA… user@host`` line, a PGP armour's ``Comment:`` or a ``gpg`` listing's
  ``uid`` line): it labels a key, it is no record about a person.

Each filter reads at most a bounded stretch around the value (a table's block up to
``_BLOCK_LINES`` lines above), so its cost does not grow with the text, and never raises on
any input (the engine still wraps it: a bug reads as ``engine.detector_error``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

_BLOCK_LINES = 200
_BLOCK_REACH = 32 * 1024

# Words that say a number is a telephone's (also in a few other languages).
_PHONE_WORD_RE = re.compile(
    r"(?i)phone|(?:^|[^a-z])tel(?:[^a-z]|$|ephon)|mobil|cell|fax|contact|whatsapp|sms|msisdn|"
    r"landline|handy|telefon|t[ée]l[ée]phone|portable|m[óo]vil|(?:^|[^a-z])call|dial"
)
# Words that name an identifier other than a telephone's: an order, a parcel, a product, a
# document, a case.
_ID_WORD_RE = re.compile(
    r"(?i)(?:^|[^a-z])(?:orders?|sku|skus|invoices?|inv|tracking|track|shipments?|parcels?|"
    r"packages?|tickets?|case|cases|ref|refs|reference|serial|part|parts|model|items?|"
    r"products?|po|batch|lot|isbn|upc|ean|gtin|transactions?|txn|tx|confirmation|booking|"
    r"reservation|acct|account|policy|claim|claims|member|membership|license|licence|permit|"
    r"receipt|voucher|coupon|barcode|asin|mpn|vin|plate|route|flight|awb|waybill|container|"
    r"shipping|delivery|return|rma|quote|contract|loan|patient|mrn|employee|student|"
    r"record|docket|file|doc|document|job|build|release|version|issue|bug|req|request)"
    r"(?:[^a-z]|$)"
)
_COMMENT_RE = re.compile(r"^[ \t]*(?:#|//|--|;|/\*|\*|<!--|%|rem[ \t])", re.I)
_KEY_LABEL_RE = re.compile(
    r"""([A-Za-z][A-Za-z0-9 _.#/\-]{0,40}?)["'\]]?[ \t]*(?::|=|=>|->)[ \t]*["'(]?[ \t]*$"""
)
# A word just before the number that names what it is: "Order 2073482948", "order #207-…",
# "tracking no. …", "SKU: …".
_PROSE_LABEL_RE = re.compile(
    r"(?i)([A-Za-z][A-Za-z_\-]{1,24})[ \t]*(?:(?:#|no\.?|nr\.?|number|num|id|code)[ \t]*)?"
    r"[:#]?[ \t]*$"
)
_HEADER_CELL_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9 _.#/()\-]*$")
_TABLE_RULE_RE = re.compile(r"^[ \t|:\-+=]*$")
_DELIMITERS = ("\t", "|", ",", ";")


def _line_bounds(text: str, s: int, e: int) -> tuple[int, int]:
    a = text.rfind("\n", 0, s) + 1
    b = text.find("\n", e)
    return a, len(text) if b < 0 else b


def _says_not_phone(label: str) -> bool | None:
    """True when ``label`` names an identifier and no telephone, False when it names a
    telephone, None when it says neither."""
    if _PHONE_WORD_RE.search(label):
        return False
    if _ID_WORD_RE.search(label):
        return True
    return None


def _block_header(text: str, a: int) -> str | None:
    """The first line of the block of non-blank lines that holds the line starting at ``a``
    (None when that line is the first), read at most ``_BLOCK_LINES`` lines up."""
    floor = max(0, a - _BLOCK_REACH)
    top = a
    for _ in range(_BLOCK_LINES):
        if top <= floor or top == 0:
            break
        prev_start = text.rfind("\n", 0, top - 1) + 1
        line = text[prev_start : top - 1]
        if not line.strip() or _COMMENT_RE.match(line):
            break
        top = prev_start
    if top == a:
        return None
    end = text.find("\n", top)
    return text[top : end if end >= 0 else len(text)]


def _column_header(text: str, a: int, b: int, s: int) -> str | None:
    """The header cell above the value at ``s`` in a delimited table (CSV, TSV, Markdown), or
    None when the value is not in one (or the top line is data, not names)."""
    line = text[a:b]
    header = _block_header(text, a)
    if header is None:
        return None
    for d in _DELIMITERS:
        if d not in line or line.count(d) != header.count(d):
            continue
        column = line.count(d, 0, s - a)
        cells = header.split(d)
        if column >= len(cells):
            return None
        cell = cells[column].strip().strip("\"'`").strip()
        if _HEADER_CELL_RE.match(cell) and not _TABLE_RULE_RE.match(header):
            return cell
        return None
    return None


def named_otherwise(text: str, s: int, e: int) -> bool:
    """True when a table's header, a label or a comment names the number at ``text[s:e]`` as
    something other than a telephone (see the module's docstring)."""
    a, b = _line_bounds(text, s, e)
    cell = _column_header(text, a, b, s)
    if cell is not None:
        return not _PHONE_WORD_RE.search(cell)
    before = text[max(a, s - 64) : s]
    for label_re in (_KEY_LABEL_RE, _PROSE_LABEL_RE):
        m = label_re.search(before)
        if m is not None:
            verdict = _says_not_phone(m.group(1))
            if verdict is not None:
                return verdict
    if _PHONE_WORD_RE.search(before):
        return False
    if a > 0:  # a comment just above that names what the lines under it hold
        pa = text.rfind("\n", 0, a - 1) + 1
        above = text[pa : a - 1]
        if _COMMENT_RE.match(above):
            return bool(_says_not_phone(above))
    return False


_SSH_KEY_RE = re.compile(
    r"(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-nistp\d+|sk-(?:ssh-ed25519|ecdsa-sha2-nistp\d+)"
    r"@openssh\.com)[ \t]+AAAA[0-9A-Za-z+/]{16,}={0,3}[ \t]"
)
_PGP_COMMENT_RE = re.compile(r"^[ \t]*(?:Comment|uid)(?::|[ \t])", re.I)
_PGP_NEAR_RE = re.compile(r"BEGIN PGP PUBLIC KEY BLOCK|^[ \t]*pub[ \t]+\S", re.M)


def key_comment(text: str, s: int, e: int) -> bool:
    """True when the address at ``text[s:e]`` is a public key's comment: after the key blob on
    an SSH public key line, or on a PGP armour's ``Comment:`` line or a ``gpg`` listing's
    ``uid`` line close under the key."""
    a, b = _line_bounds(text, s, e)
    line = text[a:b]
    if _SSH_KEY_RE.search(line, 0, s - a):
        return True
    if _PGP_COMMENT_RE.match(line):
        return bool(_PGP_NEAR_RE.search(text, max(0, a - 600), a))
    return False


def not_run_on(text: str, s: int, e: int) -> bool:
    """True when the number at ``text[s:e]`` goes on after it: a dot, a dash or a slash and
    then a letter or a digit (``415-863-0132-77``, ``1.415.863.0132.5``): part of a longer
    identifier. (The rule's regex ends at a word boundary without reading the character after
    it, so that two numbers one delimiter apart, a CSV row's, are both read.)"""
    return e + 1 < len(text) and text[e] in ".-/" and text[e + 1].isalnum()


_KEY_FILE_REACH = 4000
_KEY_ID_RE = re.compile(r'\\?"private_key_id\\?"\s*:\s*\\?"([^"\\]*)')
_KEY_BODY_RE = re.compile(r'\\?"private_key\\?"\s*:\s*\\?"((?:[^"\\]|\\+[^"])*)')
_HEX40_RE = re.compile(r"^[0-9a-f]{40}$")


def key_file_placeholder(text: str, s: int, e: int) -> bool:
    """True when the service-account key file around ``text[s:e]`` holds no key: its
    ``private_key_id`` and ``private_key`` are both there as placeholders (``"<key-id>"``, a
    PEM block of ``...``). A file showing neither field (a bare ``"type": "service_account"``)
    is judged by the rule alone."""
    # imported here: validators imports reserved, and this module is imported by ruleset
    from domestique.detect.validators import pem_key_body

    region = text[max(0, s - _KEY_FILE_REACH) : e + _KEY_FILE_REACH]
    key_id = _KEY_ID_RE.search(region)
    body = _KEY_BODY_RE.search(region)
    if key_id is None and body is None:
        return False
    if key_id is not None and _HEX40_RE.match(key_id.group(1)):
        return False
    key = body.group(1) if body is not None else ""
    return not ("PRIVATE KEY" in key and pem_key_body(key))


CONTEXT_FILTERS: dict[str, Callable[[str, int, int], bool]] = {
    "named_otherwise": named_otherwise,
    "key_comment": key_comment,
    "not_run_on": not_run_on,
    "key_file_placeholder": key_file_placeholder,
}
