"""The scanner: keyword prefilter, RE2 confirmation in windows, validators, merging.

One keyword pass finds every (overlapping) occurrence of every rule keyword in the lower-cased
text: RE2's DFA over the alternation of all keywords, each match standing for the occurrences
that start inside it (several times faster than walking pyahocorasick's automaton over
megabytes), or the automaton over the whole text when keywords are dense. Only rules with a hit
run, each its RE2 regex in merged windows around its hits; the few rules without keywords
(card, phone, IBAN, SSN) run in windows around runs of digits (found in the same pass as the
escapes and string joins the views undo). A window is searched with the rule's regex compiled
without captures (the DFA alone), close windows first as one range (most hold no match); the
groups of a match are read once per distinct match. RE2 is linear-time, so no input can make a
regex backtrack. Everything is compiled once per process (a rule's capture-free regex on its
first use).

Evasions are undone in views of the text (see :mod:`domestique.detect.views`); every finding
is mapped back to its span in the original. Overlapping findings merge into one, named by the
most specific rule (highest priority, then longest).

``Scanner.scan`` never raises. A detector that crashes yields an ``engine.detector_error``
finding over the whole text, so a bug can never make text look clean.
"""

from __future__ import annotations

import copy
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain, count, islice
from operator import itemgetter
from typing import Protocol

import ahocorasick
import re2

from domestique.detect.finding import Finding
from domestique.detect.re2opts import (
    NO_CAPTURE_OPTIONS,
    RE2_OPTIONS,
    compile_once,
    first_match,
    found,
    groups_at,
    iter_spans,
    iter_spans_in,
    match_at,
    match_spans,
    search_from,
)
from domestique.detect.reserved import example_password
from domestique.detect.ruleset import Rule
from domestique.detect.validators import VALIDATORS, shannon_entropy, spells_field_name
from domestique.detect.views import (
    TRIGGER_LINES_RE,
    TRIGGER_PATTERNS,
    View,
    ascii_shadow,
    concat_view,
    decoded_views,
    fold_view,
    lower_shadow,
    trigger_lines,
    unescape_view,
)
from domestique.keys import Fingerprinter, mask_preview

DETECTOR_ERROR = "engine.detector_error"
MAX_WINDOW_GROWTH = 64 * 1024
MASK_CHAR = "\x00"  # stands in for a found value on a re-scan: a boundary, never a secret
MASK_ROUNDS = 2
RESCAN_MARGIN = 512
# The automaton walks ~13 ns per character from Python; RE2's DFA over the alternation of all
# keywords finds them several times faster but costs a Python step per match. So RE2 finds the
# keywords, and gives up for the automaton over the whole text once it has seen more than one
# keyword per DENSE_KEYWORD_GAP characters (keyword-dense text).
DENSE_KEYWORD_GAP = 48
# Windows of a rule this close are first searched as one range (see ``_first_matches``): an RE2
# call costs about as much as its DFA's walk over a few hundred characters.
BATCH_GAP = 512
SMALL_PAIRS = 48  # up to this many keyword occurrences, a plain loop groups them fastest
# With one keyword occurrence per DENSE_PAIRS characters or more, occurrences are counted rather
# than sorted, and the offsets of at most DENSE_FIND_KEYWORDS keywords looked up again.
DENSE_PAIRS = 16
DENSE_FIND_KEYWORDS = 8
# Up to this size an ASCII text is first checked for which kinds of work it holds (one RE2 set
# pass), and the passes for the others are skipped; a longer text always holds most of them.
SET_CHECK_MAX = 32 * 1024
# From this size on, the escape and join triggers and the digit runs are found in one pass (on a
# shorter text the two passes cost less than the shared pass's Python steps).
SHARED_PASS_MIN = 4096
# When this many rules' windows are a whole ASCII text (keyword-dense text), one RE2 set pass
# over it says which of them match anywhere, and the others are not run: a set of a dozen rules
# walks 100 KB in ~0.5 ms where each rule's own pass costs ~0.17 ms. A set is compiled (~2 ms
# per rule) when the same group of rules comes a second time, for at most WHOLE_SETS groups per
# scanner, each with a DFA budget of WHOLE_SET_MEM.
WHOLE_SET_RULES = 4
WHOLE_SETS = 8
WHOLE_SET_MEM = 16 << 20
_KEYWORDS, _ESCAPES, _JOINS, _BLOBS, _DIGITS = "keywords", "escapes", "joins", "blobs", "digits"
_TRIGGERS = (_ESCAPES, _JOINS, _BLOBS)  # in the order of views.TRIGGER_PATTERNS
_FIRST, _SECOND = itemgetter(0), itemgetter(1)

# A rule's windows (``[start, end]`` lists, see ``_merge_windows``), or what merges them when
# the rule runs.
Windows = list[list[int]] | Callable[[], list[list[int]]]
_WHOLE_SET_OPTIONS = re2.Options()
_WHOLE_SET_OPTIONS.log_errors = False
_WHOLE_SET_OPTIONS.max_mem = WHOLE_SET_MEM
_WHOLE_SET_OPTIONS.never_capture = True

# Values that stand for a secret rather than being one (generic rules only): template
# variables (${VAR}, {{ var }}, #{var}, {var}, %%VAR%%, %(var)s, <your-token>), placeholder words,
# environment-variable names (DB_PASSWORD), paths.
_PLACEHOLDER_RE = re2.compile(
    r"(?i)(?:example|sample|your[_\- ]?|changeme|change[_\-]me|placeholder|dummy|redacted|"
    r"variable|fake|xxxx|\*\*\*|\.\.\.|…|insert[_\- ]|replace[_\- ]?me|\btodo\b|fixme|"
    r"\$\{[A-Za-z_][A-Za-z0-9_.:\-]*(?::-[^}]*)?\}|\{\{\s*[A-Za-z_.][A-Za-z0-9_.|' \-]*\}\}|"
    r"#\{[^}]*\}|^\{[^{}]*\}$|%%[^%]*%%|%\([A-Za-z_]+\)[sd]|%[-0-9.]*[sdrx]\b|"
    r"<[A-Za-z_][A-Za-z0-9_ \-]*>|&lt;[A-Za-z_][A-Za-z0-9_ \-]*&gt;|"
    r"(?:^|[^{A-Za-z0-9])\{[A-Za-z_][A-Za-z0-9_.]*(?:![rsa])?(?::[^{}]*)?\}(?:[^}A-Za-z0-9]|$)|"
    r"^\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[^}]*\}|\([^)]*\))$|"
    r"^(?:none|null|nil|true|false|yes|no|on|off|enabled|disabled|undefined|password|secret|"
    r"token|string|str|bytes|required|optional|empty|n/?a|tbd|test|abc123|123456|1234|foo|bar|"
    r"baz|qux|foobar|xyz|pass|passwd|pwd|pw|user|username|login)$|"
    r"^(?:some|my|the|a|an)[_\-](?:pass|passwd|password|pwd|secret|token|key|api[_\-]?key)$)"
)
_ENV_NAME_RE = re2.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_PATH_RE = re2.compile(r"^(?:~|\.{1,2})?/?(?:[A-Za-z0-9_.\-]+/){2,}[A-Za-z0-9_.\-]*$")
# Values that are code referring to a secret, not the secret (env lookups, calls, attributes).
_CODE_REF_RE = re2.compile(
    r"^(?:\$|%[A-Za-z_]|@|os\.|process\.env|env\.|ENV\[|getenv|System\.getenv|config\.|"
    r"settings\.|self\.|this\.|cls\.|args\.|kwargs|request\.|params\.|options\.|opts\.|"
    r"secrets\.|vault:|ssm:|arn:aws:secretsmanager|keyring\.)|"
    # a keyword argument passed on: secrets_dir=_secrets_dir, key=value
    r"^[A-Za-z_][A-Za-z0-9_]*=[A-Za-z_$]|"
    r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(.*\)|\[.*\])?$"
)
_RANDOM_PART = re2.compile(r"[A-Za-z][0-9][A-Za-z]|[0-9][A-Za-z][0-9]")
# A call or subscript, also through a path (std::env::var(...), Config::get(...)).
_CALL_RE = re2.compile(r"^[A-Za-z_][A-Za-z0-9_.]*(?:::[A-Za-z_][A-Za-z0-9_.]*)*\s*[(\[]")
# A whole value that is one variable reference: $name, ${...}, $(...), %NAME%, @name, os.environ,
# or a YAML tag that fetches the value (Ansible !vault, CloudFormation !Ref).
_VAR_REF_RE = re2.compile(
    r"^(?:\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[^}]*\}|\([^)]*\))|%[A-Za-z_][A-Za-z0-9_]*%?|"
    r"!(?:vault|Ref|Sub|GetAtt|ImportValue|FindInMap|env_var|env|secret|include)|"
    r"@[A-Za-z_][A-Za-z0-9_.]*)$|^(?:os\.|process\.env|ENV\[|getenv)"
)


