"""Tokens per memorized thread with Claude, on a 150-item branch, against the naive pipeline.

Issue 12 target: the change-list pipeline costs <= 30 % of the naive whole-file pipeline per
memorized thread. A local stand-in for the Messages API (httpx2.MockTransport behind the real
`anthropic` SDK) counts tokens the way the API bills them, at about 4 characters a token for
everything sent (system prompt included, cached or not: the conservative count) and
everything returned. It answers extraction with what the offline engine finds in the
conversation (so the number of new items is realistic) and a change list with one `add` or
`reinforce` per new item.

The naive figure is computed in the same run from the same threads: the same extraction,
then the whole branch file and the new items sent, and the whole new file returned (its
instructions are not even counted, which flatters the naive side).

Then the same threads are scanned as one Puffin branch's backlog (into the same 150-item
branch): short threads share an extraction call and each group of threads is integrated by one
change list. Its tokens per thread are printed beside the one-by-one figure.

Run: `.venv/bin/python bench/llm_cost.py`
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.container import build_api  # noqa: E402
from app.core.format import render  # noqa: E402
from app.core.models import BranchMemory, Category, MemoryItem, derive_title  # noqa: E402
from app.core.store import MemoryStore  # noqa: E402
from app.engines.offline.extract import extract  # noqa: E402
from tests.fixtures.anthropic.fake_api import as_event_stream  # noqa: E402

CHARS_PER_TOKEN = 4
BRANCH = "bench/main"
ITEMS = ROOT / "tests" / "fixtures" / "retrieval" / "items.txt"
THREADS = ROOT / "tests" / "fixtures" / "dialogue" / "dev"
TARGET = 0.30
_FENCE = re.compile(r'<conversation id="(\d+)">\n(.*?)\n</conversation>', re.DOTALL)
_TURN = re.compile(r"^(User|Assistant):\s?", re.MULTILINE)
_CATEGORY = {
    "p": Category.CODING_PREFERENCES,
    "a": Category.ARCHITECTURAL_DECISIONS,
    "c": Category.PROJECT_CONVENTIONS,
    "b": Category.BUG_PATTERNS,
    "i": Category.IMPLEMENTATION_NOTES,
}


def tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


def branch_of(count: int = 150) -> BranchMemory:
    items: dict[Category, list[MemoryItem]] = {c: [] for c in Category}
    rows = [
        line.split("|", 3)
        for line in ITEMS.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    for key, _branch, cat, content in rows[:count]:
        category = _CATEGORY[cat]
        items[category].append(
            MemoryItem(
                category=category,
                content=content,
                title=derive_title(content),
                confidence=0.85,
                sources=[f"thread-{key}"],
            )
        )
    return BranchMemory(
        branch_id=BRANCH, summary="A long-lived branch.", items=items, thread_count=40
    )


class StandIn:
    """The Messages API as far as billing goes: it counts, and it answers plausibly."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        sent = json.dumps(body["system"]) + json.dumps(body["messages"])
        schema = body["output_config"]["format"]["schema"]["properties"]
        text = body["messages"][0]["content"][0]["text"]
        if "ops" in schema:
            kind, answer = "changes", self._changes(text)
        elif "conversations" in schema:
            kind, answer = "extraction", self._grouped(text)
        else:
            kind, answer = "extraction", self._extraction(text)
        reply = json.dumps(answer)
        used_in, used_out = tokens(sent), tokens(reply)
        self.calls.append((kind, used_in, used_out))
        answer = httpx2.Response(
            200,
            json={
                "id": "msg_bench",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": [{"type": "text", "text": reply}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": used_in,
                    "output_tokens": used_out,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                },
            },
        )
        # Long answers are asked for as a stream: answer in server-sent events then.
        return as_event_stream(answer) if body.get("stream") else answer

    def _extraction(self, text: str) -> dict[str, Any]:
        conversation = text.split("<conversation>", 1)[-1].rsplit("</conversation>", 1)[0]
        found = extract(conversation, source="bench")
        answer: dict[str, Any] = {"no_content_to_extract": not found.items}
        for category in Category:
            answer[category.value] = [
                {
                    "title": i.title,
                    "content": i.content,
                    "confidence": max(i.confidence, 0.8),
                    "tags": [],
                }
                for i in found.items
                if i.category is category
            ]
        return answer

    def _grouped(self, text: str) -> dict[str, Any]:
        entries = []
        for number, body in _FENCE.findall(text):
            entry = self._extraction(f"<conversation>{body}</conversation>")
            entries.append({"conversation": int(number), **entry})
        return {"conversations": entries}

    @staticmethod
    def _changes(text: str) -> dict[str, Any]:
        listed = text.split("<existing_items>", 1)[-1].split("</existing_items>", 1)[0]
        shown = [json.loads(line) for line in listed.strip().splitlines() if line.startswith("{")]
        new = text.split("<new_items>", 1)[-1].split("</new_items>", 1)[0]
        keys = [
            json.loads(line)["key"] for line in new.strip().splitlines() if line.startswith("{")
        ]
        ops = []
        for n, key in enumerate(keys):
            if n == 0 and shown:
                ops.append(
                    {
                        "op": "reinforce",
                        "new": key,
                        "ids": [shown[0]["id"]],
                        "title": "",
                        "text": "",
                        "reason": "",
                    }
                )
            else:
                ops.append(
                    {"op": "add", "new": key, "ids": [], "title": "", "text": "", "reason": ""}
                )
        return {"ops": ops, "notes": []}


def naive_tokens(before: BranchMemory, items: list[MemoryItem], after: BranchMemory) -> int:
    """The whole-file rewrite: file and items in, file out (instructions not counted)."""
    rows = "\n".join(json.dumps(i.model_dump(mode="json")) for i in items)
    return tokens(render(before)) + tokens(rows) + tokens(render(after))


