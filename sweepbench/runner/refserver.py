"""The local OpenAI-compatible reference server: scripted models behind real HTTP.

The embedded default sweep (and most tests) talk to models through this server, so the whole
HTTP path (client pooling, retries, JSON) is exercised without a network or an API key. The
models are *policies*: plain synchronous functions from a ``ChatRequest`` to an
``AssistantMessage``, looked up by model name through a resolver the caller supplies.

Routes::

    POST /v1/chat/completions   the policy's answer as a ChatResponse, usage estimated
    GET  /v1/models             the names passed as ``models`` (the resolver cannot be listed)

Errors use the OpenAI shape ``{"error": {"message", "type", "code"}}``: a malformed body is
400, an unknown model 404, a policy raising ``ValueError`` 400 with its message, any other
policy exception 500 (logged with its traceback). Policies run on the event loop, so they
must be quick; ``latency_s`` adds a simulated (non-blocking) model latency to every answer.

The server binds to loopback only; any other host is refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import logging
import signal
from collections import Counter
from collections.abc import Callable, Iterable

import msgspec
from aiohttp import web

from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    WireUsage,
    chat_request_decoder,
    encoder,
)

__all__ = ["Policy", "ReferenceServer", "estimate_tokens"]

log = logging.getLogger(__name__)

Policy = Callable[[ChatRequest], AssistantMessage]
Resolver = Callable[[str], Policy | None]

_MAX_BODY = 64 * 1024 * 1024  # long episodes with many tool schemas exceed aiohttp's 1 MiB


def estimate_tokens(n_bytes: int) -> int:
    """A deterministic token estimate: about four bytes of JSON per token, at least one."""
    return max(1, (n_bytes + 3) // 4)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _error(status: int, message: str, type_: str, code: str) -> web.Response:
    body = encoder.encode({"error": {"message": message, "type": type_, "code": code}})
    return web.Response(status=status, body=body, content_type="application/json")


@web.middleware
async def _json_errors(request: web.Request, handler):  # type: ignore[no-untyped-def]
    """Unrouted paths and wrong methods answer in the OpenAI error shape too."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return _error(exc.status, exc.reason, "invalid_request_error", str(exc.status))


class ReferenceServer:
    """An aiohttp OpenAI-compatible server on loopback whose models are scripted policies.

    ``requests`` counts answered-or-attempted calls per known model; ``rejected`` counts
    requests refused before reaching a policy (malformed body, unknown model).
    """

    def __init__(
        self,
        resolve: Resolver,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_s: float = 0.0,
        models: Iterable[str] | None = None,
    ) -> None:
        if not _is_loopback(host):
            raise ValueError(
                f"reference server binds to loopback only (127.0.0.1, ::1, localhost); "
                f"refusing host {host!r}"
            )
        if latency_s < 0:
            raise ValueError(f"latency_s must be >= 0, got {latency_s}")
        self._resolve = resolve
        self.host = host
        self.port = port
        self.latency_s = latency_s
        self.models = list(models) if models is not None else []
        self.requests: Counter[str] = Counter()
        self.rejected = 0
        self._runner: web.AppRunner | None = None
        self._url: str | None = None

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """Base URL including ``/v1``, e.g. ``http://127.0.0.1:40123/v1``."""
        if self._url is None:
            raise RuntimeError("reference server is not running; call start() first")
        return self._url

    def app(self) -> web.Application:
        app = web.Application(client_max_size=_MAX_BODY, middlewares=[_json_errors])
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        return app

    async def start(self) -> None:
        if self._runner is not None:
            raise RuntimeError("reference server already started")
        runner = web.AppRunner(
            self.app(), access_log=None, shutdown_timeout=1.0 + self.latency_s
        )
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self.port)
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        sockname = runner.addresses[0]
        host, port = sockname[0], sockname[1]
        if ":" in host:
            host = f"[{host}]"
        self.port = port
        self._url = f"http://{host}:{port}/v1"

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        self._url = None
        if runner is not None:
            await runner.cleanup()

    async def __aenter__(self) -> ReferenceServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def run_forever(self, *, announce: Callable[[str], None] | None = None) -> None:
        """Serve until interrupted (Ctrl-C or SIGTERM); blocking. Prints the URL when up."""
        try:
            import uvloop

            loop_factory = uvloop.new_event_loop
        except ImportError:  # pragma: no cover - uvloop is a dependency off Windows
            loop_factory = None
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            try:
                runner.run(self._serve(announce or (lambda url: print(url, flush=True))))
            except KeyboardInterrupt:
                pass

    async def _serve(self, announce: Callable[[str], None]) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGTERM, stop.set)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - Windows
            pass
        async with self:
            announce(self.url)
            await stop.wait()

    # -- handlers -------------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "sweepbench"}
                for m in self.models]
        return web.Response(
            body=encoder.encode({"object": "list", "data": data}),
            content_type="application/json",
        )

    async def _chat(self, request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            req = chat_request_decoder.decode(raw)
        except msgspec.DecodeError as err:
            self.rejected += 1
            return _error(400, f"invalid request body: {err}", "invalid_request_error",
                          "invalid_request")
        policy = self._resolve(req.model)
        if policy is None:
            self.rejected += 1
            return _error(404, f"The model `{req.model}` does not exist", "invalid_request_error",
                          "model_not_found")
        self.requests[req.model] += 1
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        try:
            message = policy(req)
        except ValueError as err:
            return _error(400, str(err) or type(err).__name__, "invalid_request_error",
                          "policy_rejected")
        except Exception:
            log.exception("reference policy for model %r failed", req.model)
            return _error(500, f"policy for model {req.model!r} failed", "server_error",
                          "policy_error")
        if not isinstance(message, AssistantMessage):
            log.error("reference policy for model %r returned %s, not an AssistantMessage",
                      req.model, type(message).__name__)
            return _error(500, f"policy for model {req.model!r} returned "
                          f"{type(message).__name__}", "server_error", "policy_error")
        return web.Response(body=self._answer(req, raw, message),
                            content_type="application/json")

    @staticmethod
    def _answer(req: ChatRequest, raw: bytes, message: AssistantMessage) -> bytes:
        prompt_bytes = len(encoder.encode(req.messages))
        if req.tools:
            prompt_bytes += len(encoder.encode(req.tools))
        completion_bytes = len(message.content.encode()) if message.content else 0
        if message.tool_calls:
            completion_bytes += len(encoder.encode(message.tool_calls))
        prompt, completion = estimate_tokens(prompt_bytes), estimate_tokens(completion_bytes)
        # Spelled out (not ChatResponse, which omits defaults) so that strict clients find
        # every field OpenAI sends: object, created, index.
        response = {
            # Content-addressed: the same request always gets the same id.
            "id": "chatcmpl-" + hashlib.blake2b(raw, digest_size=12).hexdigest(),
            "object": "chat.completion",
            "created": 0,
            "model": req.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.tool_calls else "stop",
                }
            ],
            "usage": WireUsage(
                prompt_tokens=prompt, completion_tokens=completion,
                total_tokens=prompt + completion,
            ),
        }
        return encoder.encode(response)
