"""The scanner: text in, findings out, in four steps that each live in their own module.

1. :mod:`~domestique.detect.prefilter` plans the scan: one keyword pass over the lower-cased
   text, and runs of digits for the rules without keywords, give each rule with a hit its
   windows; a rule without one does not run.
2. :mod:`~domestique.detect.views` undoes evasions (escapes, string joins, zero-width and
   look-alike characters, base64 and hex blobs) in views of the text; each view is scanned
   and every hit mapped back to its span in the original.
3. :mod:`~domestique.detect.confirm` searches each rule's RE2 regex in its windows and accepts
   or turns down each value (validators, placeholders, code references).
4. :mod:`~domestique.detect.merge` scans again around findings with them masked out, and
   merges overlapping hits into one finding, named by the most specific rule.

Detectors beyond the rules (known values, customer records: :class:`TextDetector`) run on each
view too. Everything is compiled once per process (a rule's regex on its first use).

``Scanner.scan`` never raises. A detector that crashes yields an ``engine.detector_error``
finding over the whole text, so a bug can never make text look clean.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Protocol

from domestique.detect.confirm import Claim, CompiledRule, confirm
from domestique.detect.finding import Finding
from domestique.detect.merge import (
    Hit,
    drop_misreadings,
    mask_spans,
    merge,
    overlaps,
    placeholder_spans,
    placeholder_type,
    rescan_masked,
)
from domestique.detect.prefilter import (
    BLOBS,
    DIGITS,
    ESCAPES,
    JOINS,
    Prefilter,
    Windows,
    digit_runs,
    triggers_and_digit_runs,
)
from domestique.detect.ruleset import Rule
from domestique.detect.views import (
    View,
    ascii_shadow,
    concat_view,
    decoded_views,
    fold_view,
    lower_shadow,
    trigger_lines,
    unescape_view,
)
from domestique.keys import Fingerprinter

DETECTOR_ERROR = "engine.detector_error"
# From this size on, the escape and join triggers and the digit runs are found in one pass (on a
# shorter text the two passes cost less than the shared pass's Python steps).
SHARED_PASS_MIN = 4096


class TextDetector(Protocol):
    """A detector beyond the rules (known values, customer records): spans in ``text``."""

    code: str
    priority: int

    def find(self, text: str) -> Iterable[tuple[int, int, str]]: ...


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
        self._rules = tuple(CompiledRule(r) for r in rules)
        self._fp = fingerprinter
        self._detectors = tuple(detectors)
        self._decode_depth = decode_depth
        self._placeholder_types = self._types()
        self._prefilter = Prefilter(rules)

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
                text = mask_spans(text, holes)
            hits, failed = self._collect(text)
            hits = rescan_masked(text, hits, failed, self._collect)
            if holes:
                hits = [h for h in hits if not overlaps(h.start, h.end, holes)]
            findings = merge(hits, self._fp)
        except Exception as exc:  # noqa: BLE001 - a crash must read as "unsafe", not "clean"
            n = len(text) if isinstance(text, str) else 0
            return [self._error_finding(n, f"scanner:{type(exc).__name__}")]
        if failed:  # first: it covers the whole text, and findings are sorted by start
            findings.insert(0, self._error_finding(len(text), ",".join(sorted(failed))))
        return findings

    def _error_finding(self, n: int, what: str) -> Finding:
        # The preview names what failed, never the text; there is no single value to fingerprint.
        return Finding(DETECTOR_ERROR, 0, n, "", f"detector failed: {what}")

    def _collect(self, text: str) -> tuple[list[Hit], set[str]]:
        present = self._prefilter.present(text)
        if present is not None and not present:
            quiet_failed: set[str] = set()
            out = self._run_detectors(text, quiet_failed, [])
            return [Hit(c, p, s, e, v) for c, p, s, e, v in out], quiet_failed
        root = View(text)
        base = fold_view(root) or root  # ASCII text (present is not None) has no fold view
        queue = [base]
        # The base view's shadows and digit runs, kept for its scan (after the other views').
        shadow = ascii_shadow(base.text)
        lower = lower_shadow(base.text) if self._prefilter.wants_keywords(present) else None
        runs: list[tuple[int, int]] | None = None
        want_escapes = present is None or ESCAPES in present
        want_joins = present is None or JOINS in present
        if want_escapes or want_joins:
            if (
                len(base.text) > SHARED_PASS_MIN
                and self._prefilter.keywordless
                and (present is None or DIGITS in present)
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
        hits: list[Hit] = []
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
                hits.append(Hit(code, prio, os_, oe, value))
            if view.depth < self._decode_depth and (only is None or BLOBS in only):
                view_shadow = shadow if view is base else None
                queue.extend(decoded_views(view, self._decode_depth, shadow=view_shadow))
        return hits, failed

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
        prefilter = self._prefilter
        n = len(text)
        windows: dict[int, Windows] = {}
        shadow, lower = shadows if shadows is not None else (ascii_shadow(text), None)
        text_ascii = text.isascii()
        if n and prefilter.wants_keywords(present):
            # Keywords are ASCII: lower-casing the ASCII shadow keeps every offset.
            if lower is None:
                lower = lower_shadow(text)
            windows.update(prefilter.keyword_rule_windows(lower, n))
        if prefilter.keywordless and n and (present is None or DIGITS in present):
            if runs is None:
                runs = digit_runs(shadow)
            if runs:
                prefilter.digit_windows(windows, runs, n)
        if text_ascii and len(shadow) == n:
            prefilter.drop_matchless(windows, shadow, n)
        claims: list[Claim] = []
        for i, planned in windows.items():
            crule = self._rules[i]
            rule_windows = planned() if callable(planned) else planned
            try:
                out.extend(confirm(crule, text, rule_windows, shadow, text_ascii, claims=claims))
            except Exception:  # noqa: BLE001 - recorded as engine.detector_error
                failed.add(crule.rule.id)
        return drop_misreadings(self._run_detectors(text, failed, out), claims)

    def _run_detectors(
        self, text: str, failed: set[str], out: list[tuple[str, int, int, int, str]]
    ) -> list[tuple[str, int, int, int, str]]:
        for det in self._detectors:
            try:
                out.extend((det.code, det.priority, s, e, v) for s, e, v in det.find(text))
            except Exception:  # noqa: BLE001 - recorded as engine.detector_error
                failed.add(det.code)
        return out
