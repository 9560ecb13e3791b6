"""The answer contract: every answer the API gives matches its operation's answer type.

`problems(channel, reply)` lists where a reply differs from the `TypedDict` its operation
names (`app.core.answers`): a key it does not declare, a required key missing, a value of
another type. `tests/conftest.py` checks every answer given during the test run with it.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from app.core import answers
from app.core import operations as ops


def problems(channel: str, reply: object) -> list[str]:
    """Where `reply` breaks the answer type of `channel` (an error reply never does)."""
    op = ops.BY_NAME.get(channel)
    kind = getattr(answers, op.reply, None) if op is not None else None
    if kind is None or not isinstance(reply, dict):
        return []
    if reply.get("error"):
        return _check(reply, answers.ErrorFields, channel)
    return _check(reply, kind, channel)


def _check(value: object, hint: Any, where: str) -> list[str]:
    if hint is Any or hint is object:
        return []
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if any(not _check(value, option, where) for option in options):
            return []
        return [f"{where}: {value!r:.80} is none of {hint}"]
    if hint is None or hint is type(None):
        return [] if value is None else [f"{where}: {value!r:.80} is not None"]
    if isinstance(hint, type) and typing.is_typeddict(hint):
        return _check_typeddict(value, hint, where)
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__} is not a list"]
        (item,) = typing.get_args(hint)
        return [p for n, v in enumerate(value) for p in _check(v, item, f"{where}[{n}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__} is not an object"]
        _key, item = typing.get_args(hint)
        return [p for k, v in value.items() for p in _check(v, item, f"{where}.{k}")]
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, hint)
    return [] if ok else [f"{where}: {value!r:.80} is not {getattr(hint, '__name__', hint)}"]


def _check_typeddict(value: object, kind: type, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: {type(value).__name__} is not an object ({kind.__name__})"]
    hints = typing.get_type_hints(kind, include_extras=True)
    found = []
    for key, hint in hints.items():
        optional = typing.get_origin(hint) is typing.NotRequired
        inner = typing.get_args(hint)[0] if optional else hint
        if key not in value:
            if not optional:
                found.append(f"{where}: {kind.__name__} lacks {key!r}")
            continue
        found += _check(value[key], inner, f"{where}.{key}")
    found += [
        f"{where}: {kind.__name__} does not declare {key!r}" for key in value if key not in hints
    ]
    return found
