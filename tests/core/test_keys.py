"""The API key: environment first, then the system keyring; never shown, never in argv."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator

import keyring
import keyring.backend
import keyring.backends.fail
import keyring.errors
import pytest

from app.core import keys
from app.core.errors import InvalidInput, StorageError

KEY = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-wxyz"


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring in a dict, so tests never touch the real one."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.store:
            raise keyring.errors.PasswordDeleteError("not found")
        del self.store[(service, username)]


class TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def memory_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryKeyring]:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def no_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    yield
    keyring.set_keyring(previous)


def test_environment_variable_comes_first(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_keyring.set_password("puffin-memory", "anthropic-api-key", "sk-ant-from-keyring-xxxxx")
    monkeypatch.setenv("ANTHROPIC_API_KEY", f"  {KEY}\n")
    assert keys.find_key() == (KEY, "environment variable ANTHROPIC_API_KEY")


def test_keyring_is_used_without_the_variable(memory_keyring: MemoryKeyring) -> None:
    keys.set_key(KEY)
    assert memory_keyring.store == {("puffin-memory", "anthropic-api-key"): KEY}
    assert keys.find_key() == (KEY, "system keyring")


def test_no_key_says_what_to_do(memory_keyring: MemoryKeyring) -> None:
    key, origin = keys.find_key()
    assert key is None
    assert "set ANTHROPIC_API_KEY" in origin and "puffin-memory auth set" in origin


def test_headless_linux_without_a_keyring_falls_back(no_keyring: None) -> None:
    assert keys.find_key() == (
        None,
        "no key: keyring unavailable (NoKeyringError); set ANTHROPIC_API_KEY",
    )
    with pytest.raises(StorageError, match=r"NoKeyringError.*Set the ANTHROPIC_API_KEY"):
        keys.set_key(KEY)
    status = keys.auth_status()
    assert status["configured"] is False and status["keyringAvailable"] is False


def test_a_missing_keyring_package_is_handled(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "keyring", None)
    key, origin = keys.find_key()
    assert key is None and "the keyring package is not installed" in origin


def test_status_never_contains_the_key(memory_keyring: MemoryKeyring) -> None:
    keys.set_key(KEY)
    status = keys.key_status()
    assert status == {
        "configured": True,
        "origin": "system keyring",
        "masked": "sk-ant-…wxyz",
        "keyringAvailable": True,
    }
    assert KEY not in repr(status)


def test_auth_set_reads_one_line_from_stdin(memory_keyring: MemoryKeyring) -> None:
    reply = keys.auth_set_from_stdin(io.StringIO(KEY + "\n"))
    assert reply == {"success": True, "storedIn": "system keyring", "masked": "sk-ant-…wxyz"}
    assert keys.find_key()[0] == KEY


def test_auth_set_prompts_hidden_on_a_terminal(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompts: list[str] = []

    def fake_getpass(prompt: str) -> str:
        prompts.append(prompt)
        return KEY

    monkeypatch.setattr(keys.getpass, "getpass", fake_getpass)
    keys.auth_set_from_stdin(TTY())
    assert prompts and "hidden" in prompts[0]
    assert keys.find_key()[0] == KEY


def test_auth_set_notes_that_the_variable_wins(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    reply = keys.auth_set_from_stdin(io.StringIO("sk-ant-api03-another-key-123456789\n"))
    assert "takes precedence" in reply["note"]


@pytest.mark.parametrize("raw", ["", "\n", "sk-ant short", "tooshort", "sk-ant-\x00" + "a" * 30])
def test_bad_keys_are_refused_and_not_stored(memory_keyring: MemoryKeyring, raw: str) -> None:
    with pytest.raises(InvalidInput):
        keys.auth_set_from_stdin(io.StringIO(raw))
    assert memory_keyring.store == {}


def test_auth_clear(memory_keyring: MemoryKeyring) -> None:
    keys.set_key(KEY)
    assert keys.auth_clear() == {"success": True, "removed": True}
    assert keys.auth_clear() == {"success": True, "removed": False}
    assert keys.find_key()[0] is None


def test_mask_key() -> None:
    assert keys.mask_key(KEY) == "sk-ant-…wxyz"
    assert keys.mask_key("abcdefghijklmnop") == "abc…mnop"
    assert keys.mask_key("short") == "…rt"
