"""Field extraction: every text-bearing part of a request body as (JSON path, text) pairs.

Pure. The walk visits every string, every object key (but the member names the APIs
define, :data:`PROVIDER_KEYS`) and every number in the body (a number
as the text that is forwarded), so an unknown content-block or item type is scanned
generically, never skipped. Only a ``type`` member holding a string names a block type; any
other JSON value there (a schema property named ``type``) is plain data. Special handling
applies only at the exact positions each provider defines:

* **model** output — Anthropic ``messages[].content[]`` blocks of type ``thinking`` and
  ``redacted_thinking``, Responses ``input[]`` items of type ``reasoning`` and
  ``compaction``, Gemini ``contents[].parts[]`` with ``thought: true``: the model wrote them
  and the provider checks them, so they are scanned but never modified (a finding is
  recorded as ``proxy.secret_in_model_output``);
* **signed** ciphertext at those positions — the block's ``signature``, ``redacted_thinking``
  ``data``, the item's ``encrypted_content``, a part's ``thoughtSignature`` /
  ``thought_signature``: scanned, never modified; a finding blocks
  (``proxy.secret_in_signed_part``): ciphertext that matches a detector is not ciphertext;
* **credential** by design — Anthropic ``mcp_servers[].authorization_token``, an OpenAI
  ``tools[]`` entry of type ``mcp``'s ``authorization`` and ``headers``: a token the API
  takes on purpose, scanned, never modified, recorded (``proxy.credential_by_design``);
* **tool definitions** — everything under the top-level ``tools`` / ``functions``: ordinary
  text, flagged so the pipeline can tell the agent's own definitions from the conversation;
* **base64 payloads** — ``file_data``, ``data`` beside a MIME type or format, ``type: base64``
  sources: judged by content (:mod:`domestique.proxy.payloads`): text in any common encoding
  is decoded, scanned and re-encoded as it came if redacted; a payload that is not base64 is
  scanned as the text it is; a PDF's text is extracted and scanned, never modified
  (:mod:`domestique.proxy.pdf`; a finding blocks); what is truly binary is reported, not
  scanned;
* **data URLs** anywhere else are text: scanned as they are, and their payload is decoded and
  scanned too when it is text;
* **JSON strings** — ``arguments`` of tool calls: parsed, every key, leaf and number scanned
  with a path into it; a redaction rewrites only the redacted characters inside the string as
  it was sent (spacing and escapes kept, :mod:`domestique.proxy.jsontext`). A string with a
  duplicate key is scanned as the text it is (what is forwarded), not parsed.

The same names anywhere else (a tool input holding ``signature``, a schema property named
``encrypted_content``) are ordinary text. Nesting deeper than the limit raises
``proxy.nesting_too_deep``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import orjson

from domestique.proxy.body import BodyError
from domestique.proxy.jsontext import patch_json_text
from domestique.proxy.payloads import Encoding, decode_base64, is_data_url, read_payload
from domestique.proxy.pdf import PdfText, is_pdf, read_pdf

_BINARY_KEYS = frozenset({"file_data"})
_JSON_STRING_KEYS = frozenset({"arguments"})
_TOOL_KEYS = frozenset({"tools", "functions"})
# Member names the three APIs define: fixed words, not data. Every other key is scanned like a
# value (a test checks the real detectors find nothing in these).
PROVIDER_KEYS = frozenset(
    {
        "type",
        "text",
        "role",
        "content",
        "id",
        "name",
        "input",
        "output",
        "model",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "tool_use_id",
        "tool_call_id",
        "call_id",
        "tool_calls",
        "function",
        "arguments",
        "description",
        "input_schema",
        "parameters",
        "properties",
        "required",
        "items",
        "enum",
        "cache_control",
        "source",
        "media_type",
        "data",
        "thinking",
        "signature",
        "max_tokens",
        "stream",
        "metadata",
        "temperature",
        "is_error",
        "citations",
        "title",
        "context",
        "contents",
        "parts",
        "functionCall",
        "functionResponse",
        "functionDeclarations",
        "response",
        "args",
        "inlineData",
        "mimeType",
        "systemInstruction",
        "generationConfig",
        "summary",
        "encrypted_content",
        "status",
        "instructions",
        "reasoning",
        "additionalProperties",
        "strict",
        "format",
        "detail",
        "image_url",
        "url",
        "file",
        "filename",
        "file_data",
    }
)


class FieldKind(StrEnum):
    TEXT = "text"  # scanned; findings may be redacted in place
    MODEL = "model"  # the model's own checked output replayed: scanned, never modified
    SIGNED = "signed"  # provider ciphertext or signature: scanned, never modified
    CREDENTIAL = "credential"  # a credential the API takes on purpose: scanned, never modified
    DOCUMENT = "document"  # the text of a PDF: scanned, never modified (a PDF is not rewritten)
    BINARY = "binary"  # not text: reported, not scanned


UNMODIFIABLE = frozenset(
    {FieldKind.MODEL, FieldKind.SIGNED, FieldKind.CREDENTIAL, FieldKind.DOCUMENT}
)


@dataclass(slots=True)
class Field:
    """One string of the body and where it lives (``holder[key]``, or a key of ``holder``)."""

    path: str
    text: str
    kind: FieldKind
    holder: Any  # dict or list
    key: Any  # str or int
    is_key: bool = False  # the text is an object key, not a value
    json_string: int | None = None  # index into Extraction.json_strings when inside one
    encoding: Encoding | None = None  # the text was decoded from this base64 payload
    payload: str | None = None  # the text is a data URL's prefix; this is the rest, as sent
    number: bool = False  # the text is a JSON number as forwarded
    in_tools: bool = False  # inside the request's tool definitions
    problem: tuple[str, str] | None = None  # a binary part that blocks: (code, why)


@dataclass(slots=True)
class JsonString:
    """A string value that holds JSON (tool-call arguments), parsed for scanning."""

    path: str
    holder: Any
    key: Any
    value: Any
    changed: bool = False
    text: str = ""  # the string as sent: a change is written into it, not re-serialised


@dataclass(slots=True)
class Extraction:
    fields: list[Field] = field(default_factory=list)
    json_strings: list[JsonString] = field(default_factory=list)
    opaque: int = 0  # signed parts passed through unmodified

    @property
    def scanned(self) -> int:
        return sum(1 for f in self.fields if f.kind is not FieldKind.BINARY)

    def pairs(self) -> list[tuple[str, str]]:
        """(path, text) of every scanned field: what the detectors see."""
        return [(f.path, f.text) for f in self.fields if f.kind is not FieldKind.BINARY]


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _is_ident(key: str) -> bool:
    """An ASCII identifier (written ``.key`` in a path): one regex match, the hot path's cost."""
    return _IDENT.fullmatch(key) is not None


