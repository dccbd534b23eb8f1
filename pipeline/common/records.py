"""`Record`: typed records read from and written to JSON files (the task folder's metadata.json).

A record's fields are its class annotations, with a default or `field(default_factory=...)`. Values
are checked when a record is made and when a field is set: str, int, float, bool, None, Literal,
unions, list[T], dict[str, T], Any and nested records. Keys a record does not declare are kept
(`extra="allow"`, the default) or refused (`extra="forbid"`, a class keyword). The method names are
pydantic's (`model_validate`, `model_dump`, `model_copy`), whose meaning they keep for these types.

Why not pydantic: `task check` of a small task must start in tenths of a second, and importing
pydantic and building the metadata's models took more than half of that.
"""

from __future__ import annotations

import copy
import inspect
import json
import types
from collections.abc import Callable
from typing import Any, ClassVar, Literal, Self, Union, dataclass_transform, get_args, get_origin, get_type_hints

Loc = tuple[str | int, ...]
NOT_A_FIELD = "is not a field of this record"
_MISSING: Any = object()


class RecordError(ValueError):
    """Values that do not fit a record: each problem with where it is (`loc`) and what is wrong."""

    def __init__(self, problems: list[tuple[Loc, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{_where(loc)}: {message}" for loc, message in problems))

    def first(self) -> str:
        """The first problem as `where: what`, and how many more there are."""
        loc, message = self.problems[0]
        more = len(self.problems) - 1
        return f"{_where(loc)}: {message}" + (f" (and {more} more problem(s))" if more else "")


def _where(loc: Loc) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


class _Field:
    """A field's default (a value or a factory) and its constraints."""

    def __init__(self, default: Any, default_factory: Callable[[], Any] | None, min_length: int | None) -> None:
        self.default, self.default_factory, self.min_length = default, default_factory, min_length

    def make_default(self) -> Any:
        return self.default_factory() if self.default_factory is not None else copy.copy(self.default)

    @property
    def required(self) -> bool:
        return self.default is _MISSING and self.default_factory is None


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] | None = None, min_length: int | None = None) -> Any:
    """A field's default and constraints: `items: list[str] = field(default_factory=list)`."""
    return _Field(default, default_factory, min_length)


@dataclass_transform(kw_only_default=True, field_specifiers=(field,))
class Record:
    """A typed record; subclasses declare fields as annotations."""

    _extra: ClassVar[Literal["allow", "forbid"]] = "allow"
    _spec: ClassVar[dict[str, tuple[Any, _Field]] | None] = None

    def __init_subclass__(cls, extra: Literal["allow", "forbid"] | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if extra is not None:
            cls._extra = extra
        cls._spec = None  # worked out at first use: the annotations may name classes defined later

    def __init__(self, **data: Any) -> None:
        object.__setattr__(self, "__dict__", _record_values(type(self), type(self)._before(data), ()))

    @classmethod
    def _before(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Rewrites the raw data before it is checked (older forms of a file); as it is by default."""
        return data

    @classmethod
    def fields(cls) -> dict[str, tuple[Any, _Field]]:
        """Each declared field (inherited ones first): its type and its default."""
        if cls.__dict__.get("_spec") is None:
            hints = get_type_hints(cls)
            spec: dict[str, tuple[Any, _Field]] = {}
            for klass in reversed(cls.__mro__):
                for name in klass.__dict__.get("__annotations__", {}):
                    if name.startswith("_") or get_origin(hints[name]) is ClassVar:
                        continue
                    declared = klass.__dict__.get(name, _MISSING)
                    spec[name] = (hints[name], declared if isinstance(declared, _Field) else _Field(declared, None, None))
            cls._spec = spec
        assert cls._spec is not None
        return cls._spec

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        """A record from a dict (or the record itself); RecordError naming every problem."""
        if isinstance(data, cls):
            return data
        return _as_record(cls, data, ())

    @classmethod
    def model_validate_json(cls, text: str | bytes) -> Self:
        return cls.model_validate(json.loads(text))

    def model_dump(self, *, mode: str = "python", exclude_none: bool = False, exclude: set[str] | None = None) -> dict[str, Any]:
        """The record as plain data: declared fields in their order, then the kept keys; None
        values of records left out with `exclude_none` (not those inside dicts)."""
        del mode  # every value is JSON data already
        return {
            name: _dumped(value, exclude_none)
            for name, value in self.__dict__.items()
            if not (exclude and name in exclude) and not (exclude_none and value is None)
        }

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy (shallow, or `deep`) with `update` applied (as pydantic does, not checked again)."""
        copied = object.__new__(type(self))
        values = copy.deepcopy(self.__dict__) if deep else dict(self.__dict__)
        object.__setattr__(copied, "__dict__", {**values, **(update or {})})
        return copied

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        spec = cls.fields().get(name)
        if spec is None and cls._extra == "forbid":
            raise RecordError([((name,), NOT_A_FIELD)])
        problems: list[tuple[Loc, str]] = []
        checked = _value(spec[0], value, (name,), problems, spec[1]) if spec else value
        if problems:
            raise RecordError(problems)
        self.__dict__[name] = checked

    def __getattr__(self, name: str) -> Any:  # a kept key, read as an attribute
        try:
            return self.__dict__[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.__dict__ == self.__dict__

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        """The JSON Schema of the record: nested records under `$defs`."""
        defs: dict[str, Any] = {}
        schema = _record_schema(cls, defs)
        if defs:
            schema["$defs"] = dict(sorted(defs.items()))
        return schema


def _as_record(cls: type[Record], data: Any, loc: Loc) -> Any:
    if not isinstance(data, dict):
        raise RecordError([(loc, "should be a JSON object")])
    record = object.__new__(cls)
    object.__setattr__(record, "__dict__", _record_values(cls, cls._before(data), loc))
    return record


def _record_values(cls: type[Record], data: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """The checked values of a record's fields (then its kept keys); RecordError on any problem."""
    problems: list[tuple[Loc, str]] = []
    values: dict[str, Any] = {}
    spec = cls.fields()
    for name, (hint, declared) in spec.items():
        if name in data:
            values[name] = _value(hint, data[name], (*loc, name), problems, declared)
        elif declared.required:
            problems.append(((*loc, name), "is required"))
        else:
            values[name] = declared.make_default()
    unknown = [name for name in data if name not in spec]  # in the file's order
    if cls._extra == "forbid":
        problems += [((*loc, name), NOT_A_FIELD) for name in unknown]
    else:
        values.update((name, data[name]) for name in unknown)
    if problems:
        raise RecordError(problems)
    return values


def _value(hint: Any, value: Any, loc: Loc, problems: list[tuple[Loc, str]], declared: _Field | None = None) -> Any:
    """`value` checked against `hint` (problems appended, the value returned as it is then)."""
    checked = _checked(hint, value, loc, problems)
    if declared is not None and declared.min_length is not None and hasattr(checked, "__len__") and len(checked) < declared.min_length:
        problems.append((loc, f"should have at least {declared.min_length} character(s) or item(s)"))
    return checked


def _checked(hint: Any, value: Any, loc: Loc, problems: list[tuple[Loc, str]]) -> Any:
    origin = get_origin(hint)
    if hint is Any:
        return value
    if origin is Union or origin is types.UnionType:
        return _union(get_args(hint), value, loc, problems)
    if origin is Literal:
        if value in get_args(hint) and type(value) in {type(a) for a in get_args(hint)}:
            return value
        problems.append((loc, "should be " + " or ".join(repr(a) for a in get_args(hint))))
        return value
    if origin is list:
        if not isinstance(value, list | tuple):
            problems.append((loc, "should be a list"))
            return value
        (item,) = get_args(hint)
        return [_checked(item, v, (*loc, i), problems) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            problems.append((loc, "should be a JSON object"))
            return value
        _, item = get_args(hint)
        return {k: _checked(item, v, (*loc, k), problems) for k, v in value.items()}
    if isinstance(hint, type) and issubclass(hint, Record):
        if isinstance(value, hint):
            return value
        try:
            return _as_record(hint, value, loc)
        except RecordError as exc:
            problems.extend(exc.problems)
            return value
    return _scalar(hint, value, loc, problems)


def _scalar(hint: Any, value: Any, loc: Loc, problems: list[tuple[Loc, str]]) -> Any:
    if hint is type(None):
        if value is not None:
            problems.append((loc, "should be null"))
        return value
    if hint is bool:
        if not isinstance(value, bool):
            problems.append((loc, "should be true or false"))
        return value
    if hint is int:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            problems.append((loc, "should be a whole number"))
        return value
    if hint is float:
        if not isinstance(value, int | float) or isinstance(value, bool):
            problems.append((loc, "should be a number"))
            return value
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            problems.append((loc, "should be a string"))
        return value
    raise TypeError(f"records cannot hold {hint!r}")


def _union(options: tuple[Any, ...], value: Any, loc: Loc, problems: list[tuple[Loc, str]]) -> Any:
    if value is None and type(None) in options:
        return None
    others = [option for option in options if option is not type(None)]
    found: list[tuple[Loc, str]] = []
    for option in others:
        attempt: list[tuple[Loc, str]] = []
        checked = _checked(option, value, loc, attempt)
        if not attempt:
            return checked
        found = found or attempt
    if len(others) > 1:
        found = [(loc, "should be " + " or ".join(_type_name(o) for o in others) + (" or null" if type(None) in options else ""))]
    problems.extend(found)
    return value


def _type_name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint)


def _dumped(value: Any, exclude_none: bool) -> Any:
    if isinstance(value, Record):
        return value.model_dump(exclude_none=exclude_none)
    if isinstance(value, list):
        return [_dumped(item, exclude_none) for item in value]
    if isinstance(value, dict):
        return {key: _dumped(item, exclude_none) for key, item in value.items()}
    return value


def _record_schema(cls: type[Record], defs: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required = []
    for name, (hint, declared) in cls.fields().items():
        schema = _schema(hint, defs)
        if not _names_a_record(schema):
            schema = {"title": name.replace("_", " ").title(), **schema}
        if declared.min_length is not None:
            schema["minLength" if hint is str else "minItems"] = declared.min_length
        if declared.required:
            required.append(name)
        elif declared.default_factory is None:
            schema["default"] = declared.default
        properties[name] = schema
    record: dict[str, Any] = {"additionalProperties": cls._extra == "allow", "properties": properties}
    if cls.__doc__:
        record["description"] = inspect.cleandoc(cls.__doc__)
    if required:
        record["required"] = required
    return {**record, "title": cls.__name__, "type": "object"}


def _schema(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin = get_origin(hint)
    if hint is Any:
        return {}
    if origin is Union or origin is types.UnionType:
        return {"anyOf": [_schema(option, defs) for option in get_args(hint)]}
    if origin is Literal:
        values = list(get_args(hint))
        return {"const" if len(values) == 1 else "enum": values[0] if len(values) == 1 else values, "type": _JSON_TYPES[type(values[0])]}
    if origin is list:
        return {"items": _schema(get_args(hint)[0], defs), "type": "array"}
    if origin is dict:
        return {"additionalProperties": _schema(get_args(hint)[1], defs) or True, "type": "object"}
    if isinstance(hint, type) and issubclass(hint, Record):
        if hint.__name__ not in defs:
            defs[hint.__name__] = {}  # a record that holds itself ends here
            defs[hint.__name__] = _record_schema(hint, defs)
        return {"$ref": f"#/$defs/{hint.__name__}"}
    return {"type": _JSON_TYPES[hint]}


def _names_a_record(schema: dict[str, Any]) -> bool:
    """Whether a field's schema is a nested record's (those are titled under `$defs`)."""
    return "$ref" in schema or any("$ref" in option for option in schema.get("anyOf", []))


_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
