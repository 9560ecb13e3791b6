"""`hook` and `install-hooks` on a command line built the way app.cli builds its own."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from app.integrations import cli_hooks
from tests.integrations.conftest import RunHook


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="puffin-memory")
    parser.add_argument("--home")
    parser.add_argument("--engine", choices=["auto", "offline", "anthropic"])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("status")
    cli_hooks.add_parsers(sub)
    return parser


def test_other_commands_are_not_ours() -> None:
    assert cli_hooks.run(_parser().parse_args(["status"])) is None
    assert cli_hooks.run(_parser().parse_args([])) is None


@pytest.mark.parametrize(
    "action", ["session-start", "session-end", "stop", "pre-compact", "process-inbox"]
)
def test_every_hook_action_parses(action: str) -> None:
    args = _parser().parse_args(["--home", "/h", "hook", action, "--event", "Stop"])
    assert (args.command, args.action, args.event, args.home) == ("hook", action, "Stop", "/h")


def test_an_unknown_action_is_a_usage_error() -> None:
    with pytest.raises(SystemExit):
        _parser().parse_args(["hook", "session-middle"])


def test_install_hooks_prints_what_changed(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = tmp_path / "settings.json"
    args = _parser().parse_args(["--home", str(home), "install-hooks", "--settings", str(settings)])

    assert cli_hooks.run(args) == 0
    reply = json.loads(capsys.readouterr().out)
    assert reply["changed"] is True
    assert reply["settings"] == str(settings)

    args = _parser().parse_args(
        ["--home", str(home), "install-hooks", "--settings", str(settings), "--uninstall"]
    )
    assert cli_hooks.run(args) == 0
    assert json.loads(capsys.readouterr().out)["action"] == "uninstall"


def test_install_hooks_on_broken_settings_exits_2_with_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text("{oops", encoding="utf-8")

    code = cli_hooks.run(_parser().parse_args(["install-hooks", "--settings", str(settings)]))

    reply = json.loads(capsys.readouterr().out)
    assert code == 2
    assert (reply["error"], reply["code"]) == (True, "INVALID_INPUT")
    assert "not valid JSON" in reply["message"]
    assert settings.read_text(encoding="utf-8") == "{oops"


def test_stop_alias_records_the_event(
    home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started: list[bool] = []
    monkeypatch.setattr(
        "app.integrations.inbox.spawn_drainer", lambda *a, **k: started.append(True) or 4242
    )
    monkeypatch.setattr(
        "sys.stdin",
        io.StringIO(
            json.dumps(
                {"session_id": "s", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": "/tmp"}
            )
        ),
    )

    code = cli_hooks.run(_parser().parse_args(["--home", str(home), "hook", "stop"]))

    assert code == 0
    assert started == [True]
    (record,) = (home / "inbox").glob("*.json")
    assert json.loads(record.read_text(encoding="utf-8"))["event"] == "Stop"


def test_module_entry_point_runs_install_hooks(tmp_path: Path, run_hook: RunHook) -> None:
    settings = tmp_path / "settings.json"

    done = run_hook("install-hooks", "--settings", str(settings))

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["changed"] is True
    assert run_hook("no-such-command").returncode == 2


def test_a_drain_that_cannot_start_leaves_the_record_for_later(
    home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def broken(*_args: object, **_kwargs: object) -> int:
        raise OSError("fork failed")

    monkeypatch.setattr("app.integrations.inbox.spawn_drainer", broken)
    monkeypatch.setattr(
        "sys.stdin",
        io.StringIO(
            json.dumps({"session_id": "s", "transcript_path": "t.jsonl", "cwd": str(tmp_path)})
        ),
    )

    code = cli_hooks.run(_parser().parse_args(["--home", str(home), "hook", "session-end"]))

    assert code == 0
    (record,) = (home / "inbox").glob("*.json")
    assert json.loads(record.read_text(encoding="utf-8"))["transcript_path"] == str(
        tmp_path / "t.jsonl"
    )
    log = (home / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert "no drain started: fork failed" in log
