"""``dataclass`` and ``field`` for the classes on the hook's in-process path, without the import.

A hook call that finds no daemon decides in a fresh interpreter, and ``dataclasses`` costs it
there: importing it loads ``inspect`` (``ast``, ``dis``, ``tokenize`` ...), and decorating a class
compiles its generated ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and ``__setattr__``
from source text (about a millisecond per frozen class with slots, two dozen classes on that
path). :func:`dataclass` here builds the same methods as closures over the field list, which
costs microseconds and imports nothing.

For mypy the two names *are* :func:`dataclasses.dataclass` and :func:`dataclasses.field`, so
typing is unchanged. At run time a decorated class behaves as the stdlib's would for the options
supported (``frozen``, ``slots``; ``default``, ``default_factory``, ``repr``, ``compare``): same
``__init__`` signature, ``repr``, equality, hashing, ``FrozenInstanceError`` (which subclasses
``AttributeError``), ``__match_args__``, pickling and copying; and ``dataclasses.replace``,
``fields``, ``asdict`` and ``is_dataclass`` work on it: its ``__dataclass_fields__`` is built
from real :class:`dataclasses.Field` objects the first time someone asks (who has imported
``dataclasses`` already). Anything else (``InitVar``, ``kw_only``, ``order``, inheriting fields)
is refused with TypeError at decoration time rather than half supported.
"""

from __future__ import annotations

from operator import attrgetter

TYPE_CHECKING = False  # not typing's: this module imports nothing the hook would not load
if TYPE_CHECKING:
    from collections.abc import Callable
    from dataclasses import dataclass, field, replace
    from typing import Any

__all__ = ["dataclass", "field", "replace"]

_MISSING = object()
_FIELDS = "__dataclass_fields__"
_NAMES = "__frozen_class_fields__"  # the field names, in order, on a class decorated here


class _Field:
    """What ``field(...)`` returns until the class is decorated."""

    __slots__ = ("compare", "default", "default_factory", "repr")

    def __init__(self, default: object, default_factory: object, repr: bool, compare: bool) -> None:
        self.default, self.default_factory = default, default_factory
        self.repr, self.compare = repr, compare


