"""The Claude engine, through the official `anthropic` SDK.

`engine` holds `AnthropicEngine` (the `Engine` protocol on Claude), `caller` the one reliable
API call (budget, structured output, timeouts, retries, usage, error messages), `replies` the
pydantic reply models and the structured-output shapes built from them, `prompts` the prompt
loading and fencing, `batches` the Message Batches backlog path. Prompt texts live in
`app/engines/prompts/*.md`. The fallback to the offline engine and the circuit breaker live
in `app.engines.select`.
"""

from app.engines.claude.batches import batch_recommended
from app.engines.claude.caller import ClaudeCaller, describe_api_error
from app.engines.claude.engine import AnthropicEngine

__all__ = [
    "AnthropicEngine",
    "ClaudeCaller",
    "batch_recommended",
    "describe_api_error",
]
