"""Request headers whose values are identifiers by a documented format, not content. Pure.

Agents and their SDKs send tracing and request-id headers on every request: W3C
``traceparent`` / ``tracestate`` / ``baggage``, Sentry's ``sentry-trace``, B3, Jaeger, AWS
X-Ray, Google Cloud Trace and Datadog ids, request / session / correlation ids, the Stainless
SDKs' ``x-stainless-*`` facts, OpenAI's organization and project ids. Their random hex and
decimal ids read as secrets to a detector (a 32-hex trace id next to the word "sentry" is a
service credential; a 19-digit Datadog id passes the Luhn check one time in ten), and a
header cannot be redacted, so every such request would be refused.

:func:`scanned_value` gives the part of a header value the firewall scans: a value that has
its header's documented format exactly is nothing to scan; in list headers (``baggage``,
``x-datadog-tags``) only the members whose documented format is an id are left out, the rest
is scanned. A value that does not have its header's format is scanned whole, and any header
not listed here is scanned whole: a secret in an unknown header, or dressed up as a trace
header, still blocks.
"""

from __future__ import annotations

import re

_HEX16 = "[0-9a-f]{16}"
_HEX32 = "[0-9a-f]{32}"
_UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_DEC64 = "[0-9]{1,20}"
_SEMVER = r"v?[0-9]+(?:\.[0-9]+){0,3}(?:[-+][0-9A-Za-z.]{1,32})?"
# A short word-like value (an OS, architecture, language, runtime): letters, then groups that
# start with a separator; a token made of letters and digits run together does not match.
# A word of the SDK's own vocabulary ("js", "MacOS", "arm64", "Other:Linux", "beta.chat.parse"):
# letters with at most 3 trailing digits per part, so no mixed random run (a token) fits.
_PART = "(?:[A-Za-z]{1,16}[0-9]{0,3}|[0-9]{1,4})"
_WORD = rf"[A-Za-z]{{1,16}}[0-9]{{0,3}}(?:[:/ _.-]{_PART}){{0,3}}"
_ID_VALUE = rf"(?:{_UUID}|(?:req|msg|resp|sess|conv)_[A-Za-z0-9]{{8,64}})"
# Bare hex only for tracing ids (16 or 32 hex digits); a session id in hex is a bearer credential.
_TRACE_ID_VALUE = rf"(?:{_ID_VALUE}|{_HEX16}|{_HEX32})"

