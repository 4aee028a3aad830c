"""An optional transport through the official ``openai`` SDK (``Endpoint.transport = "openai"``).

Same seam as :class:`~sweepbench.runner.client.AiohttpTransport`: one POST of our exact
request body, answering ``(status, headers, raw body)``; the client decodes, classifies and
retries as for any transport, so behaviour (limits, retries, error tree, cache) is identical.
Use it where the SDK's own HTTP stack is wanted (proxies and TLS set up through its
environment variables, gateways tested only with it). The SDK's retries are off (``max_retries
=0``): ours apply. Its aiohttp backend (``DefaultAioHttpClient``) is used when the installed
SDK has it, else its default httpx client.

The body is decoded and handed to ``chat.completions.with_raw_response.create``: ``model`` and
``messages`` as arguments, every other field through ``extra_body``, so nothing the SDK does
not know about is lost. The API key goes per request as the ``Authorization`` header; the SDK
client itself holds only a placeholder. Errors are translated here, in one place:
HTTP errors are handed back as replies (the client maps statuses for every transport alike),
``APITimeoutError`` -> ``RequestTimeout``, ``APIConnectionError`` -> ``ConnectionRefused`` when
nothing listens at the URL, else ``TransportError``; anything else from the SDK ->
``FatalError``. Messages name the URL.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from sweepbench.errors import (
    ConnectionRefused,
    FatalError,
    InvalidResponseError,
    RequestTimeout,
    TransportError,
)
from sweepbench.runner.client import Reply, refused

__all__ = ["OpenAITransport", "sdk_backend"]

_PLACEHOLDER_KEY = "sweepbench-key-sent-per-request"


def sdk_backend() -> str:
    """'aiohttp' when the installed SDK has ``DefaultAioHttpClient``, else 'httpx'."""
    try:
        from openai import DefaultAioHttpClient  # noqa: F401
    except ImportError:
        return "httpx"
    return "aiohttp"


class OpenAITransport:
    def __init__(self, base_url: str, *, name: str, timeout_s: float, connect_timeout_s: float,
                 backend: str | None = None) -> None:
        try:
            import openai
        except ImportError as err:  # pragma: no cover - openai is a dependency
            raise FatalError(
                f"{name}: transport 'openai' needs the openai package (pip install openai)",
                endpoint=name) from err
        self._openai = openai
        self._base_url = base_url
        self._name = name
        self._timeout = openai.Timeout(timeout_s, connect=connect_timeout_s)
        self.backend = backend or sdk_backend()
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    def _get_client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is not None and self._loop is loop:
            return self._client
        if self._closed:
            raise RuntimeError(f"ModelClient for {self._name!r} is closed")
        if self._client is not None:
            raise RuntimeError(
                f"ModelClient for {self._name!r} is bound to another event loop; "
                "create one client per loop")
        openai = self._openai
        http_client = None
        if self.backend == "aiohttp":
            try:
                http_client = openai.DefaultAioHttpClient(timeout=self._timeout)
            except RuntimeError:  # the SDK stub when its aiohttp extra is not installed
                self.backend = "httpx"
        self._client = openai.AsyncOpenAI(
            api_key=_PLACEHOLDER_KEY, base_url=self._base_url, max_retries=0,
            timeout=self._timeout, http_client=http_client)
        self._loop = loop
        return self._client

    async def aclose(self) -> None:
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def post(self, body: bytes, headers: dict[str, str] | None) -> Reply:
        openai, name = self._openai, self._name
        client = self._get_client()
        try:
            fields = msgspec.json.decode(body)
        except msgspec.DecodeError as err:
            raise FatalError(f"{name}: request body is not JSON ({err})", endpoint=name) from err
        model = fields.pop("model")
        messages = fields.pop("messages")
        auth = (headers or {}).get("Authorization")
        extra_headers = {"Authorization": auth if auth else openai.Omit()}
        try:
            raw = await client.chat.completions.with_raw_response.create(
                model=model, messages=messages, extra_body=fields, extra_headers=extra_headers)
            resp = raw.http_response
            return resp.status_code, resp.headers, resp.content
        except openai.APIStatusError as err:
            resp = err.response
            return resp.status_code, resp.headers, resp.content
        except (openai.APITimeoutError, openai.APIConnectionError) as err:
            if refused(err):  # the SDK's aiohttp backend calls it a connect *timeout*
                raise ConnectionRefused(f"{name}: connection refused by {self._base_url} (is "
                                        "the server running?)", endpoint=name) from err
            if isinstance(err, openai.APITimeoutError):
                raise RequestTimeout(f"{name}: request to {self._base_url} timed out (openai "
                                     f"{type(err).__name__})", endpoint=name) from err
            cause = err.__cause__
            what = f"{type(cause).__name__}" if cause is not None else type(err).__name__
            raise TransportError(f"{name}: connection to {self._base_url} failed (openai: "
                                 f"{what})", endpoint=name) from err
        except openai.APIResponseValidationError as err:
            raise InvalidResponseError(f"{name}: invalid response (openai: {err.message})",
                                       endpoint=name) from err
        except openai.OpenAIError as err:
            raise FatalError(f"{name}: openai SDK error ({type(err).__name__})",
                             endpoint=name) from err
