"""SingleInstance: one running app per memory home, found through a local socket.

The socket name is derived from the user and the resolved home path, so two homes can run
side by side. A second launch connects, asks the first to show its window and exits; a stale
socket left by a crash is removed before listening. The same socket answers quick read-only
`memory:*` requests from the command line (`app/remote.py`): one JSON line in, one out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from app.service.naming import server_name

ACTIVATE = b"activate\n"
INVOKE = b"invoke "
_MAX_REQUEST = 1024 * 1024

__all__ = ["ACTIVATE", "INVOKE", "SingleInstance", "server_name"]


class SingleInstance(QObject):
    """Listens for later launches; `activated` asks the window to come forward."""

    activated = Signal()
    # (client socket, channel, payload): a CLI asks for an answer; reply with `answer()`.
    invoke_requested = Signal(object, str, object)

    def __init__(self, home: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = server_name(home)
        self._server: QLocalServer | None = None
        self._clients: list[QLocalSocket] = []
        self._buffers: dict[int, bytes] = {}

    def notify_running(self, timeout_ms: int = 1000) -> bool:
        """If an instance already serves this home, ask it to show itself and return True."""
        socket = QLocalSocket()
        socket.connectToServer(self.name)
        if not socket.waitForConnected(timeout_ms):
            return False
        socket.write(ACTIVATE)
        socket.waitForBytesWritten(timeout_ms)
        socket.disconnectFromServer()
        if socket.state() != QLocalSocket.LocalSocketState.UnconnectedState:
            socket.waitForDisconnected(timeout_ms)
        return True

    def listen(self) -> bool:
        """Become the instance for this home (False if the socket cannot be created)."""
        QLocalServer.removeServer(self.name)  # only reached when nobody answered
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            return False
        server.newConnection.connect(self._on_server_new_connection)
        self._server = server
        return True

    def close(self) -> None:
        """Stop listening (removes the socket file) and drop any client still connected."""
        for client in self._clients:
            client.abort()
            client.deleteLater()
        self._clients.clear()
        if self._server is not None:
            self._server.close()
            self._server.deleteLater()
            self._server = None

    def _on_server_new_connection(self) -> None:
        assert self._server is not None
        while (client := self._server.nextPendingConnection()) is not None:
            self._clients.append(client)
            client.readyRead.connect(self._on_client_ready_read)
            client.disconnected.connect(self._on_client_disconnected)
        self._on_client_ready_read()

    def _on_client_ready_read(self) -> None:
        for client in list(self._clients):
            if not client.bytesAvailable():
                continue
            data = self._buffers.get(id(client), b"") + bytes(client.readAll().data())
            if data.startswith(ACTIVATE.strip()):
                self._buffers.pop(id(client), None)
                self.activated.emit()
                continue
            if not data.startswith(INVOKE[: len(data)]) or len(data) > _MAX_REQUEST:
                self._buffers.pop(id(client), None)
                client.abort()
                continue
            if not data.endswith(b"\n"):
                self._buffers[id(client)] = data  # the rest of the line is on its way
                continue
            self._buffers.pop(id(client), None)
            self._dispatch(client, data[len(INVOKE) :])

    def _dispatch(self, client: QLocalSocket, line: bytes) -> None:
        try:
            request = json.loads(line)
            channel, payload = request["channel"], request.get("payload") or {}
        except (ValueError, KeyError, TypeError):
            client.abort()
            return
        if isinstance(channel, str) and isinstance(payload, dict):
            self.invoke_requested.emit(client, channel, payload)
        else:
            client.abort()

    def answer(self, client: object, reply: dict[str, Any]) -> None:
        """Send a reply to a CLI request (dropped if that client has gone)."""
        if not isinstance(client, QLocalSocket) or client not in self._clients:
            return
        if client.state() != QLocalSocket.LocalSocketState.ConnectedState:
            return
        client.write(json.dumps(reply, default=str).encode() + b"\n")
        client.flush()
        client.disconnectFromServer()

    def _on_client_disconnected(self) -> None:
        for client in [
            c for c in self._clients if c.state() == QLocalSocket.LocalSocketState.UnconnectedState
        ]:
            self._clients.remove(client)
            self._buffers.pop(id(client), None)
            client.deleteLater()