def puffin_history(threads: list[Path]) -> dict[str, Any]:
    """The threads as one Puffin branch: each a chain of prompts with their responses."""
    prompts: list[dict[str, Any]] = []
    moment = 1_767_261_600_000
    for index, path in enumerate(threads):
        parts = _TURN.split(path.read_text(encoding="utf-8"))[1:]
        turns = list(zip(parts[::2], parts[1::2], strict=True))
        parent = None
        for n, (role, said) in enumerate(turns):
            if role != "User":
                continue
            answer = next((t for r, t in turns[n + 1 : n + 2] if r == "Assistant"), "")
            moment += 60_000
            prompt_id = f"t{index}-{n}"
            prompts.append(
                {
                    "id": prompt_id,
                    "parentId": parent,
                    "content": said.strip(),
                    "timestamp": moment,
                    "children": [],
                    "response": {"content": answer.strip(), "timestamp": moment + 30_000},
                }
            )
            parent = prompt_id
    return {"branches": {"main": {"id": "main", "name": "Main", "prompts": prompts}}}


def backlog(threads: list[Path]) -> tuple[int, int, int, int]:
    """A scan of the same threads as one Puffin branch backlog into a 150-item branch:
    (threads memorized, tokens, extraction calls, change-list calls)."""
    stand_in = StandIn()
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "bench"
        (project / ".puffin").mkdir(parents=True)
        (project / ".puffin" / "history.json").write_text(json.dumps(puffin_history(threads)))
        home.mkdir()
        (home / "config.json").write_text(
            json.dumps(
                {
                    "engine": "anthropic",
                    "idle_minutes": 0,
                    "sources": {"claude_code": False, "codex": False, "aider": False},
                }
            )
        )
        store = MemoryStore(home)
        store.ensure()
        store.write_text(BRANCH, render(branch_of()))
        client = httpx2.Client(transport=httpx2.MockTransport(stand_in.handler))
        api = build_api(home, http_client=client)
        answer = api.invoke("memory:scan", {"path": str(project)})
        if answer.get("error") or answer.get("fallbacks"):
            raise SystemExit(f"backlog scan did not use Claude: {answer}")
    spent = sum(i + o for _kind, i, o in stand_in.calls)
    kinds = [kind for kind, _i, _o in stand_in.calls]
    return answer["memorized"], spent, kinds.count("extraction"), kinds.count("changes")


def main() -> None:
    threads = sorted(THREADS.glob("*.txt"))
    stand_in = StandIn()
    ours = naive = memorized = 0
    calls_before = 0
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "config.json").write_text(json.dumps({"engine": "anthropic"}))
        store = MemoryStore(home)
        store.ensure()
        store.write_text(BRANCH, render(branch_of()))
        client = httpx2.Client(transport=httpx2.MockTransport(stand_in.handler))
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench-000000000000000000000000"
        api = build_api(home, http_client=client)
        for index, path in enumerate(threads):
            before = store.parse_bytes(BRANCH, store.read_bytes(BRANCH) or b"")
            answer = api.invoke(
                "memory:memorize",
                {
                    "conversationText": path.read_text(encoding="utf-8"),
                    "branchId": BRANCH,
                    "source": f"bench-thread-{index}",
                },
            )
            if answer.get("error"):
                raise SystemExit(f"memorize failed: {answer['error']}")
            if str(answer.get("path", "")).startswith("offline-"):
                # A stand-in the engine cannot talk to would make the figure meaningless.
                raise SystemExit(f"Claude was not used: {answer.get('notes')}")
            calls = stand_in.calls[calls_before:]
            calls_before = len(stand_in.calls)
            extraction = sum(i + o for kind, i, o in calls if kind == "extraction")
            spent = sum(i + o for _kind, i, o in calls)
            after = store.parse_bytes(BRANCH, store.read_bytes(BRANCH) or b"")
            committed = [i for i in after.all_items() if f"bench-thread-{index}" in i.sources]
            if not committed:
                continue
            memorized += 1
            ours += spent
            naive += extraction + naive_tokens(before, committed, after)
    if not memorized:
        raise SystemExit("no thread produced an item: nothing to compare")
    per_ours, per_naive = ours / memorized, naive / memorized
    share = per_ours / per_naive
    changes = [i + o for kind, i, o in stand_in.calls if kind == "changes"]
    print(
        f"threads memorized            {memorized} of {len(threads)} "
        f"(150-item branch, {len(stand_in.calls)} calls)"
    )
    print(f"naive whole-file pipeline    {per_naive:>8,.0f} tokens per thread")
    print(f"change lists (this build)    {per_ours:>8,.0f} tokens per thread")
    print(
        f"share                        {share:>8.0%}   target <= {TARGET:.0%}   "
        f"{'OK' if share <= TARGET else 'OVER'}"
    )
    print(
        f"change-list calls            {len(changes)} (the other threads needed none), "
        f"{sum(changes) // max(1, len(changes)):,} tokens each on average"
    )
    # The same threads found by a scan as one branch's backlog: grouped extraction and one
    # change list per group of threads, against the per-thread path above.
    count, spent, extractions, change_lists = backlog(threads)
    per_thread_ours = sum(i + o for _kind, i, o in stand_in.calls) / len(threads)
    grouped = spent / count
    print(
        f"backlog scan of the {count} threads   {extractions} extraction + "
        f"{change_lists} change-list calls (per thread: {len(stand_in.calls)} calls)"
    )
    print(
        f"  tokens per thread: grouped {grouped:,.0f}   one by one {per_thread_ours:,.0f}   "
        f"({grouped / per_thread_ours:.0%} of one by one)"
    )


if __name__ == "__main__":
    main()
