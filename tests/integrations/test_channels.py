"""memory:install-hooks through the API, as the app's Settings button calls it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.container import build_api
from app.integrations.channels import register_hook_channels


def _invoke(home: Path, payload: dict[str, Any]) -> dict[str, Any]:
    api = build_api(home)
    register_hook_channels(api)
    return api.invoke("memory:install-hooks", payload)


def test_install_and_uninstall_through_the_api(tmp_path: Path, home: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text('{"model": "opus"}\n', encoding="utf-8")

    reply = _invoke(home, {"settings": str(settings)})

    assert reply["changed"] is True
    data = json.loads(settings.read_text(encoding="utf-8"))
    command = data["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert str(home.resolve()) in command  # the API's own (non-default) home

    reply = _invoke(home, {"settings": str(settings), "uninstall": True})

    assert reply["removed"]
    assert json.loads(settings.read_text(encoding="utf-8")) == {"model": "opus"}


def test_a_broken_settings_file_is_an_invalid_input_reply(tmp_path: Path, home: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text("{nope", encoding="utf-8")

    reply = _invoke(home, {"settings": str(settings)})

    assert (reply["error"], reply["code"]) == (True, "INVALID_INPUT")
    assert settings.read_text(encoding="utf-8") == "{nope"


def test_unknown_keys_are_refused(home: Path) -> None:
    reply = _invoke(home, {"settings": None, "force": True})

    assert reply["code"] == "INVALID_INPUT"
