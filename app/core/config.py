"""Settings (`config.json`): a validated pydantic model with sane defaults.

Read once by the composition root and handed to whoever needs it. A file that cannot be
read or validated is moved aside to `config.json.broken-<timestamp>`, the defaults are used,
and the problem is reported through `status` instead of stopping the app.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.core.atomic import move_aside, read_json, write_json
from app.core.errors import StorageError


class SourceSettings(BaseModel):
    """Where agent conversations are read from (in place, never copied)."""

    model_config = ConfigDict(extra="ignore")

    claude_code: bool = True
    claude_projects_dir: str = "~/.claude/projects"
    puffin: bool = True
    # Project folders holding `.puffin/history.json`; Puffin's own recent-projects list in
    # `~/.puffin/` is added when present.
    puffin_projects: list[str] = Field(default_factory=list)
    codex: bool = True
    codex_sessions_dir: str = "~/.codex/sessions"
    aider: bool = True
    # Project folders holding `.aider.chat.history.md`.
    aider_projects: list[str] = Field(default_factory=list)


class ModelSettings(BaseModel):
    """Claude models per task: a fast one for extraction, a stronger one for rewriting."""

    model_config = ConfigDict(extra="ignore")

    extraction: str = "claude-haiku-5-5"
    evolution: str = "claude-sonnet-5-5"
    consolidation: str = "claude-sonnet-5-5"
    retrieval: str = "claude-haiku-5-5"


class Config(BaseModel):
    """All settings, each with a default that works on first run."""

    model_config = ConfigDict(extra="ignore")

    engine: Literal["auto", "offline", "anthropic", "local"] = "auto"
    models: ModelSettings = Field(default_factory=ModelSettings)
    # The `local` engine: any OpenAI-compatible server (Ollama, LM Studio, llama.cpp server,
    # vLLM). Its key, when the server wants one, comes from PUFFIN_MEMORY_LOCAL_API_KEY.
    local_base_url: str = Field(default="http://localhost:11434/v1", max_length=500)
    local_model: str = Field(default="", max_length=200)
    request_timeout_s: float = Field(default=120.0, gt=0, le=900)
    max_retries: int = Field(default=2, ge=0, le=10)
    # Consecutive failed Claude calls after which the rest of a run goes to the offline
    # engine without calling (0: never stop calling).
    breaker_failures: int = Field(default=3, ge=0, le=100)
    daily_token_budget: int = Field(default=2_000_000, ge=0)
    chunk_tokens: int = Field(default=24_000, ge=1_000)
    batch_backlog_threshold: int = Field(default=25, ge=1)
    use_batches: bool = False

    commit_threshold: float = Field(default=0.75, ge=0.0, le=1.0)
    review_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    duplicate_threshold: float = Field(default=0.8, gt=0.0, le=1.0)
    import_duplicate_threshold: float = Field(default=0.5, gt=0.0, le=1.0)

    versions_keep: int = Field(default=20, ge=1, le=1000)
    section_cap: int = Field(default=50, ge=1, le=10_000)

    retrieval_token_budget: int = Field(default=2_000, ge=100)
    relevance_threshold: float = Field(default=0.05, ge=0.0, le=1.0)
    # Hybrid retrieval (issue 17): absolute relevance (cosine + 0.2 x lexical part) below
    # which nothing is returned when the embedding model is installed. Calibrated on
    # tests/fixtures/retrieval/dev (bench/retrieval_quality.py --sweep): 0.45 answers 1 of
    # 12 unanswerable questions and keeps paraphrase hit@5 at 0.82.
    min_relevance: float = Field(default=0.45, ge=0.0, le=1.5)
    # Off: fast retrieval stays purely lexical even when the model package is installed.
    semantic_search: bool = True
    # A larger sentence-embedding model the user downloaded (a folder with
    # model.safetensors and tokenizer.json of a BERT-family sentence-transformers model);
    # empty: the bundled all-MiniLM-L6-v2. min_relevance was calibrated for the bundled one.
    embedding_model_dir: str = Field(default="", max_length=1000)
    relevance_weight: float = 0.6
    confidence_weight: float = 0.3
    frequency_weight: float = 0.1

    sources: SourceSettings = Field(default_factory=SourceSettings)
    auto_memorize: bool = True
    idle_minutes: float = Field(default=30.0, ge=0)
    scan_on_start: bool = True
    maintenance_on_start: bool = True


def load_config(path: Path) -> tuple[Config, str | None]:
    """Read `config.json`; on any problem move it aside, use defaults and say why."""
    try:
        data = read_json(path, default=None)
    except StorageError as exc:
        return _broken(path, exc.message)
    if data is None:
        return Config(), None
    if not isinstance(data, dict):
        return _broken(path, "config.json must hold a JSON object")
    try:
        return Config.model_validate(data), None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "config"
        return _broken(path, f"{where}: {first['msg']}")


def _broken(path: Path, why: str) -> tuple[Config, str]:
    try:
        moved = move_aside(path)
        where = f"moved to {moved.name}"
    except OSError as exc:
        where = f"could not be moved aside ({exc.strerror})"
    return Config(), f"config.json was invalid ({why}); {where}; using defaults"


def save_config(path: Path, config: Config) -> None:
    """Write settings atomically."""
    write_json(path, config.model_dump(mode="json"))
