"""The operations the agent integrations answer: `ops.INSTALL_HOOKS` (the hook installer
behind the Settings button) and the branch form of `ops.CONTEXT` (what a session start on a
branch is given, from the hook's own builder, so the hook, the CLI and the MCP server give
agents the same text).

The composition root calls `register_hook_channels(api)`; the request is
`{"uninstall": false, "settings": null}` (settings: a Claude Code settings file, default
`~/.claude/settings.json`) and the reply is `install_hooks`'s report. The memory home put
into the hook commands is the API's own, so hooks installed from an app started with
`--home` talk to that home.
"""

from __future__ import annotations

from typing import Any

from app.core import operations as ops
from app.core.api import MemoryApi
from app.core.handlers.transfer import context as digest
from app.core.paths import validate_branch_id
from app.core.requests import ContextRequest, InstallHooksRequest
from app.integrations.installer import install_hooks


def register_hook_channels(api: MemoryApi) -> None:
    """Answer `ops.INSTALL_HOOKS` and the branch form of `ops.CONTEXT` on `api`."""

    def context(req: ContextRequest) -> dict[str, Any]:
        if req.branch is None:
            return digest(api, req)
        validate_branch_id(req.branch)
        from app.integrations.context import agent_context

        return agent_context(api.store.home, req.branch, req.budget)

    api.handle(ops.CONTEXT, context)

    def install(req: InstallHooksRequest) -> dict[str, Any]:
        return install_hooks(req.settings, uninstall=req.uninstall, home=api.store.home)

    api.handle(ops.INSTALL_HOOKS, install)
