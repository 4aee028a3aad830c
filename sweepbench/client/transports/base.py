"""The model client's HTTP seam: what a transport is, and what every transport shares.

A transport makes one HTTP round trip of a body the client already encoded and answers
``(status, headers, raw body)``; the client decodes, classifies and retries alike for every
transport (:mod:`sweepbench.client.facade`). A transport translates its own errors, once, into
``ModelError`` subclasses, and never reads a reply past ``max_reply_bytes``.
"""

from __future__ import annotations

import errno
from typing import Any, Protocol

from sweepbench.config import Endpoint
from sweepbench.errors import FatalError

__all__ = ["DEFAULT_MAX_REPLY_BYTES", "READ_CHUNK", "Reply", "Transport", "refused", "too_large"]

READ_CHUNK = 1 << 16
"""Bytes read at a time from a body whose size is not known up front."""
DEFAULT_MAX_REPLY_BYTES = Endpoint.__struct_defaults__[
    Endpoint.__struct_fields__.index("max_reply_bytes") - len(Endpoint.__struct_fields__)]

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
