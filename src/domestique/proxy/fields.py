"""Field extraction: every text-bearing part of a request body as (JSON path, text) pairs.

Pure. The walk visits every string in the body (values, and object keys that are not plain
identifiers), so an unknown content-block or item type is scanned generically, never skipped.
A few parts get special handling, by the keys and ``type`` values the providers define:

* **signed** text — Anthropic ``thinking`` blocks, Responses ``reasoning`` items: scanned but
  never modified (a finding there blocks with ``proxy.secret_in_signed_part``);
* **opaque** ciphertext — ``signature``, ``redacted_thinking.data``, ``encrypted_content``,
  Gemini ``thoughtSignature``: neither scanned nor modified (only the provider can read them);
* **binary** parts — base64 images, PDFs, audio, files, ``data:`` URLs: not scanned as text,
  reported so policy can record or block them; a base64 part whose type is text (``text/*``,
  JSON, YAML, …) and which decodes as UTF-8 is decoded, scanned, and re-encoded if redacted;
* **JSON-string** arguments — ``arguments`` of tool calls are JSON inside a string: parsed, and
  every leaf scanned with a path into it; re-serialised only when something in it is redacted.

Nesting deeper than the limit raises ``proxy.nesting_too_deep``.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from domestique.proxy.body import BodyError

_PLAIN_KEY = re.compile(r"[A-Za-z_]{1,40}")
_OPAQUE_KEYS = frozenset({"encrypted_content", "thoughtSignature", "thought_signature"})
_SIGNED_TYPES = frozenset({"thinking", "reasoning"})
_BINARY_KEYS = frozenset({"file_data"})
_JSON_STRING_KEYS = frozenset({"arguments"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class FieldKind(StrEnum):
    TEXT = "text"  # scanned; findings may be redacted in place
    SIGNED = "signed"  # scanned; never modified
    BINARY = "binary"  # not text: reported, not scanned


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
    base64_prefix: str | None = None  # the text was decoded from base64 after this prefix


@dataclass(slots=True)
class JsonString:
    """A string value that holds JSON (tool-call arguments), parsed for scanning."""

    path: str
    holder: Any
    key: Any
    value: Any
    changed: bool = False


@dataclass(slots=True)
class Extraction:
    fields: list[Field] = field(default_factory=list)
    json_strings: list[JsonString] = field(default_factory=list)
    opaque: int = 0  # opaque parts passed through untouched

    @property
    def scanned(self) -> int:
        return sum(1 for f in self.fields if f.kind is not FieldKind.BINARY)

    def pairs(self) -> list[tuple[str, str]]:
        """(path, text) of every scanned field: what the detectors see."""
        return [(f.path, f.text) for f in self.fields if f.kind is not FieldKind.BINARY]


# key -> (is an identifier, is a plain key): the same few dozen keys recur in every body.
_KEY_INFO: dict[str, tuple[bool, bool]] = {}
_KEY_INFO_MAX = 4096


def _key_info(key: str) -> tuple[bool, bool]:
    info = _KEY_INFO.get(key)
    if info is None:
        info = (_IDENT.fullmatch(key) is not None, _PLAIN_KEY.fullmatch(key) is not None)
        if len(key) <= 64 and len(_KEY_INFO) < _KEY_INFO_MAX:
            _KEY_INFO[key] = info
    return info


def _key_path(path: str, key: str, ident: bool) -> str:
    if ident:
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _is_data_url(text: str) -> bool:
    return text.startswith("data:") and ";base64," in text[:200]


_TEXT_MIMES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/x-yaml",
        "application/yaml",
        "application/javascript",
        "application/x-sh",
        "application/toml",
        "application/x-python",
        "application/sql",
    }
)
MAX_DECODED_PART = 8 * 1024 * 1024


def _decode_text_part(text: str, mime: str) -> tuple[str, str] | None:
    """(prefix, decoded text) of a base64 part whose type is text; None when it is not.

    A ``data:`` URL keeps its ``data:…;base64,`` prefix; a bare base64 value has prefix "".
    Only strict base64 of valid UTF-8 is taken as text; anything else stays binary.
    """
    prefix = ""
    payload = text
    if text.startswith("data:"):
        head, sep, payload = text.partition(",")
        if not sep:
            return None
        prefix = head + sep
        mime = head[5:].split(";")[0]
    mime = mime.strip().lower()
    if not (mime.startswith("text/") or mime in _TEXT_MIMES or mime.endswith(("+json", "+xml"))):
        return None
    if len(payload) > MAX_DECODED_PART * 4 // 3 + 4:
        return None
    try:
        plain = base64.b64decode(payload, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    return prefix, plain


class _Walker:
    __slots__ = ("max_depth", "out")

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self.out = Extraction()

    def add(self, f: Field) -> None:
        self.out.fields.append(f)

    def walk(self, value: Any, path: str, depth: int, kind: FieldKind, js: int | None) -> None:
        if depth > self.max_depth:
            raise BodyError("proxy.nesting_too_deep", f"JSON nesting deeper than {self.max_depth}")
        if isinstance(value, dict):
            self.walk_object(value, path, depth, kind, js)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                p = f"{path}[{i}]"
                if isinstance(item, str):
                    self.leaf(value, i, item, p, kind, js)
                elif isinstance(item, dict | list):
                    self.walk(item, p, depth + 1, kind, js)

    def leaf(  # noqa: PLR0917 - hot path: positional calls on purpose
        self, holder: Any, key: Any, text: str, path: str, kind: FieldKind, js: int | None
    ) -> None:
        if kind is FieldKind.TEXT and _is_data_url(text):
            head, _, _ = text.partition(",")
            self.base64_part(holder, key, text, path, head[5:].split(";")[0], js)
            return
        self.add(Field(path, text, kind, holder, key, json_string=js))

    def base64_part(  # noqa: PLR0917 - mirrors leaf()
        self, holder: Any, key: Any, text: str, path: str, mime: str, js: int | None
    ) -> None:
        """A base64 part: scanned as text when its type is text and it decodes as UTF-8."""
        decoded = _decode_text_part(text, mime)
        if decoded is None:
            self.add(Field(path, text, FieldKind.BINARY, holder, key, json_string=js))
            return
        prefix, plain = decoded
        self.add(
            Field(
                f"{path}<base64>",
                plain,
                FieldKind.TEXT,
                holder,
                key,
                json_string=js,
                base64_prefix=prefix,
            )
        )

    def walk_object(
        self, obj: dict[str, Any], path: str, depth: int, kind: FieldKind, js: int | None
    ) -> None:
        # ``type`` is any JSON value (a schema property may be named ``type``): only a string
        # names a block or item type.
        type_ = obj.get("type")
        if not isinstance(type_, str):
            type_ = None
        if kind is FieldKind.TEXT and type_ in _SIGNED_TYPES:
            kind = FieldKind.SIGNED
        # Anthropic ``{type: base64, media_type, data}``; Gemini inlineData ``{mimeType, data}``;
        # OpenAI input_audio ``{data, format}``. A ``{type: text, data}`` document stays text.
        base64_source = type_ == "base64" or (
            type_ is None and ("mimeType" in obj or "mime_type" in obj or "format" in obj)
        )
        for key, value in obj.items():
            ident, plain = _key_info(key)
            p = _key_path(path, key, ident)
            if not plain:
                self.add(Field(f"{p}<key>", key, kind, obj, key, is_key=True, json_string=js))
            if (
                key in _OPAQUE_KEYS
                or (key == "signature" and type_ == "thinking")
                or (key == "data" and type_ == "redacted_thinking")
            ):
                # Never modified, but scanned: ciphertext that matches a detector is not
                # ciphertext, and blocks (proxy.secret_in_signed_part).
                self.out.opaque += 1
                if isinstance(value, str):
                    self.add(Field(p, value, FieldKind.SIGNED, obj, key, json_string=js))
                elif isinstance(value, dict | list):
                    self.walk(value, p, depth + 1, FieldKind.SIGNED, js)
                continue
            if isinstance(value, str):
                if key in _BINARY_KEYS or (key == "data" and base64_source):
                    mime = obj.get("mimeType") or obj.get("mime_type") or obj.get("media_type")
                    mime = mime if isinstance(mime, str) else ""
                    self.base64_part(obj, key, value, p, mime, js)
                elif key in _JSON_STRING_KEYS and js is None and kind is FieldKind.TEXT:
                    self.json_string(obj, key, value, p, depth)
                else:
                    self.leaf(obj, key, value, p, kind, js)
            elif isinstance(value, dict | list):
                self.walk(value, p, depth + 1, kind, js)

    def json_string(self, holder: Any, key: Any, text: str, path: str, depth: int) -> None:
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            parsed = None
        if not isinstance(parsed, dict | list):
            # Not JSON (a partial or free-text argument): scan the string itself.
            self.leaf(holder, key, text, path, FieldKind.TEXT, None)
            return
        index = len(self.out.json_strings)
        self.out.json_strings.append(JsonString(path, holder, key, parsed))
        self.walk(parsed, f"{path}<json>", depth + 1, FieldKind.TEXT, index)


def extract_fields(body: dict[str, Any], max_depth: int = 64) -> Extraction:
    """Every string of ``body`` as a :class:`Field`, in document order.

    The same walk serves all three providers: their block and item types are told apart by
    ``type`` and key names, and anything unrecognised is plain text to scan.
    """
    walker = _Walker(max_depth)
    walker.walk_object(body, "", 0, FieldKind.TEXT, None)
    return walker.out


def apply_replacements(extraction: Extraction, new_texts: dict[int, str]) -> None:
    """Write redacted texts back into the body (``new_texts``: field index -> text).

    Values first, then keys (renaming a key must not strand a value write), then JSON-string
    arguments whose inner values changed are re-serialised into their string.
    """
    keyed: list[tuple[Field, str]] = []
    for index, text in new_texts.items():
        f = extraction.fields[index]
        if f.kind is not FieldKind.TEXT:
            raise ValueError("only text fields are redacted")
        if f.is_key:
            keyed.append((f, text))
        elif f.base64_prefix is not None:
            # A decoded text part goes back encoded as it came.
            f.holder[f.key] = f.base64_prefix + base64.b64encode(text.encode()).decode("ascii")
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
            js.holder[js.key] = json.dumps(js.value, ensure_ascii=False, separators=(",", ":"))
