"""One reader for napipatch's TOML files: the bot's config, a series'
``experiment.toml`` and each target's ``target.toml``.

Each consumer declares a JSON Schema beside its own code (types, required
keys, allowed values, defaults, and ``additionalProperties: false`` on every
table, so a typo is refused instead of silently turning a setting off).
This module parses the file, validates it against that schema, fills in the
schema's ``default`` values, and turns the first problem into one line
naming the file and the key as TOML spells it::

    targets/idpf/target.toml: boot.plan: missing

Rules a schema cannot say (an address, a template's placeholders, a name
used twice) stay with the consumer, which raises them through ``error`` so
they read the same. jsonschema is imported on first use: the CLI starts
without it.

A schema may carry ``x-error``: the reason shown, instead of the generic
one, for any problem at that node (``"at least one [[modes]] table"``).
"""

from __future__ import annotations

import copy
import difflib
import re
import tomllib
from pathlib import Path
from typing import Iterable

from napipatch.errors import NapipatchError

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")
_WANT = {"string": "a string", "integer": "an integer", "number": "a number",
         "boolean": "true or false", "array": "a list", "object": "a table"}
_VALIDATOR = None  # the jsonschema validator class, made on first use


def key(path: Iterable) -> str:
    """A key path as TOML spells it: ``("loads", 1, "rate")`` -> ``loads[1].rate``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            part = part if _BARE.match(part) else '"' + part.replace('"', '\\"') + '"'
            out += f".{part}" if out else part
    return out


def error(file: object, path: Iterable, reason: str) -> NapipatchError:
    """The one-line error for the key at ``path`` of ``file`` (the whole file if empty)."""
    k = key(path)
    return NapipatchError(f"{file}: {k}" if k else file, reason)


def read(path: Path, schema: dict, shown: object = None) -> dict:
    """``path`` parsed, validated against ``schema`` and with its defaults
    filled in; any problem is a NapipatchError naming ``shown`` (default:
    ``path``) and the key."""
    shown = path if shown is None else shown
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise NapipatchError(shown, exc.strerror or str(exc)) from None
    except UnicodeDecodeError as exc:
        raise NapipatchError(shown, f"not valid TOML ({exc})") from None
    return parse(text, schema, shown)


def parse(text: str, schema: dict, shown: object) -> dict:
    """``text`` as read() reads a file (``shown`` names it in errors)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise NapipatchError(shown, f"not valid TOML ({exc})") from None
    problems = list(_validator()(schema).iter_errors(data))
    if problems:
        from jsonschema.exceptions import best_match
        raise _explain(shown, best_match(problems))
    _fill(data, schema)
    return data


def _validator():
    """Draft 2020-12 with TOML's types: an integer is an int (not 3.0, not
    true), a number an int or a float (not true)."""
    global _VALIDATOR
    if _VALIDATOR is None:
        from jsonschema import Draft202012Validator, validators

        def integer(_checker, v):
            return isinstance(v, int) and not isinstance(v, bool)

        def number(_checker, v):
            return isinstance(v, (int, float)) and not isinstance(v, bool)

        checker = Draft202012Validator.TYPE_CHECKER.redefine_many(
            {"integer": integer, "number": number})
        _VALIDATOR = validators.extend(Draft202012Validator, type_checker=checker)
    return _VALIDATOR


def _explain(shown: object, e) -> NapipatchError:
    """A jsonschema ValidationError as one line: the key it is about and why."""
    path, v, kind, want = list(e.absolute_path), e.instance, e.validator, e.validator_value
    if kind == "required":
        missing = next(k for k in want if k not in v)
        return error(shown, path + _first_required(e.schema, missing), "missing")
    if kind == "additionalProperties":
        known = list(e.schema.get("properties", {}))
        extra = next(k for k in v if k not in known)
        return error(shown, path + [extra], _unknown(extra, known, v[extra]))
    if e.schema.get("x-error"):
        return error(shown, path, e.schema["x-error"])
    if kind == "type":
        wants = [want] if isinstance(want, str) else want
        return error(shown, path, f"must be {' or '.join(_WANT.get(w, w) for w in wants)}, "
                                  f"not {_toml_type(v)} {_short(v)}")
    if kind == "enum":
        return error(shown, path, f"{v!r} is not one of {', '.join(map(str, want))}")
    if kind in _BOUNDS:
        return error(shown, path, f"must be {_BOUNDS[kind]} {want}, not {v}")
    if kind == "minItems":
        return error(shown, path, "must not be empty" if want == 1 else
                     f"must have at least {want} entries")
    if kind == "pattern":
        return error(shown, path, f"{v!r} does not match {want}")
    return error(shown, path, e.message)


_BOUNDS = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}


def _first_required(schema: dict, missing: str) -> list:
    """A missing table that has required keys is reported at its first one
    (``state.dir: missing``, not ``state: missing``): that is what to write."""
    path, sub = [missing], schema.get("properties", {}).get(missing, {})
    while sub.get("type") == "object" and sub.get("required"):
        path.append(sub["required"][0])
        sub = sub.get("properties", {}).get(sub["required"][0], {})
    return path


def _unknown(name: str, known: list[str], value) -> str:
    what = "unknown table" if isinstance(value, dict) else "unknown key"
    near = difflib.get_close_matches(name, known, n=1)
    if near:
        return f"{what} (did you mean {near[0]}?)"
    return f"{what} (known: {', '.join(known)})" if known else what


def _toml_type(v) -> str:
    return {bool: "boolean", int: "integer", float: "float", str: "string", list: "array",
            dict: "table"}.get(type(v), type(v).__name__)


def _short(v) -> str:
    r = str(v).lower() if isinstance(v, bool) else repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _fill(data, schema: dict) -> None:
    """The schema's ``default`` for every absent key, in tables at any depth
    (an absent table with a default of {} gets its own keys' defaults)."""
    if isinstance(data, dict):
        for name, sub in schema.get("properties", {}).items():
            if name not in data and "default" in sub:
                data[name] = copy.deepcopy(sub["default"])
            if name in data:
                _fill(data[name], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for name in data:
                if name not in schema.get("properties", {}):
                    _fill(data[name], extra)
    elif isinstance(data, list) and isinstance(schema.get("items"), dict):
        for item in data:
            _fill(item, schema["items"])
