"""domestique.frozen_class behaves as the stdlib's dataclass for the options it supports.

Every check builds the same class twice, once with :func:`dataclasses.dataclass` and once with
:func:`domestique.frozen_class.dataclass`, and compares what users of the class see.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
from typing import Any

import pytest

from domestique import frozen_class


def _build(deco: Any, fld: Any, **opts: Any) -> type:
    @deco(**opts)
    class Point:
        """A point."""

        x: int
        y: str = "y"
        tags: tuple[str, ...] = ()
        items: list[int] = fld(default_factory=list, compare=False)
        hidden: int = fld(default=0, repr=False, compare=False)

        @property
        def double(self) -> int:
            return self.x * 2

    return Point


OPTIONS = [
    {"frozen": True, "slots": True},
    {"frozen": True},
    {"slots": True},
    {},
]


def _both(**opts: Any) -> tuple[type, type]:
    std = _build(dataclasses.dataclass, dataclasses.field, **opts)
    ours = _build(frozen_class.dataclass, frozen_class.field, **opts)
    return std, ours


@pytest.mark.parametrize("opts", OPTIONS)
def test_init_repr_eq_hash_match_the_stdlib(opts: dict[str, Any]) -> None:
    """Same constructor behaviour, repr, equality, hashability and match args."""
    std, ours = _both(**opts)
    for args, kwargs in [((1,), {}), ((1, "a", ("t",)), {"hidden": 5}), ((), {"x": 3})]:
        a, b = std(*args, **kwargs), ours(*args, **kwargs)
        assert repr(a) == repr(b)
        assert b == ours(*args, **kwargs)
        assert b.double == a.double
        assert b.items == []
        assert b.items is not ours(1).items
    assert ours(1, hidden=1) == ours(1, hidden=2)  # compare=False
    assert ours(1) != ours(2)
    assert ours(1) != std(1)  # another class: not equal
    assert ours.__match_args__ == std.__match_args__
    hashable = std.__hash__ is not None
    assert (ours.__hash__ is not None) == hashable
    if hashable:
        assert hash(ours(1, "a")) == hash(ours(1, "a"))
        assert len({ours(1), ours(1), ours(2)}) == 2
    assert hasattr(ours(1), "__dict__") == hasattr(std(1), "__dict__")


@pytest.mark.parametrize("opts", OPTIONS)
def test_bad_arguments_raise_type_error(opts: dict[str, Any]) -> None:
    """Missing, duplicated, unknown or too many arguments: TypeError, as the stdlib's."""
    std, ours = _both(**opts)
    for cls in (std, ours):
        with pytest.raises(TypeError):
            cls()
        with pytest.raises(TypeError):
            cls(1, x=1)
        with pytest.raises(TypeError):
            cls(1, nope=1)
        with pytest.raises(TypeError):
            cls(1, "y", (), [], 0, "extra")


def test_frozen_refuses_assignment_and_deletion() -> None:
    """FrozenInstanceError (an AttributeError), for fields and for new attributes."""
    _, ours = _both(frozen=True, slots=True)
    p = ours(1)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
        p.x = 2
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'x'"):
        del p.x
    with pytest.raises(AttributeError):
        p.other = 1
    assert p.x == 1


@pytest.mark.parametrize("opts", OPTIONS)
def test_dataclasses_api_works_on_it(opts: dict[str, Any]) -> None:
    """replace, fields, asdict, astuple and is_dataclass see the same fields."""
    std, ours = _both(**opts)
    a, b = std(1, "a", items=[2]), ours(1, "a", items=[2])
    assert dataclasses.is_dataclass(b)
    assert dataclasses.is_dataclass(ours)
    assert dataclasses.asdict(b) == dataclasses.asdict(a)
    assert dataclasses.astuple(b) == dataclasses.astuple(a)
    got = [(f.name, f.type, f.repr, f.compare) for f in dataclasses.fields(b)]
    assert got == [(f.name, f.type, f.repr, f.compare) for f in dataclasses.fields(a)]
    changed = dataclasses.replace(b, y="z")
    assert type(changed) is ours
    assert changed.y == "z"
    assert changed.x == 1
    assert changed.items == [2]


@pytest.mark.parametrize("opts", OPTIONS)
def test_pickle_and_copy_round_trip(opts: dict[str, Any]) -> None:
    """Pickling and copying keep the value (a frozen class with slots included)."""
    _, ours = _both(**opts)
    globals()["Point"] = ours  # pickle finds the class by its module and name
    ours.__qualname__ = "Point"
    try:
        p = ours(1, "a", ("t",), [3], 4)
        again = pickle.loads(pickle.dumps(p))  # noqa: S301 - our own bytes, just made
        for other in (again, copy.copy(p), copy.deepcopy(p)):
            assert other == p
            assert other.hidden == 4
            assert type(other) is ours
    finally:
        del globals()["Point"]


def test_unsupported_definitions_are_refused() -> None:
    """A default before a required field, InitVar, or inherited fields: TypeError at once."""
    with pytest.raises(TypeError, match="non-default argument"):

        @frozen_class.dataclass
        class A:
            a: int = 0
            b: int

    with pytest.raises(TypeError, match="not supported"):

        @frozen_class.dataclass
        class B:
            a: dataclasses.InitVar[int]

    @frozen_class.dataclass(frozen=True)
    class C:
        a: int

    with pytest.raises(TypeError, match="inheriting"):

        @frozen_class.dataclass(frozen=True)
        class D(C):
            b: int

    with pytest.raises(ValueError, match="both"):
        frozen_class.field(default=1, default_factory=list)


def test_the_hook_decision_path_does_not_import_dataclasses() -> None:
    """The modules an in-process hook decision imports leave dataclasses (and inspect) out."""
    code = (
        "import sys\n"
        "import domestique.hooks.decide, domestique.policy, domestique.guard, domestique.audit\n"
        "print(sorted(m for m in ('dataclasses', 'inspect') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