# Rules without keywords (card numbers, phone numbers, IBANs, SSNs) are about digits: they run
# in windows around runs of 8+ digit-ish characters, found by one RE2 pass.
_DIGIT_RUN_RE = re2.compile(r"\d[\d \-.()/]{6,}\d", RE2_OPTIONS)


# The firewall's placeholder for a redacted value, ``[REDACTED:<type>:<8 hex>]``, where the type
# is a finding's code without its family (``secret.github_token`` -> ``github_token``; the same
# rule as domestique.redact's placeholder_type). Its shape holds no secret: the type must be
# the type of one of this scanner's own codes, and 8 hex digits (32 bits of a keyed hash) are
# no credential. Text of that shape is not scanned: it is masked (a boundary, as a redacted
# value is) and no finding may touch it.
PLACEHOLDER_RE = re2.compile(r"\[REDACTED:([a-z0-9_]+):[0-9a-f]{8}\]", RE2_OPTIONS)
_TYPE_CLEAN = re2.compile(r"[^a-z0-9_]+")


def placeholder_type(code: str) -> str:
    """The placeholder type of a code: ``secret.github_token`` -> ``github_token``."""
    rest = code.split(".", 1)[1] if "." in code else code
    return _TYPE_CLEAN.sub("_", rest.lower()).strip("_")[:40] or "value"


def placeholder_spans(text: str, types: frozenset[str]) -> list[tuple[int, int]]:
    """Spans of the pieces of ``text`` shaped as a placeholder of one of ``types``, in order."""
    if "[REDACTED:" not in text:
        return []
    return [m.span() for m in PLACEHOLDER_RE.finditer(text) if m.group(1) in types]


def _mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    pieces: list[str] = []
    pos = 0
    for s, e in spans:
        pieces += (text[pos:s], MASK_CHAR * (e - s))
        pos = e
    pieces.append(text[pos:])
    return "".join(pieces)


def _overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(s < end and start < e for s, e in spans)


def digit_runs(shadow: bytes) -> list[tuple[int, int]]:
    """Spans of runs of digits (with the separators numbers are written with), 8+ chars."""
    return [spans[0] for spans in iter_spans(_DIGIT_RUN_RE, shadow)]


# The escape and join triggers of the views and the digit runs, in one RE2 pass over a long text.
_TRIGGER_OR_DIGITS_RE = re2.compile(
    f"(?:{TRIGGER_LINES_RE.pattern})|(?:{_DIGIT_RUN_RE.pattern})", RE2_OPTIONS
)


