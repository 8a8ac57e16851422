"""One Parley per data directory: a second launch brings the first window forward.

Two windows writing one sessions.db would fight over it, so the first Parley
started on a data directory holds a lock file there (``QLockFile``; a lock left
by a process that died is taken over) and listens on a local socket named
after the directory (``QLocalServer``). A later launch on the same directory
finds the lock taken, asks the first one over the socket to show its window,
and exits.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from PySide6.QtCore import QLockFile, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

LOCK_NAME = "parley.lock"
ACTIVATE = b"activate\n"


def server_name(data_dir: Path) -> str:
    """The local socket name for a data directory (stable, short, no path characters)."""
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return f"parley-{digest}"


class SingleInstance(QObject):
    """Holds the data directory for this process, or hands over to the one that does.

    Args:
        data_dir: the Parley data directory (where sessions.db lives).

    Signals:
        activated: another launch on the same directory asked us to show the window.
    """

    activated = Signal()

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.name = server_name(data_dir)
        self._lock = QLockFile(str(data_dir / LOCK_NAME))
        self._lock.setStaleLockTime(0)  # never stale by age; a dead holder's lock is taken
        self._server: QLocalServer | None = None

    def acquire(self) -> bool:
        """Become the one Parley of this directory.

        Returns:
            True when this process now owns the directory (and listens for later
            launches); False when another live Parley owns it — it has been asked
            to bring its window to the front.
        """
        if not self._lock.tryLock(200):
            self._notify_owner()
            return False
        QLocalServer.removeServer(self.name)  # a socket file left by a crash
        self._server = QLocalServer(self)
        self._server.newConnection.connect(self._on_connection)
        self._server.listen(self.name)
        return True

    def _notify_owner(self) -> None:
        socket = QLocalSocket()
        socket.connectToServer(self.name)
        if socket.waitForConnected(1000):
            socket.write(ACTIVATE)
            socket.waitForBytesWritten(1000)
            socket.disconnectFromServer()

    def _on_connection(self) -> None:
        assert self._server is not None
        while (conn := self._server.nextPendingConnection()) is not None:
            conn.readyRead.connect(lambda c=conn: self._on_message(c))
            conn.disconnected.connect(conn.deleteLater)

    def _on_message(self, conn: QLocalSocket) -> None:
        if bytes(conn.readAll().data()).startswith(ACTIVATE.strip()):
            self.activated.emit()

    def release(self) -> None:
        """Stop listening and free the lock (at exit)."""
        if self._server is not None:
            self._server.close()
            self._server = None
        self._lock.unlock()