def _field(
    *,
    default: object = _MISSING,
    default_factory: Callable[[], object] | object = _MISSING,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return _Field(default, default_factory, repr, compare)


class _LazyFields:
    """``__dataclass_fields__``: real :class:`dataclasses.Field` objects, built on first use."""

    def __init__(self, specs: list[tuple[str, str, _Field]]) -> None:
        self._specs = specs

    def __get__(self, obj: object, cls: type) -> dict[str, Any]:
        import dataclasses

        out: dict[str, Any] = {}
        make: Any = dataclasses.field
        for name, annotation, spec in self._specs:
            f: Any = make(
                default=dataclasses.MISSING if spec.default is _MISSING else spec.default,
                default_factory=(
                    dataclasses.MISSING
                    if spec.default_factory is _MISSING
                    else spec.default_factory
                ),
                repr=spec.repr,
                compare=spec.compare,
            )
            f.name, f.type = name, annotation
            f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
            out[name] = f
        setattr(cls, _FIELDS, out)  # once: later lookups find the dict itself
        return out


def _frozen_error(what: str, name: str) -> AttributeError:
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(f"cannot {what} field {name!r}")


def _specs(cls: type) -> list[tuple[str, str, _Field]]:
    """The fields of ``cls`` in order, as ``(name, annotation, spec)``; defaults taken off."""
    for base in cls.__mro__[1:]:
        if _FIELDS in base.__dict__:
            raise TypeError(f"{cls.__qualname__}: inheriting dataclass fields is not supported")
    specs: list[tuple[str, str, _Field]] = []
    # The class's own annotations (inspect.get_annotations is what this module avoids loading).
    own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
    for name, annotation in own.items():
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        if text.startswith(("ClassVar", "typing.ClassVar")):
            continue
        if text.startswith(("InitVar", "dataclasses.InitVar", "KW_ONLY", "dataclasses.KW_ONLY")):
            raise TypeError(f"{cls.__qualname__}.{name}: {text} is not supported")
        value = cls.__dict__.get(name, _MISSING)
        spec = value if isinstance(value, _Field) else _Field(value, _MISSING, True, True)
        if specs and spec.default is _MISSING and spec.default_factory is _MISSING:
            last = specs[-1][2]
            if last.default is not _MISSING or last.default_factory is not _MISSING:
                raise TypeError(f"non-default argument {name!r} follows default argument")
        specs.append((name, annotation, spec))
    return specs


def _make_init(cls: type, specs: list[tuple[str, str, _Field]], frozen: bool) -> Any:
    names = tuple(name for name, _, _ in specs)
    defaults = {n: s.default for n, _, s in specs if s.default is not _MISSING}
    factories = {n: s.default_factory for n, _, s in specs if s.default_factory is not _MISSING}
    put = object.__setattr__ if frozen else setattr
    where = f"{cls.__qualname__}.__init__()"
    post_init = "__post_init__" in cls.__dict__

    def __init__(self: Any, *args: object, **kwargs: object) -> None:
        if len(args) > len(names):
            took, given = len(names) + 1, len(args) + 1
            raise TypeError(f"{where} takes {took} positional arguments but {given} were given")
        for name, value in zip(names, args, strict=False):
            if name in kwargs:
                raise TypeError(f"{where} got multiple values for argument {name!r}")
            put(self, name, value)
        for name in names[len(args) :]:
            if name in kwargs:
                value = kwargs.pop(name)
            elif name in defaults:
                value = defaults[name]
            elif name in factories:
                value = factories[name]()  # type: ignore[operator]
            else:
                raise TypeError(f"{where} missing 1 required argument: {name!r}")
            put(self, name, value)
        if kwargs:
            raise TypeError(f"{where} got an unexpected keyword argument {next(iter(kwargs))!r}")
        if post_init:
            self.__post_init__()

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _record(cls: type | None = None, /, *, frozen: bool = False, slots: bool = False) -> Any:
    def wrap(cls: type) -> type:
        return _process(cls, frozen=frozen, slots=slots)

    return wrap if cls is None else wrap(cls)


def _process(cls: type, *, frozen: bool, slots: bool) -> type:
    specs = _specs(cls)
    names = tuple(name for name, _, _ in specs)
    shown = [name for name, _, s in specs if s.repr]
    compared = [name for name, _, s in specs if s.compare]
    key = attrgetter(*compared) if len(compared) > 1 else None
    qualname = cls.__qualname__

    def values(self: object) -> tuple[object, ...]:
        if key is not None:
            return key(self)
        return tuple(getattr(self, n) for n in compared)

    def __repr__(self: object) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in shown)
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self: object, other: object) -> bool:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    def __hash__(self: object) -> int:
        return hash(values(self))

    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is new or name in names:
            raise _frozen_error("assign to", name)
        object.__setattr__(self, name, value)

    def __delattr__(self: object, name: str) -> None:
        if type(self) is new or name in names:
            raise _frozen_error("delete", name)
        object.__delattr__(self, name)

    body = dict(cls.__dict__)
    for name, _, spec in specs:  # defaults live in __init__; a plain class keeps them too
        body.pop(name, None)
        if not slots and spec.default is not _MISSING:
            body[name] = spec.default
    methods: dict[str, object] = {
        "__init__": _make_init(cls, specs, frozen),
        "__repr__": __repr__,
        "__eq__": __eq__,
    }
    if frozen:
        if "__setattr__" in cls.__dict__ or "__delattr__" in cls.__dict__:
            raise TypeError(f"{qualname}: a frozen class cannot define __setattr__/__delattr__")
        methods.update(__setattr__=__setattr__, __delattr__=__delattr__)
    for name, method in methods.items():
        if name not in cls.__dict__:
            if callable(method) and hasattr(method, "__qualname__"):
                method.__qualname__ = f"{qualname}.{name}"
            body[name] = method
    # A class body defining __eq__ gets __hash__ = None from Python: not an explicit hash.
    implicit = cls.__dict__.get("__hash__", _MISSING) is None and "__eq__" in cls.__dict__
    explicit_hash = "__hash__" in cls.__dict__ and not implicit
    if frozen and not explicit_hash:
        body["__hash__"] = __hash__
    elif not explicit_hash:
        body["__hash__"] = None  # eq without frozen: unhashable, as the stdlib's
    body.setdefault("__match_args__", names)
    body[_NAMES] = names
    body[_FIELDS] = _LazyFields(specs)
    if slots:
        if "__slots__" in cls.__dict__:
            raise TypeError(f"{qualname} already specifies __slots__")
        body.pop("__dict__", None)
        body.pop("__weakref__", None)
        body["__slots__"] = names
        if frozen:  # the default pickling of slots sets attributes, which frozen refuses
            body["__getstate__"] = lambda self: [getattr(self, n) for n in names]
            body["__setstate__"] = _make_setstate(names)
        new: type = type(cls)(cls.__name__, cls.__bases__, body)
        new.__qualname__ = qualname
    else:
        for name, value in body.items():
            same = cls.__dict__.get(name, _MISSING) is value
            if name not in ("__dict__", "__weakref__") and not same:
                setattr(cls, name, value)
        for name, _, spec in specs:
            if spec.default is _MISSING and name in cls.__dict__:
                delattr(cls, name)
        new = cls
    return new


def _make_setstate(names: tuple[str, ...]) -> Any:
    def __setstate__(self: object, state: list[object]) -> None:
        for name, value in zip(names, state, strict=True):
            object.__setattr__(self, name, value)

    return __setstate__


def _replace(obj: Any, /, **changes: Any) -> Any:
    """:func:`dataclasses.replace`; for a class decorated here without importing it."""
    names = getattr(type(obj), _NAMES, None)
    if names is None:
        import dataclasses

        return dataclasses.replace(obj, **changes)
    for name in names:
        if name not in changes:
            changes[name] = getattr(obj, name)
    return type(obj)(**changes)


if not TYPE_CHECKING:
    dataclass = _record
    field = _field
    replace = _replace
