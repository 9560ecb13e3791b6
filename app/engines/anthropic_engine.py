"""The import path named by `app.core.engine` for the Claude engine (lives in `claude/`)."""

from app.engines.claude import AnthropicEngine, batch_recommended

__all__ = ["AnthropicEngine", "batch_recommended"]
