"""A forwarding HTTP proxy on loopback, to check that clients really go through a proxy (the
transport tests, ``benchmarks/hostile.py``).

It forwards absolute-form requests (``POST http://host:port/path``), one per connection, with
``Connection: close`` and without the ``Proxy-*`` headers, and tunnels ``CONNECT host:port``.
``hosts`` maps names to the addresses it connects to instead (so a test can use a name that is
not a loopback host). Every request it was sent is recorded in ``seen`` as (method, target,
Proxy-Authorization or None), whatever became of it; with ``password`` ("user:password") a
request without those credentials is answered 407.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from urllib.parse import urlsplit

__all__ = ["ForwardProxy"]

def _basic(user_password: str) -> str:
    return "Basic " + base64.b64encode(user_password.encode()).decode()


_HOP_HEADERS = {"proxy-authorization", "proxy-connection", "connection", "keep-alive"}


class ForwardProxy:
    """``async with ForwardProxy() as proxy:`` listens on ``proxy.url`` until the block ends."""

    def __init__(self, hosts: dict[str, str] | None = None, *,
                 password: str | None = None) -> None:
        self.hosts = hosts or {}
        self.password = password  # when set: any other Proxy-Authorization is answered 407
        self.seen: list[tuple[str, str, str | None]] = []
        self.url = ""
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def __aenter__(self) -> ForwardProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):  # its handler then ends on its own
            writer.transport.abort()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            await self._one(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ValueError, OSError):
            pass
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        line, *fields = head[:-4].split("\r\n")
        method, target, version = line.split(" ", 2)
        headers = [tuple(f.split(":", 1)) for f in fields if ":" in f]
        named = {k.strip().lower(): v.strip() for k, v in headers}
        auth = named.get("proxy-authorization")
        self.seen.append((method, target, auth))
        if self.password is not None and auth != _basic(self.password):
            writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n"
                         b"Proxy-Authenticate: Basic\r\nConnection: close\r\n\r\n")
            await writer.drain()
            return
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            up_reader, up_writer = await asyncio.open_connection(
                self.hosts.get(host, host), int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await self._pipe(reader, writer, up_reader, up_writer)
            return
        parts = urlsplit(target)
        host = parts.hostname or ""
        body = await reader.readexactly(int(named.get("content-length", "0")))
        up_reader, up_writer = await asyncio.open_connection(self.hosts.get(host, host),
                                                             parts.port or 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        kept = "".join(f"{k}:{v}\r\n" for k, v in headers if k.strip().lower()
                       not in _HOP_HEADERS)
        up_writer.write(f"{method} {path} {version}\r\n{kept}Connection: close\r\n\r\n"
                        .encode("latin-1") + body)
        await self._pipe(None, writer, up_reader, up_writer)

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader | None, writer: asyncio.StreamWriter,
                    up_reader: asyncio.StreamReader, up_writer: asyncio.StreamWriter) -> None:
        """Bytes both ways (only upstream's way without ``reader``) until either side ends."""

        async def copy(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            while chunk := await src.read(1 << 16):
                dst.write(chunk)
                await dst.drain()

        ways = [asyncio.ensure_future(copy(up_reader, writer))]
        if reader is not None:
            ways.append(asyncio.ensure_future(copy(reader, up_writer)))
        try:
            await asyncio.wait(ways, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for way in ways:
                way.cancel()
            with contextlib.suppress(Exception):
                await asyncio.gather(*ways, return_exceptions=True)
            up_writer.close()
