"""Dependency manifests an agent read: what a project is built on, as one checked line.

When a coding agent reads `package.json`, `pyproject.toml`, `Cargo.toml` or `go.mod`, the
tool result holds the project's actual stack ("next 15.5.2", "react 19.1.0"), which is worth
remembering and cannot be instructions: only the package names and version specifiers are
taken, each checked against the shape such names and versions have, so prose in a manifest
(descriptions, scripts, comments) never reaches memory. The result is one line,

    todo-app/package.json (todo-app): next 15.5.2, react 19.1.0 | dev: typescript ^5

which the reader puts in the thread as a `manifest` message; the renderer writes it as a
`[manifest] ...` line and the offline extractor turns it into an implementation note
(`app/engines/offline/manifest_notes.py`), re-checking the line with `parse_line`.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

# File names read as manifests, by how their content is parsed.
MANIFEST_NAMES = ("package.json", "pyproject.toml", "Cargo.toml", "go.mod")
MAX_CONTENT = 200_000
MAX_RUNTIME = 12
MAX_DEV = 10
# npm (scoped too), PyPI, crates.io and Go module names; nothing with spaces or markup.
_NAME_RE = re.compile(r"^(?:@[a-z0-9][\w.-]{0,60}/)?[A-Za-z0-9][\w.-]{0,80}(?:/[\w.-]{1,60}){0,4}$")
# Version specifiers: "15.5.2", "^5", "~1.2", ">=2.0,<3", "v1.22.0", "workspace:*", "*".
_ONE_VERSION = r"(?:[\^~<>=!]{1,2} ?)?v?\d[\w.+-]*"
_VERSION_RE = re.compile(
    rf"^(?:\*|latest|workspace:[\^~*]?|{_ONE_VERSION}(?:,{_ONE_VERSION}){{0,3}})$"
)
_PATH_RE = re.compile(r"^[\w.@+-]+(?:/[\w.@+-]+)*$")
_PEP508_RE = re.compile(r"^\s*([A-Za-z0-9][\w.-]*)\s*(?:\[[^\]]*\])?\s*([^;]*)")
_GO_REQUIRE_RE = re.compile(r"^\s*([\w.-]+(?:/[\w.@-]+)+)\s+(v[\w.+-]+)(?:\s*//.*)?$")
_LINE_RE = re.compile(r"^(?P<path>\S+) \((?P<name>[^()]{1,80})\): (?P<body>.+)$")


@dataclass(slots=True)
class Manifest:
    """A manifest's project name and its dependencies as (name, version) pairs."""

    path: str
    name: str
    runtime: list[tuple[str, str]] = field(default_factory=list)
    dev: list[tuple[str, str]] = field(default_factory=list)


def is_manifest(path: str) -> bool:
    """Whether a file path names one of the manifests read here."""
    return path.replace("\\", "/").rsplit("/", 1)[-1] in MANIFEST_NAMES


def manifest_line(path: str, content: str, root: str = "") -> str | None:
    """The checked one-line summary of a manifest file, or None when it says nothing usable.

    `path` is where the file was read, `root` the session's working directory (the path is
    shown relative to it). Malformed content is not an error: an agent may read a broken
    manifest, and there is simply nothing to remember then.
    """
    if not is_manifest(path) or not isinstance(content, str) or len(content) > MAX_CONTENT:
        return None
    shown = _relative(path, root)
    if shown is None:
        return None
    try:
        found = _parse(shown, content)
    except (ValueError, TypeError, AttributeError, tomllib.TOMLDecodeError):
        return None
    if found is None or (not found.runtime and not found.dev):
        return None
    return format_line(found)


def format_line(found: Manifest) -> str:
    """`path (name): a 1, b 2 | dev: c 3` (the dev part only when there is one)."""
    body = ", ".join(f"{n} {v}" for n, v in found.runtime[:MAX_RUNTIME])
    dev = ", ".join(f"{n} {v}" for n, v in found.dev[:MAX_DEV])
    if dev:
        body = f"{body} | dev: {dev}" if body else f"dev: {dev}"
    return f"{found.path} ({found.name}): {body}"


def parse_line(line: str) -> Manifest | None:
    """Read a line written by `format_line` back, checking every part; None if it is not one."""
    match = _LINE_RE.match(line.strip())
    if match is None or not is_manifest(match["path"]) or not _PATH_RE.match(match["path"]):
        return None
    name = match["name"].strip()
    if not _NAME_RE.match(name):
        return None
    runtime_part, _, dev_part = match["body"].partition(" | dev: ")
    if runtime_part.startswith("dev: ") and not dev_part:
        runtime_part, dev_part = "", runtime_part[len("dev: ") :]
    runtime = _pairs(runtime_part)
    dev = _pairs(dev_part)
    if runtime is None or dev is None or (not runtime and not dev):
        return None
    return Manifest(match["path"], name, runtime, dev)


