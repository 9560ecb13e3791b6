"""Ingest benchmark: scan speed, peak memory and rendering reduction of `app.sources`.

Builds, in a temporary folder (in a child process, so this process's memory is the scan's),
a transcript tree of at least `--mb` megabytes by replicating the real corpus
(`../shared/corpus`): Claude Code sessions under `claude/projects/...` (each copy with a
fresh session id, one in five with a subagent transcript), Codex rollouts under
`codex/sessions/YYYY/MM/DD/`, Aider and Puffin histories in project folders. A second tree
holds `--giant` sessions that each carry a multi-MB tool output line and a pasted base64
screenshot, as real sessions do. Then it runs `discover` over each (reading and grouping),
reloads, renders and redacts every thread, and prints MB/s, the process's peak resident
memory and how much smaller the rendered text is than the raw transcripts.
Targets: >= 50 MB/s for discovery, peak memory <= 300 MB whatever the folder size.

Run: `.venv/bin/python bench/ingest.py [--mb 100] [--giant 10] [--tracemalloc]`.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.config import SourceSettings  # noqa: E402
from app.core.redact import redact  # noqa: E402
from app.sources.models import ReadStats  # noqa: E402
from app.sources.render import render  # noqa: E402
from app.sources.scan import discover  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus"
MB = 1024 * 1024


def _claude_sources() -> list[tuple[bytes, bytes]]:
    """(file bytes, the session id written in it) for each corpus Claude session."""
    found = []
    for path in sorted((CORPUS / "claude-code").glob("*.jsonl")):
        data = path.read_bytes()
        first = next((json.loads(line) for line in data.splitlines() if b'"sessionId"' in line), {})
        found.append((data, str(first.get("sessionId", "")).encode()))
    return found


def _giant_lines(session: bytes, rng: random.Random) -> bytes:
    """A 2-6 MB successful tool output and a ~2 MB pasted screenshot, as Claude writes them."""
    body = "Compiling 412 files (.ex)\nwarning: variable x is unused\n" * (
        rng.randint(2, 6) * MB // 56
    )
    tool = {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "cwd": "/home/u/spotter",
        "sessionId": session.decode(),
        "gitBranch": "master",
        "timestamp": "2026-02-10T22:00:00.000Z",
        "uuid": str(uuid.uuid4()),
        "message": {
            "role": "user",
            "content": [{"tool_use_id": "toolu_x", "type": "tool_result", "content": body}],
        },
        "toolUseResult": {"stdout": body, "stderr": ""},
    }
    image = {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "cwd": "/home/u/spotter",
        "sessionId": session.decode(),
        "gitBranch": "master",
        "timestamp": "2026-02-10T22:00:01.000Z",
        "uuid": str(uuid.uuid4()),
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": "image/png",
                        "data": "iVBORw0KGgo" * (2 * MB // 11),
                    },
                },
                {"type": "text", "text": "why does the button look like this?"},
            ],
        },
    }
    return (json.dumps(tool) + "\n" + json.dumps(image) + "\n").encode()


def build(root: Path, target_mb: float) -> int:
    """Write the replicated corpus tree under `root`; return its size in bytes."""
    claude = _claude_sources()
    codex = sorted((CORPUS / "codex").glob("*.jsonl"))
    aider = (CORPUS / "aider" / "AndrewJacop-Simple-Calulator__.aider.chat.history.md").read_bytes()
    puffin = (CORPUS / "puffin" / "jdubray-puffin-todo-list__.puffin__history.json").read_bytes()
    total = 0
    copy = 0
    while total < target_mb * MB:
        copy += 1
        project = root / "claude" / "projects" / f"-home-u-project{copy % 40}"
        project.mkdir(parents=True, exist_ok=True)
        for data, sid in claude:
            new = str(uuid.uuid4()).encode()
            out = data.replace(sid, new) if sid else data
            (project / f"{new.decode()}.jsonl").write_bytes(out)
            total += len(out)
            if copy % 5 == 0:
                # A subagent transcript in the current layout: the parent's lines, as sidechain.
                sub = project / new.decode() / "subagents"
                sub.mkdir(parents=True)
                side = out.replace(b'"isSidechain":false', b'"isSidechain":true')[: 256 * 1024]
                side = side[: side.rfind(b"\n") + 1]
                (sub / f"agent-a{copy:06d}.jsonl").write_bytes(side)
                total += len(side)
        day = root / "codex" / "sessions" / "2026" / "02" / f"{copy % 28 + 1:02d}"
        day.mkdir(parents=True, exist_ok=True)
        for source in codex:
            data = source.read_bytes()
            new_id = str(uuid.uuid4())
            old = json.loads(data.splitlines()[0]).get("payload", {}).get("id", "").encode()
            out = data.replace(old, new_id.encode()) if old else data
            (day / f"rollout-2026-02-{copy % 28 + 1:02d}T10-00-00-{new_id}.jsonl").write_bytes(out)
            total += len(out)
        if copy % 10 == 0:
            folder = root / "projects" / f"app{copy}"
            (folder / ".puffin").mkdir(parents=True)
            (folder / ".aider.chat.history.md").write_bytes(aider)
            (folder / ".puffin" / "history.json").write_bytes(puffin)
            total += len(aider) + len(puffin)
    return total


def build_giant(root: Path, sessions: int) -> int:
    """Claude sessions that each carry a multi-MB tool output line and a pasted image."""
    rng = random.Random(7)
    data, sid = _claude_sources()[0]
    project = root / "giant" / "projects" / "-home-u-spotter"
    project.mkdir(parents=True)
    total = 0
    for _ in range(sessions):
        new = str(uuid.uuid4()).encode()
        out = data.replace(sid, new) + _giant_lines(new, rng) + data.replace(sid, new)
        (project / f"{new.decode()}.jsonl").write_bytes(out)
        total += len(out)
    return total


def _rss_mb() -> float:
    # Linux reports kilobytes, macOS bytes.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / MB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0, help="size of the tree to build")
    parser.add_argument(
        "--giant",
        type=int,
        default=10,
        help="extra sessions carrying multi-MB lines (scanned separately)",
    )
    parser.add_argument("--tracemalloc", action="store_true", help="also trace Python allocations")
    parser.add_argument("--keep", action="store_true", help="keep the temporary tree")
    parser.add_argument("--build-only", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"{CORPUS} is not present; the benchmark replicates it")
    if args.build_only:
        target = Path(args.build_only)
        print(build(target, args.mb), build_giant(target, args.giant))
        return

    root = Path(tempfile.mkdtemp(prefix="puffin-ingest-"))
    print(f"temporary tree: {root}")
    try:
        started = time.perf_counter()
        # Built in a child process so that this process's peak memory is the scan's alone.
        child = subprocess.run(
            [
                sys.executable,
                __file__,
                "--build-only",
                str(root),
                "--mb",
                str(args.mb),
                "--giant",
                str(args.giant),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        size, giant = (int(v) for v in child.stdout.split())
        print(
            f"built {size / MB:.1f} MB of corpus replicas and {giant / MB:.1f} MB of "
            f"sessions with giant lines in {time.perf_counter() - started:.1f} s"
        )
        settings = SourceSettings(
            claude_projects_dir=str(root / "claude" / "projects"),
            codex_sessions_dir=str(root / "codex" / "sessions"),
            puffin_projects=[str(p) for p in sorted((root / "projects").iterdir())],
            aider_projects=[str(p) for p in sorted((root / "projects").iterdir())],
        )
        home = root / "home"
        home.mkdir()
        rss_before = _rss_mb()

        started = time.perf_counter()
        found = discover(settings, home=home)
        elapsed = time.perf_counter() - started
        raw_mb = found.raw_bytes / MB
        scan_speed = raw_mb / elapsed
        print(
            f"discover (read + group): {len(found.threads)} threads from {found.files} files, "
            f"{raw_mb:.1f} MB in {elapsed:.2f} s = {scan_speed:.0f} MB/s"
        )
        print(f"  skipped: {found.skipped}  errors: {len(found.errors)}")
        print(f"  peak RSS: {_rss_mb():.0f} MB (before the scan {rss_before:.0f} MB)")

        if giant:
            started = time.perf_counter()
            big = discover(
                SourceSettings(claude_projects_dir=str(root / "giant" / "projects")),
                source="claude-code",
                home=home,
            )
            elapsed = time.perf_counter() - started
            print(
                f"discover, sessions with giant lines: {big.raw_bytes / MB:.1f} MB in "
                f"{elapsed:.2f} s = {big.raw_bytes / MB / elapsed:.0f} MB/s; "
                f"skipped {big.skipped}"
            )
            print(f"  peak RSS: {_rss_mb():.0f} MB")

        load_s = render_s = redact_s = 0.0
        rendered = 0
        by_file: dict[tuple[Path, ...], set[str]] = {}
        readers = {}
        for thread in found.threads:
            by_file.setdefault(thread.paths, set()).add(thread.id)
            readers[thread.paths] = thread.reader
        for paths, wanted in by_file.items():
            reader = readers[paths]
            assert reader is not None
            t0 = time.perf_counter()
            parsed = reader(paths, ReadStats())
            t1 = time.perf_counter()
            texts = [render(p.content) for p in parsed if p.id in wanted]
            t2 = time.perf_counter()
            for text in texts:
                redact(text)
            t3 = time.perf_counter()
            load_s, render_s, redact_s = load_s + t1 - t0, render_s + t2 - t1, redact_s + t3 - t2
            rendered += sum(len(text.encode()) for text in texts)
        print(
            f"reload {raw_mb / load_s:.0f} MB/s; render {render_s:.2f} s; "
            f"redact {rendered / MB / redact_s:.1f} MB/s of rendered text"
        )
        reduction = 100 * (1 - rendered / found.raw_bytes)
        print(
            f"rendered text: {rendered / MB:.2f} MB of {raw_mb:.1f} MB raw "
            f"({reduction:.1f}% smaller, {found.raw_bytes / max(rendered, 1):.0f}x); "
            f"discovery's own measure: {found.rendered_bytes / MB:.2f} MB"
        )
        peak = _rss_mb()
        print(f"  peak RSS after rendering: {peak:.0f} MB")
        print(
            f"targets: discovery {scan_speed:.0f} MB/s (>= 50: "
            f"{'met' if scan_speed >= 50 else 'MISSED'}), peak memory {peak:.0f} MB "
            f"(<= 300: {'met' if peak <= 300 else 'MISSED'})"
        )

        if args.tracemalloc:
            tracemalloc.start()
            started = time.perf_counter()
            discover(settings, home=home)
            elapsed = time.perf_counter() - started
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            print(
                f"tracemalloc: discover peak {peak / MB:.0f} MB of Python allocations "
                f"({raw_mb / elapsed:.0f} MB/s while tracing)"
            )
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
