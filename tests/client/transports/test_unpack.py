"""Compressed replies on every transport (client/transports/unpack.py): read right when small,
and a bomb stopped at ``max_reply_bytes`` of *unpacked* bytes, never held in memory whole."""

from __future__ import annotations

import functools
import gzip
import tracemalloc
import zlib

import msgspec
import pytest
from aiohttp import web

from sweepbench.client.facade import ModelClient
from sweepbench.client.transports.openai import OpenAITransport
from sweepbench.client.transports.unpack import (
    ACCEPT_ENCODING,
    DECODED,
    BadEncoding,
    TooLarge,
    unpack,
)
from sweepbench.config import Endpoint
from sweepbench.errors import FatalError, InvalidResponseError
from sweepbench.wire import ChatRequest, UserMessage

from ...support import serve
from ..rig import OK_BODY

try:
    import zstandard
except ImportError:  # optional: zstd is then neither read nor tested
    zstandard = None

LIMIT = 1 << 20
BOMB = 64 << 20  # unpacked; 64x the cap
ENCODINGS = ["gzip", "deflate", *(["zstd"] if zstandard is not None else [])]
TRANSPORTS = ["http", "aiohttp", "openai", "openai-httpx"]


def pack(data: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.compress(data)
    if encoding == "deflate":
        return zlib.compress(data)
    return zstandard.ZstdCompressor().compress(data)


@functools.cache
def bomb(encoding: str) -> bytes:
    """``BOMB`` zero bytes, compressed (kB), built a MiB at a time."""
    zero = bytes(1 << 20)
    if encoding == "zstd":
        out = zstandard.ZstdCompressor().compressobj()
        return b"".join([*(out.compress(zero) for _ in range(BOMB >> 20)), out.flush()])
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS if encoding == "gzip"
                              else zlib.MAX_WBITS)
    return b"".join([*(packer.compress(zero) for _ in range(BOMB >> 20)), packer.flush()])


# ---- the decoder -------------------------------------------------------------------------------


def test_the_decoder_reads_what_the_transports_accept() -> None:
    assert DECODED == ("gzip", "x-gzip", "deflate", *ENCODINGS[2:])
    body = b'{"ok": true}'
    assert unpack(gzip.compress(body), "gzip", 100) == body
    assert unpack(gzip.compress(body), "X-Gzip", 100) == body
    assert unpack(zlib.compress(body), "deflate", 100) == body
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    assert unpack(raw.compress(body) + raw.flush(), "deflate", 100) == body  # raw deflate
    assert unpack(gzip.compress(b"ab") + gzip.compress(b"cd"), "gzip", 100) == b"abcd"
    assert unpack(gzip.compress(zlib.compress(body)), "deflate, gzip", 100) == body  # last first
    if zstandard is not None:
        assert unpack(pack(body, "zstd"), "zstd", 100) == body
    assert unpack(body, "identity", 100) == body


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_decoder_stops_one_byte_past_the_limit(encoding) -> None:
    assert unpack(pack(b"x" * 100, encoding), encoding, 100) == b"x" * 100
    with pytest.raises(TooLarge):
        unpack(pack(b"x" * 101, encoding), encoding, 100)
    tracemalloc.start()
    try:
        with pytest.raises(TooLarge):
            unpack(bomb(encoding), encoding, LIMIT)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * LIMIT, peak  # never the 64 MiB


@pytest.mark.parametrize(("body", "encoding", "message"), [
    (b"not gzip", "gzip", "body not valid gzip (Error -3 while decompressing data: incorrect "
                          "header check)"),
    (gzip.compress(b"x" * 50)[:-12], "gzip", "body not valid gzip (cut short)"),
    (b"xx", "br", "unsupported Content-Encoding 'br'"),
    (b"xx", "compress", "unsupported Content-Encoding 'compress'"),
])
def test_a_body_its_encoding_does_not_describe_is_refused(body, encoding, message) -> None:
    with pytest.raises(BadEncoding) as info:
        unpack(body, encoding, 1000)
    assert str(info.value) == message


# ---- every transport, over loopback ------------------------------------------------------------


def client_for(url: str, transport: str, **kw) -> ModelClient:
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout_s", 10.0)
    kw.setdefault("max_reply_bytes", LIMIT)
    kind = "openai" if transport.startswith("openai") else transport
    ep = Endpoint(name="bomb", base_url=url, transport=kind, **kw)
    own = None
    if transport == "openai-httpx":
        own = OpenAITransport(url, name="bomb", timeout_s=ep.timeout_s,
                              connect_timeout_s=ep.connect_timeout_s, backend="httpx",
                              max_reply_bytes=LIMIT)
    return ModelClient(ep, transport=own, backoff_base_s=0.001, backoff_max_s=0.01)


def req() -> ChatRequest:
    return ChatRequest(model="x", messages=[UserMessage("hi")])


