"""Settings: read them, and change them with a validated partial config.

Each handler takes the `MemoryApi` it answers for and the validated request; `HANDLERS`
maps the operations of this concern to their handlers (the API attaches them).
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError

from app.core import operations as ops
from app.core.config import Config
from app.core.errors import (
    InvalidInput,
    StorageError,
)
from app.core.handlers.base import Core, Handler

# The request models live in app.core.requests; the names are re-exported for callers.
from app.core.requests import (
    Empty,
    SetConfigRequest,
    describe_validation,
)

log = logging.getLogger(__name__)


def get_config(api: Core, _req: Empty) -> dict[str, Any]:
    """The settings in effect."""
    return {"config": api.config.model_dump(mode="json"), "home": str(api.store.home)}


def set_config(api: Core, req: SetConfigRequest) -> dict[str, Any]:
    """Change settings (a partial config, validated whole)."""
    from app.core.config import save_config

    merged = _deep_merge(api.config.model_dump(mode="json"), req.config)
    try:
        config = Config.model_validate(merged)
    except ValidationError as exc:
        raise InvalidInput(describe_validation(ops.SET_CONFIG.name, exc)) from exc
    try:
        save_config(api.store.config_path, config)
    except StorageError:
        raise
    # Objects built from the old config keep working; the new values apply to settings
    # read per call (thresholds) right away and to the engine at the next start.
    for name in Config.model_fields:
        setattr(api.config, name, getattr(config, name))
    from app.core import embeddings

    embeddings.configure(config.embedding_model_dir or None)
    warning = None
    if config.embedding_model_dir and embeddings.model_dir() is None:
        warning = (
            f"{config.embedding_model_dir} holds no model.safetensors and "
            "tokenizer.json: search stays lexical until the folder is fixed."
        )
    return {
        "success": True,
        "config": config.model_dump(mode="json"),
        **({"warning": warning} if warning else {}),
    }


def _deep_merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


HANDLERS: dict[ops.Operation, Handler] = {
    ops.GET_CONFIG: get_config,
    ops.SET_CONFIG: set_config,
}
