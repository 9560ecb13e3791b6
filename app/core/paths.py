"""Where memory lives: the home folder and the file name of each branch id.

The home is `--home`, else `PUFFIN_MEMORY_HOME`, else `~/.puffin/memory`. Branch ids are
free text and are encoded into file names that can never leave `branches/`. Stdlib only
(plus the error classes), so the command line and the Claude Code hooks can find files
before they pay for importing the rest of the core; `MemoryStore` uses the same functions.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from app.core.errors import InvalidInput


def resolve_home(home: Path | str | None = None) -> Path:
    """The memory home for an optional `--home` value."""
    if home:
        return Path(home).expanduser()
    env = os.environ.get("PUFFIN_MEMORY_HOME")
    return Path(env).expanduser() if env else Path.home() / ".puffin" / "memory"


MAX_BRANCH_ID = 200
_SAFE_ID = re.compile(r"[A-Za-z0-9._-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Percent-encoded names longer than this fall back to a hash (file names are limited to 255
# bytes on common file systems); the branch id is then kept in a `.name` file beside it.
_MAX_STEM_BYTES = 180
HASH_PREFIX = "_h_"


def project_of(branch_id: str) -> str:
    """The project part of a `<project>/<branch>` id (empty for ids without a slash)."""
    return branch_id.split("/", 1)[0] if "/" in branch_id else ""


def validate_branch_id(branch: object) -> str:
    """Return `branch` if it is an acceptable id, else raise InvalidInput saying why."""
    if not isinstance(branch, str) or not branch:
        raise InvalidInput("Branch id must be a non-empty string.")
    if len(branch) > MAX_BRANCH_ID:
        raise InvalidInput(f"Branch id is longer than {MAX_BRANCH_ID} characters.")
    if _CONTROL.search(branch):
        raise InvalidInput("Branch id must not contain control characters.")
    if branch != branch.strip():
        raise InvalidInput("Branch id must not start or end with whitespace.")
    segments = re.split(r"[/\\]", branch)
    if any(seg in {".", ".."} for seg in segments):
        raise InvalidInput(f"Branch id {branch!r} contains a '.' or '..' path segment.")
    return branch


# Names Windows reserves for devices, with or without an extension ("con", "LPT1.txt").
_RESERVED = re.compile(r"(?:con|prn|aux|nul|com[0-9]|lpt[0-9])(?:\..*)?", re.IGNORECASE)
# Marks a stem whose id has capitals: `+` never occurs otherwise (percent-encoding escapes
# it), so "Main" (`Main+…`) and "main" (`main`) stay two files where case is ignored.
CASE_MARK = "+"
_CASE_SUFFIX = re.compile(r"\+[0-9a-f]{8}$")


def encode_branch(branch: str) -> str:
    """File stem for a branch id: unchanged when plain and lower-case, else reversibly encoded.

    Ids with capitals get `+<8 hex>` (a digest of the exact id) so ids that differ only by
    case never share a file on macOS or Windows; Windows device names (`CON`, `aux.md`) have
    their first character percent-encoded; very long ids become a hash.
    """
    validate_branch_id(branch)
    cased = branch != branch.lower()
    if (
        _SAFE_ID.fullmatch(branch)
        and not branch.startswith(".")
        and not cased
        and not branch.endswith(".")
        and not _RESERVED.fullmatch(branch)
    ):
        return branch
    if _SAFE_ID.fullmatch(branch) and not branch.startswith(".") and not branch.endswith("."):
        stem = branch
    else:
        from urllib.parse import quote

        stem = quote(branch, safe="-_").replace(".", "%2E")
    if _RESERVED.fullmatch(stem):
        stem = f"%{ord(stem[0]):02X}{stem[1:]}"
    if cased:
        stem += CASE_MARK + _sha256(branch)[:8]
    if len(stem.encode()) > _MAX_STEM_BYTES:
        return HASH_PREFIX + _sha256(branch)[:40]
    return stem


def _sha256(text: str) -> str:
    # Lazy: hashlib loads OpenSSL, and the hooks mostly meet `project/branch` ids.
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def decode_stem(stem: str) -> str | None:
    """Branch id for a plain or percent-encoded stem; None for hashed stems."""
    if stem.startswith(HASH_PREFIX):
        return None
    if CASE_MARK in stem and _CASE_SUFFIX.search(stem):
        stem = stem[: -len(CASE_MARK) - 8]
    if "%" not in stem:
        return stem
    from urllib.parse import unquote

    return unquote(stem)
