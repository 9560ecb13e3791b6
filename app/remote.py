"""Ask a running desktop app to answer a `memory:*` request (the CLI's fast path).

A cold `puffin-memory` process spends most of its time importing Python (pydantic and
asyncio alone take ~150 ms here); the app already has everything loaded and indexed. When
the app for the same home is running, quick read-only commands are sent over its local
socket as one JSON line and answered in a few milliseconds. Anything unusual (no app, an
old app, a timeout, a reply that is not JSON) returns None and the caller answers the
request itself, so the fast path can never change a result, only its speed.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from app.core import operations as ops
from app.service.naming import socket_path

# Read-only channels that are safe and quick to answer from the app (the table's `remote`).
REMOTE_CHANNELS = ops.REMOTE
INVOKE = b"invoke "
_MAX_REPLY = 64 * 1024 * 1024


def invoke(
    home: Path, channel: str, payload: dict[str, Any], timeout_s: float = 1.5
) -> dict[str, Any] | None:
    """The running app's reply, or None when it cannot answer (the caller then does).

    The timeout is short on purpose: an app busy with a long job (a first scan, maintenance)
    answers later than a cold process would, so the caller is better off on its own.
    """
    if channel not in REMOTE_CHANNELS or payload.get("mode") == "deep":
        return None
    path = socket_path(home)
    if path is None or not path.exists():
        return None
    request = INVOKE + json.dumps({"channel": channel, "payload": payload}).encode() + b"\n"
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout_s)
            sock.connect(str(path))
            sock.sendall(request)
            chunks: list[bytes] = []
            size = 0
            while not chunks or not chunks[-1].endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size > _MAX_REPLY:
                    return None
        reply = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return None
    if not isinstance(reply, dict):
        return None
    if reply.get("error") and reply.get("code") not in {"INVALID_INPUT", "NOT_FOUND"}:
        return None  # starting up, shutting down, or busy: answer it here instead
    return reply
