"""The `local` engine: any OpenAI-compatible server (Ollama, LM Studio, llama.cpp, vLLM).

`LocalEngine` implements the `Engine` protocol through the official `openai` SDK pointed at
`Config.local_base_url`, asking for JSON-schema output. It uses the same extraction
instructions as Claude and the same change-list protocol for evolution and consolidation
(`app.engines.ops`), so the same validation and guard apply: a local model can never write
the file either. Deep retrieval is answered by the offline re-ranking. Failures surface as
the operation's error; the wrapper in `app.engines.select` turns them into the offline
engine's answer and trips the same circuit breaker as for Claude.
"""

from app.engines.local.engine import LOCAL_KEY_ENV, LocalEngine

__all__ = ["LOCAL_KEY_ENV", "LocalEngine"]
