"""The TOML position finder: every key and value path maps to where it is written."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.policy._locate import line_col_of_offset, locate

DOC = """\
version = 1   # comment
[settings]
unmatched = "deny"
[[rules]]
id = 'a'
codes = [
  "pii.email",   # first
  "secret.*",
]
"quoted key" = { hosts = ["x"], paths = ['~/.ssh/*'] }
[[rules.except]]
hosts = ["h"]
[[rules]]
id = \"\"\"b\"\"\"
codes = ["x"]
"""


def test_positions_of_keys_values_and_array_items() -> None:
    """Keys, array items, inline tables and arrays of tables are all located."""
    pos = locate(DOC)
    assert pos.of_key(("version",)) == (1, 1)
    assert pos.of_value(("settings", "unmatched")) == (3, 13)
    assert pos.of_key(("rules", 0)) == (4, 1)
    assert pos.of_value(("rules", 0, "codes", 1)) == (8, 3)
    assert pos.of_value(("rules", 0, "quoted key", "paths", 0)) == (10, 42)
    assert pos.of_key(("rules", 0, "except", 0, "hosts")) == (12, 1)
    assert pos.of_value(("rules", 1, "codes")) == (15, 9)
    assert pos.of_key(("rules", 1)) == (13, 1)


def test_unknown_paths_fall_back_to_the_nearest_parent() -> None:
    """A path not written in the file points at its nearest written ancestor, else 1:1."""
    pos = locate(DOC)
    assert pos.of_value(("rules", 1, "action")) == (13, 1)
    assert pos.of_value(("nothing",)) == (1, 1)


KEY = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
VALUE = st.one_of(
    st.integers(min_value=-5, max_value=5).map(str),
    st.text(alphabet="abc #=[]{}'", max_size=6).map(lambda s: '"' + s + '"'),
    st.lists(st.integers(min_value=0, max_value=9).map(str), max_size=3).map(
        lambda xs: "[" + ", ".join(xs) + "]"
    ),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(KEY, VALUE), min_size=1, max_size=6, unique_by=lambda kv: kv[0]),
    st.lists(st.sampled_from(["", " ", "  ", "\t"]), min_size=6, max_size=6),
    st.booleans(),
)
def test_every_key_and_value_is_found_where_it_is_written(
    pairs: list[tuple[str, str]], pads: list[str], comments: bool
) -> None:
    """For generated tables of rules, each key's position is the key text, each value's the
    value text, whatever the spacing and comments."""
    lines = ["[[rules]]"]
    for i, (key, value) in enumerate(pairs):
        pad = pads[i % len(pads)]
        lines.append(f"{pad}{key}{pad}={pad}{value}" + ("  # c = [x]" if comments else ""))
    text = "\n".join(lines) + "\n"
    import tomllib

    assert tomllib.loads(text)  # the generated document is valid TOML
    pos = locate(text)
    offsets = _line_offsets(text)
    for key, value in pairs:
        kl, kc = pos.of_key(("rules", 0, key))
        assert text[offsets[kl - 1] + kc - 1 :].startswith(key)
        vl, vc = pos.of_value(("rules", 0, key))
        assert text[offsets[vl - 1] + vc - 1 :].startswith(value)


def _line_offsets(text: str) -> list[int]:
    out = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            out.append(i + 1)
    return out


def test_line_col_of_offset() -> None:
    """Offsets convert to 1-based line and column."""
    assert line_col_of_offset("ab\ncd", 0) == (1, 1)
    assert line_col_of_offset("ab\ncd", 4) == (2, 2)
