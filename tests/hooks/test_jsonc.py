"""The in-place JSON(C) editor: values right, every other byte kept, undo gives the bytes back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.hooks import jsonc

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.text(max_size=8))
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
_docs = st.dictionaries(st.text(min_size=1, max_size=5), _values, max_size=4)


@settings(max_examples=150, deadline=None)
@given(doc=_docs, indent=st.sampled_from([None, 2, 4, "\t"]), value=_values)
def test_add_then_remove_gives_the_same_bytes(doc: dict[str, Any], indent: Any, value: Any) -> None:
    """For any document in any layout: adding a member (or an array item) keeps the value right,
    and taking it out again gives back exactly the original text."""
    text = json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"
    key = "\u00a7added"
    added = jsonc.set_member(text, (key, "inner"), value)
    assert jsonc.loads(added) == {**doc, key: {"inner": value}}
    assert jsonc.remove_member(added, (key,)) == text
    for k, v in doc.items():
        if isinstance(v, list):
            appended = jsonc.append_item(text, (k,), value)
            assert jsonc.loads(appended)[k] == [*v, value]
            assert jsonc.remove_item(appended, (k,), len(v)) == text


def test_comments_and_trailing_commas_are_read_and_kept() -> None:
    text = '{\n  // a\n  "a": [1, 2,], /* b */\n  "b": {"c": true,},\n}\n'
    assert jsonc.loads(text) == {"a": [1, 2], "b": {"c": True}}
    edited = jsonc.set_member(text, ("b", "d"), 1)
    assert "// a" in edited
    assert "/* b */" in edited
    assert jsonc.loads(edited) == {"a": [1, 2], "b": {"c": True, "d": 1}}
    assert jsonc.remove_member(edited, ("b", "d")) == text


def test_replacing_a_value_changes_only_that_value() -> None:
    text = '{\n    "x": 1,   // keep\n    "y": "z"\n}\n'
    assert jsonc.set_member(text, ("x",), 2) == text.replace('"x": 1', '"x": 2')


@pytest.mark.parametrize(
    "text", ['{"a": }', '{"a": 1', "[1] [2]", "{'a': 1}", '{"a": 1 /* open', ""]
)
def test_not_json_is_refused(text: str) -> None:
    with pytest.raises(jsonc.JSONCError):
        jsonc.loads(text)
