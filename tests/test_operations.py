"""One table of operations: the API, the Qt channels, the CLI and the docs are made from it
(issue 16, point 1)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypedDict

import pytest

from app import cli
from app.container import build_api
from app.core import answers, operations
from app.core import requests as request_models
from app.core.operations import OPERATIONS, Arg, Command, Operation
from app.service import generate
from app.service.channels import CHANNEL_MEMBERS, MemoryChannels

APP = Path(__file__).resolve().parents[1] / "app"


def test_the_generated_members_and_docs_are_current() -> None:
    assert generate.main(["--check"]) == 0, "run `python -m app.service.generate`"


def test_every_channel_name_is_written_once_in_the_app() -> None:
    sources = {
        path: path.read_text(encoding="utf-8")
        for path in APP.rglob("*.py")
        if path.name != "operations.py"
    }
    for op in OPERATIONS:
        found = [str(p.relative_to(APP)) for p, text in sources.items() if op.name in text]
        assert found == [], f"{op.name} is spelled out in {found}: use ops.{op.method.upper()}"


def test_every_operation_has_a_request_model_a_handler_and_a_qt_face(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    assert api.channels() == list(operations.CHANNELS)
    for op in OPERATIONS:
        assert issubclass(getattr(request_models, op.request), request_models.Request)
        assert CHANNEL_MEMBERS[op.name] == op.method
        assert callable(getattr(MemoryChannels, op.method))
        assert callable(getattr(MemoryChannels, f"request_{op.method}"))
        assert hasattr(MemoryChannels, f"{op.method}_done")
    api.index.close()


def test_every_command_of_the_table_parses_and_names_its_operation() -> None:
    parser = cli.build_parser()
    for path, (op, command) in operations.command_table().items():
        argv = [*path]
        for arg in command.args:
            if arg.flag and not arg.required:
                continue
            if arg.kind in ("words", "local") and not arg.flag:
                argv.append("x" if arg.kind == "local" else "word")
            elif arg.flag:
                argv += [arg.flag, "x"]
            elif not arg.optional:
                argv.append(arg.choices[0] if arg.choices else "x")
        args = parser.parse_args(argv)
        found = cli._command_of(args)
        assert found is not None and found[0] is op, path


def test_the_docs_list_every_operation_with_its_cli_command() -> None:
    text = (APP.parent / "docs" / "api.md").read_text(encoding="utf-8")
    for op in OPERATIONS:
        assert f"| `{op.name}` |" in text
        for command in op.commands:
            assert f"`puffin-memory {' '.join(command.path)}" in text


def test_a_new_read_only_operation_is_one_declaration_and_one_handler(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What adding `memory:ping` would take: it shows in the CLI, the Qt members and docs."""

    class PingAnswer(TypedDict):
        pong: bool

    monkeypatch.setattr(answers, "PingAnswer", PingAnswer, raising=False)
    ping = Operation(
        "memory:ping",
        "Answer pong.",
        "Empty",
        "PingAnswer",
        "`pong`",
        False,
        (),
        (Command(("ping",), "answer pong", (Arg("note", "--note"),)),),
    )
    table = (*OPERATIONS, ping)
    monkeypatch.setattr(operations, "OPERATIONS", table)
    monkeypatch.setattr(generate, "OPERATIONS", table)
    monkeypatch.setattr(cli, "OPERATIONS", table)
    monkeypatch.setattr(operations, "BY_NAME", {op.name: op for op in table})

    def pong(req: Any) -> dict[str, Any]:
        return {"pong": True}

    api = build_api(home, engine_override="offline")
    api.handle(ping, pong)
    assert api.invoke("memory:ping", {}) == {"pong": True}
    api.index.close()
    assert "async def ping(self) -> answers.PingAnswer:" in generate.members_source()
    assert "def request_ping(self, payload" in generate.members_source()
    assert "ping_done = Signal(int, object)" in generate.members_source()
    assert "| `memory:ping` | Answer pong." in generate.api_doc()
    args = cli.build_parser().parse_args(["ping", "--note", "hi"])
    found = cli._command_of(args)
    assert found is not None and found[0] is ping
    assert cli._payload(found[1], args) == {"note": "hi"}
    assert re.search(r"ping\s+answer pong", cli.build_parser().format_help())


def test_the_answer_contract_catches_a_drift() -> None:
    from tests.contract import problems

    assert problems("memory:list-branches", {"branches": []}) == []
    found = problems("memory:list-branches", {"branches": [{"branch": 1}], "extra": True})
    assert any("does not declare 'extra'" in p for p in found)
    assert any("lacks 'project'" in p for p in found)
    assert any("1 is not str" in p for p in found)
    assert problems("memory:retrieve", {"error": True, "code": "X", "message": "m"}) == []


def test_every_operation_names_an_answer_type() -> None:
    import typing

    for op in OPERATIONS:
        kind = getattr(answers, op.reply)
        assert typing.is_typeddict(kind), op.name
        assert issubclass(kind, dict)


def test_sources_and_key_test_answer_as_declared(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    sources = api.invoke("memory:sources", {})
    assert "sources" in sources and not sources.get("error")
    tested = api.invoke("memory:auth-test", {})
    assert tested["ok"] is False and tested["message"]
    api.index.close()
