"""The seam scan is incremental for conversation history, and never answers differently.

The cache remembers the seam findings of conversation prefixes; a later turn that resends a
prefix looks again only at seams whose window reaches into the new text. Whatever the history,
a request judged with the memo is judged exactly as without any cache.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domestique.keys import Fingerprinter
from domestique.proxy.pipeline import Inspection, ScanCache, inspect_request
from domestique.proxy.routes import Operation, Provider, Route

from .conftest import CANARY, CanaryScanner, TablePolicy

KEY = b"s" * 32
ROUTE = Route(Provider.ANTHROPIC, Operation.ANTHROPIC_MESSAGES, "/v1/messages")


def _inspect(messages: list[Any], cache: ScanCache | None, scanner: Any = None) -> Inspection:
    from domestique.redact import PlaceholderMaker

    body = {"model": "m", "messages": messages}
    return inspect_request(
        ROUTE,
        json.dumps(body).encode(),
        content_encoding="",
        scanner=scanner or CanaryScanner(),
        policy=TablePolicy(),
        maker=PlaceholderMaker(KEY),
        fingerprinter=Fingerprinter(KEY),
        cache=cache,
    )


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


LONG = "def helper(x):\n    return x * 2\n" * 40  # a resent tool result, longer than a window


def test_a_split_secret_in_resent_history_is_still_redacted_from_the_memo() -> None:
    """Turn 2 resends turn 1 (with a secret split over two messages) and adds a message: the
    memo answers for the old seams, the split is still redacted, and only new seams are read."""
    cache = ScanCache(min_chars=64)
    scanner = CanaryScanner()
    history = [_user(LONG), _user("note " + CANARY[:12]), _user(CANARY[12:] + " end"), _user(LONG)]
    first = _inspect(history, cache, scanner)
    calls = scanner.calls
    second = _inspect([*history, _user(LONG + "# more\n")], cache, scanner)
    assert cache.seam_hits == 1
    assert second.body is not None
    assert first.body is not None
    assert json.loads(second.body)["messages"][:4] == json.loads(first.body)["messages"]
    assert CANARY[:12].encode() not in second.body
    assert CANARY[12:].encode() not in second.body
    assert second.body == _inspect([*history, _user(LONG + "# more\n")], None).body
    assert scanner.calls - calls == 2  # the new field, and the one new seam window


def test_an_edited_earlier_message_is_not_answered_by_the_memo() -> None:
    """A prefix with any text changed is another prefix: a split made by the edit is found."""
    cache = ScanCache(min_chars=64)
    history = [_user(LONG), _user("a " + CANARY[:12]), _user("clean " + LONG), _user(LONG)]
    assert _inspect(history, cache).mapping == {}
    edited = [history[0], history[1], _user(CANARY[12:] + " " + LONG), history[3]]
    ins = _inspect([*edited, _user("next")], cache)
    assert ins.mapping
    assert "".join(ins.mapping.values()) == CANARY


_piece = st.sampled_from([LONG, "ok", "short text", CANARY[:9], CANARY[9:], CANARY, "  "])
_text = st.lists(_piece, min_size=1, max_size=3).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.lists(_text, min_size=1, max_size=5),
    turns=st.lists(
        st.tuples(st.sampled_from(["append", "edit-last", "resend"]), _text),
        min_size=1,
        max_size=4,
    ),
)
def test_turns_judged_with_the_memo_equal_turns_judged_afresh(
    start: list[str], turns: list[tuple[str, str]]
) -> None:
    """Any history and any sequence of turns (messages appended, the last one edited, the
    same request resent): the memo never changes what is forwarded or redacted."""
    cache = ScanCache(min_chars=1)
    texts = list(start)
    for kind, text in [("resend", ""), *turns]:
        if kind == "append":
            texts.append(text)
        elif kind == "edit-last":
            texts[-1] = text
        messages = [_user(t) for t in texts]
        memo, fresh = _inspect(messages, cache), _inspect(messages, None)
        assert (memo.action, memo.body, memo.mapping) == (fresh.action, fresh.body, fresh.mapping)
