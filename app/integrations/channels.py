"""The `memory:install-hooks` channel: the hook installer behind the API (Settings button).

The composition root calls `register_hook_channels(api)`; the request is
`{"uninstall": false, "settings": null}` (settings: a Claude Code settings file, default
`~/.claude/settings.json`) and the reply is `install_hooks`'s report. The memory home put
into the hook commands is the API's own, so hooks installed from an app started with
`--home` talk to that home.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import Field

from app.core.api import MemoryApi, Request
from app.integrations.installer import install_hooks


class InstallHooksRequest(Request):
    """memory:install-hooks."""

    uninstall: bool = False
    settings: str | None = Field(default=None, min_length=1)


def register_hook_channels(api: MemoryApi) -> None:
    """Answer `memory:install-hooks` on `api`."""

    async def install(req: InstallHooksRequest) -> dict[str, Any]:
        return await asyncio.to_thread(
            install_hooks, req.settings, uninstall=req.uninstall, home=api.store.home
        )

    api.register("memory:install-hooks", InstallHooksRequest, install)
