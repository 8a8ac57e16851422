"""One Parley per data directory: a second launch brings the first window forward.

Two windows writing one sessions.db would fight over it, so the first Parley
started on a data directory holds a lock file there (``QLockFile``; a lock left
by a process that died is taken over) and listens on a local socket named
after the directory (``QLocalServer``). A later launch on the same directory
finds the lock taken, asks the first one over the socket to show its window,
and exits. A lock file that cannot be made at all (a full disk, a file system
error) is not someone else's lock: :meth:`SingleInstance.acquire` raises
:class:`LockUnavailable` with the reason.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QCryptographicHash, QLockFile, QObject, Signal

from parley.core import private

if TYPE_CHECKING:  # QtNetwork is imported when used: not before the window's first paint
    from PySide6.QtNetwork import QLocalServer, QLocalSocket

LOCK_NAME = private.LOCK_NAME
ACTIVATE = b"activate\n"
#: Sent by ``parley --import`` after it wrote chats into the directory's sessions.db.
IMPORTED = b"imported\n"
NOTIFY_ATTEMPTS = 10
NOTIFY_RETRY_S = 0.2


class LockUnavailable(Exception):
    """The lock file could not be made or written (not: another Parley holds it).

    Attributes:
        why: what is wrong, for "Parley cannot keep its data in <folder>: <why>",
            e.g. "the disk it is on is full".
        disk_full: True when the disk holding the folder has no free space left.
    """

    def __init__(self, why: str, disk_full: bool) -> None:
        super().__init__(why)
        self.why = why
        self.disk_full = disk_full


def _disk_full(folder: Path) -> bool:
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):  # no statvfs on Windows
        return False
    return st.f_bavail == 0 or (st.f_files > 0 and st.f_favail == 0)


def server_name(data_dir: Path) -> str:
    """The local socket name for a data directory (stable, short, no path characters):
    ``parley-`` and the first 16 hex digits of the SHA-256 of its resolved path (Qt's
    hash: Python's ``hashlib`` loads OpenSSL, ~3 ms before the first paint)."""
    path = QByteArray(str(data_dir.resolve()).encode())
    digest = bytes(QCryptographicHash.hash(path, QCryptographicHash.Algorithm.Sha256)
                   .toHex().data()).decode()[:16]
    return f"parley-{digest}"


class SingleInstance(QObject):
    """Holds the data directory for this process, or hands over to the one that does.

    Args:
        data_dir: the Parley data directory (where sessions.db lives).

    Signals:
        activated: another launch on the same directory asked us to show the window.
        imported: ``parley --import`` wrote chats into this directory's sessions.db
            (:func:`tell_imported`): the window lists them again.
    """

    activated = Signal()
    imported = Signal()

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
            True when this process now owns the directory (call :meth:`listen` to
            hear later launches: ``parley.gui.app`` does after the first paint); False
            when another live Parley owns it — it has been asked to bring its
            window to the front.

        Raises:
            LockUnavailable: the lock file could not be made or written (a full
                disk, no permission, a file system error): nobody holds it.
        """
        if not self._lock.tryLock(200):
            error = self._lock.error()
            if error != QLockFile.LockError.LockFailedError:
                full = _disk_full(self.data_dir)
                why = ("the disk it is on is full (Parley could not write its lock file "
                       f"{LOCK_NAME} there)" if full else
                       f"Parley could not make its lock file {LOCK_NAME} there ({error.name})")
                raise LockUnavailable(why, full)
            self._notify_owner()
            return False
        private.narrow(self.data_dir / LOCK_NAME, private.FILE_MODE)  # made with the umask
        return True

    def listen(self) -> None:
        """Hear later launches on this directory (``activated``); once :meth:`acquire`
        returned True. A second call does nothing."""
        if self._server is not None:
            return
        from PySide6.QtNetwork import QLocalServer

        QLocalServer.removeServer(self.name)  # a socket file left by a crash
        self._server = QLocalServer(self)
        self._server.newConnection.connect(self._on_connection)
        self._server.listen(self.name)

    def _notify_owner(self) -> None:
        """Ask the owner to show its window; it listens a moment after it took the lock
        (after its first paint), so a launch in that moment tries again for ~2 s."""
        import time

        from PySide6.QtNetwork import QLocalSocket

        for _attempt in range(NOTIFY_ATTEMPTS):
            socket = QLocalSocket()
            socket.connectToServer(self.name)
            if socket.waitForConnected(1000):
                socket.write(ACTIVATE)
                socket.waitForBytesWritten(1000)
                socket.disconnectFromServer()
                return
            time.sleep(NOTIFY_RETRY_S)

    def _on_connection(self) -> None:
        assert self._server is not None
        while (conn := self._server.nextPendingConnection()) is not None:
            conn.readyRead.connect(lambda c=conn: self._on_message(c))
            conn.disconnected.connect(conn.deleteLater)

    def _on_message(self, conn: QLocalSocket) -> None:
        data = bytes(conn.readAll().data())
        if data.startswith(ACTIVATE.strip()):
            self.activated.emit()
        elif data.startswith(IMPORTED.strip()):
            self.imported.emit()

    def release(self) -> None:
        """Stop listening and free the lock (at exit)."""
        if self._server is not None:
            self._server.close()
            self._server = None
        self._lock.unlock()


def tell_imported(data_dir: Path) -> bool:
    """Tell the Parley open on ``data_dir`` (if any) that chats were imported into its
    sessions.db, so that its sidebar lists them (``parley --import`` calls this).

    Returns:
        True when a Parley listens on that directory and was told.
    """
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtNetwork import QLocalSocket

    _app = QCoreApplication.instance() or QCoreApplication([])  # sockets need one
    socket = QLocalSocket()
    socket.connectToServer(server_name(data_dir))
    if not socket.waitForConnected(1000):
        return False
    socket.write(IMPORTED)
    told = socket.waitForBytesWritten(1000)
    socket.disconnectFromServer()
    return told
