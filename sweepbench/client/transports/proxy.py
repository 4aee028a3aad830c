"""Which HTTP proxy a request goes through: one rule for every transport.

In companies and clusters a provider is often reachable only through a proxy. An endpoint's
``proxy`` wins ("" for none); otherwise the environment's, read as curl and requests read it:
``HTTPS_PROXY`` for https:// URLs, ``HTTP_PROXY`` for http://, ``ALL_PROXY`` for either
(lower-case names first), except for hosts ``NO_PROXY`` lists (a name matches itself and its
subdomains; ``*`` matches all). As in Go's net/http, the environment's proxy is never used for a
loopback host (``localhost``, 127.0.0.0/8, ::1): a model server on this machine, the built-in
reference server included, is not sent to a corporate proxy. Only http:// proxies are supported
(https:// URLs go through them in a CONNECT tunnel).

Credentials in a proxy URL (``user:password@``) are secrets: they come only from the
environment (the config refuses them), leave only as the proxy's ``Proxy-Authorization``
header, and are never shown: :attr:`Proxy.shown`, what messages name, is the URL without them,
and the password is scrubbed from any text a server sends back, as API keys are
(:mod:`sweepbench.client.secrets`).
:func:`open_tunnel` is the CONNECT tunnel of the ``http`` transport (aiohttp and httpx have
their own).
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import ssl
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from sweepbench.client.secrets import KEYS
from sweepbench.errors import ConfigError

__all__ = ["Proxy", "TunnelRefused", "open_tunnel", "proxy_for"]

_ENV_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")


@dataclass(frozen=True)
class Proxy:
    """An http:// proxy: where it listens, and its credentials (never in ``repr``)."""

    host: str
    port: int
    user: str = field(default="", repr=False)
    password: str = field(default="", repr=False)

    @property
    def shown(self) -> str:
        """The proxy as messages name it: no credentials."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def authorization(self) -> str | None:
        """The ``Proxy-Authorization`` header value, or None without credentials."""
        if not self.user and not self.password:
            return None
        return "Basic " + base64.b64encode(f"{self.user}:{self.password}".encode()).decode()


def _loopback(host: str) -> bool:
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def proxy_for(url: str, configured: str | None, name: str) -> Proxy | None:
    """The proxy for a request to ``url`` from endpoint ``name`` whose ``proxy`` setting is
    ``configured`` (None: the environment's); None: straight to ``url``. A proxy that is not
    an http://host URL is a ``ConfigError`` (naming it without credentials)."""
    if configured is not None:
        where, value = "proxy", configured
    else:
        for var in _ENV_VARS:  # their passwords are scrubbed from every text from now on
            KEYS.register_url_password(var)
        target = urlsplit(url)
        env = urllib.request.getproxies_environment()
        value = env.get(target.scheme.lower()) or env.get("all") or ""
        host = target.hostname or ""
        if not value or _loopback(host):
            return None
        netloc = host if target.port is None else f"{host}:{target.port}"
        if urllib.request.proxy_bypass_environment(netloc, env):
            return None
        where = f"the environment's {target.scheme}_proxy"
    if not value:
        return None
    parts = urlsplit(value if "://" in value else "http://" + value)
    try:
        port = parts.port or 80
    except ValueError:
        port = 0
    if parts.scheme.lower() != "http" or not parts.hostname or not port:
        shown = f"{parts.scheme}://{parts.hostname or ''}"
        raise ConfigError(f"endpoint {name!r}: {where} ({shown}...) is not an http://host:port "
                          "proxy; only http:// proxies are supported")
    return Proxy(parts.hostname, port, unquote(parts.username or ""),
                 unquote(parts.password or ""))


class TunnelRefused(Exception):
    """The proxy answered ``CONNECT`` with something other than a 2xx (``status``; 0: not an
    HTTP answer)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}" if status else "not an HTTP answer")
        self.status = status


class _ConnectReply(asyncio.Protocol):
    """Reads the proxy's answer to CONNECT: its head, up to the blank line (64 KiB at most)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.head = bytearray()
        self.done: asyncio.Future[None] = loop.create_future()

    def data_received(self, data: bytes) -> None:
        self.head += data
        if not self.done.done():
            if b"\r\n\r\n" in self.head:
                self.done.set_result(None)
            elif len(self.head) > 1 << 16:
                self.done.set_exception(TunnelRefused(0))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_exception(TunnelRefused(0))


async def open_tunnel(proxy: Proxy, host: str, port: int, context: ssl.SSLContext,
                      protocol: asyncio.Protocol) -> None:
    """TLS to ``host:port`` through ``proxy``'s CONNECT tunnel, ``protocol`` on top (told
    ``connection_made`` with the TLS transport). Raises ``OSError``, ``ssl.SSLError`` or
    :class:`TunnelRefused`."""
    loop = asyncio.get_running_loop()
    raw, reply = await loop.create_connection(lambda: _ConnectReply(loop), proxy.host,
                                              proxy.port)
    try:
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        auth = proxy.authorization
        raw.write(f"CONNECT {where} HTTP/1.1\r\nHost: {where}\r\n".encode("latin-1")
                  + (f"Proxy-Authorization: {auth}\r\n".encode("latin-1") if auth else b"")
                  + b"\r\n")
        await reply.done
        # the status line alone: its reason phrase may be empty, its space after the code too
        words = bytes(reply.head).split(b"\r\n", 1)[0].split(b" ", 2)
        status = (int(words[1]) if reply.head.startswith(b"HTTP/1.") and len(words) > 1
                  and words[1].isdigit() else 0)
        if not 200 <= status < 300:
            raise TunnelRefused(status)
        tls = await loop.start_tls(raw, protocol, context, server_hostname=host)
    except BaseException:
        raw.abort()
        raise
    protocol.connection_made(tls)