def triggers_and_digit_runs(shadow: bytes) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The matches of ``views.TRIGGER_LINES_RE`` and :func:`digit_runs`, found in one pass.

    A trigger starts with one of ``\\ % & " '``; a digit run starts with a digit and holds
    only digits and `` -.()/``. So no match of one starts where the other can start, and no
    trigger starts inside a run: each match of the alternation is the match the pass for its
    kind finds there. A run can start inside a trigger, though (``\\u00312345678``): the digits
    inside each trigger are tried in turn, anchored, as the runs' own pass would meet them.
    """
    triggers: list[tuple[int, int]] = []
    runs: list[tuple[int, int]] = []
    pos = 0
    while (hit := search_from(_TRIGGER_OR_DIGITS_RE, shadow, pos)) is not None:
        s, e = hit
        pos = e if e > s else e + 1  # (neither pattern matches the empty string)
        if 48 <= shadow[s] <= 57:  # a digit: a run
            runs.append(hit)
            continue
        triggers.append(hit)
        q = s + 1
        while q < e:
            if 48 <= shadow[q] <= 57 and (run := match_at(_DIGIT_RUN_RE, shadow, q)) is not None:
                runs.append(run)
                q = run[1]
                pos = max(pos, q)  # no trigger starts inside a run
            else:
                q += 1
    return triggers, runs


def _merge_windows(ends: list[int], before: int, after: int, n: int) -> list[list[int]]:
    """Windows ``[end - before, end + after]`` around keyword hits, merged where they touch.

    When hits are dense enough that the windows would cover the text anyway, one window over the
    whole text is returned without walking them (the keyword-dense worst case).
    """
    if len(ends) * (before + after) >= n:
        return [[0, n]]
    if not ends:
        return []
    ends.sort()
    # Sorted, the window of one hit touches the previous one's exactly when the hits are at
    # most ``before + after`` apart (``before`` and ``after`` are not negative): a window
    # starts at each wider gap. Found by a comprehension, not a Python step per window merge.
    width = before + after
    gaps = [i for i, prev, e in zip(count(1), ends, islice(ends, 1, None)) if e - prev > width]
    gaps.append(len(ends))
    windows: list[list[int]] = []
    lo = 0
    for hi in gaps:
        first = ends[lo]
        windows.append([first - before if first > before else 0, ends[hi - 1] + after])
        lo = hi
    windows[-1][1] = min(windows[-1][1], n)  # only the last window can pass the end
    return windows


def _merge_spans(spans: list[tuple[int, int]], before: int, after: int, n: int) -> list[list[int]]:
    """Windows around sorted, non-overlapping spans, merged where they touch."""
    windows: list[list[int]] = []
    for s, e in spans:
        a, b = max(0, s - before), min(n, e + after)
        if windows and a <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], b)
        else:
            windows.append([a, b])
    return windows


def _group_spans(regex: re2._Regexp, chunk: str) -> Iterator[tuple[tuple[int, int], ...]]:
    """Group spans of every match in ``chunk``, in character offsets."""
    if chunk.isascii():
        yield from iter_spans(regex, chunk.encode("ascii"))
        return
    for m in regex.finditer(chunk):
        yield tuple(m.span(g) for g in range(regex.groups + 1))


def _first_matches(
    bounds: re2._Regexp,
    text: str,
    windows: list[list[int]],
    data: bytes | None,
    text_ascii: bool,
) -> Iterator[tuple[int, int, tuple[int, int] | None]]:
    """The windows that hold a match of ``bounds``, as ``(start, end, first match)``, and
    those that are not ASCII (to be read in the text, not its shadow), with no first match.

    Most windows hold none. Windows of ASCII text less than ``BATCH_GAP`` apart are searched
    as one range first: a match inside a window is inside the range too, so a range without a
    match clears all of its windows with one RE2 call. Otherwise its match is the leftmost one
    of the range: the windows that end before it hold none, and it is the first match of the
    window that holds it whole (of the matches starting there, the same one is preferred).
    """
    if data is None:
        for wa, wb in windows:
            yield wa, wb, None
        return
    nw = len(windows)
    k = 0
    j = 0  # windows[k:j] are ASCII and close together: searched as one range
    while k < nw:
        wa, wb = windows[k]
        if k >= j:
            if not (text_ascii or text[wa:wb].isascii()):
                yield wa, wb, None
                k += 1
                continue
            j = k + 1
            while (
                j < nw
                and windows[j][0] - windows[j - 1][1] <= BATCH_GAP
                and (text_ascii or text[windows[j][0] : windows[j][1]].isascii())
            ):
                j += 1
        first = first_match(bounds, data, wa, windows[j - 1][1])
        if first is None:
            k = j
            continue
        if j > k + 1:
            while windows[k][1] < first[0]:  # (k < j - 1 here: first starts before the end)
                k += 1
            wa, wb = windows[k]
            if not (wa <= first[0] and first[1] <= wb):
                first = first_match(bounds, data, wa, wb)
        k += 1
        if first is not None:
            yield wa, wb, first


def whole_set(patterns: Sequence[str], options: re2.Options = _WHOLE_SET_OPTIONS) -> re2.Set:
    """An RE2 set of ``patterns`` (ids from 0), and last (id ``len(patterns)``) the empty
    pattern, which matches everywhere: a pass that reports it did not give up (an RE2 set
    reports no match at all when its DFA runs out of memory)."""
    rset = re2.Set.SearchSet(options)
    for pattern in patterns:
        rset.Add(pattern)
    rset.Add("")
    rset.Compile()
    return rset


def matching_somewhere(rset: re2.Set, count: int, data: bytes) -> set[int] | None:
    """The ids of the ``count`` patterns of ``rset`` (a :func:`whole_set`) that match somewhere
    in ``data``: ``i`` is there exactly when ``first_match`` of pattern ``i`` over the whole of
    ``data`` finds a match. None when the pass gave up."""
    ids = rset.Match(data)
    if not ids or count not in ids:
        return None
    return set(ids)


class TextDetector(Protocol):
    """A detector beyond the rules (known values, customer records): spans in ``text``."""

    code: str
    priority: int

    def find(self, text: str) -> Iterable[tuple[int, int, str]]: ...


# One regex match: value span, value, whole match, quoted, whole match's start.
_Match = tuple[int, int, str, str, bool, int]
# A claims_match rule's reading of its whole match: (priority, match start, match end, value
# start, value end).
_Claim = tuple[int, int, int, int, int]


@dataclass(frozen=True, slots=True)
class _Hit:
    code: str
    priority: int
    start: int
    end: int
    value: str


def looks_like_placeholder(value: str) -> bool:
    """True for ``your-key-here``, ``${VAR}``, ``<token>``, ``EXAMPLE``, ``DB_PASSWORD``, paths,
    ``{name}`` format fields, a field word spelled out (``pass word``) and the passwords famous
    documentation prints as its example (``tiger``)."""
    # Markup after the value closes its element (``pass+word</span>``): not part of it.
    value = value.split("</", 1)[0] or value
    bare = value.rstrip(":;,.")
    return bool(
        found(_PLACEHOLDER_RE, value)
        or found(_ENV_NAME_RE, bare)
        or found(_PATH_RE, bare)
        or spells_field_name(bare)
        or example_password(bare)
    )


def looks_like_code_reference(value: str, quoted: bool) -> bool:
    """True when an assigned value is code that refers to a secret rather than the secret.

    ``$VAR``, ``os.environ[...]``, ``getenv(...)``, ``self.password``, ``get_token()`` are
    references. An unquoted bare identifier is one too when it reads like a name
    (``new_password``, ``reenterPassword``); ``h7Kq2Lm9xP`` does not, and a quoted literal
    (``"Admin"``) is kept.
    """
    # "if token == current_token:" ends in the statement's colon; "f(pwd=pwd)" in a paren.
    value = value.rstrip(":;,)]}")
    if found(_VAR_REF_RE, value):
        return True
    if not quoted and found(_CALL_RE, value):
        return True
    if not found(_CODE_REF_RE, value):
        return False
    if "(" in value or "[" in value:
        return True
    if "." in value:
        # self.password is code; s.ZC9Ecf4M5g9o34Q6RkzGsj0z (a Vault token) is not.
        return not any(len(p) >= 12 and _RANDOM_PART.search(p) for p in value.split("."))
    if quoted:
        return False
    has_digit = any(c.isdigit() for c in value)
    return not has_digit or (value.islower() and "_" in value)


def _drop_misreadings(
    out: list[tuple[str, int, int, int, str]], claims: list[_Claim]
) -> list[tuple[str, int, int, int, str]]:
    """``out`` without the lower-priority hits that misread a claims_match rule's match.

    In ``postgres://admin:Tr0ub4dor@db.internal`` the e-mail rule reads ``Tr0ub4dor@db.internal``:
    the password and the host as one address. Merged, it would stretch the password's finding
    over the host. A hit is dropped when a higher-priority claim's whole match holds it and it
    runs from inside the claim's value out over one edge; a hit wholly inside the value, wholly
    outside it (an e-mail address as the user name), or around all of it (``token = '<the
    whole URL>'``, another reading of the value) is kept.
    """
    if not claims:
        return out
    kept = []
    for hit in out:
        _, prio, s, e, _ = hit
        if not any(
            prio < cp and ms <= s and e <= me and (vs <= s < ve < e or s < vs < e <= ve)
            for cp, ms, me, vs, ve in claims
        ):
            kept.append(hit)
    return kept


# Resource identifiers name a secret or a key, they never hold one: an AWS ARN (also the tail of
# one, read after "secretsmanager:"), an Oracle Cloud OCID, an Azure Key Vault object URL, a
# Google Secret Manager name. A generic rule's value inside one is not reported.
_RESOURCE_ID_RE = re2.compile(
    r"^(?:arn:aws(?:-[a-z]+)*:[a-z0-9\-]+:(?:[a-z]{2}(?:-[a-z]+)+-\d{1,2})?:(?:\d{12}|aws)?:\S+|"
    r"ocid1\.[a-z0-9_]+\.oc[0-9]+\.[a-z0-9\-]*\.[a-z0-9]+|"
    r"https://[a-z0-9\-]+\.(?:vault|managedhsm)\.(?:azure\.net|azure\.cn|usgovcloudapi\.net)/"
    r"(?:secrets|keys|certificates)/[A-Za-z0-9\-]+(?:/[0-9a-f]{32})?/?|"
    r"(?://secretmanager\.googleapis\.com/)?projects/[A-Za-z0-9\-]+/secrets/[A-Za-z0-9_\-]+"
    r"(?:/versions/(?:\d+|latest))?)$"
)
_ID_STOP = frozenset(" \t\r\n\"'`,;=<>()[]{}")
_ID_REACH = 256


def _inside_resource_identifier(text: str, s: int, e: int) -> bool:
    """True when ``text[s:e]`` lies inside one whitespace- or quote-bounded resource identifier."""
    a = s
    while a > 0 and s - a < _ID_REACH and text[a - 1] not in _ID_STOP:
        a -= 1
    b = e
    n = len(text)
    while b < n and b - e < _ID_REACH and text[b] not in _ID_STOP:
        b += 1
    token = text[a:b].rstrip(".:")
    return len(token) >= e - a and found(_RESOURCE_ID_RE, token)


class _CompiledRule:
    """A rule with its patterns compiled on first use: most rules never run in a short-lived
    process (a ``check`` masking one record, a scan whose text lacks their keywords), and
    compiling all of them was most of a command's start-up. The builtin patterns are checked to
    compile by the test suite; a pattern that fails raises inside the scan, which reports
    ``engine.detector_error`` (never "nothing found")."""

    __slots__ = ("_allow", "_bounds", "_deny", "_regex", "rule", "validators")

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self._regex: re2._Regexp | None = None
        self._bounds: re2._Regexp | None = None
        self._allow: tuple[re2._Regexp, ...] | None = None
        self._deny: tuple[re2._Regexp, ...] | None = None
        self.validators = tuple(VALIDATORS[v] for v in rule.validators)

    # Races between threads are harmless: compile_once returns equal, immutable patterns.
    @property
    def regex(self) -> re2._Regexp:
        regex = self._regex
        if regex is None:
            regex = self._regex = compile_once(self.rule.regex)
        return regex

    @property
    def allow(self) -> tuple[re2._Regexp, ...]:
        allow = self._allow
        if allow is None:
            allow = self._allow = tuple(compile_once(p) for p in self.rule.allow_patterns)
        return allow

    @property
    def deny(self) -> tuple[re2._Regexp, ...]:
        deny = self._deny
        if deny is None:
            deny = self._deny = tuple(compile_once(p) for p in self.rule.deny_context)
        return deny

    @property
    def bounds(self) -> re2._Regexp:
        """The regex without captures: it finds the same matches (captures never change what
        matches) with RE2's DFA alone; the groups are read afterwards, once per distinct match
        (see ``Scanner._confirm``). Compiled on the rule's first use."""
        bounds = self._bounds
        if bounds is None:
            bounds = self._bounds = re2.compile(self.rule.regex, NO_CAPTURE_OPTIONS)
        return bounds


# What one match of the keyword alternation at ``s`` stands for, per keyword: the occurrences
# (end offset relative to ``s``, minus length, keyword id) that start inside it, and the
# keywords that start inside it and run past its end, (relative start, keyword, relative end,
# minus length, keyword id), to be checked against the text; these by the character they need
# right after the match.
_Crossing = tuple[int, bytes, int, int, int]
_Reading = tuple[tuple[tuple[int, int, int], ...], dict[bytes, tuple[_Crossing, ...]]]


class _KeywordReadings:
    """Per keyword, what a match of the keyword alternation stands for (see ``_Reading``).

    The alternation (longest keyword first) matches at ``s`` the longest keyword that starts
    there, and its next match is the leftmost keyword starting at or after the end: so every
    occurrence the automaton reports starts inside one match, and is either wholly inside it
    (found by walking the automaton over the keyword itself) or starts inside and runs past its
    end (a keyword that a proper suffix of it begins). Worked out on a keyword's first match,
    not for all keywords up front (a scanner is built in every short-lived process).
    """

    __slots__ = ("_automaton", "_extends", "_ids", "_keywords", "known", "lengths", "single")

    def __init__(self, keywords: list[str], automaton: ahocorasick.Automaton) -> None:
        self._keywords = keywords
        self._automaton = automaton
        self._ids = {kw.encode(): kid for kid, kw in enumerate(keywords)}
        self.lengths = [len(kw) for kw in keywords]
        self.known: dict[bytes, _Reading] = {}  # the keywords worked out so far
        # A match followed by a character, when it stands for one occurrence, the keyword
        # itself (no keyword starts inside it, none that starts inside runs on with that
        # character): that occurrence, as in its reading. Met so far (at most one entry per
        # keyword and ASCII character).
        self.single: dict[bytes, tuple[int, int, int]] = {}
        self._extends: dict[str, list[int]] | None = None  # a proper prefix -> the keywords

    def get(self, word: bytes) -> _Reading | None:
        reading = self.known.get(word)
        if reading is None and word in self._ids:
            reading = self.known[word] = self._read(self._keywords[self._ids[word]])
        return reading

    def _read(self, kw: str) -> _Reading:
        keywords = self._keywords
        extends = self._extends
        if extends is None:
            extends = {}
            for kid, other in enumerate(keywords):
                for cut in range(1, len(other)):
                    extends.setdefault(other[:cut], []).append(kid)
            self._extends = extends
        inside = tuple((end, -len(keywords[k]), k) for end, k in self._automaton.iter(kw))
        crossing: dict[bytes, list[_Crossing]] = {}
        for j in range(1, len(kw)):
            for k in extends.get(kw[j:], ()):
                word = keywords[k]
                crossing.setdefault(word[len(kw) - j].encode(), []).append(
                    (j, word.encode(), j + len(word) - 1, -len(word), k)
                )
        return inside, {c: tuple(v) for c, v in crossing.items()}


class Scanner:
    """Finds secrets, personal data, known values and customer records in text.

    Build one per process (see :func:`domestique.detect.default_scanner`) and call
    :meth:`scan` from any thread: a scanner holds no per-scan state.
    """

    def __init__(
        self,
        rules: Sequence[Rule],
        fingerprinter: Fingerprinter,
        detectors: Sequence[TextDetector] = (),
        decode_depth: int = 2,
    ) -> None:
        self._rules = tuple(_CompiledRule(r) for r in rules)
        self._fp = fingerprinter
        self._detectors = tuple(detectors)
        self._decode_depth = decode_depth
        self._placeholder_types = self._types()
        # Groups of rules (indices) whose windows were the whole text: None when seen once, then
        # their whole_set (False: it did not compile). See WHOLE_SET_RULES.
        self._whole_sets: dict[tuple[int, ...], re2.Set | bool | None] = {}
        self._keywordless = tuple(i for i, r in enumerate(rules) if not r.keywords)
        kw_map: dict[str, list[int]] = {}
        self._kw_rules: list[tuple[int, ...]] = []  # keyword id -> rules that use it
        self._kw_max = [max((len(k) for k in r.keywords), default=0) for r in rules]
        self._kw_bytes: list[bytes] = []  # keyword id -> the keyword
        for i, r in enumerate(rules):
            for kw in r.keywords:
                kw_map.setdefault(kw, []).append(i)
        self._automaton: ahocorasick.Automaton | None = None
        self._keyword_scan: re2._Regexp | None = None
        self._max_keyword = max((len(k) for k in kw_map), default=0)
        if kw_map:
            alternatives = sorted(kw_map, key=len, reverse=True)
            self._keyword_scan = re2.compile(
                "|".join(re2.escape(k) for k in alternatives), RE2_OPTIONS
            )
            auto = ahocorasick.Automaton()
            for kid, (kw, idxs) in enumerate(kw_map.items()):
                auto.add_word(kw, kid)
                self._kw_rules.append(tuple(idxs))
                self._kw_bytes.append(kw.encode())
            auto.make_automaton()
            self._automaton = auto
        self._kw_reads = (
            None if self._automaton is None else _KeywordReadings(list(kw_map), self._automaton)
        )
        # What could start work in an ASCII text: a keyword, an escape, a string join, a base64
        # or hex blob, a digit run. A text with none of them can hold no rule finding (ordinary
        # prose, most short prompts): only the known-value and record detectors run on it.
        # Short texts are checked with an RE2 set, which says which of them occur, so the
        # passes for the absent ones are skipped; long ones with one search for any of them.
        parts = {
            _KEYWORDS: "|".join(re2.escape(k) for k in kw_map),
            **dict(zip(_TRIGGERS, TRIGGER_PATTERNS, strict=True)),
            _DIGITS: _DIGIT_RUN_RE.pattern if self._keywordless else "",
        }
        parts = {k: v for k, v in parts.items() if v}
        self._anything = re2.compile("|".join(f"(?:{p})" for p in parts.values()), RE2_OPTIONS)
        self._which = whole_set(list(parts.values()), RE2_OPTIONS)
        self._which_ids = list(parts)

    @property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(c.rule for c in self._rules)

    def derive(
        self, fingerprinter: Fingerprinter, detectors: Sequence[TextDetector] = ()
    ) -> Scanner:
        """A scanner that shares this one's compiled rules, with another key and detectors.

        Compiling the rules is the expensive part of building a scanner; a daemon that serves
        callers with different known values derives one scanner per caller from one compiled set.
        """
        other = copy.copy(self)
        other._fp = fingerprinter
        other._detectors = tuple(detectors)
        other._placeholder_types = other._types()
        return other

    def _types(self) -> frozenset[str]:
        """The placeholder types of every code this scanner can report."""
        codes = [c.rule.id for c in self._rules] + [d.code for d in self._detectors]
        return frozenset(placeholder_type(c) for c in codes)

    def scan(self, text: str) -> list[Finding]:
        """Every finding in ``text``, merged, sorted by start. Never raises."""
        try:
            if not isinstance(text, str):
                raise TypeError("Scanner.scan takes str")
            holes = placeholder_spans(text, self._placeholder_types)
            if holes:
                text = _mask_spans(text, holes)
            hits, failed = self._collect(text)
            hits = self._rescan_masked(text, hits, failed)
            if holes:
                hits = [h for h in hits if not _overlaps(h.start, h.end, holes)]
            findings = self._merge(hits)
        except Exception as exc:  # noqa: BLE001 - a crash must read as "unsafe", not "clean"
            n = len(text) if isinstance(text, str) else 0
            return [self._error_finding(n, f"scanner:{type(exc).__name__}")]
        if failed:  # first: it covers the whole text, and findings are sorted by start
            findings.insert(0, self._error_finding(len(text), ",".join(sorted(failed))))
        return findings

    def _error_finding(self, n: int, what: str) -> Finding:
        # The preview names what failed, never the text; there is no single value to fingerprint.
        return Finding(DETECTOR_ERROR, 0, n, "", f"detector failed: {what}")

    def _rescan_masked(self, text: str, hits: list[_Hit], failed: set[str]) -> list[_Hit]:
        """Scan again around findings with them masked out, until nothing new (2 rounds at most).

        A value glued to a finding (``<email>AKIA…``) has no boundary the first time; once the
        finding is masked it has one, exactly as after redaction. Only the neighbourhood of each
        finding is scanned again, so text with few findings pays little.
        """
        for _ in range(MASK_ROUNDS):
            if not hits:
                return hits
            covered = sorted((h.start, h.end) for h in hits)
            regions: list[list[int]] = []
            for start, end in covered:
                a, b = max(0, start - RESCAN_MARGIN), min(len(text), end + RESCAN_MARGIN)
                if regions and a <= regions[-1][1]:
                    regions[-1][1] = max(regions[-1][1], b)
                else:
                    regions.append([a, b])
            new: list[_Hit] = []
            for a, b in regions:
                pieces: list[str] = []
                pos = a
                for start, end in covered:
                    if end <= pos or start >= b:
                        continue
                    s = max(start, pos)
                    e = min(end, b)
                    pieces += (text[pos:s], MASK_CHAR * (e - s))
                    pos = e
                pieces.append(text[pos:b])
                again, more_failed = self._collect("".join(pieces))
                failed |= more_failed
                for h in again:
                    hs, he = h.start + a, h.end + a
                    if MASK_CHAR in h.value or any(s <= hs and he <= e for s, e in covered):
                        continue
                    new.append(_Hit(h.code, h.priority, hs, he, h.value))
            if not new:
                return hits
            hits = hits + new
        return hits

    def _present(self, text: str) -> frozenset[str] | None:
        """For ASCII text, which kinds of work it holds (see ``__init__``); None: not known."""
        if not text.isascii():
            return None
        lower = lower_shadow(text)
        if len(text) > SET_CHECK_MAX:
            return None if search_from(self._anything, lower, 0) is not None else frozenset()
        # None when the set gave up (out of memory): then nothing is skipped.
        which = matching_somewhere(self._which, len(self._which_ids), lower)
        if which is None:
            return None
        return frozenset(self._which_ids[i] for i in which if i < len(self._which_ids))

    def _collect(self, text: str) -> tuple[list[_Hit], set[str]]:
        present = self._present(text)
        if present is not None and not present:
            quiet_failed: set[str] = set()
            out = self._run_detectors(text, quiet_failed, [])
            return [_Hit(c, p, s, e, v) for c, p, s, e, v in out], quiet_failed
        root = View(text)
        base = fold_view(root) or root  # ASCII text (present is not None) has no fold view
        queue = [base]
        # The base view's shadows and digit runs, kept for its scan (after the other views').
        shadow = ascii_shadow(base.text)
        lower = lower_shadow(base.text) if self._wants_keywords(present) else None
        runs: list[tuple[int, int]] | None = None
        want_escapes = present is None or _ESCAPES in present
        want_joins = present is None or _JOINS in present
        if want_escapes or want_joins:
            if (
                len(base.text) > SHARED_PASS_MIN
                and self._keywordless
                and (present is None or _DIGITS in present)
            ):
                triggers, runs = triggers_and_digit_runs(shadow)  # one pass for both
                escapes, joins = trigger_lines(base.text, triggers)
            else:
                escapes, joins = trigger_lines(base.text)  # one pass for both views
            escaped = unescape_view(base, escapes) if want_escapes and escapes else None
            if escaped is not None:
                queue.append(escaped)
            joined = concat_view(base, joins) if want_joins and joins else None
            if joined is not None:
                queue.append(joined)
        hits: list[_Hit] = []
        failed: set[str] = set()
        while queue:
            view = queue.pop()
            if view is base:
                only = present
                found = self._scan_view(view.text, failed, only, shadows=(shadow, lower), runs=runs)
            else:
                only = None
                found = self._scan_view(view.text, failed)
            for code, prio, s, e, value in found:
                os_, oe = view.to_original(s, e)
                hits.append(_Hit(code, prio, os_, oe, value))
            if view.depth < self._decode_depth and (only is None or _BLOBS in only):
                view_shadow = shadow if view is base else None
                queue.extend(decoded_views(view, self._decode_depth, shadow=view_shadow))
        return hits, failed

    def _wants_keywords(self, present: frozenset[str] | None) -> bool:
        """Whether the scan of a view (holding ``present``, see ``_present``) looks for keywords."""
        return self._automaton is not None and (present is None or _KEYWORDS in present)

    def _scan_view(
        self,
        text: str,
        failed: set[str],
        present: frozenset[str] | None = None,
        *,
        shadows: tuple[bytes, bytes | None] | None = None,
        runs: list[tuple[int, int]] | None = None,
    ) -> Iterable[tuple[str, int, int, int, str]]:
        """The rules' findings in one view. ``shadows``: its ASCII shadow and (when keywords are
        looked for) lower-cased shadow, ``runs``: its digit runs, when already known."""
        out: list[tuple[str, int, int, int, str]] = []
        n = len(text)
        windows: dict[int, Windows] = {}
        shadow, lower = shadows if shadows is not None else (ascii_shadow(text), None)
        text_ascii = text.isascii()
        if n and self._wants_keywords(present):
            # Keywords are ASCII: lower-casing the ASCII shadow keeps every offset.
            if lower is None:
                lower = lower_shadow(text)
            windows.update(self._keyword_rule_windows(lower, n))
        if self._keywordless and n and (present is None or _DIGITS in present):
            if runs is None:
                runs = digit_runs(shadow)
            if runs:
                for i in self._keywordless:
                    rule = self._rules[i].rule
                    windows[i] = _merge_spans(runs, rule.window_before, rule.window_after, n)
        if text_ascii and len(windows) >= WHOLE_SET_RULES and len(shadow) == n:
            self._drop_matchless(windows, shadow, n)
        claims: list[_Claim] = []
        for i, planned in windows.items():
            crule = self._rules[i]
            rule_windows = planned() if callable(planned) else planned
            try:
                out.extend(
                    self._confirm(crule, text, rule_windows, shadow, text_ascii, claims=claims)
                )
            except Exception:  # noqa: BLE001 - recorded as engine.detector_error
                failed.add(crule.rule.id)
        return _drop_misreadings(self._run_detectors(text, failed, out), claims)

    def _drop_matchless(self, windows: dict[int, Windows], data: bytes, n: int) -> None:
        """Drops from ``windows`` the rules whose window is the whole text (``data``, ASCII,
        ``n`` long) and which match nowhere in it: ``_confirm`` would find nothing for them
        (its first search finds no match, see WHOLE_SET_RULES)."""
        whole = tuple(sorted(i for i, w in windows.items() if not callable(w) and w == [[0, n]]))
        if len(whole) < WHOLE_SET_RULES:
            return
        sets = self._whole_sets
        rset = sets.get(whole)
        if rset is None:
            if whole not in sets:  # seen once: compiled if the same group comes again
                if len(sets) < WHOLE_SETS:
                    sets[whole] = None
                return
            try:
                rset = whole_set([self._rules[i].rule.regex for i in whole])
            except re2.error:  # (each compiles alone; a set may not, within its budget)
                rset = False
            sets[whole] = rset
        if rset is False:
            return
        ids = matching_somewhere(rset, len(whole), data)
        if ids is None:  # the pass gave up: every rule runs
            return
        for k, i in enumerate(whole):
            if k not in ids:
                del windows[i]

    def _run_detectors(
        self, text: str, failed: set[str], out: list[tuple[str, int, int, int, str]]
    ) -> list[tuple[str, int, int, int, str]]:
        for det in self._detectors:
            try:
                out.extend((det.code, det.priority, s, e, v) for s, e, v in det.find(text))
            except Exception:  # noqa: BLE001 - recorded as engine.detector_error
                failed.add(det.code)
        return out

    def _keyword_rule_windows(self, lower: bytes, n: int) -> Mapping[int, Windows]:
        """Per rule, the windows around its keywords' occurrences in ``lower`` (``n`` long).

        The automaton's occurrences in keyword-dense text are flattened (in C) into one list of
        ints, not kept as a tuple each: some ten thousand tuples in 100 KB, each tracked by the
        garbage collector, set off a dozen collections per scan. They are paired only when the
        counts of the keywords cannot decide the windows (see ``_keyword_windows``).
        """
        assert self._automaton is not None
        pairs = self._sparse_keyword_hits(lower)
        if pairs is None:
            flat = list(chain.from_iterable(self._automaton.iter(lower.decode("ascii"))))
            kids = flat[1::2]
            if len(kids) > SMALL_PAIRS and len(kids) * DENSE_PAIRS >= n:
                dense = self._keyword_windows_dense(Counter(kids), n, lower)
                if dense is not None:
                    return dense
            pairs = list(zip(flat[::2], kids, strict=True))
        return self._keyword_windows(pairs, n, lower) if pairs else {}

    def _keyword_hits(self, lower: bytes) -> list[tuple[int, int]]:
        """Every keyword occurrence in ``lower``: (offset of its last character, keyword id), as
        the automaton reports them (by end, the longest first)."""
        assert self._automaton is not None
        pairs = self._sparse_keyword_hits(lower)
        return list(self._automaton.iter(lower.decode("ascii"))) if pairs is None else pairs

    def _sparse_keyword_hits(self, lower: bytes) -> list[tuple[int, int]] | None:
        """``_keyword_hits``, or None for keyword-dense text (see below).

        RE2's DFA over the alternation of all keywords finds the leftmost keyword at each step
        several times faster than walking the automaton over the whole text; each of its matches
        stands for the occurrences that start inside it (see ``_keyword_readings``). Once it has
        seen more than one keyword per ``DENSE_KEYWORD_GAP`` characters (keyword-dense text),
        the automaton over the whole text is cheaper than a Python step per match.
        """
        assert self._automaton is not None
        assert self._keyword_scan is not None
        starts = match_spans(self._keyword_scan, lower, 0, len(lower), dense=DENSE_KEYWORD_GAP)
        if starts is None:
            return None
        reads = self._kw_reads
        assert reads is not None
        single = reads.single
        last = len(lower) - 1
        pairs: list[tuple[int, int]] = []  # the matches that stand for one occurrence each
        more: list[tuple[int, int, int]] = []  # the others: (end, minus length, keyword id)
        for s, e in starts:
            if e <= last:
                # Most matches: one keyword, and the character after it starts no other
                # keyword inside it. Known by the match and that character.
                hit = single.get(lower[s : e + 1])
                if hit is not None:
                    pairs.append((s + hit[0], hit[2]))
                    continue
            word = lower[s:e]
            reading = reads.get(word)
            if reading is None:  # cannot happen: the alternation matches keywords only
                return None
            inside, crossing = reading
            crossers = crossing.get(lower[e : e + 1], ()) if crossing else ()
            if len(inside) == 1 and not crossers:
                end, _, kid = inside[0]
                pairs.append((s + end, kid))
                if e <= last:
                    single[lower[s : e + 1]] = inside[0]  # (shared: no new tuple per entry)
                continue
            more += [(s + end, minus_len, kid) for end, minus_len, kid in inside]
            for j, word, end, minus_len, kid in crossers:
                if lower.startswith(word, s + j):
                    more.append((s + end, minus_len, kid))
        if not more:
            # Matches do not overlap, so single occurrences (each ending at its match's last
            # character) are in the automaton's order already.
            return pairs
        # Merged into the automaton's order: by end, the longest first (a single occurrence's
        # end is its match's last character: at most one of them ends at any offset).
        lengths = reads.lengths
        more.sort()
        ends = [end for end, _ in pairs]
        out: list[tuple[int, int]] = []
        lo = 0
        for end, minus_len, kid in more:
            hi = bisect_left(ends, end, lo)
            if hi < len(ends) and ends[hi] == end:
                other = pairs[hi][1]
                if (-lengths[other], other) < (minus_len, kid):
                    hi += 1
            out += pairs[lo:hi]
            out.append((end, kid))
            lo = hi
        out += pairs[lo:]
        return out

    def _keyword_windows_small(
        self, pairs: list[tuple[int, int]], n: int
    ) -> dict[int, list[list[int]]]:
        """``_keyword_windows`` for a few pairs, with a Python step each (less set-up)."""
        ends: dict[int, list[int]] = {}  # keyword id -> offsets of its last characters
        for end, kid in pairs:
            ends.setdefault(kid, []).append(end)
        rule_ends: dict[int, list[int]] = {}
        for kid, offsets in ends.items():
            for i in self._kw_rules[kid]:
                rule_ends.setdefault(i, []).extend(offsets)
        out: dict[int, list[list[int]]] = {}
        for i, offsets in rule_ends.items():
            rule = self._rules[i].rule
            before = rule.window_before + self._kw_max[i] - 1
            out[i] = _merge_windows(offsets, before, rule.window_after + 1, n)
        return out

    def _keyword_windows(
        self, pairs: list[tuple[int, int]], n: int, lower: bytes | None = None
    ) -> Mapping[int, Windows]:
        """Per rule, the windows around its keywords' occurrences (see ``_merge_windows``).

        ``pairs`` are (offset of a keyword's last character, keyword id), in text order. They
        are grouped by keyword with C-level sorts and slices, not a Python step per occurrence
        (keyword-dense text has one every ten characters). Rules come in the order of their
        first keyword's first occurrence. ``lower``: the text the pairs were found in, for
        keyword-dense text (see ``_keyword_windows_dense``).
        """
        if len(pairs) <= SMALL_PAIRS:
            return self._keyword_windows_small(pairs, n)
        if lower is not None and len(pairs) * DENSE_PAIRS >= n:
            dense = self._keyword_windows_dense(Counter(map(_SECOND, pairs)), n, lower)
            if dense is not None:
                return dense
        first_seen = list(dict.fromkeys(map(_SECOND, pairs)))  # keyword ids, in text order
        pairs.sort(key=_SECOND)  # stable: each keyword's offsets stay in text order
        kids = list(map(_SECOND, pairs))
        slices: dict[int, tuple[int, int]] = {}
        lo = 0
        for kid in sorted(first_seen):
            hi = bisect_right(kids, kid, lo)
            slices[kid] = (lo, hi)
            lo = hi
        rule_parts: dict[int, list[tuple[int, int]]] = {}
        for kid in first_seen:
            for i in self._kw_rules[kid]:
                rule_parts.setdefault(i, []).append(slices[kid])
        ends: list[int] | None = None
        out: dict[int, list[list[int]]] = {}
        for i, parts in rule_parts.items():
            rule = self._rules[i].rule
            # A window runs from ``before`` chars before the end of a keyword to ``after``
            # chars after it; the offsets here are of the keyword's last character.
            before = rule.window_before + self._kw_max[i] - 1
            after = rule.window_after + 1
            if sum(hi - lo for lo, hi in parts) * (before + after) >= n:
                out[i] = [[0, n]]  # what _merge_windows finds, without the offsets
                continue
            if ends is None:
                ends = list(map(_FIRST, pairs))
            offsets: list[int] = []
            for lo, hi in parts:
                offsets += ends[lo:hi]
            out[i] = _merge_windows(offsets, before, after, n)
        return out

    def _keyword_windows_dense(
        self, counts: Counter[int], n: int, lower: bytes
    ) -> dict[int, Windows] | None:
        """``_keyword_windows`` for keyword-dense text, without sorting the occurrences.

        Most rules' windows there cover the whole text, which only the number of their keywords'
        occurrences decides: those are counted (in C). The few keywords whose rules need the
        offsets are found again with ``bytes.find``, each occurrence (overlapping ones too) as the
        automaton reports it. None when more than ``DENSE_FIND_KEYWORDS`` keywords would be.
        ``counts``: per keyword id, its occurrences, in order of first occurrence. A rule's
        windows that are not the whole text are merged when asked for (see ``Windows``).
        """
        rule_kids: dict[int, list[int]] = {}
        for kid in counts:
            for i in self._kw_rules[kid]:
                rule_kids.setdefault(i, []).append(kid)
        plan: list[tuple[int, int, int, list[int] | None]] = []
        wanted: set[int] = set()
        for i, kids in rule_kids.items():
            rule = self._rules[i].rule
            before = rule.window_before + self._kw_max[i] - 1
            after = rule.window_after + 1
            if sum(counts[kid] for kid in kids) * (before + after) >= n:
                plan.append((i, before, after, None))  # the whole text (see _merge_windows)
            else:
                plan.append((i, before, after, kids))
                wanted.update(kids)
        if len(wanted) > DENSE_FIND_KEYWORDS:
            return None
        ends: dict[int, list[int]] = {}
        for kid in wanted:
            word = self._kw_bytes[kid]
            last = len(word) - 1
            found: list[int] = []
            at = lower.find(word)
            while at >= 0:
                found.append(at + last)
                at = lower.find(word, at + 1)
            ends[kid] = found
        out: dict[int, Windows] = {}
        for i, before, after, some in plan:
            if some is None:
                out[i] = [[0, n]]
                continue
            offsets: list[int] = []
            for kid in some:
                offsets += ends[kid]
            # Merged when the rule runs: a few hundred windows per rule, each a list the garbage
            # collector tracks, are not all kept at once.
            out[i] = partial(_merge_windows, offsets, before, after, n)
        return out

    def _confirm(
        self,
        crule: _CompiledRule,
        text: str,
        windows: list[list[int]],
        data: bytes | None = None,
        text_ascii: bool = False,
        *,
        claims: list[_Claim] | None = None,
    ) -> list[tuple[str, int, int, int, str]]:
        rule = crule.rule
        out: list[tuple[str, int, int, int, str]] = []
        seen: set[tuple[int, int]] = set()
        verdicts: dict[tuple[str, str, bool], bool] = {}  # repeated lines are judged once
        # ASCII windows: a match's reading (value span relative to the match, verdict) depends
        # only on its bytes and the byte on each side (what ^, $ and \b can look at), so each
        # distinct one is read, and judged, once.
        readings: dict[tuple[bytes, bool, bool], tuple[int, int, bool]] = {}
        last = len(data) if data is not None else 0
        candidates: Iterable[tuple[int, int, tuple[int, int] | None]]
        if len(windows) == 1 and data is not None:  # most rules on a short text: no set-up
            wa, wb = windows[0]
            if text_ascii or text[wa:wb].isascii():
                first = first_match(crule.bounds, data, wa, wb)
                candidates = () if first is None else ((wa, wb, first),)
            else:
                candidates = ((wa, wb, None),)
        else:
            candidates = _first_matches(crule.bounds, text, windows, data, text_ascii)
        for wa, wb, first in candidates:
            if first is None or data is None:
                matches = self._matches(crule, text, wa, wb)
            else:
                spans, a, b = self._bounds_ascii(
                    crule, text, (wa, wb, first), data=data, ascii=text_ascii
                )
                if spans is None:  # grown over non-ASCII text: the shadow reads "?" there
                    matches = self._matches(crule, text, a, b)
                else:
                    for ms, me in spans:
                        ctx = (data[ms - 1 if ms else 0 : me + 1], ms == 0, me == last)
                        reading = readings.get(ctx)
                        if reading is None:
                            reading = readings[ctx] = self._read(crule, text, data, (ms, me, b))
                        s, e = ms + reading[0], ms + reading[1]
                        if (s, e) in seen:
                            continue
                        if rule.claims_match and claims is not None:
                            claims.append((rule.priority, ms, me, s, e))
                        if not reading[2] or (
                            rule.reference_filter and _inside_resource_identifier(text, s, e)
                        ):
                            continue
                        seen.add((s, e))
                        out.append((rule.id, rule.priority, s, e, text[s:e]))
                    continue
            for s, e, value, whole, quoted, ms in matches:
                if (s, e) in seen:
                    continue
                if rule.claims_match and claims is not None:
                    # Claimed even when the value is turned down (user:password@host): the
                    # match is still a URL, and password@host is still not an address.
                    claims.append((rule.priority, ms, ms + len(whole), s, e))
                key = (value, whole, quoted)
                ok = verdicts.get(key)
                if ok is None:
                    ok = verdicts[key] = self._accept(crule, value, whole, quoted)
                if not ok or (rule.reference_filter and _inside_resource_identifier(text, s, e)):
                    continue
                seen.add((s, e))
                out.append((rule.id, rule.priority, s, e, value))
        return out

    def _read(
        self, crule: _CompiledRule, text: str, data: bytes, where: tuple[int, int, int]
    ) -> tuple[int, int, bool]:
        """The value span (relative to ``ms``) of the ASCII match ``[ms, me)`` found in a window
        ending at ``b`` (``where``), and the verdict."""
        ms, me, b = where
        spans = groups_at(crule.regex, data, ms, me)
        if spans is None:  # cannot happen (see groups_at); read it as the search would
            spans = next(iter(iter_spans_in(crule.regex, data, ms, b)))
        s, e = spans[0]
        for gs, ge in spans[1:]:
            if gs >= 0:
                s, e = gs, ge
                break
        # After a quote or an XML tag's ">", a value is a literal, not code.
        quoted = s > 0 and text[s - 1] in "\"'`>"
        ok = self._accept(crule, text[s:e], text[ms:me], quoted)
        return s - ms, e - ms, ok

    def _matches(self, crule: _CompiledRule, text: str, a: int, b: int) -> list[_Match]:
        """The matches in the window ``[a, b)`` of a text that is not ASCII there (see
        ``_bounds_ascii`` for the growth of a window)."""
        n = len(text)
        while True:
            chunk = text[a:b]
            found: list[_Match] = []
            grow_left = grow_right = False
            for spans in _group_spans(crule.regex, chunk):
                ms, me = spans[0]
                if me == len(chunk) and b < n:
                    grow_right = True
                if ms == 0 and a > 0:
                    grow_left = True
                s, e = ms, me
                for gs, ge in spans[1:]:
                    if gs >= 0:
                        s, e = gs, ge
                        break
                # After a quote or an XML tag's ">", a value is a literal, not code.
                quoted = s > 0 and chunk[s - 1] in "\"'`>"
                found.append((a + s, a + e, chunk[s:e], chunk[ms:me], quoted, a + ms))
            if (grow_left or grow_right) and b - a < MAX_WINDOW_GROWTH:
                step = max(256, b - a)
                if grow_left:
                    a = max(0, a - step)
                if grow_right:
                    b = min(n, b + step)
                continue
            return found

    def _bounds_ascii(
        self,
        crule: _CompiledRule,
        text: str,
        window: tuple[int, int, tuple[int, int]],
        *,
        data: bytes,
        ascii: bool,
    ) -> tuple[list[tuple[int, int]] | None, int, int]:
        """The match spans in the ASCII window ``[a, b)``, matched in place in ``data``, given
        its first match (``window`` is ``(a, b, first)``).

        The text outside the window is context (``^`` does not match at ``a``, a boundary sees
        the character before it). A match that touches a window edge is looked for again in a
        window grown on that side, as in ``_matches``. Returns the spans and the final window;
        no spans (None) when the window grew over non-ASCII text.
        """
        a, b, first = window
        n = len(text)
        after = first[1] if first[1] > first[0] else first[1] + 1
        spans = [first, *match_spans(crule.bounds, data, after, b)]
        while True:
            grow_right = bool(spans) and spans[-1][1] == b and b < n
            grow_left = bool(spans) and spans[0][0] == a and a > 0
            if (grow_left or grow_right) and b - a < MAX_WINDOW_GROWTH:
                step = max(256, b - a)
                if grow_left:
                    a = max(0, a - step)
                if grow_right:
                    b = min(n, b + step)
                if not ascii and not text[a:b].isascii():
                    return None, a, b
                spans = match_spans(crule.bounds, data, a, b)
                continue
            return spans, a, b

    def _accept(self, crule: _CompiledRule, value: str, whole: str, quoted: bool) -> bool:
        rule = crule.rule
        if len(value) < rule.min_length or value in rule.allow_values:
            return False
        if rule.entropy is not None and shannon_entropy(value) < rule.entropy:
            return False
        if any(found(p, value) for p in crule.allow):
            return False
        if any(found(p, whole) for p in crule.deny):
            return False
        if rule.placeholder_filter and looks_like_placeholder(value):
            return False
        if rule.reference_filter and looks_like_code_reference(value, quoted):
            return False
        return all(v(value) for v in crule.validators)

    def _merge(self, hits: list[_Hit]) -> list[Finding]:
        hits = sorted((h for h in hits if h.end > h.start), key=lambda h: (h.start, -h.end))
        findings: list[Finding] = []
        cluster: list[_Hit] = []
        cluster_end = -1

        def flush() -> None:
            if not cluster:
                return
            best = max(cluster, key=lambda h: (h.priority, h.end - h.start))
            start = min(h.start for h in cluster)
            findings.append(
                Finding(
                    best.code,
                    start,
                    cluster_end,
                    self._fp.fingerprint(best.value),
                    mask_preview(best.value),
                )
            )
            cluster.clear()

        for h in hits:
            if cluster and h.start >= cluster_end:
                flush()
            cluster.append(h)
            cluster_end = max(cluster_end, h.end) if len(cluster) > 1 else h.end
        flush()
        return findings
