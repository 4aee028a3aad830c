"""The model client's HTTP seam: what a transport is, and what every transport shares.

A transport makes one HTTP round trip of a body the client already encoded and answers
``(status, headers, raw body)``; the client decodes, classifies and retries alike for every
transport (:mod:`sweepbench.client.facade`). A transport translates its own errors, once, into
``ModelError`` subclasses, and never reads a reply past ``max_reply_bytes``.

Redirects are decided here for every transport alike (:func:`redirect_target`): a chat request
is a POST of a body, so only a 307 or 308 (which keep both) can be followed, and only where the
endpoint opts in (``follow_redirects``); anything else is an error naming the endpoint and the
target, never a silent GET whose answer is used. A followed request carries the API key only
to the endpoint's own origin (:func:`same_origin`).
"""

from __future__ import annotations

import errno
from typing import Any, Protocol
from urllib.parse import urljoin, urlsplit

from sweepbench.config import Endpoint
from sweepbench.errors import FatalError

__all__ = ["DEFAULT_MAX_REPLY_BYTES", "MAX_REDIRECTS", "READ_CHUNK", "Reply", "Transport",
           "redirect_target", "refused", "same_origin", "too_large", "without_key"]

READ_CHUNK = 1 << 16
"""Bytes read at a time from a body whose size is not known up front."""
DEFAULT_MAX_REPLY_BYTES = Endpoint.__struct_defaults__[
    Endpoint.__struct_fields__.index("max_reply_bytes") - len(Endpoint.__struct_fields__)]

MAX_REDIRECTS = 5
"""Redirects followed in a row at most (where an endpoint follows them at all)."""
_REDIRECTS = (301, 302, 303, 307, 308)
_KEEP_BODY = (307, 308)
_SHOWN = 200  # characters of a Location named in an error

Reply = tuple[int, Any, bytes]
"""(HTTP status, response headers (``.get`` by name), raw body)."""


class Transport(Protocol):
    """One HTTP round trip; raises only ``ModelError`` subclasses (translated at the seam).
    A transport that can tell calls :func:`~sweepbench.client.stalls.first_byte` when the
    response headers arrive (else the whole round trip is held to the first-byte budget)."""

    async def post(self, body: bytes, headers: dict[str, str] | None) -> Reply: ...

    async def aclose(self) -> None: ...


def refused(err: BaseException) -> bool:
    """Whether ``err`` (or an error it wraps) is a refused TCP connection."""
    seen: set[int] = set()
    cur: BaseException | None = err
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ConnectionRefusedError) or getattr(cur, "errno", None) == errno.ECONNREFUSED:
            return True
        os_error = getattr(cur, "os_error", None)  # aiohttp.ClientConnectorError
        if isinstance(os_error, BaseException) and refused(os_error):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def too_large(name: str, url: object, limit: int) -> FatalError:
    """A reply over ``max_reply_bytes``: not read further, not retried (it would be again)."""
    return FatalError(f"{name}: reply from {url} is larger than max_reply_bytes ({limit}); "
                      "not read further", endpoint=name)


def redirect_target(name: str, url: object, status: int, headers: Any, follow: bool,
                    hops: int) -> str | None:
    """Where to send the request again after an answer of ``status`` from ``url`` (the
    ``hops``-th redirect of this request so far, 0 for the first answer), or None for an answer
    that is not a redirect (a 3xx without a Location is left to the client as an HTTP error).
    A redirect that is not to be followed raises ``FatalError`` naming the endpoint and the
    target: the endpoint does not follow redirects, a 301/302/303 (which would turn the chat
    request into a GET), a target that is not http(s), or more than ``MAX_REDIRECTS``."""
    if status not in _REDIRECTS:
        return None
    location = headers.get("Location") or headers.get("location")
    if not location:
        return None
    target = urljoin(str(url), location.strip())
    shown = target if len(target) <= _SHOWN else target[:_SHOWN] + "..."
    if not follow:
        why = "set follow_redirects = true on the endpoint to follow a 307 or 308"
    elif status not in _KEEP_BODY:
        why = f"a {status} would turn the chat request into a GET; point base_url at the target"
    elif urlsplit(target).scheme not in ("http", "https") or not urlsplit(target).hostname:
        why = "not an http:// or https:// URL"
    elif hops >= MAX_REDIRECTS:
        why = f"more than {MAX_REDIRECTS} redirects in a row"
    else:
        return target
    raise FatalError(f"{name}: {url} redirects ({status}) to {shown}; not followed ({why})",
                     endpoint=name, status=status)


def _origin(url: object) -> tuple[str, str, int | None]:
    parts = urlsplit(str(url))
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = -1
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


def same_origin(a: object, b: object) -> bool:
    """Whether two URLs share scheme, host and port (the only place an API key may go)."""
    return _origin(a) == _origin(b)


def without_key(headers: dict[str, str] | None, target: object,
                origin: object) -> dict[str, str] | None:
    """``headers`` for a request to ``target``: the Authorization header only where ``target``
    is on the endpoint's own ``origin``."""
    if not headers or same_origin(target, origin):
        return headers
    return {k: v for k, v in headers.items() if k.lower() != "authorization"}