# Header name -> the documented format of its whole value.
_FORMATS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern)
    for name, pattern in {
        # W3C Trace Context: version-traceid-parentid-flags.
        "traceparent": rf"[0-9a-f]{{2}}-{_HEX32}-{_HEX16}-[0-9a-f]{{2}}",
        # Sentry: traceid-spanid[-sampled].
        "sentry-trace": rf"{_HEX32}-{_HEX16}(?:-[01])?",
        # B3 single header and multi headers (Zipkin).
        "b3": rf"(?:[0-9a-f]{{16}}|{_HEX32})-{_HEX16}(?:-[01d](?:-{_HEX16})?)?|[01d]",
        "x-b3-traceid": rf"{_HEX16}(?:{_HEX16})?",
        "x-b3-spanid": _HEX16,
        "x-b3-parentspanid": _HEX16,
        "x-b3-sampled": "[01]|true|false",
        "x-b3-flags": "1",
        # Jaeger: trace-id:span-id:parent-span-id:flags (hex, leading zeros may be dropped).
        "uber-trace-id": "[0-9a-f]{1,32}:[0-9a-f]{1,16}:[0-9a-f]{1,16}:[0-9a-f]{1,2}",
        # AWS X-Ray.
        "x-amzn-trace-id": (
            r"(?:(?:Root|Self)=1-[0-9a-f]{8}-[0-9a-f]{24}|Parent=[0-9a-f]{16}|Sampled=[01?]"
            r"|Lineage=[0-9a-f]{8}:[0-9]{1,5})(?:;(?:(?:Root|Self)=1-[0-9a-f]{8}-[0-9a-f]{24}"
            r"|Parent=[0-9a-f]{16}|Sampled=[01?]|Lineage=[0-9a-f]{8}:[0-9]{1,5}))*"
        ),
        # Google Cloud Trace: TRACE_ID/SPAN_ID;o=OPTIONS.
        "x-cloud-trace-context": rf"{_HEX32}(?:/{_DEC64})?(?:;o=[0-9])?",
        # Datadog: decimal 64-bit ids.
        "x-datadog-trace-id": _DEC64,
        "x-datadog-parent-id": _DEC64,
        "x-datadog-sampling-priority": "-?[0-9]",
        "x-datadog-origin": "[a-z_-]{1,32}",
        # OpenAI's organization and project ids (sent beside the key, not secrets).
        "openai-organization": "org-[A-Za-z0-9]{8,64}",
        "openai-project": "proj_[A-Za-z0-9]{8,64}",
        # Stainless SDKs (anthropic, openai): retry state and idempotency of a request.
        "idempotency-key": rf"(?:stainless-[a-z]+-retry-)?{_UUID}",
        "x-stainless-retry-count": "[0-9]{1,4}",
        "x-stainless-timeout": r"[0-9]{1,10}(?:\.[0-9]{1,6})?",
        "x-stainless-read-timeout": r"[0-9]{1,10}(?:\.[0-9]{1,6})?",
        "x-stainless-custom-poll-interval": "[0-9]{1,10}",
        "x-stainless-package-version": _SEMVER,
        "x-stainless-runtime-version": _SEMVER,
        "x-stainless-lang": _WORD,
        "x-stainless-os": _WORD,
        "x-stainless-arch": _WORD,
        "x-stainless-runtime": _WORD,
        "x-stainless-async": _WORD,
        "x-stainless-helper-method": _WORD,
        "x-stainless-poll-helper": _WORD,
        "x-stainless-raw-response": _WORD,
        "x-stainless-stream-helper": _WORD,
    }.items()
}
# Request, session and correlation ids by name; their value must be an id (a UUID, hex, or a
# provider's prefixed id) to be left unscanned.
_ID_NAME = re.compile(
    r"(?:x-)?(?:[a-z]+-)*(?:request|correlation|trace|span|session|conversation|"
    r"client-request|interaction|turn)[-_]id"
)
_ID = re.compile(_ID_VALUE)
_TRACE_NAME = re.compile(r"(?:x-)?(?:[a-z]+-)*(?:request|correlation|trace|span)[-_]id")
_TRACE_ID = re.compile(_TRACE_ID_VALUE)
# List headers: members "key=value[;properties]" separated by commas. Only members whose key is
# listed and whose value has that format are left out.
_LIST_MEMBERS: dict[str, dict[str, re.Pattern[str]]] = {
    "baggage": {
        "sentry-trace_id": re.compile(_HEX32),
        "sentry-public_key": re.compile(_HEX32),  # the DSN's public key: public by design
        "sentry-replay_id": re.compile(_HEX32),
        "sentry-span_id": re.compile(_HEX16),
        "sentry-org_id": re.compile("[0-9]{1,20}"),
        "sentry-sample_rate": re.compile(r"[0-9](?:\.[0-9]{1,20})?(?:[eE]-?[0-9]{1,3})?"),
        "sentry-sample_rand": re.compile(r"[0-9](?:\.[0-9]{1,20})?(?:[eE]-?[0-9]{1,3})?"),
        "sentry-sampled": re.compile("true|false"),
    },
    "x-datadog-tags": {
        "_dd.p.tid": re.compile(_HEX16),
        "_dd.p.dm": re.compile("-[0-9]{1,2}"),
    },
}


def scanned_value(name: str, value: str) -> str:
    """The part of header ``name``'s ``value`` to scan ("" when it is all identifiers)."""
    lower = name.lower()
    fmt = _FORMATS.get(lower)
    if fmt is not None:
        return "" if fmt.fullmatch(value.strip()) else value
    if _ID_NAME.fullmatch(lower):
        ids = _TRACE_ID if _TRACE_NAME.fullmatch(lower) else _ID
        return "" if ids.fullmatch(value.strip()) else value
    members = _LIST_MEMBERS.get(lower)
    if members is not None:
        return _unlisted_members(value, members)
    return value


def _unlisted_members(value: str, members: dict[str, re.Pattern[str]]) -> str:
    """``value`` (a comma-separated list) without the members that are documented ids."""
    kept: list[str] = []
    for member in value.split(","):
        key, sep, rest = member.strip().partition("=")
        fmt = members.get(key)
        # the whole value must be the id: member properties (";k=v") are scanned with it
        if sep and fmt is not None and fmt.fullmatch(rest.strip()):
            continue
        kept.append(member)
    return ",".join(kept)
