"""Implementation notes from the manifests a coding agent read: what the project is built on.

The Claude Code reader turns a tool's read of `package.json`, `pyproject.toml`, `Cargo.toml`
or `go.mod` into a checked `[manifest] path (name): dep version, ... | dev: ...` line
(`app/sources/manifests.py`). Each such line, checked again here (a pasted look-alike with
anything but package names and versions in it is ignored), becomes one implementation note
per manifest, "todo-app (todo-app/package.json) is built on Next.js 15.5.2, React 19.1.0 …",
tagged `manifest:<path>` so that a later read of the same file with other versions
supersedes it (`evolve.py`). The last read of a file in a conversation wins.
"""

from __future__ import annotations

import re
from datetime import date

from app.core.models import Category, MemoryItem
from app.sources.manifests import Manifest, parse_line

# Tag naming the manifest an item was read from.
MANIFEST_TAG = "manifest:"
# What a file read says is what the file says: committed, like a confirmed fact.
CONFIDENCE = 0.8
_LINE_RE = re.compile(r"^[ \t]*\[manifest\] (.+)$", re.MULTILINE)
# How people write the best-known frameworks and tools (package name -> name in prose);
# presentation only, every dependency is listed either way.
_DISPLAY = {
    "next": "Next.js",
    "react": "React",
    "vue": "Vue",
    "nuxt": "Nuxt",
    "svelte": "Svelte",
    "@sveltejs/kit": "SvelteKit",
    "@angular/core": "Angular",
    "express": "Express",
    "typescript": "TypeScript",
    "tailwindcss": "Tailwind CSS",
    "vite": "Vite",
    "eslint": "ESLint",
    "django": "Django",
    "flask": "Flask",
    "fastapi": "FastAPI",
    "pydantic": "Pydantic",
    "sqlalchemy": "SQLAlchemy",
    "tokio": "Tokio",
    "go": "Go",
}
# Names listed first: the framework a reader asks about before the helpers around it.
_KNOWN = tuple(_DISPLAY)


def manifest_items(text: str, *, source: str, today: date) -> list[MemoryItem]:
    """One implementation note per manifest read in the conversation (the last read wins)."""
    if "[manifest] " not in text:
        return []
    found: dict[str, Manifest] = {}
    for match in _LINE_RE.finditer(text):
        manifest = parse_line(match.group(1))
        if manifest is not None:
            found.pop(manifest.path, None)
            found[manifest.path] = manifest
    return [_item(m, source, today) for m in found.values()]


def _shown(pairs: list[tuple[str, str]]) -> str:
    ordered = sorted(pairs, key=lambda p: _KNOWN.index(p[0]) if p[0] in _KNOWN else len(_KNOWN))
    words = [f"{_DISPLAY.get(name, name)} {version}" for name, version in ordered]
    if len(words) <= 2:
        return " and ".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def _item(manifest: Manifest, source: str, today: date) -> MemoryItem:
    parts: list[str] = []
    if manifest.runtime:
        parts.append(f"is built on {_shown(manifest.runtime)}")
    if manifest.dev:
        parts.append(f"develops with {_shown(manifest.dev)}")
    content = f"{manifest.name} ({manifest.path}) {'; it '.join(parts)}."
    return MemoryItem(
        category=Category.IMPLEMENTATION_NOTES,
        title=f"{manifest.name} dependencies",
        content=content,
        confidence=CONFIDENCE,
        sources=[source],
        extracted=today,
        tags=[f"{MANIFEST_TAG}{manifest.path}", "source:agent"],
    )
