"""Turning YAML data into the typed config dataclasses, with errors that name the key path.

The dataclasses in :mod:`bothost.config` are the schema: a field's type hint says what is
expected (``str``, ``int``, ``float`` durations, ``bool``, ``list[str]``, ``dict[str, X]``,
nested dataclasses, ``X | None``), a class attribute ``CHOICES`` limits strings to a set and
``DURATIONS`` names the ``float`` fields that take a duration (``30s``, ``15m``) besides the
core's :data:`DURATION_FIELDS`; ``RANGES`` bounds numbers (``{"port": (0, 65535)}``) and
durations, in seconds (``{"timeout": (0, 86400)}``).
Plugins declare their own sections in the same language (:mod:`bothost.config.sections`).
Unknown keys are refused with a "did you mean".
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
import types
import typing
from typing import Any

DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}
DURATION_FIELDS = {
    "timeout",
    "max_timeout",
    "turn_timeout",
    "approval_timeout",
    "tool_timeout",
    "interval",
    "dedupe_window",
    "lease",
}


class ConfigError(Exception):
    """A configuration problem; the message names the file and key path."""


class Unset(str):
    """Placeholder for ``${env:NAME}`` whose variable is not set."""

    env_name: str

    def __new__(cls, name: str) -> Unset:
        obj = super().__new__(cls, "")
        obj.env_name = name
        return obj


def parse_duration(value: Any) -> float:
    """Seconds from ``90``, ``"300s"``, ``"15m"``, ``"24h"``, ``"1d"`` or ``"250ms"``.

    A number is taken as seconds, but not NaN (YAML's ``.nan``) and not a negative one:
    either loaded before, and every turn or call it bounded then stopped at once. ``0``
    stays (``tick.interval: 0`` turns the interval off), and so does ``.inf`` (never).
    """
    if isinstance(value, bool) or value != value:  # NaN is the one value unequal to itself
        raise ValueError("a duration such as 30s, 15m or 24h")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError("a duration that is not negative (seconds, or 30s, 15m, 24h)")
        return float(value)
    match = DURATION.match(str(value))
    if not match:
        raise ValueError("a duration such as 30s, 15m or 24h")
    return float(match.group(1)) * UNIT_SECONDS[match.group(2)]


@functools.cache
def hints(cls: type) -> dict[str, Any]:
    """The config fields of `cls` and their types, resolved once per class: resolving the
    string annotations compiles each of them, and was a third of a CLI command's start when
    done per field and per config file (issue 19)."""
    resolved = typing.get_type_hints(cls)
    return {
        f.name: t
        for f in dataclasses.fields(cls)
        if (t := resolved[f.name]) is not None and f.name not in getattr(cls, "INTERNAL", ())
    }


def unknown_key(path: str, key: str, known: list[str], where: str) -> ConfigError:
    close = difflib.get_close_matches(str(key), known, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f"; known keys: {', '.join(known)}"
    return ConfigError(f"{where}: {join(path, key)}: unknown key{hint}")


def join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def describe(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return describe(args[0])
    if origin is list:
        item = describe(typing.get_args(tp)[0])
        if item.startswith(("a ", "an ")) and " " not in item.split(" ", 1)[1]:
            return f"a list of {item.split(' ', 1)[1]}s"  # "a string" -> "a list of strings"
        return f"a list of {item}"
    if origin is dict:
        return "a mapping"
    if dataclasses.is_dataclass(tp):
        return "a mapping"
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(
        tp, str(tp)
    )


def convert(tp: Any, value: Any, path: str, where: str, key: str, cls: type | None) -> Any:
    """Check and convert one value; raise ConfigError naming the path when it does not fit."""
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        if value is None:
            return None
        tp = next(a for a in typing.get_args(tp) if a is not type(None))
        origin = typing.get_origin(tp)
    if isinstance(value, Unset):
        return value
    fail = ConfigError(f"{where}: {path}: expected {describe(tp)}, got {value!r}")
    if dataclasses.is_dataclass(tp):
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise fail
        # is_dataclass also accepts instances; a type hint here is always the class.
        return build(typing.cast(type, tp), value, path, where)
    if origin is list:
        if not isinstance(value, list):
            raise fail
        (item,) = typing.get_args(tp)
        return [convert(item, v, f"{path}[{i}]", where, key, None) for i, v in enumerate(value)]
    if origin is dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise fail
        _, item = typing.get_args(tp)
        return {str(k): convert(item, v, join(path, k), where, key, None) for k, v in value.items()}
    if tp is float and (key in DURATION_FIELDS or key in getattr(cls, "DURATIONS", ())):
        try:
            seconds = parse_duration(value)
        except ValueError as exc:
            raise ConfigError(f"{where}: {path}: expected {exc}, got {value!r}") from None
        wrong = duration_problem(seconds, getattr(cls, "RANGES", {}).get(key))
        if wrong:
            raise ConfigError(f"{where}: {path}: {wrong}, got {value!r}")
        return seconds
    if tp is bool:
        if not isinstance(value, bool):
            raise fail
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail
        return in_range(value, cls, key, path, where)
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise fail
        return in_range(float(value), cls, key, path, where)
    if tp is str:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise fail
        # a number stands for its text (a model "4", a password 1234), but not in a key
        # the class says only text fits (a path or URL)
        if not isinstance(value, str) and key in getattr(cls, "TEXT_ONLY", ()):
            raise fail
        value = str(value)
        choices = getattr(cls, "CHOICES", {}).get(key)
        if choices and value not in choices:
            raise ConfigError(
                f"{where}: {path}: expected one of {', '.join(choices)}, got {value!r}"
            )
        return value
    return value


def duration_text(seconds: float) -> str:
    """``86400`` as ``"1d"``, ``90`` as ``"90s"``: the largest unit that divides it."""
    for unit in ("d", "h", "m", "s"):
        size = UNIT_SECONDS[unit]
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


def duration_problem(seconds: float, bounds: tuple[float, float] | None) -> str | None:
    """What is wrong with a duration outside the schema's ``RANGES`` bounds, or None."""
    if bounds and seconds > bounds[1]:
        return f"expected at most {duration_text(bounds[1])} ({bounds[1]:g} s)"
    if bounds and seconds < bounds[0]:
        return f"expected at least {duration_text(bounds[0])} ({bounds[0]:g} s)"
    return None


def in_range(value: float, cls: type | None, key: str, path: str, where: str) -> Any:
    """``value`` when the schema's ``RANGES`` allow it (inclusive bounds)."""
    bounds = getattr(cls, "RANGES", {}).get(key)
    if bounds and not bounds[0] <= value <= bounds[1]:
        raise ConfigError(f"{where}: {path}: expected {bounds[0]} to {bounds[1]}, got {value!r}")
    return value


def build(cls: type, data: dict[str, Any], path: str, where: str) -> Any:
    """Build dataclass ``cls`` from ``data``; unknown keys and bad types raise ConfigError."""
    fields = hints(cls)
    kwargs = {}
    for key, value in data.items():
        if key not in fields:
            raise unknown_key(path, key, sorted(fields), where)
        kwargs[key] = convert(fields[key], value, join(path, key), where, key, cls)
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a dataclass refusing a value it cannot hold: named where it is
        if not path:  # the whole file's: check_source names the file
            raise
        raise ConfigError(f"{where}: {path}: {exc}") from exc


def check_source(cls: type, data: dict[str, Any], where: str) -> None:
    """Validate one source file before merging so errors name the file they came from."""
    try:
        build(cls, strip_env(data), "", where)
    except TypeError as exc:  # a dataclass refusing a value it cannot hold
        raise ConfigError(f"{where}: {exc}") from exc


def strip_env(value: Any) -> Any:
    """Stand-in values for ``${env:…}`` strings so type checks of one source pass them."""
    if isinstance(value, dict):
        return {k: strip_env(v) for k, v in value.items()}
    if isinstance(value, list):
        return [strip_env(v) for v in value]
    if isinstance(value, str) and "${env:" in value:
        return Unset("")
    return value


def clear_unset(obj: Any) -> None:
    """Replace every :class:`Unset` left in disabled parts with None (or drop it)."""
    if dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if isinstance(value, Unset):
                setattr(obj, f.name, None)
            else:
                clear_unset(value)
    elif isinstance(obj, dict):
        for key, value in list(obj.items()):
            if isinstance(value, Unset):
                del obj[key]
            else:
                clear_unset(value)
    elif isinstance(obj, list):
        obj[:] = [v for v in obj if not isinstance(v, Unset)]
        for v in obj:
            clear_unset(v)
