"""The numpy MiniLM encoder, the vector store and the explicit empty answer (issue 17)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core import embeddings

needs_model = pytest.mark.skipif(
    not embeddings.available(), reason="embedding model package not installed"
)


@needs_model
def test_paraphrases_are_closer_than_unrelated_text() -> None:
    vecs = embeddings.embed(
        [
            "intermittent CI failure",
            "The flaky test in CI fails now and then.",
            "Use ISO 8601 UTC timestamps everywhere.",
        ]
    )
    assert vecs is not None
    assert vecs.shape == (3, embeddings.DIM)
    assert abs(float((vecs[0] ** 2).sum()) - 1.0) < 1e-4
    assert float(vecs[0] @ vecs[1]) > float(vecs[0] @ vecs[2]) + 0.2


@needs_model
def test_batched_and_single_embeddings_agree() -> None:
    texts = ["hello", "a much longer sentence about token expiry and midnight logins"]
    together = embeddings.embed(texts)
    alone = embeddings.embed([texts[0]])
    assert together is not None and alone is not None
    assert float(together[0] @ alone[0]) > 0.9999


@needs_model
def test_vector_store_recomputes_only_changed_items(tmp_path: Path) -> None:
    from app.core.vectors import VectorStore

    store = VectorStore(tmp_path / "vectors.sqlite")
    calls: list[int] = []
    store.ensure(
        [("a", "cache the rendered page"), ("b", "use pnpm")],
        progress=lambda done, total: calls.append(total),
    )
    assert calls == [2]
    fresh = VectorStore(tmp_path / "vectors.sqlite")  # read back from disk
    calls.clear()
    fresh.ensure(
        [("a", "cache the rendered page"), ("b", "use yarn")],
        progress=lambda done, total: calls.append(total),
    )
    assert calls == [1]  # only the edited item is embedded again


@needs_model
def test_question_with_no_answer_in_memory_gets_an_explicit_empty_answer(home: Path) -> None:
    from app.core.config import Config
    from app.core.format import render
    from app.core.index import MemoryIndex
    from app.core.models import BranchMemory, Category, MemoryItem
    from app.core.reader import MemoryReader
    from app.core.store import MemoryStore

    store = MemoryStore(home)
    store.ensure()
    item = MemoryItem(
        category=Category.CODING_PREFERENCES,
        title="",
        content="Use pnpm, never npm or yarn.",
        confidence=0.9,
        sources=["t"],
        tags=[],
    )
    memory = BranchMemory(
        branch_id="web/main",
        items={c: ([item] if c is Category.CODING_PREFERENCES else []) for c in Category},
        summary="",
    )
    store.write_text("web/main", render(memory))
    with MemoryIndex(store.index_path) as index:
        reader = MemoryReader(store, index, None, Config(), semantic=True)  # type: ignore[arg-type]
        found = reader.retrieve("can I install packages with yarn?")
        empty = reader.retrieve("what is the office wifi password?")
    assert [m["content"] for m in found["memories"]] == ["Use pnpm, never npm or yarn."]
    assert "nothing" not in found
    assert empty["memories"] == []
    assert empty["nothing"] is True
    assert empty["message"] == "nothing in memory about this"


def test_a_chosen_model_folder_is_used_and_vectors_follow_the_model(tmp_path: Path) -> None:
    import shutil

    import numpy as np

    from app.core.vectors import VectorStore

    bundled = embeddings.model_dir()
    if bundled is None:
        pytest.skip("embedding model not installed")
    store = VectorStore(tmp_path / "vectors.sqlite")
    first = store.ensure([("a", "Use pnpm for installs.")])
    chosen = tmp_path / "larger"
    shutil.copytree(bundled, chosen)
    try:
        embeddings.configure(chosen)
        assert embeddings.model_dir() == chosen and embeddings.model_id() != embeddings.MODEL_NAME
        encoder = embeddings.get_embedder()
        assert encoder is not None and encoder.dim == 384
        seen: list[tuple[int, int]] = []
        again = store.ensure([("a", "Use pnpm for installs.")], lambda d, t: seen.append((d, t)))
        assert seen == [(1, 1)]  # recomputed for the new model, not taken from the old one
        assert first is not None and again is not None
        assert np.allclose(first, again, atol=1e-3)  # same weights, same vector
        embeddings.configure(tmp_path / "nothing-here")
        assert embeddings.model_dir() is None and not embeddings.available()
    finally:
        embeddings.configure(None)
    assert embeddings.model_dir() == bundled


@needs_model
def test_a_long_item_holding_every_term_of_the_question_answers_it(home: Path) -> None:
    from app.core.config import Config
    from app.core.format import render
    from app.core.index import MemoryIndex
    from app.core.models import BranchMemory, Category, MemoryItem
    from app.core.reader import MemoryReader
    from app.core.store import MemoryStore

    store = MemoryStore(home)
    store.ensure()
    content = (
        "Architecture follows the SAM Pattern (Model, Actions, State/Render). Model holds "
        "authoritative state, validates business rules, persists to Local Storage on every "
        "mutation. Actions are a thin layer that delegates to the model and triggers render. "
        "State/Render computes derived data (filtered todos, counts) and updates the DOM."
    )
    item = MemoryItem(
        category=Category.ARCHITECTURAL_DECISIONS,
        title="SAM Pattern",
        content=content,
        confidence=0.75,
        sources=["t"],
        tags=[],
    )
    memory = BranchMemory(
        branch_id="todo/main",
        items={c: ([item] if c is Category.ARCHITECTURAL_DECISIONS else []) for c in Category},
        summary="",
    )
    store.write_text("todo/main", render(memory))
    with MemoryIndex(store.index_path) as index:
        reader = MemoryReader(store, index, None, Config(), semantic=True)  # type: ignore[arg-type]
        assert reader.backfill_vectors() == 1  # as after a scan
        found = reader.retrieve("Local Storage")
        elsewhere = reader.retrieve("office wifi password")
    assert found.get("semantic") is True
    assert [m["title"] for m in found["memories"]] == ["SAM Pattern"]
    assert elsewhere["memories"] == []
