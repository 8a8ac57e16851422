"""A TCP proxy on 127.0.0.1 that can stop forwarding without closing anything.

Put between Parley and a real server (``tests.fakes.postgres``), it stands for a network
partition or a frozen server: after :meth:`FreezingProxy.freeze`, bytes from either
side are held (the sockets stay open, the kernel keeps acknowledging them, so neither
TCP keepalives nor a closed connection tell the client anything) until
:meth:`FreezingProxy.resume`, when everything held is forwarded in order.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class FreezingProxy:
    """Forwards ``127.0.0.1:port`` to ``127.0.0.1:target_port``, one thread per direction."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._flowing = threading.Event()
        self._flowing.set()
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def start(self) -> FreezingProxy:
        threading.Thread(target=self._accept, name="proxy-accept", daemon=True).start()
        return self

    def url_of(self, url: str) -> str:
        """``url`` (a ``postgresql://…@127.0.0.1:<target>/…`` URL) through this proxy."""
        return url.replace(f"127.0.0.1:{self.target_port}/", f"127.0.0.1:{self.port}/")

    def freeze(self) -> None:
        """Hold every byte from now on (connections stay open; new ones are accepted)."""
        self._flowing.clear()

    def resume(self) -> None:
        """Forward what was held, and everything after."""
        self._flowing.set()

    def close(self) -> None:
        self._closed.set()
        self._flowing.set()
        with self._lock:
            socks, self._sockets = [self._listener, *self._sockets], []
        for s in socks:
            with contextlib.suppress(OSError):
                s.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, server]
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                self._flowing.wait()  # frozen: held here, nothing closed
                if not data or self._closed.is_set():
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
