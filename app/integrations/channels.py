"""The `ops.INSTALL_HOOKS` channel: the hook installer behind the API (Settings button).

The composition root calls `register_hook_channels(api)`; the request is
`{"uninstall": false, "settings": null}` (settings: a Claude Code settings file, default
`~/.claude/settings.json`) and the reply is `install_hooks`'s report. The memory home put
into the hook commands is the API's own, so hooks installed from an app started with
`--home` talk to that home.
"""

from __future__ import annotations

import asyncio
from typing import Any

from app.core import operations as ops
from app.core.api import MemoryApi
from app.core.requests import InstallHooksRequest
from app.integrations.installer import install_hooks


def register_hook_channels(api: MemoryApi) -> None:
    """Answer `ops.INSTALL_HOOKS` on `api`."""

    async def install(req: InstallHooksRequest) -> dict[str, Any]:
        return await asyncio.to_thread(
            install_hooks, req.settings, uninstall=req.uninstall, home=api.store.home
        )

    api.handle(ops.INSTALL_HOOKS, install)
