"""Where a running app listens: the local socket name and path for a memory home.

Qt-free on purpose: the command line imports it to reach a running app without loading Qt.
The name is derived from the user and the resolved home, so two homes run side by side.
"""

from __future__ import annotations

import getpass
import hashlib
import os
from pathlib import Path


def server_name(home: Path) -> str:
    """Local socket name for a home (short: Unix socket paths are limited to ~100 bytes)."""
    try:
        user = getpass.getuser()
    except Exception:  # no user name in some sandboxes; the home path still separates
        user = "user"
    digest = hashlib.sha256(f"{user}\0{home.expanduser().resolve()}".encode()).hexdigest()
    return f"puffin-memory-{digest[:20]}"


def socket_path(home: Path) -> Path | None:
    """The Unix socket QLocalServer creates for a home (None on Windows: named pipes)."""
    if os.name != "posix":
        return None
    # QLocalServer puts a relative name in QDir::tempPath(): $TMPDIR, else /tmp (Qt's own
    # rule; not `tempfile`, which also reads TEMP and TMP and costs a cold CLI its import).
    folder = os.environ.get("TMPDIR") or "/tmp"
    return Path(folder) / server_name(home)
