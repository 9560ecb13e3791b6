"""Long mutation fuzz of the offline engine: extraction, then evolution into one branch file.

Takes the labeled conversations (`tests/fixtures/dialogue`) and mutates them the way pasted
and half-copied chats go wrong: cuts, repeats, splices from other conversations, speaker
marks, fences, tool brackets, list marks, reversal words, NULs and look-alike letters. Each
mutated conversation is redacted and extracted; the sequences' conversations are evolved
into one branch in turn, which is rendered and parsed back. A failure is an exception
that escaped, or a branch file that does not parse back to the items it was rendered from.
Prints the runs and failures per part, with the first failing inputs written to the
temporary folder. Exits 1 when anything failed. `make test` runs a short, seeded part of it
(`tests/engines/test_offline_extract.py`).

Run: `.venv/bin/python bench/fuzz_extract.py [--seconds 120] [--seed N]`.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import traceback
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.config import Config  # noqa: E402
from app.core.format import parse, render  # noqa: E402
from app.core.models import BranchMemory  # noqa: E402
from app.core.redact import redact  # noqa: E402
from app.engines.offline.evolve import evolve  # noqa: E402
from app.engines.offline.extract import extract  # noqa: E402

DIALOGUE = REPO / "tests" / "fixtures" / "dialogue"
MARKS = (
    "\n", "User:", "Assistant:", "Human:", "```", "`", "[tool: Bash {", "[tool result: ", "]",
    "?", ":", "- ", "1. ", "**", "—", "> ", "#", "|", "---", "\t", "\r", "\x00", "\u202e",
    "İ", "ſ", " no", " always", " never", " because", " so ", "actually, ", "we dropped ",
    "instead of ", "scratch that. ", "not anymore",
)  # fmt: skip


def mutate(text: str, rng: random.Random, donors: list[Path]) -> str:
    """`text` with up to 30 random edits."""
    for _ in range(rng.randint(1, 30)):
        roll = rng.random()
        at = rng.randrange(len(text) + 1)
        end = min(len(text), at + rng.randint(1, 300))
        if roll < 0.4:
            text = text[:at] + rng.choice(MARKS) + text[at:]
        elif roll < 0.7:
            text = text[:at] + text[end:]
        elif roll < 0.85:
            text = text[:at] + text[at:end] * rng.randint(1, 4) + text[end:]
        else:
            donor = rng.choice(donors).read_text(encoding="utf-8")
            start = rng.randrange(len(donor) + 1)
            text = text[:at] + donor[start : start + rng.randint(1, 500)] + text[at:]
    return text


def run_extract(rng: random.Random, files: list[Path]) -> str | None:
    """One mutated conversation extracted; the failure's text, if any."""
    text = mutate(rng.choice(files).read_text(encoding="utf-8"), rng, files)
    try:
        extract(redact(text), source="fuzz")
    except Exception:
        return f"{traceback.format_exc()}\n--- input ---\n{text}"
    return None


def run_chain(rng: random.Random, sequences: list[Path], files: list[Path]) -> str | None:
    """A sequence's conversations, mutated, evolved into one branch in turn and rendered."""
    memory: BranchMemory | None = None
    texts: list[str] = []
    try:
        for day, path in enumerate(sorted(rng.choice(sequences).glob("*.txt"))):
            texts.append(mutate(path.read_text(encoding="utf-8"), rng, files))
            found = extract(redact(texts[-1]), source=f"fuzz-{day}")
            now = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=day)
            memory = evolve(
                memory, list(found.items), branch_id="fuzz/b", config=Config(), now=now
            ).memory
            back = parse(render(memory))
            if back.item_count() != memory.item_count():
                raise AssertionError(
                    f"rendered {memory.item_count()} items, parsed {back.item_count()}"
                )
    except Exception:
        joined = "\n\n=== next conversation ===\n\n".join(texts)
        return f"{traceback.format_exc()}\n--- input ---\n{joined}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="time for each part")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    files = sorted(DIALOGUE.glob("*/*.txt"))
    sequences = sorted(p for p in DIALOGUE.glob("*/sequences/*") if p.is_dir())
    if not files or not sequences:
        print(f"no labeled conversations under {DIALOGUE}")
        return 1
    rng = random.Random(args.seed)
    out = Path(tempfile.mkdtemp(prefix="puffin-fuzz-extract-"))
    failed = 0
    parts = (
        ("extract", lambda: run_extract(rng, files)),
        ("extract + evolve + render", lambda: run_chain(rng, sequences, files)),
    )
    for name, step in parts:
        runs = failures = 0
        stop = time.monotonic() + args.seconds
        while time.monotonic() < stop:
            runs += 1
            failure = step()
            if failure is not None:
                failures += 1
                if failures <= 3:
                    path = out / f"{name.split()[0]}-{failures}.txt"
                    path.write_text(failure, encoding="utf-8")
                    print(f"  failure written to {path}")
        print(f"{name:>26}: {runs} runs, {failures} failures")
        failed += failures
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