def _pairs(text: str) -> list[tuple[str, str]] | None:
    out: list[tuple[str, str]] = []
    if not text.strip():
        return out
    for part in text.split(", "):
        name, _, version = part.strip().partition(" ")
        if not _NAME_RE.match(name) or not _VERSION_RE.match(version):
            return None
        out.append((name, version))
    return out


def _relative(path: str, root: str) -> str | None:
    path = path.replace("\\", "/")
    root = root.replace("\\", "/").rstrip("/")
    if root and path.startswith(root + "/"):
        path = path[len(root) + 1 :]
    else:
        # Outside the project (or no root known): the last two parts say enough.
        path = "/".join(path.split("/")[-2:])
    path = path.lstrip("./")
    return path if _PATH_RE.match(path) else None


def _project_name(path: str, declared: object) -> str:
    if isinstance(declared, str) and _NAME_RE.match(declared.strip()):
        return declared.strip()
    parts = path.split("/")
    return parts[-2] if len(parts) > 1 and _NAME_RE.match(parts[-2]) else "project"


def _checked(pairs: list[tuple[object, object]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for name, version in pairs:
        if not isinstance(name, str) or not isinstance(version, str):
            continue
        version = " ".join(version.split())
        if _NAME_RE.match(name) and _VERSION_RE.match(version) and ", " not in version:
            out.append((name, version))
    return out


def _parse(path: str, content: str) -> Manifest | None:
    filename = path.rsplit("/", 1)[-1]
    if filename == "package.json":
        return _package_json(path, content)
    if filename == "pyproject.toml":
        return _pyproject(path, content)
    if filename == "Cargo.toml":
        return _cargo(path, content)
    return _go_mod(path, content)


def _table(data: object, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _package_json(path: str, content: str) -> Manifest | None:
    data = json.loads(content)
    if not isinstance(data, dict):
        return None
    found = Manifest(path, _project_name(path, data.get("name")))
    found.runtime = _checked(list(_table(data, "dependencies").items()))
    found.dev = [
        pair
        for pair in _checked(list(_table(data, "devDependencies").items()))
        # Type stubs say nothing the package itself does not.
        if not pair[0].startswith("@types/")
    ]
    return found


def _pep508(specs: object) -> list[tuple[str, str]]:
    pairs: list[tuple[object, object]] = []
    for spec in specs if isinstance(specs, list) else []:
        match = _PEP508_RE.match(spec) if isinstance(spec, str) else None
        if match is not None:
            pairs.append((match.group(1), match.group(2).strip().replace(" ", "") or "*"))
    return _checked(pairs)


def _toml_deps(table: dict[str, Any]) -> list[tuple[str, str]]:
    pairs: list[tuple[object, object]] = []
    for name, spec in table.items():
        if isinstance(spec, dict):
            spec = spec.get("version", "*")
        pairs.append((name, spec))
    return _checked(pairs)


def _pyproject(path: str, content: str) -> Manifest | None:
    data = tomllib.loads(content)
    project = _table(data, "project")
    poetry = _table(_table(data, "tool"), "poetry")
    found = Manifest(path, _project_name(path, project.get("name") or poetry.get("name")))
    found.runtime = _pep508(project.get("dependencies"))
    found.runtime += [
        pair for pair in _toml_deps(_table(poetry, "dependencies")) if pair[0] != "python"
    ]
    dev: list[tuple[str, str]] = []
    for specs in _table(data, "dependency-groups").values():
        dev += _pep508(specs)
    for specs in _table(project, "optional-dependencies").values():
        dev += _pep508(specs)
    for group in _table(poetry, "group").values():
        dev += _toml_deps(_table(group, "dependencies"))
    found.dev = list(dict.fromkeys(dev))
    return found


def _cargo(path: str, content: str) -> Manifest | None:
    data = tomllib.loads(content)
    found = Manifest(path, _project_name(path, _table(data, "package").get("name")))
    found.runtime = _toml_deps(_table(data, "dependencies"))
    found.dev = _toml_deps(_table(data, "dev-dependencies"))
    return found


def _go_mod(path: str, content: str) -> Manifest | None:
    module = ""
    runtime: list[tuple[object, object]] = []
    for line in content.splitlines():
        stripped = line.strip()
        if stripped.startswith("module "):
            module = stripped.split()[1].rsplit("/", 1)[-1]
        elif stripped.startswith("go ") and len(stripped.split()) == 2:
            runtime.append(("go", stripped.split()[1]))
        else:
            body = stripped[len("require ") :] if stripped.startswith("require ") else stripped
            match = _GO_REQUIRE_RE.match(body)
            if match is not None and "// indirect" not in stripped:
                runtime.append((match.group(1), match.group(2)))
    found = Manifest(path, _project_name(path, module))
    found.runtime = _checked(runtime)
    return found