def _key_path(path: str, key: str) -> str:
    if _is_ident(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def number_text(value: int | float) -> str:
    """A JSON number as the text that is forwarded; an integral float as its digits."""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return orjson.dumps(value).decode()
    return str(value)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("duplicate key")
    return out


# Position rules: (kind for the rest of the object, {key: kind of that member}).
Rule = tuple[FieldKind, dict[str, FieldKind]]
_TEXT_RULE: Rule = (FieldKind.TEXT, {})
_SIG = FieldKind.SIGNED
_ANTHROPIC_BLOCKS: dict[str, Rule] = {
    "thinking": (FieldKind.MODEL, {"signature": _SIG}),
    "redacted_thinking": (FieldKind.MODEL, {"data": _SIG}),
}
_RESPONSES_ITEMS: dict[str, Rule] = {
    "reasoning": (FieldKind.MODEL, {"encrypted_content": _SIG}),
    "compaction": (FieldKind.MODEL, {"encrypted_content": _SIG}),
}
_GEMINI_SIGNATURES = {"thoughtSignature": _SIG, "thought_signature": _SIG}
_CRED = FieldKind.CREDENTIAL
# A position handler: (walker, object, member name, path, depth) for one member of an object.
Nav = Callable[["_Walker", dict[str, Any], str, str, int], None]


def _type_of(obj: dict[str, Any]) -> str | None:
    value = obj.get("type")
    return value if isinstance(value, str) else None


class _Walker:
    __slots__ = ("in_tools", "max_depth", "out")

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self.out = Extraction()
        self.in_tools = False

    def add(  # noqa: PLR0917 - hot path: positional calls on purpose
        self, path: str, text: str, kind: FieldKind, holder: Any, key: Any, js: int | None
    ) -> Field:
        f = Field(path, text, kind, holder, key, json_string=js, in_tools=self.in_tools)
        self.out.fields.append(f)
        return f

    # -- generic walk ------------------------------------------------------------------------
    def walk(self, value: Any, path: str, depth: int, kind: FieldKind, js: int | None) -> None:
        if depth > self.max_depth:
            raise BodyError("proxy.nesting_too_deep", f"JSON nesting deeper than {self.max_depth}")
        if isinstance(value, dict):
            self.walk_object(value, path, depth, kind, js)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                self.member(value, i, item, f"{path}[{i}]", depth, kind, js)

    def member(  # noqa: PLR0917 - hot path: positional calls on purpose
        self,
        holder: Any,
        key: Any,
        value: Any,
        path: str,
        depth: int,
        kind: FieldKind,
        js: int | None,
    ) -> None:
        """One value of an object or array: a string, a number, or a container to walk."""
        if isinstance(value, str):
            self.leaf(holder, key, value, path, kind, js)
        elif isinstance(value, dict | list):
            self.walk(value, path, depth + 1, kind, js)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            self.add(path, number_text(value), kind, holder, key, js).number = True

    def leaf(  # noqa: PLR0917 - hot path: positional calls on purpose
        self, holder: Any, key: Any, text: str, path: str, kind: FieldKind, js: int | None
    ) -> None:
        """A string, scanned as it is. A data URL whose payload is text is scanned as its
        prefix and its decoded payload (the two are rewritten together if redacted); any
        other data URL is scanned whole, as the text the model reads."""
        if is_data_url(text):
            prefix, _, payload = text.partition(",")
            if self.decoded(holder, key, text, path, kind, js):
                self.add(f"{path}<prefix>", prefix + ",", kind, holder, key, js).payload = payload
                return
        self.add(path, text, kind, holder, key, js)

    def decoded(  # noqa: PLR0917 - mirrors leaf()
        self, holder: Any, key: Any, text: str, path: str, kind: FieldKind, js: int | None
    ) -> bool:
        """Adds the text inside a base64 payload as a field; False when it holds no text."""
        found = read_payload(text)
        if found is None:
            return False
        plain, encoding = found
        self.add(f"{path}<base64>", plain, kind, holder, key, js).encoding = encoding
        return True

    def base64_part(  # noqa: PLR0917 - mirrors leaf()
        self, holder: Any, key: Any, text: str, path: str, kind: FieldKind, js: int | None
    ) -> None:
        """A payload labelled binary, judged by content: text, not base64, or binary."""
        if self.decoded(holder, key, text, path, kind, js):
            return
        payload = text.partition(",")[2] if text[:5].lower() == "data:" else text
        decoded = decode_base64(payload)
        if decoded is None:  # not base64 at all: the provider gets these characters; scan them
            self.add(path, text, kind, holder, key, js)
        elif is_pdf(decoded[0]):  # the provider reads a PDF's text: so does the scan
            found = read_pdf(decoded[0])
            if isinstance(found, PdfText):
                self.add(f"{path}<pdf>", found.text, FieldKind.DOCUMENT, holder, key, js)
            else:
                field = self.add(path, text, FieldKind.BINARY, holder, key, js)
                field.problem = (found.code, found.message)
        else:
            self.add(path, text, FieldKind.BINARY, holder, key, js)

    def walk_object(  # noqa: PLR0917 - recursion: positional on purpose
        self,
        obj: dict[str, Any],
        path: str,
        depth: int,
        kind: FieldKind,
        js: int | None,
        members: dict[str, FieldKind] | None = None,
        nav: dict[str, Nav] | None = None,
    ) -> None:
        """Every key and member of ``obj``. ``members`` gives some members their own kind
        (a signature at its position); ``nav`` hands a member to a position handler."""
        type_ = _type_of(obj)
        # Anthropic ``{type: base64, media_type, data}``; Gemini inlineData ``{mimeType, data}``;
        # OpenAI input_audio ``{data, format}``. A ``{type: text, data}`` document stays text.
        base64_source = type_ == "base64" or (
            type_ is None and ("mimeType" in obj or "mime_type" in obj or "format" in obj)
        )
        for key, value in obj.items():
            p = _key_path(path, key)
            member_kind = members.get(key, kind) if members else kind
            if key not in PROVIDER_KEYS:
                self.add(f"{p}<key>", key, kind, obj, key, js).is_key = True
            if nav is not None and key in nav and js is None:
                nav[key](self, obj, key, p, depth + 1)
            elif member_kind is not kind:
                self.out.opaque += 1
                self.member(obj, key, value, p, depth, member_kind, js)
            elif isinstance(value, str) and (
                key in _BINARY_KEYS or (key == "data" and base64_source)
            ):
                self.base64_part(obj, key, value, p, kind, js)
            elif (
                isinstance(value, str)
                and key in _JSON_STRING_KEYS
                and js is None
                and kind is FieldKind.TEXT
            ):
                self.json_string(obj, key, value, p, depth)
            else:
                self.member(obj, key, value, p, depth, kind, js)

    def json_string(self, holder: Any, key: Any, text: str, path: str, depth: int) -> None:
        try:
            parsed = json.loads(text, object_pairs_hook=_no_duplicates)
        except (ValueError, RecursionError):
            parsed = None
        if not isinstance(parsed, dict | list):
            # Not JSON, or JSON with a duplicate key (a reader could take either value):
            # scan the string itself, which is exactly what is forwarded.
            self.leaf(holder, key, text, path, FieldKind.TEXT, None)
            return
        index = len(self.out.json_strings)
        self.out.json_strings.append(JsonString(path, holder, key, parsed, text=text))
        self.walk(parsed, f"{path}<json>", depth + 1, FieldKind.TEXT, index)

    # -- exact provider positions ------------------------------------------------------------
    def positioned(  # noqa: PLR0917 - one helper for every list of positioned objects
        self,
        holder: dict[str, Any],
        key: str,
        path: str,
        depth: int,
        rule: Callable[[dict[str, Any]], Rule],
        nav: dict[str, Nav] | None = None,
    ) -> None:
        """``holder[key]``, a list whose objects sit at a provider-defined position: each
        object is walked with its rule; anything else is walked as ordinary text."""
        value = holder[key]
        if not isinstance(value, list):
            self.member(holder, key, value, path, depth - 1, FieldKind.TEXT, None)
            return
        if depth > self.max_depth:
            raise BodyError("proxy.nesting_too_deep", f"JSON nesting deeper than {self.max_depth}")
        for i, item in enumerate(value):
            p = f"{path}[{i}]"
            if isinstance(item, dict):
                kind, members = rule(item)
                self.walk_object(item, p, depth + 1, kind, None, members or None, nav)
            else:
                self.member(value, i, item, p, depth, FieldKind.TEXT, None)


def _anthropic_block(block: dict[str, Any]) -> Rule:
    return _ANTHROPIC_BLOCKS.get(_type_of(block) or "", _TEXT_RULE)


def _responses_item(item: dict[str, Any]) -> Rule:
    return _RESPONSES_ITEMS.get(_type_of(item) or "", _TEXT_RULE)


def _gemini_part(part: dict[str, Any]) -> Rule:
    return (FieldKind.MODEL if part.get("thought") is True else FieldKind.TEXT, _GEMINI_SIGNATURES)


def _message(_: dict[str, Any]) -> Rule:
    return _TEXT_RULE


def _openai_tool(tool: dict[str, Any]) -> Rule:
    if _type_of(tool) == "mcp":
        return FieldKind.TEXT, {"authorization": _CRED, "headers": _CRED}
    return _TEXT_RULE


def _mcp_server(_: dict[str, Any]) -> Rule:
    return FieldKind.TEXT, {"authorization_token": _CRED}


def _content_blocks(w: _Walker, obj: dict[str, Any], key: str, path: str, depth: int) -> None:
    w.positioned(obj, key, path, depth, _anthropic_block)


def _gemini_parts(w: _Walker, obj: dict[str, Any], key: str, path: str, depth: int) -> None:
    w.positioned(obj, key, path, depth, _gemini_part)


_MESSAGE_NAV: dict[str, Nav] = {"content": _content_blocks}
_CONTENT_NAV: dict[str, Nav] = {"parts": _gemini_parts}


def _messages(w: _Walker, obj: dict[str, Any], key: str, path: str, depth: int) -> None:
    w.positioned(obj, key, path, depth, _message, _MESSAGE_NAV)


def _input(w: _Walker, obj: dict[str, Any], key: str, path: str, depth: int) -> None:
    w.positioned(obj, key, path, depth, _responses_item)


def _contents(w: _Walker, obj: dict[str, Any], key: str, path: str, depth: int) -> None:
    w.positioned(obj, key, path, depth, _message, _CONTENT_NAV)


def _tools(w: _Walker, obj: dict[str, Any], key: str, path: str, depth: int) -> None:
    w.in_tools = True
    try:
        w.positioned(obj, key, path, depth, _openai_tool)
    finally:
        w.in_tools = False


def _mcp_servers(w: _Walker, obj: dict[str, Any], key: str, path: str, depth: int) -> None:
    w.positioned(obj, key, path, depth, _mcp_server)


_ROOT_NAV: dict[str, Nav] = {
    "messages": _messages,
    "input": _input,
    "contents": _contents,
    "tools": _tools,
    "functions": _tools,
    "mcp_servers": _mcp_servers,
}


def extract_fields(body: dict[str, Any], max_depth: int = 64) -> Extraction:
    """Every key, string and number of ``body`` as a :class:`Field`, in document order.

    The same walk serves all three providers: their block and item types are told apart by
    ``type`` and key names at the positions the providers define, and anything else is
    plain text to scan.
    """
    walker = _Walker(max_depth)
    walker.walk_object(body, "", 0, FieldKind.TEXT, None, None, _ROOT_NAV)
    return walker.out


class UnredactableError(ValueError):
    """Two redactions meet in one string (its text and the payload it encodes)."""

    def __init__(self, path: str) -> None:
        super().__init__(f"a finding in both the text at {path} and the payload it encodes")
        self.path = path


def redaction_conflicts(extraction: Extraction, indices: list[int]) -> list[str]:
    """Paths of strings that more than one of the redacted fields would rewrite (a data
    URL's prefix and its decoded payload are written together, not a conflict)."""
    seen: dict[tuple[int, Any, bool], Field] = {}
    out: list[str] = []
    for i in indices:
        f = extraction.fields[i]
        slot = (id(f.holder), f.key, f.is_key)
        other = seen.get(slot)
        if other is not None and not _pair(other, f):
            out.append(f.path)
        seen[slot] = f
    return out


def _pair(a: Field, b: Field) -> bool:
    """True for a data URL's prefix field and its decoded-payload field."""
    return (a.payload is not None and b.encoding is not None) or (
        b.payload is not None and a.encoding is not None
    )


def apply_replacements(extraction: Extraction, new_texts: dict[int, str]) -> None:
    """Write redacted texts back into the body (``new_texts``: field index -> text).

    Values first, then keys (renaming a key must not strand a value write), then JSON-string
    arguments whose inner values changed are re-serialised into their string. A redacted
    number becomes its placeholder text (a string). Raises :class:`UnredactableError` when
    two redactions would rewrite one string; only text fields may be redacted.
    """
    conflicts = redaction_conflicts(extraction, list(new_texts))
    if conflicts:
        raise UnredactableError(conflicts[0])
    keyed: list[tuple[Field, str]] = []
    prefixes: dict[tuple[int, Any], str] = {}  # a data URL's new prefix, by slot
    for index, text in sorted(
        new_texts.items(), key=lambda it: extraction.fields[it[0]].payload is None
    ):
        f = extraction.fields[index]
        if f.kind is not FieldKind.TEXT:
            raise ValueError("only text fields are redacted")
        if f.is_key:
            keyed.append((f, text))
        elif f.payload is not None:  # a data URL's prefix: the payload stays as it was sent
            prefixes[(id(f.holder), f.key)] = text
            f.holder[f.key] = text + f.payload
        elif f.encoding is not None:  # back encoded as it came, after its (new) prefix
            head = prefixes.get((id(f.holder), f.key))
            encoded = f.encoding.encode(text)
            f.holder[f.key] = encoded if head is None else head + encoded[len(f.encoding.prefix) :]
        else:
            f.holder[f.key] = text
        if f.json_string is not None:
            extraction.json_strings[f.json_string].changed = True
    for f, text in keyed:
        items = list(f.holder.items())
        f.holder.clear()
        for k, v in items:
            f.holder[text if k == f.key else k] = v
    for js in extraction.json_strings:
        if js.changed:
            js.holder[js.key] = _json_string_text(js)


def _json_string_text(js: JsonString) -> str:
    """The JSON string with its redactions: the text as sent with only the changed characters
    replaced (:mod:`domestique.proxy.jsontext`). Should that fail, the redacted value
    re-serialised compactly: what is forwarded is always the scanned value, redacted."""
    try:
        return patch_json_text(js.text, js.value)
    except (ValueError, IndexError):
        return json.dumps(js.value, ensure_ascii=False, separators=(",", ":"))
