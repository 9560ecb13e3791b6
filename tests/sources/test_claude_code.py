"""Claude Code transcripts: real sessions, branch segments, subagents, damaged input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.core.config import SourceSettings
from app.sources.claude_code import ORPHAN_SUBAGENTS
from app.sources.jsonl import INVALID_UTF8, MALFORMED, UNKNOWN_TYPES
from app.sources.models import ASSISTANT, SUMMARY, SYSTEM, USER
from app.sources.render import render
from app.sources.scan import discover
from tests.sources.conftest import copy_to

SID3 = "33333333-4444-4555-8666-777777777777"


def _projects(tmp_path: Path) -> Path:
    folder = tmp_path / "claude" / "projects"
    folder.mkdir(parents=True)
    return folder


def _scan(projects: Path, home: Path) -> list:
    return discover(SourceSettings(claude_projects_dir=str(projects)), home=home).threads


@pytest.mark.corpus
def test_real_sessions_give_their_project_and_branch(
    corpus_dir: Path, tmp_path: Path, user_home: Path
) -> None:
    projects = _projects(tmp_path)
    for path in sorted((corpus_dir / "claude-code").glob("*.jsonl")):
        session = path.stem.split("__", 1)[1]
        folder = "-home-u-spotter" if path.name.startswith("marot") else "-path-to-Demo"
        copy_to(path, projects / folder / f"{session}.jsonl")

    found = discover(SourceSettings(claude_projects_dir=str(projects)), home=user_home)

    assert found.errors == []
    by_project: dict[str, set[str]] = {}
    for thread in found.threads:
        by_project.setdefault(thread.project, set()).add(thread.branch)
    assert by_project == {"spotter": {"master"}, "Demo": {"main"}}
    assert len([t for t in found.threads if t.project == "spotter"]) == 3
    for thread in found.threads:
        assert thread.message_count > 0
        text = render(thread.load())
        assert text.startswith(("User: ", "["))
        assert "signature" not in text
        assert thread.rendered_bytes < thread.path.stat().st_size


@pytest.mark.corpus
def test_real_subagent_progress_becomes_a_side_conversation(
    corpus_dir: Path, tmp_path: Path, user_home: Path
) -> None:
    projects = _projects(tmp_path)
    copy_to(
        corpus_dir / "claude-code" / "marot-spotter__subagent.jsonl",
        projects / "-home-u-spotter" / "491e126e-1e71-469c-ade2-fcc8af567c74.jsonl",
    )
    (thread,) = _scan(projects, user_home)
    content = thread.load()
    assert [s.title for s in content.side_conversations] == ["Draft beads for linting setup"]
    text = render(content)
    assert "[side conversation: Draft beads for linting setup]" in text
    # The subagent's report reaches the text; its own tool calls do not.
    assert "Bead Content" in text
    assert "EISDIR" not in text


@pytest.mark.corpus
def test_real_inline_sidechains_are_not_main_messages(corpus_dir: Path) -> None:
    path = (
        corpus_dir
        / "claude-code"
        / "d-kimuson-claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    )
    (thread,) = discover(SourceSettings(), path=path).threads
    content = thread.load()
    assert thread.id == "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    assert len(content.side_conversations) == 2
    main_text = " ".join(m.text for m in content.messages)
    assert "Examine the package.json" not in main_text
    assert any("Package.json Analysis" in s.final_text() for s in content.side_conversations)


def test_branch_switch_mid_session_gives_one_thread_per_segment(
    src_fixtures: Path, tmp_path: Path, user_home: Path
) -> None:
    projects = _projects(tmp_path)
    sid = "11111111-2222-4333-8444-555555555555"
    copy_to(
        src_fixtures / "claude" / "branch_switch.jsonl", projects / "-home-u-shop" / f"{sid}.jsonl"
    )

    threads = _scan(projects, user_home)

    assert [(t.id, t.branch_id) for t in threads] == [
        (sid, "shop/main"),
        (f"{sid}#2", "shop/feature/cart"),
        (f"{sid}#3", "shop/main"),
    ]
    assert [t.ref for t in threads] == ["cc-11111111", "cc-11111111-2", "cc-11111111-3"]
    # The agent's `cd src` (a folder not on this machine) did not start a new project.
    assert "Reading it first." in render(threads[1].load())


def test_assistant_lines_sharing_a_message_id_are_one_turn(src_fixtures: Path) -> None:
    first = discover(
        SourceSettings(), path=src_fixtures / "claude" / "branch_switch.jsonl"
    ).threads[0]
    messages = first.messages
    assert [m.role for m in messages] == [USER, ASSISTANT]
    assert messages[1].text == "Understood, pnpm it is."
    assert messages[1].tools == ["Bash: pnpm install"]
    text = render(first.load())
    assert "private chain of thought" not in text
    assert "added 1200 packages" not in text


def _subagent_layout(src: Path, projects: Path, *, beside: bool) -> Path:
    folder = projects / "-home-u-api"
    session = copy_to(src / "claude" / f"{SID3}.jsonl", folder / f"{SID3}.jsonl")
    agent_dir = folder if beside else folder / SID3 / "subagents"
    copy_to(src / "claude" / "agent-a1b2c3d.jsonl", agent_dir / "agent-a1b2c3d.jsonl")
    return session


@pytest.mark.parametrize("beside", [False, True], ids=["subagents-folder", "beside-session"])
def test_subagent_files_are_side_conversations_of_their_parent(
    src_fixtures: Path, tmp_path: Path, user_home: Path, beside: bool
) -> None:
    projects = _projects(tmp_path)
    _subagent_layout(src_fixtures, projects, beside=beside)

    threads = _scan(projects, user_home)

    assert [t.id for t in threads] == [SID3]
    (side,) = threads[0].side_conversations
    assert side.id == "a1b2c3d"
    assert side.title == "Profile login"
    assert "bcrypt cost 14 is the culprit." in [m.text for m in side.messages]
    text = render(threads[0].load())
    assert "[side conversation: Profile login]" in text
    assert "cost 12 is enough" in text
    # Placed where it happened: after the Task call, before the parent's conclusion.
    assert text.index("[tool] Task") < text.index("[side conversation") < text.index("Lowering")


@pytest.mark.parametrize("beside", [False, True], ids=["subagents-folder", "beside-session"])
def test_a_subagent_file_passed_alone_reads_its_parent(
    src_fixtures: Path, tmp_path: Path, beside: bool
) -> None:
    projects = _projects(tmp_path)
    _subagent_layout(src_fixtures, projects, beside=beside)
    agent = next(projects.rglob("agent-a1b2c3d.jsonl"))

    threads = discover(SourceSettings(), path=agent).threads

    assert [(t.id, t.side_count) for t in threads] == [(SID3, 1)]


def test_subagent_without_its_session_is_counted_not_a_thread(
    src_fixtures: Path, tmp_path: Path, user_home: Path
) -> None:
    projects = _projects(tmp_path)
    copy_to(src_fixtures / "claude" / "agent-a1b2c3d.jsonl", projects / "p" / "agent-a1b2c3d.jsonl")
    found = discover(SourceSettings(claude_projects_dir=str(projects)), home=user_home)
    assert found.threads == []
    assert found.skipped[ORPHAN_SUBAGENTS] == 1


def test_injected_text_is_marked_not_taken_for_the_user(src_fixtures: Path) -> None:
    found = discover(SourceSettings(), path=src_fixtures / "claude" / "marked_and_garbage.jsonl")
    (thread,) = found.threads
    messages = thread.messages
    user_words = [m.text for m in messages if m.role == USER]
    assert user_words == [
        "/review check the error handling in api.py",
        "Thanks. Always log before re-raising.",
    ]
    assert messages[0].role == SYSTEM
    assert messages[0].kind == SUMMARY
    assert thread.branch == "(no branch)"
    assert thread.branch_id == "notes/(no branch)"
    text = render(thread.load())
    assert text.startswith("[context summary] This session is being continued")
    assert "User: This session" not in text
    assert "[meta] Injected skill text" in text
    assert "[command] /clear" in text
    assert "[command output] Cleared" in text
    assert "[interrupted by user]" in text
    for line in text.splitlines():
        assert not (line.startswith("User:") and "Injected" in line)


def test_inline_sidechain_is_titled_by_the_task_that_started_it(src_fixtures: Path) -> None:
    (thread,) = discover(
        SourceSettings(), path=src_fixtures / "claude" / "marked_and_garbage.jsonl"
    ).threads
    (side,) = thread.side_conversations
    assert side.title == "Inspect api.py"
    assert "swallows exceptions" not in " ".join(m.text for m in thread.messages)


def test_unknown_records_and_garbage_lines_are_counted_not_fatal(src_fixtures: Path) -> None:
    found = discover(SourceSettings(), path=src_fixtures / "claude" / "marked_and_garbage.jsonl")
    assert found.errors == []
    assert found.skipped[UNKNOWN_TYPES] == 2
    assert found.skipped[MALFORMED] == 3
    assert len(found.threads) == 1


def test_invalid_utf8_is_repaired_and_read(src_fixtures: Path) -> None:
    found = discover(SourceSettings(), path=src_fixtures / "claude" / "invalid_utf8.jsonl")
    (thread,) = found.threads
    assert thread.messages[0].text.startswith("cafe \ufffd")
    assert thread.messages[1].text == "Noted."
    assert found.skipped[INVALID_UTF8] >= 1
    assert found.skipped[MALFORMED] == 1


def test_empty_file_finds_nothing_and_is_no_error(src_fixtures: Path) -> None:
    found = discover(SourceSettings(), path=src_fixtures / "claude" / "empty.jsonl")
    assert found.threads == []
    assert found.errors == []


def _line(kind: str, uuid: str, ts: str, message: dict[str, object]) -> bytes:
    record = {
        "parentUuid": None,
        "isSidechain": False,
        "cwd": "/home/u/big",
        "gitBranch": "main",
        "sessionId": "99999999-0000-4000-8000-000000000000",
        "type": kind,
        "uuid": uuid,
        "timestamp": ts,
        "message": message,
    }
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def test_twenty_megabyte_lines_are_handled(tmp_path: Path) -> None:
    mb20 = 20 * 1024 * 1024
    path = tmp_path / "99999999-0000-4000-8000-000000000000.jsonl"
    with path.open("wb") as out:
        out.write(
            _line(
                "user", "u1", "2026-03-05T10:00:00Z", {"role": "user", "content": "Dump the logs."}
            )
        )
        out.write(
            _line(
                "assistant",
                "a1",
                "2026-03-05T10:00:01Z",
                {
                    "id": "msg_1",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "t1",
                            "name": "Bash",
                            "input": {"command": "cat app.log"},
                        }
                    ],
                },
            )
        )
        out.write(
            _line(
                "user",
                "u2",
                "2026-03-05T10:00:05Z",
                {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": "t1",
                            "type": "tool_result",
                            "content": "log line\n" * (mb20 // 9),
                        }
                    ],
                },
            )
        )
        out.write(
            _line(
                "user",
                "u3",
                "2026-03-05T10:00:06Z",
                {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": "t2",
                            "type": "tool_result",
                            "is_error": True,
                            "content": "Traceback: boom\n" + "x" * mb20,
                        }
                    ],
                },
            )
        )
        out.write(
            _line(
                "user",
                "u4",
                "2026-03-05T10:00:07Z",
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": "image/png",
                                "data": "QUJD" * (mb20 // 4),
                            },
                        },
                        {"type": "text", "text": "Why is the chart empty?"},
                    ],
                },
            )
        )
        out.write(
            _line(
                "assistant",
                "a2",
                "2026-03-05T10:00:08Z",
                {
                    "id": "msg_2",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "The query filters by tomorrow."}],
                },
            )
        )
    assert path.stat().st_size > 3 * mb20

    found = discover(SourceSettings(), path=path)

    (thread,) = found.threads
    texts = [m.text for m in thread.messages]
    assert "Why is the chart empty?" in texts
    assert "The query filters by tomorrow." in texts
    text = render(thread.load())
    assert "[tool error] Traceback: boom" in text
    assert len(text) < 5_000
    assert thread.rendered_bytes < 5_000


def test_projects_folder_and_single_project_folder_both_work(
    src_fixtures: Path, tmp_path: Path, user_home: Path
) -> None:
    projects = _projects(tmp_path)
    _subagent_layout(src_fixtures, projects, beside=False)
    whole = discover(SourceSettings(), path=projects)
    one = discover(SourceSettings(), path=projects / "-home-u-api")
    assert [t.id for t in whole.threads] == [t.id for t in one.threads] == [SID3]


def test_renamed_copy_takes_the_session_id_from_its_lines(
    src_fixtures: Path, tmp_path: Path
) -> None:
    path = shutil.copyfile(src_fixtures / "claude" / "branch_switch.jsonl", tmp_path / "copy.jsonl")
    threads = discover(SourceSettings(), path=Path(path)).threads
    assert threads[0].id == "11111111-2222-4333-8444-555555555555"


def _tool_turns(
    tool_id: str, name: str, tool_input: dict[str, object], result: object
) -> list[bytes]:
    call = _line(
        "assistant",
        f"a-{tool_id}",
        "2026-03-05T10:00:01Z",
        {
            "id": f"msg-{tool_id}",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
        },
    )
    output = str(result.get("stdout", "2 passed")) if isinstance(result, dict) else str(result)
    record = json.loads(
        _line(
            "user",
            f"u-{tool_id}",
            "2026-03-05T10:00:02Z",
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": output}],
            },
        )
    )
    record["toolUseResult"] = result
    return [call, json.dumps(record, separators=(",", ":")).encode() + b"\n"]


def test_a_passing_command_run_keeps_only_its_summary_line(tmp_path: Path) -> None:
    path = tmp_path / "99999999-0000-4000-8000-000000000000.jsonl"
    bash = {"stderr": "", "interrupted": False, "isImage": False}
    lines = [
        _line("user", "u0", "2026-03-05T10:00:00Z", {"role": "user", "content": "Run the tests."}),
        *_tool_turns(
            "t1", "Bash", {"command": "pytest -q"}, {"stdout": "....\n4 passed in 0.31s", **bash}
        ),
        # A command whose output holds no summary, an interrupted run and a file that says
        # "passed" leave nothing.
        *_tool_turns("t2", "Bash", {"command": "ls"}, {"stdout": "notes.txt", **bash}),
        *_tool_turns(
            "t3", "Bash", {"command": "make"}, {**bash, "stdout": "1 passed", "interrupted": True}
        ),
        *_tool_turns(
            "t4",
            "Read",
            {"file_path": "CHANGELOG.md"},
            {"type": "text", "file": {"content": "2 passed"}},
        ),
    ]
    path.write_bytes(b"".join(lines))

    (thread,) = discover(SourceSettings(), path=path).threads
    text = render(thread.load())

    assert "[tool] Bash: pytest -q\n[tool result] 4 passed in 0.31s\n[tool] Bash: ls" in text
    assert text.count("[tool result]") == 1
    assert "notes.txt" not in text.replace("[tool] Bash: ls", "")


def test_the_users_answers_to_the_agents_questions_are_theirs(tmp_path: Path) -> None:
    path = tmp_path / "99999999-0000-4000-8000-000000000000.jsonl"
    question = {
        "question": "Which tools should we set up?",
        "header": "Tools",
        "options": [
            {"label": "All four", "description": "Credo + Dialyxir + mix_audit + Sobelow"},
            {"label": "Credo + Dialyxir + mix_audit", "description": "Skip Sobelow"},
        ],
        "multiSelect": False,
    }
    unanswered = {"question": "Rig prefix?", "options": [{"label": "spotter"}]}
    result = {
        "questions": [question, unanswered],
        "answers": {"Which tools should we set up?": "Credo + Dialyxir + mix_audit"},
    }
    lines = [
        _line("user", "u0", "2026-03-05T10:00:00Z", {"role": "user", "content": "Set up linting."}),
        *_tool_turns("t1", "AskUserQuestion", {"questions": [question, unanswered]}, result),
    ]
    path.write_bytes(b"".join(lines))

    (thread,) = discover(SourceSettings(), path=path).threads
    text = render(thread.load())

    assert (
        "[tool] AskUserQuestion\n"
        "Tools: Which tools should we set up?\n"
        "- **All four**: Credo + Dialyxir + mix_audit + Sobelow\n"
        "- **Credo + Dialyxir + mix_audit**: Skip Sobelow\n\n"
        "User: Credo + Dialyxir + mix_audit"
    ) in text
    assert "Rig prefix" not in text


@pytest.mark.parametrize(
    "result",
    [
        {"questions": "which?", "answers": {}},
        {"questions": [{"question": "Which?"}], "answers": ["a"]},
        {"questions": [None, 3, {"question": 7}], "answers": {"7": "x"}},
        {"questions": [{"question": "Which?", "options": "a, b"}], "answers": {"Which?": 5}},
        {"questions": [{"question": "Which?", "options": [None, {"label": 2}]}], "answers": {}},
    ],
)
def test_odd_question_records_are_skipped_not_fatal(tmp_path: Path, result: object) -> None:
    path = tmp_path / "99999999-0000-4000-8000-000000000000.jsonl"
    lines = [
        _line("user", "u0", "2026-03-05T10:00:00Z", {"role": "user", "content": "Set up lint."}),
        *_tool_turns("t1", "AskUserQuestion", {}, result),
    ]
    path.write_bytes(b"".join(lines))
    found = discover(SourceSettings(), path=path)
    (thread,) = found.threads
    assert found.errors == []
    assert render(thread.load()).startswith("User: Set up lint.")


def test_a_long_question_and_answer_are_bounded(tmp_path: Path) -> None:
    path = tmp_path / "99999999-0000-4000-8000-000000000000.jsonl"
    question = "Which? " + "x" * 5000
    result = {
        "questions": [{"question": question, "options": [{"label": "y" * 5000}]}],
        "answers": {question: "z" * 50_000},
    }
    lines = [
        _line("user", "u0", "2026-03-05T10:00:00Z", {"role": "user", "content": "Set up lint."}),
        *_tool_turns("t1", "AskUserQuestion", {}, result),
    ]
    path.write_bytes(b"".join(lines))
    (thread,) = discover(SourceSettings(), path=path).threads
    assert len(render(thread.load())) < 3_000