class Compressing:
    """Answers every request with ``body`` under ``Content-Encoding: encoding``; records the
    Accept-Encoding each request came with."""

    def __init__(self, body: bytes, encoding: str, status: int = 200) -> None:
        self.body, self.encoding, self.status = body, encoding, status
        self.accepts: list[str | None] = []

    async def handle(self, request: web.Request) -> web.Response:
        await request.read()
        self.accepts.append(request.headers.get("Accept-Encoding"))
        return web.Response(body=self.body, status=self.status, headers={
            "Content-Type": "application/json", "Content-Encoding": self.encoding})


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_compressed_reply_is_read_though_none_was_asked_for(transport, encoding) -> None:
    server = Compressing(pack(msgspec.json.encode(OK_BODY), encoding), encoding)
    async with serve(server.handle) as url, client_for(url, transport) as client:
        result = await client.complete(req())
    assert result.message.content == "hello" and result.usage.prompt_tokens == 11
    assert server.accepts == ["identity"] == [ACCEPT_ENCODING]  # none asks for compression


@pytest.mark.parametrize("status", [200, 500])
@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_compression_bomb_stops_at_the_cap_of_unpacked_bytes(transport, encoding,
                                                                     status) -> None:
    server = Compressing(bomb(encoding), encoding, status)
    async with serve(server.handle) as url, client_for(url, transport) as client:
        tracemalloc.start()
        try:
            with pytest.raises(FatalError) as info:
                await client.complete(req())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    where = url if transport.startswith("openai") else f"{url}/chat/completions"
    assert str(info.value) == (f"bomb: reply from {where} is larger than max_reply_bytes "
                               f"({LIMIT}); not read further")
    assert len(server.accepts) == 1  # not retried: it would be again
    assert peak < 8 * LIMIT, f"{peak / 2**20:.1f} MiB held for a {BOMB >> 20} MiB bomb"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_reply_in_an_encoding_no_transport_reads_is_an_invalid_response(
        transport) -> None:
    server = Compressing(b"\x0b\x02\x80{}\x03", "br")
    async with serve(server.handle) as url, client_for(url, transport) as client:
        with pytest.raises(InvalidResponseError) as info:
            await client.complete(req())
    assert str(info.value).endswith(": unsupported Content-Encoding 'br'")
    assert str(info.value).startswith("bomb: response from http://127.0.0.1:")


# ---- the decoder at its edges (unit tests, exact values) ---------------------------------------


def test_encodings_listed_with_blanks_and_identity_are_read_past_them() -> None:
    body = b'{"ok": true}'
    for listed in ("gzip, identity", "identity, gzip", "gzip,", ", gzip", "GZIP ,  "):
        assert unpack(gzip.compress(body), listed, 100) == body, listed


def test_gzip_is_gzip_and_deflate_is_one_stream() -> None:
    body = b'{"ok": true}'
    with pytest.raises(BadEncoding, match="^body not valid gzip "):
        unpack(zlib.compress(body), "gzip", 100)  # zlib-wrapped is not gzip
    assert unpack(zlib.compress(body) + b"\x00\x00junk", "deflate", 100) == body  # after: ignored


def test_a_second_gzip_member_past_the_limit_is_too_large_not_dropped() -> None:
    with pytest.raises(TooLarge):
        unpack(gzip.compress(b"x" * 100) + gzip.compress(b"y"), "gzip", 100)
    assert unpack(gzip.compress(b"x" * 99) + gzip.compress(b"y"), "gzip", 100) == b"x" * 99 + b"y"


def test_a_member_filling_the_limit_exactly_is_not_followed_into_the_next() -> None:
    """zlib reads max_length 0 as no bound: with the limit spent by the first member, the next
    (here 64 MiB of zeros) must not be unpacked at all."""
    first = gzip.compress(b"x" * 101)
    tracemalloc.start()
    try:
        with pytest.raises(TooLarge):
            unpack(first + bomb("gzip"), "gzip", 100)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < LIMIT, peak


def test_a_stream_cut_short_at_the_limit_is_still_cut_short() -> None:
    whole = gzip.compress(bytes(range(256)) * 40)
    cut = whole[:len(whole) // 2]
    got = len(zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(cut))
    assert 0 < got < 256 * 40
    with pytest.raises(BadEncoding) as info:
        unpack(cut, "gzip", got)
    assert str(info.value) == "body not valid gzip (cut short)"


@pytest.mark.skipif(zstandard is None, reason="zstandard not installed")
def test_zstd_frames_one_after_another_are_one_body() -> None:
    frames = pack(b"x" * 100, "zstd") + pack(b"y", "zstd")
    assert unpack(frames, "zstd", 101) == b"x" * 100 + b"y"
    with pytest.raises(TooLarge):
        unpack(frames, "zstd", 100)
    with pytest.raises(BadEncoding) as info:
        unpack(b"not zstd at all", "zstd", 100)
    assert str(info.value).startswith("body not valid zstd (")
