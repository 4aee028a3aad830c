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
must be quick.

A busy provider, simulated reproducibly (specs and decisions in :mod:`.faults`). A chat
request goes through, in order:

1. ``outage=(start_s, duration_s)``: 503 for every request in that window (seconds after
   ``start()``), no Retry-After (a real outage does not know when it ends).
2. ``rpm_limit`` / ``tpm_limit``: per model and API key (each key its own account, as
   providers count them; no key is one account), over a sliding one-minute window of admitted
   requests and their estimated tokens (prompt at admission, completion added when answered).
   Over a limit: 429 with ``Retry-After`` (seconds until capacity; fractional) and
   ``retry-after-ms``; a prompt larger than the whole TPM limit is a 400
   (``request_too_large``), as no wait can help. Answers carry ``x-ratelimit-limit-*`` and
   ``x-ratelimit-remaining-*`` headers.
3. ``faults="429=0.1,500=0.05,timeout=0.02,reset=0.01,garbage=0.01"``: per request, drawn from
   ``request_rng(seed, body, attempt)`` where ``attempt`` counts how often this exact body got
   this far: reproducible per seed whatever the timing, and a retry gets a fresh draw. ``429``
   comes with ``Retry-After: fault_retry_after_s``; ``timeout`` hangs ``hang_s`` (then 504)
   unless the client gives up first, and never delays ``stop()``; ``hang`` never answers (no
   headers, no byte) until the client goes away or the server stops; ``reset`` aborts the
   connection; ``garbage`` is a 200 whose body is HTML, or JSON cut off mid-body;
   ``overflow`` is a 400 ``context_length_exceeded``; ``length`` answers with
   ``finish_reason: "length"``.
4. Latency: ``latency="fixed:0.2" | "uniform:0.1,0.3" | "lognormal:median=0.2,sigma=0.5"``
   drawn from the same RNG, or ``latency_s`` (fixed) as shorthand, counted from the
   request's arrival: the answer (5.) is worked out first and sent when the latency is up, so
   a call takes the latency drawn, not that plus the server's own work.
5. The policy answers. A simulated provider prefix cache reports
   ``usage.prompt_tokens_details.cached_tokens``: the estimated tokens of the longest prefix
   (tools, then whole messages) of this prompt that an earlier prompt to the same model that
   reached the policy had; the prompt's prefixes are then remembered (LRU, ``cache_entries``;
   0 disables), as a provider caches at prefill, whether or not the client waits for the end.

Counters (for tests and benchmarks; ``stats()`` gives them as one dict): ``requests`` per
model (every attempt that named a known model), ``answered`` per model, ``faults`` by kind,
``limited`` by "requests"/"tokens", ``outage_rejected``, ``attempts`` (attempt number of each
answered call), ``prompt_tokens``/``cached_tokens``/``completion_tokens`` answered, and
``bodies``: how many times each request body (by hash) was sent, to see a call paid twice.

The server binds to loopback only; any other host is refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import logging
import math
import signal
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
from aiohttp import web

from sweepbench.devserver.faults import (
    AttemptLedger,
    FaultSpec,
    LatencySpec,
    PrefixCache,
    RateLimiter,
    body_digest,
    check_outage,
    request_rng,
)
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    PromptTokensDetails,
    ToolSpec,
    WireUsage,
    encoder,
)

__all__ = ["Policy", "ReferenceServer", "estimate_tokens"]

log = logging.getLogger(__name__)

Policy = Callable[[ChatRequest], AssistantMessage]
Resolver = Callable[[str], Policy | None]

_MAX_BODY = 64 * 1024 * 1024  # long episodes with many tool schemas exceed aiohttp's 1 MiB
_TOOL_LISTS = 64  # distinct tool lists kept decoded (a sweep has one per benchmark and domain)

# A ChatRequest with its tools left as JSON, so that the tools can be decoded once per list.
_REQUEST_FIELDS = tuple(f.name for f in msgspec.structs.fields(ChatRequest) if f.name != "tools")
_ServedRequest = msgspec.defstruct(
    "_ServedRequest",
    [(f.name, f.type, f.default) if f.name != "tools" else ("tools", msgspec.Raw, msgspec.Raw())
     for f in msgspec.structs.fields(ChatRequest)],
)
_served_request_decoder = msgspec.json.Decoder(_ServedRequest)
_tools_decoder = msgspec.json.Decoder(list[ToolSpec])


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


