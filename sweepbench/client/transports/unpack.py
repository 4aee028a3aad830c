"""Compressed reply bodies, unpacked under the size cap: one decoder for every transport.

``max_reply_bytes`` exists to bound what one reply can cost in memory, so it has to bound the
*unpacked* bytes: a 1 MB gzip body can unpack to 1 GiB. Every transport reads the raw body under
the cap, then hands it here, where no more than ``limit + 1`` bytes are ever produced, whatever
the body says. Decoding in one place also makes the transports agree on what they accept: each
asks for none (``Accept-Encoding: identity``), and a server that compresses anyway is read for
``gzip`` (``x-gzip``), ``deflate`` (zlib-wrapped or raw) and, where the ``zstandard`` package is
installed, ``zstd``; any other encoding is an invalid response. (``br`` is not accepted: brotli's
decoder in common releases cannot bound its output.)
"""

from __future__ import annotations

import zlib

try:
    import zstandard
except ImportError:  # pragma: no cover - optional
    zstandard = None  # type: ignore[assignment]

__all__ = ["ACCEPT_ENCODING", "DECODED", "BadEncoding", "TooLarge", "unpack"]

ACCEPT_ENCODING = "identity"
"""What every transport asks for: model replies are small, and not asking keeps most servers
from compressing (the SDK's stack would otherwise ask for gzip on its own)."""

DECODED = ("gzip", "x-gzip", "deflate", *(("zstd",) if zstandard is not None else ()))
"""The Content-Encodings a reply may come in (``identity`` aside)."""
_ZSTD_WINDOW = 1 << 23  # the largest window a zstd frame may ask for: RFC 8878's 8 MiB


class TooLarge(Exception):
    """The unpacked body is over the limit."""


class BadEncoding(Exception):
    """The body is not what its Content-Encoding says, or in one we do not read."""


def unpack(payload: bytes, encoding: str, limit: int) -> bytes:
    """``payload`` decoded by its ``Content-Encoding`` (a list is undone last first), each step
    producing at most ``limit + 1`` bytes; :class:`TooLarge` past ``limit``."""
    for kind in reversed([k.strip().lower() for k in encoding.split(",")]):
        if kind in ("", "identity"):
            continue
        if kind not in DECODED:
            raise BadEncoding(f"unsupported Content-Encoding {kind!r}")
        payload = _zstd(payload, limit) if kind == "zstd" else _zlib(payload, kind, limit)
        if len(payload) > limit:
            raise TooLarge
    return payload


def _zlib(payload: bytes, kind: str, limit: int) -> bytes:
    if kind == "deflate":  # RFC 9110 says zlib-wrapped; some servers send it raw
        wbits = zlib.MAX_WBITS if payload[:1] == b"\x78" else -zlib.MAX_WBITS
    else:
        wbits = 16 + zlib.MAX_WBITS
    parts: list[bytes] = []
    left = limit + 1
    rest = payload
    try:
        while rest and left > 0:  # gzip members one after another are one body
            unpacker = zlib.decompressobj(wbits)
            out = unpacker.decompress(rest, left)
            parts.append(out)
            left -= len(out)
            if left > 0 and not unpacker.eof:
                raise BadEncoding(f"body not valid {kind} (cut short)")
            rest = unpacker.unused_data if kind != "deflate" else b""
    except zlib.error as err:
        raise BadEncoding(f"body not valid {kind} ({err})") from None
    return b"".join(parts)


def _zstd(payload: bytes, limit: int) -> bytes:
    reader = zstandard.ZstdDecompressor(max_window_size=_ZSTD_WINDOW).stream_reader(
        payload, read_across_frames=True)
    parts: list[bytes] = []
    left = limit + 1
    try:
        while left > 0:
            out = reader.read(left)
            if not out:
                break
            parts.append(out)
            left -= len(out)
    except zstandard.ZstdError as err:
        raise BadEncoding(f"body not valid zstd ({err})") from None
    return b"".join(parts)
