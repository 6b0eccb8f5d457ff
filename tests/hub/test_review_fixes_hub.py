"""Two hub fixes from the final review: the doctor upload never fails a sync, and an empty
CSV cell stays empty."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from domestique.hub import endpoint
from domestique.hub.web._html import Table


class _Unreachable:
    def post(self, *args: Any, **kwargs: Any) -> Any:
        raise httpx.ConnectError("connection refused")


def test_a_doctor_upload_that_cannot_reach_the_hub_is_noted_not_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(endpoint, "doctor_hosts", lambda home_dir=None: [{"host": "codex"}])
    state: dict[str, Any] = {}
    endpoint._upload_doctor(_Unreachable(), headers={}, state=state)  # must not raise
    assert "cannot reach the hub" in state["doctor_error"]
    assert "doctor_at" not in state  # tried again at the next sync


def test_csv_keeps_empty_cells_empty_and_quotes_formulas() -> None:
    table = Table("t", "T", ("a", "b", "c"), [["", "=HYPERLINK(x)", "plain"]])
    assert table.csv().splitlines()[1] == ",'=HYPERLINK(x),plain"
