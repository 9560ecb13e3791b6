"""The Anthropic API key: where it comes from, storing it in the system keyring, status.

The key is looked up in the `ANTHROPIC_API_KEY` environment variable first, then in the system
keyring (service `puffin-memory`). `keyring` is imported lazily and every error it can raise
(no backend on a headless Linux box, a locked or broken backend, the package missing) is caught
and turned into a sentence saying where the key came from or why there is none. The key itself
is never logged, never written to `config.json` and never returned by a status call; only a
masked form (`sk-ant-…abcd`) is shown. The `auth_*` functions are what the CLI's
`puffin-memory auth set|status|clear` call; the key is read from stdin or a hidden prompt,
never from the command line where it would land in shell history.
"""

from __future__ import annotations

import getpass
import os
import sys
from typing import Any, TextIO

from app.core.errors import InvalidInput, StorageError

ENV_VAR = "ANTHROPIC_API_KEY"
SERVICE = "puffin-memory"
USERNAME = "anthropic-api-key"
ORIGIN_ENV = f"environment variable {ENV_VAR}"
ORIGIN_KEYRING = "system keyring"
_MIN_KEY_LENGTH = 20


def mask_key(key: str) -> str:
    """A form of the key safe to show: its prefix and last four characters."""
    if len(key) < 12:
        return "…" + key[-2:]
    prefix = "sk-ant-" if key.startswith("sk-ant-") else key[:3]
    return f"{prefix}…{key[-4:]}"


def _keyring_error(exc: BaseException) -> str:
    if isinstance(exc, ImportError):
        return "keyring unavailable (the keyring package is not installed)"
    return f"keyring unavailable ({type(exc).__name__})"


def _keyring_get() -> tuple[str | None, str | None]:
    """(key, None) or (None, why the keyring could not be used)."""
    try:
        import keyring  # lazily: optional, and slow to import

        value = keyring.get_password(SERVICE, USERNAME)
    except Exception as exc:  # any backend failure means "no keyring", never a crash
        return None, _keyring_error(exc)
    return (value.strip() or None) if value else None, None


def find_key() -> tuple[str | None, str]:
    """The API key and a sentence saying where it came from (or why there is none)."""
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return env, ORIGIN_ENV
    key, problem = _keyring_get()
    if key:
        return key, ORIGIN_KEYRING
    if problem:
        return None, f"no key: {problem}; set {ENV_VAR}"
    return None, f"no key: set {ENV_VAR} or run `puffin-memory auth set`"


def check_key_format(key: str) -> str:
    """The key stripped, or InvalidInput when it cannot be an API key."""
    key = key.strip()
    if not key:
        raise InvalidInput("No API key was given.")
    if any(ch.isspace() for ch in key) or not key.isprintable():
        raise InvalidInput("The API key must be one line without spaces.")
    if len(key) < _MIN_KEY_LENGTH:
        raise InvalidInput("That is too short to be an Anthropic API key.")
    return key


def set_key(key: str) -> None:
    """Store the key in the system keyring (StorageError with advice when there is none)."""
    key = check_key_format(key)
    try:
        import keyring

        keyring.set_password(SERVICE, USERNAME, key)
    except Exception as exc:
        raise StorageError(
            f"Could not store the key: {_keyring_error(exc)}. "
            f"Set the {ENV_VAR} environment variable instead."
        ) from None


def clear_key() -> bool:
    """Remove the key from the keyring; True when one was removed."""
    try:
        import keyring

        if keyring.get_password(SERVICE, USERNAME) is None:
            return False
        keyring.delete_password(SERVICE, USERNAME)
    except Exception as exc:
        if type(exc).__name__ == "PasswordDeleteError":
            return False
        raise StorageError(f"Could not remove the key: {_keyring_error(exc)}.") from None
    return True


def key_status() -> dict[str, Any]:
    """Whether a key is configured, where from, and its masked form (never the key)."""
    key, origin = find_key()
    _, keyring_problem = _keyring_get()
    return {
        "configured": key is not None,
        "origin": origin,
        "masked": mask_key(key) if key else None,
        "keyringAvailable": keyring_problem is None,
    }


def auth_set_from_stdin(stream: TextIO | None = None) -> dict[str, Any]:
    """`auth set`: read a key from stdin (a hidden prompt on a terminal) and store it."""
    stream = stream if stream is not None else sys.stdin
    if stream.isatty():
        raw = getpass.getpass("Anthropic API key (input hidden): ")
    else:
        raw = stream.readline()
    key = check_key_format(raw)
    set_key(key)
    reply: dict[str, Any] = {"success": True, "storedIn": ORIGIN_KEYRING, "masked": mask_key(key)}
    if os.environ.get(ENV_VAR, "").strip():
        reply["note"] = f"{ENV_VAR} is set in this environment and takes precedence."
    return reply


def auth_status() -> dict[str, Any]:
    """`auth status`: see `key_status`."""
    return key_status()


def auth_clear() -> dict[str, Any]:
    """`auth clear`: remove the stored key."""
    removed = clear_key()
    reply: dict[str, Any] = {"success": True, "removed": removed}
    if os.environ.get(ENV_VAR, "").strip():
        reply["note"] = f"{ENV_VAR} is still set in this environment; unset it there."
    return reply
