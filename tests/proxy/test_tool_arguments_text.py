"""Redacting inside a tool call's ``arguments`` JSON string keeps the rest of its text.

The arguments are text the model wrote and the agent resends; only a secret's characters may
change in them (its placeholder written inside the JSON string, escaped as JSON needs), never
their spacing, escapes or member layout. Properties over arbitrary JSON texts, and the patcher
(:mod:`domestique.proxy.jsontext`) on its own.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domestique.keys import Fingerprinter
from domestique.proxy.jsontext import patch_json_text
from domestique.proxy.pipeline import inspect_request
from domestique.proxy.routes import Operation, Provider, Route
from domestique.records import Action
from domestique.redact import PLACEHOLDER_PATTERN, PlaceholderMaker

from .conftest import CANARY, CanaryScanner, TablePolicy

KEY = b"a" * 32
MAKER = PlaceholderMaker(KEY)
ROUTE = Route(Provider.OPENAI, Operation.OPENAI_CHAT, "/v1/chat/completions")

_ws = st.text(alphabet=" \t\n\r", max_size=3)
_plain = st.text(max_size=12)
# Strings, some holding the canary with any text around it (any unicode, escaped or not).
_strings = st.one_of(_plain, st.builds(lambda a, b: f"{a}{CANARY}{b}", _plain, _plain))
_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**12), 10**12),
        st.floats(allow_nan=False, allow_infinity=False),
        _strings,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_strings, inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def argument_texts(draw: st.DrawFn) -> str:
    """JSON text of an object, written with arbitrary whitespace and escaping."""
    value = draw(st.dictionaries(_strings, _values, min_size=1, max_size=4))
    item = f"{draw(_ws)},{draw(_ws)}"
    key = f"{draw(_ws)}:{draw(_ws)}"
    indent = draw(st.sampled_from([None, 0, 2, "\t"]))
    text = json.dumps(
        value, ensure_ascii=draw(st.booleans()), indent=indent, separators=(item, key)
    )
    return draw(_ws) + text + draw(_ws)


def _send(arguments: str) -> Any:
    call = {"id": "c1", "type": "function", "function": {"name": "run", "arguments": arguments}}
    body = {"model": "m", "messages": [{"role": "assistant", "tool_calls": [call]}]}
    return inspect_request(
        ROUTE,
        json.dumps(body).encode(),
        content_encoding="",
        scanner=CanaryScanner(),
        policy=TablePolicy(),
        maker=MAKER,
        fingerprinter=Fingerprinter(KEY),
    )


def _forwarded_arguments(ins: Any) -> str:
    assert ins.body is not None
    sent = json.loads(ins.body)["messages"][0]["tool_calls"][0]["function"]["arguments"]
    assert isinstance(sent, str)
    return sent


def _replace_canary(value: Any, placeholder: str) -> Any:
    if isinstance(value, str):
        return value.replace(CANARY, placeholder)
    if isinstance(value, list):
        return [_replace_canary(v, placeholder) for v in value]
    if isinstance(value, dict):
        return {
            _replace_canary(k, placeholder): _replace_canary(v, placeholder)
            for k, v in value.items()
        }
    return value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arguments=argument_texts())
def test_redacted_arguments_differ_only_at_the_secret_and_still_parse(arguments: str) -> None:
    """Any JSON argument text: the forwarded text equals the original once every placeholder
    is read back as the secret, and it parses to the original value with the secret redacted."""
    ins = _send(arguments)
    forwarded = _forwarded_arguments(ins)
    if CANARY not in arguments:
        assert forwarded == arguments  # nothing to redact: the text is untouched
        return
    assert ins.action is Action.REDACT
    assert CANARY not in forwarded
    assert PLACEHOLDER_PATTERN.sub(CANARY, forwarded) == arguments
    placeholder = MAKER.placeholder("secret.canary", CANARY)
    assert json.loads(forwarded) == _replace_canary(json.loads(arguments), placeholder)


def test_spacing_escapes_and_neighbours_are_kept_byte_for_byte() -> None:
    """A pretty-printed text with unicode escapes beside the secret keeps every other byte."""
    arguments = (
        '{\n  "path" : "caf\\u00e9\\ud83d\\ude00",\n  "cmd" :\t"echo \\u00e9'
        + CANARY
        + '\\n done"  ,\n  "n": 1.50e3\n}\n'
    )
    forwarded = _forwarded_arguments(_send(arguments))
    placeholder = MAKER.placeholder("secret.canary", CANARY)
    assert forwarded == arguments.replace(CANARY, placeholder)


def test_a_secret_key_and_a_secret_number_are_rewritten_in_place() -> None:
    """A key is renamed in place; a number becomes its placeholder as a JSON string."""
    text = '{ "a" : 1 ,  "xx": [ 2 , 4111111111111111 ] }'
    assert patch_json_text(text, {"a": 1, "xx": [2, "[N]"]}) == (
        '{ "a" : 1 ,  "xx": [ 2 , "[N]" ] }'
    )
    assert patch_json_text(text, {"[K]": 1, "xx": [2, "[N]"]}) == (
        '{ "[K]" : 1 ,  "xx": [ 2 , "[N]" ] }'
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": "x"}', {"a": 1}),  # a string cannot become a number
        ('{"a": [1]}', {"a": [1, 2]}),  # nor an array change length
        ('{"a": 1} x', {"a": 1}),  # trailing data
    ],
)
def test_a_shape_change_is_refused(text: str, value: Any) -> None:
    """The patcher never guesses: a value of another shape is an error (the caller then
    forwards the redacted value re-serialised, never the unredacted text)."""
    with pytest.raises(ValueError, match=r"."):
        patch_json_text(text, value)


def test_the_change_is_the_smallest_run_of_characters() -> None:
    """Only the characters that differ are rewritten, escapes on either side kept."""
    text = '["\\u0041BC\\u0044"]'
    assert patch_json_text(text, ["AXCD"]) == '["\\u0041XC\\u0044"]'
    assert patch_json_text(text, ["ABCD"]) == text