def _error(status: int, message: str, type_: str, code: str,
           headers: dict[str, str] | None = None) -> web.Response:
    body = encoder.encode({"error": {"message": message, "type": type_, "code": code}})
    return web.Response(status=status, body=body, content_type="application/json",
                        headers=headers)


@web.middleware
async def _json_errors(request: web.Request, handler):  # type: ignore[no-untyped-def]
    """Unrouted paths and wrong methods answer in the OpenAI error shape too."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return _error(exc.status, exc.reason, "invalid_request_error", str(exc.status))


def _seconds(value: float) -> str:
    """Seconds for Retry-After, rounded up to the millisecond: "12", "0.25"."""
    ms = max(0, math.ceil(value * 1000))
    return str(ms // 1000) if ms % 1000 == 0 else f"{ms / 1000:.3f}".rstrip("0")


def _wait_headers(seconds: float) -> dict[str, str]:
    return {"Retry-After": _seconds(seconds), "retry-after-ms": str(max(0, math.ceil(seconds * 1000)))}


_GARBAGE_HTML = b"<html><body><h1>502 Bad Gateway</h1>upstream sent an invalid response</body></html>"
_GARBAGE_JSON = (b'{"id": "chatcmpl-garbage", "object": "chat.completion", "created": 0, '
                 b'"model": "scripted", "choices": [{"index": 0, "message": {"role": "assistant", '
                 b'"content": "this answer was cut off in the middle of')


class ReferenceServer:
    """An aiohttp OpenAI-compatible server on loopback whose models are scripted policies.

    See the module docstring for faults, limits, outage, latency and the prefix cache.
    ``requests`` counts answered-or-attempted calls per known model; ``rejected`` counts
    requests refused before reaching a policy (malformed body, unknown model).
    ``hang_s`` bounds a ``timeout`` fault's hang; ``fault_retry_after_s`` is the Retry-After
    of an injected 429; ``cache_entries`` bounds the prefix cache (0: no cache).
    """

    def __init__(
        self,
        resolve: Resolver,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_s: float = 0.0,
        models: Iterable[str] | None = None,
        faults: str | None = None,
        seed: int = 0,
        rpm_limit: int | None = None,
        tpm_limit: int | None = None,
        outage: tuple[float, float] | None = None,
        latency: str | None = None,
        hang_s: float = 300.0,
        fault_retry_after_s: float = 1.0,
        cache_entries: int = 200_000,
    ) -> None:
        if not _is_loopback(host):
            raise ValueError(
                f"reference server binds to loopback only (127.0.0.1, ::1, localhost); "
                f"refusing host {host!r}"
            )
        if not (math.isfinite(latency_s) and latency_s >= 0):  # inf would hang every answer
            raise ValueError(f"latency_s must be a finite number >= 0, got {latency_s}")
        if latency and latency_s:
            raise ValueError("give latency (a distribution) or latency_s (fixed), not both")
        for name, value in (("hang_s", hang_s), ("fault_retry_after_s", fault_retry_after_s)):
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be >= 0, got {value}")
        self._resolve = resolve
        self.host = host
        self.port = port
        self.latency_s = latency_s
        self.models = list(models) if models is not None else []
        self.fault_spec = FaultSpec.parse(faults)
        self.latency_spec = LatencySpec.parse(latency) if latency else LatencySpec("fixed", latency_s)
        self.seed = seed
        for name, value in (("rpm_limit", rpm_limit), ("tpm_limit", tpm_limit)):
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")
        self.rpm_limit, self.tpm_limit = rpm_limit, tpm_limit
        self.outage = check_outage(outage) if outage is not None else None
        self.hang_s = hang_s
        self.fault_retry_after_s = fault_retry_after_s
        self.requests: Counter[str] = Counter()
        self.bodies: Counter[bytes] = Counter()
        self.rejected = 0
        self.answered: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        self.limited: Counter[str] = Counter()
        self.outage_rejected = 0
        self.attempts: Counter[int] = Counter()
        self.prompt_tokens = self.cached_tokens = self.completion_tokens = 0
        self._cache = PrefixCache(cache_entries) if cache_entries > 0 else None
        self._tools: dict[bytes, tuple[list[ToolSpec], bytes | None]] = {}
        self._ledger = AttemptLedger()
        self._limiters: dict[tuple[str, bytes], RateLimiter] = {}  # (model, key digest)
        self._hangs: set[asyncio.Future[bool]] = set()
        self._t0 = 0.0
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
        # In-flight answers get their latency to finish on stop() (hangs are woken at once).
        grace = min(self.latency_spec.upper or 10.0, 10.0)
        # handler_cancellation: a client that gave up (timeout) frees its handler at once.
        runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=1.0 + grace,
                               handler_cancellation=True)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self.port)
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self._t0 = asyncio.get_running_loop().time()
        sockname = runner.addresses[0]
        host, port = sockname[0], sockname[1]
        if ":" in host:
            host = f"[{host}]"
        self.port = port
        self._url = f"http://{host}:{port}/v1"

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        self._url = None
        for hang in list(self._hangs):  # hung requests must not hold the shutdown up
            if not hang.done():
                hang.set_result(False)
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

    # -- counters -------------------------------------------------------------------------

    def elapsed(self) -> float:
        """Seconds since ``start()`` (the outage clock)."""
        return asyncio.get_running_loop().time() - self._t0

    def stats(self) -> dict[str, Any]:
        """The counters as plain JSON-able data."""
        return {
            "requests": dict(self.requests),
            "answered": dict(self.answered),
            "rejected": self.rejected,
            "faults": dict(self.faults),
            "limited": dict(self.limited),
            "outage_rejected": self.outage_rejected,
            "attempts": {str(k): v for k, v in sorted(self.attempts.items())},
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "completion_tokens": self.completion_tokens,
        }

    # -- handlers -------------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "sweepbench"}
                for m in self.models]
        return web.Response(
            body=encoder.encode({"object": "list", "data": data}),
            content_type="application/json",
        )

    def _decode(self, raw: bytes) -> tuple[ChatRequest, bytes | None]:
        """The request, and its tools as canonical JSON (None without tools). A sweep sends
        the same tool list (tens of KB) with every call, so it is decoded once per distinct
        list and reused; the rest of the request is decoded as usual."""
        served = _served_request_decoder.decode(raw)
        sent = bytes(served.tools)
        if sent in (b"", b"null"):
            tools, canonical = None, None
        else:
            known = self._tools.get(sent)
            if known is None:
                try:
                    decoded = _tools_decoder.decode(sent)
                except msgspec.ValidationError as err:  # the path as a whole-body decode gives it
                    raise msgspec.ValidationError(
                        str(err).replace(" - at `$", " - at `$.tools", 1)) from None
                if len(self._tools) >= _TOOL_LISTS:
                    self._tools.clear()
                known = self._tools[sent] = (decoded, encoder.encode(decoded) if decoded else None)
            tools, canonical = known
        fields = {name: getattr(served, name) for name in _REQUEST_FIELDS}
        return ChatRequest(**fields, tools=tools), canonical

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        # the latency runs from here: the work below is inside it
        arrival = asyncio.get_running_loop().time()
        raw = await request.read()
        try:
            req, tools = self._decode(raw)
        except msgspec.DecodeError as err:
            self.rejected += 1
            return _error(400, f"invalid request body: {err}", "invalid_request_error",
                          "invalid_request")
        if self.outage is not None:
            start, duration = self.outage
            if start <= arrival - self._t0 < start + duration:
                self.outage_rejected += 1
                return _error(503, "The server is temporarily unavailable (simulated outage)",
                              "server_error", "service_unavailable")
        policy = self._resolve(req.model)
        if policy is None:
            self.rejected += 1
            return _error(404, f"The model `{req.model}` does not exist", "invalid_request_error",
                          "model_not_found")
        self.requests[req.model] += 1
        digest = body_digest(raw)
        self.bodies[digest] += 1

        encoded = [encoder.encode(m) for m in req.messages]
        prompt_bytes = sum(len(m) + 1 for m in encoded) + 1 + (len(encoded) == 0)
        prompt_bytes += len(tools) if tools else 0
        prompt = estimate_tokens(prompt_bytes)

        headers: dict[str, str] = {}
        entry: list[float] | None = None
        limiter: RateLimiter | None = None
        if self.rpm_limit is not None or self.tpm_limit is not None:
            account = (req.model, _account(request))
            limiter = self._limiters.get(account)
            if limiter is None:
                limiter = self._limiters[account] = RateLimiter(rpm=self.rpm_limit,
                                                                tpm=self.tpm_limit)
            refused, entry = self._admit(limiter, req.model, prompt, headers)
            if refused is not None:
                return refused

        attempt = self._ledger.next(digest)
        rng = request_rng(self.seed, digest, attempt)
        # Always the same draws in the same order, so latencies do not depend on the faults.
        fault = self.fault_spec.decide(rng.random())
        variant = rng.random()
        delay = self.latency_spec.sample(rng)
        if fault is not None:
            self.faults[fault] += 1
            if fault == "429":
                return _error(429, "Rate limit reached (simulated fault); please try again",
                              "requests", "rate_limit_exceeded",
                              headers=_wait_headers(self.fault_retry_after_s))
            if fault == "reset":
                return _drop(request)
            if fault == "hang":
                await self._hang(None)  # until the client gives up (or stop())
                return _drop(request)
            if fault == "timeout":
                if await self._hang(self.hang_s):
                    return _error(504, "The upstream model timed out (simulated fault)",
                                  "server_error", "timeout")
                return _drop(request)  # shutting down
        if fault in ("500", "502", "503", "garbage", "overflow"):
            await _sleep_until(arrival + delay)
            if fault == "garbage":
                return await _garbage(request, variant)
            if fault == "overflow":
                return _error(400, f"This model's maximum context length is {prompt // 2} "
                              f"tokens. However, your messages resulted in {prompt} tokens "
                              "(simulated fault). Please reduce the length of the messages.",
                              "invalid_request_error", "context_length_exceeded")
            return _error(int(fault), f"The server had an error (simulated fault {fault})",
                          "server_error", "server_error")

        # The answer is worked out first and sent when the latency is up, so a request takes
        # the latency drawn, not the latency plus this server's own work.
        answer = self._respond(req, policy, digest, encoded, tools, prompt, fault)
        await _sleep_until(arrival + delay)
        if isinstance(answer, web.Response):
            return answer
        body, completion, cached = answer
        if limiter is not None and entry is not None:
            limiter.add_tokens(entry, completion)
        self.answered[req.model] += 1
        self.attempts[attempt] += 1
        self.prompt_tokens += prompt
        self.cached_tokens += cached
        self.completion_tokens += completion
        return web.Response(body=body, content_type="application/json", headers=headers)

    def _respond(self, req: ChatRequest, policy: Policy, digest: bytes, encoded: list[bytes],
                 tools: bytes | None, prompt: int, fault: str | None
                 ) -> web.Response | tuple[bytes, int, int]:
        """The policy's answer as (body, completion tokens, cached tokens), or the error
        response when the policy fails."""
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
        cached = 0
        if self._cache is not None:
            prefixes = self._cache.prefixes(req.model, tools, encoded)
            seen = self._cache.lookup(prefixes)
            cached = min(estimate_tokens(seen), prompt) if seen else 0
            self._cache.remember(prefixes)
        body, completion = self._answer(req, digest, message, prompt, cached,
                                        "length" if fault == "length" else None)
        return body, completion, cached

    def _admit(self, limiter: RateLimiter, model: str, prompt: int, headers: dict[str, str]
               ) -> tuple[web.Response | None, list[float] | None]:
        """Admit the request under the model's limits (filling ``headers``): (None, window
        entry), or refuse it: (the error response, None)."""
        now = asyncio.get_running_loop().time()
        decision, entry = limiter.admit(now, prompt)
        for what, limit, remaining in (
            ("requests", self.rpm_limit, decision.remaining_requests),
            ("tokens", self.tpm_limit, decision.remaining_tokens),
        ):
            if limit is not None:
                headers[f"x-ratelimit-limit-{what}"] = str(limit)
                headers[f"x-ratelimit-remaining-{what}"] = str(remaining)
        if decision.allowed:
            return None, entry
        if math.isinf(decision.retry_after_s):
            return _error(400, f"Request too large for {model} on tokens per min (TPM): "
                          f"Limit {self.tpm_limit}, Requested {prompt}.",
                          "invalid_request_error", "request_too_large", headers=headers), None
        self.limited[decision.limited_by or "requests"] += 1
        if decision.limited_by == "tokens":
            detail = f"tokens per min (TPM): Limit {self.tpm_limit}, Requested {prompt}"
        else:
            detail = f"requests per min (RPM): Limit {self.rpm_limit}"
        wait = decision.retry_after_s
        return _error(429, f"Rate limit reached for {model} on {detail}. "
                      f"Please try again in {_seconds(wait)}s.", decision.limited_by or "requests",
                      "rate_limit_exceeded", headers={**headers, **_wait_headers(wait)}), None

    async def _hang(self, seconds: float | None) -> bool:
        """Sleep ``seconds`` (None: until cancelled); True when it elapsed, False when woken
        by ``stop()``."""
        loop = asyncio.get_running_loop()
        hang: asyncio.Future[bool] = loop.create_future()
        timer = (None if seconds is None
                 else loop.call_later(seconds, lambda: hang.done() or hang.set_result(True)))
        self._hangs.add(hang)
        try:
            return await hang
        finally:
            if timer is not None:
                timer.cancel()
            self._hangs.discard(hang)

    @staticmethod
    def _answer(req: ChatRequest, digest: bytes, message: AssistantMessage, prompt: int,
                cached: int, finish: str | None = None) -> tuple[bytes, int]:
        completion_bytes = len(message.content.encode()) if message.content else 0
        if message.tool_calls:
            completion_bytes += len(encoder.encode(message.tool_calls))
        completion = estimate_tokens(completion_bytes)
        # Spelled out (not ChatResponse, which omits defaults) so that strict clients find
        # every field OpenAI sends: object, created, index.
        response = {
            # Content-addressed: the same request always gets the same id.
            "id": "chatcmpl-" + digest[:12].hex(),
            "object": "chat.completion",
            "created": 0,
            "model": req.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish or ("tool_calls" if message.tool_calls else "stop"),
                }
            ],
            "usage": WireUsage(
                prompt_tokens=prompt, completion_tokens=completion,
                total_tokens=prompt + completion,
                prompt_tokens_details=PromptTokensDetails(cached_tokens=cached),
            ),
        }
        return encoder.encode(response), completion


def _account(request: web.Request) -> bytes:
    """Whose limits a request counts against: a digest of its bearer key (never the key)."""
    return hashlib.blake2b(request.headers.get("Authorization", "").encode(),
                           digest_size=8).digest()


async def _sleep_until(when: float) -> None:
    """Sleep until the loop clock reads ``when`` (at once when it already has)."""
    delay = when - asyncio.get_running_loop().time()
    if delay > 0:
        await asyncio.sleep(delay)


def _drop(request: web.Request) -> web.Response:
    """Abort the connection: the client sees it reset with no response."""
    transport = request.transport
    if transport is not None:
        transport.abort()
    return web.Response(status=500)  # never sent: the transport is gone


async def _garbage(request: web.Request, variant: float) -> web.StreamResponse:
    """A 200 the client cannot use: an HTML page, or JSON cut off mid-body."""
    if variant < 0.5:
        return web.Response(body=_GARBAGE_HTML, content_type="text/html")
    resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    resp.content_length = len(_GARBAGE_JSON) * 2  # promise more than is ever sent
    try:
        await resp.prepare(request)
        await resp.write(_GARBAGE_JSON)
    except ConnectionResetError:  # the client already gave up
        return _drop(request)
    transport = request.transport
    if transport is not None:
        transport.abort()
    return resp
