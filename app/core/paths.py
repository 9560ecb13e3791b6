"""Where the memory home is: `--home`, else `PUFFIN_MEMORY_HOME`, else `~/.puffin/memory`.

Stdlib only, so the command line can find the home (and a running app for it) before it
pays for importing the rest of the core.
"""

from __future__ import annotations

import os
from pathlib import Path


def resolve_home(home: Path | str | None = None) -> Path:
    """The memory home for an optional `--home` value."""
    if home:
        return Path(home).expanduser()
    env = os.environ.get("PUFFIN_MEMORY_HOME")
    return Path(env).expanduser() if env else Path.home() / ".puffin" / "memory"
