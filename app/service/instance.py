"""SingleInstance: one running app per memory home, found through a local socket.

The socket name is derived from the user and the resolved home path, so two homes can run
side by side. A second launch connects, asks the first to show its window and exits; a stale
socket left by a crash is removed before listening.
"""

from __future__ import annotations

import getpass
import hashlib
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

ACTIVATE = b"activate\n"


def server_name(home: Path) -> str:
    """Local socket name for a home (short: Unix socket paths are limited to ~100 bytes)."""
    try:
        user = getpass.getuser()
    except Exception:  # no user name in some sandboxes; the home path still separates
        user = "user"
    digest = hashlib.sha256(f"{user}\0{home.expanduser().resolve()}".encode()).hexdigest()
    return f"puffin-memory-{digest[:20]}"


class SingleInstance(QObject):
    """Listens for later launches; `activated` asks the window to come forward."""

    activated = Signal()

    def __init__(self, home: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = server_name(home)
        self._server: QLocalServer | None = None
        self._clients: list[QLocalSocket] = []

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
        for client in self._clients:
            if client.bytesAvailable() and bytes(client.readAll().data()).startswith(
                    ACTIVATE.strip()):
                self.activated.emit()

    def _on_client_disconnected(self) -> None:
        for client in [c for c in self._clients
                       if c.state() == QLocalSocket.LocalSocketState.UnconnectedState]:
            self._clients.remove(client)
            client.deleteLater()
