"""Sweep configuration: a TOML file plus CLI overrides, decoded into keyword-only Structs.

Every field is documented where it is declared. API keys are never part of the config: an
endpoint names the environment variable that holds its key, and the key is read from the
environment only when a request is made.
"""

from __future__ import annotations

import importlib.util
import math
import os
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec
from msgspec import Struct, field

from sweepbench.errors import ConfigError
from sweepbench.ids import STATE_JUDGE, JudgeMethod, UserMode, WorkOrder
from sweepbench.wire import MAX_TOKEN_COUNT

SCRIPTED_PREFIX = "scripted/"
TRANSPORTS = ("http", "aiohttp", "openai")
ROUTINGS = ("affinity", "round_robin")


class Endpoint(Struct, kw_only=True, forbid_unknown_fields=True):
    """One model behind an OpenAI-compatible chat-completions endpoint."""

    name: str
    """What the sweep calls this model (leaderboard row, `--model NAME`)."""
    base_url: str = ""
    """E.g. https://api.openai.com/v1; empty for scripted models (the built-in reference server)."""
    model: str = ""
    """The model name sent in requests; defaults to `name`."""
    api_key_env: str | None = None
    """Name of the environment variable holding the API key (never the key itself)."""
    base_urls: list[str] = field(default_factory=list)
    """More ways in to the same model: replicas (vLLM/SGLang servers of the same weights,
    with no router in front), each with its own limits, breaker and health; ``base_url``,
    when set, is the first. The first URL stands for the model in episode identity, so
    adding or dropping replicas keeps stored episodes (sweepbench/client/fleet.py)."""
    api_key_envs: list[str] = field(default_factory=list)
    """More keys (accounts) of the same model, each from its own environment variable and
    each under its own rpm/tpm; ``api_key_env``, when set, is the first."""
    routing: str = "affinity"
    """How a call picks a replica: "affinity" (an episode, and the trials of a task, stay
    on one replica, bounded by load) or "round_robin" (each request to the next way in)."""
    load_factor: float = 1.2
    """Affinity routing keeps no replica above this times the mean in-flight load; >= 1."""
    extra_body: dict[str, Any] = field(default_factory=dict)
    """Extra JSON fields merged into every request (e.g. reasoning effort, top_p,
    chat_template_kwargs); they win over request fields of the same name."""
    temperature: float | None = None
    max_tokens: int | None = None
    """Completion budget sent when a request sets none. Not sent by default, as upstream
    VitaBench sends none (a budget can cut a thinking model's reply and change its score);
    set it to bound a runaway generation, which otherwise runs until the timeout and is paid
    for again on retry. Servers reject prompt + max_tokens beyond their context (vLLM,
    llama.cpp). 0 or None: not sent."""
    max_tokens_field: str = "max_tokens"
    """The field the budget is sent as: "max_completion_tokens" for OpenAI's reasoning
    models (o-series, gpt-5), which reject max_tokens."""
    tool_choice: str | dict[str, Any] | None = None
    """Sent with every request that offers tools: "auto", "required", "none" or a named
    function. llama-cpp-python shows tools to the model only when it is set ("auto" with
    --chat_format chatml-function-calling); None: not sent (the server's default, auto)."""
    assistant_empty_content: str | None = None
    """Content sent for an assistant message that has none (a tool-call turn); "" for servers
    that reject null there (llama.cpp answers 500). None: the field is left out."""
    send_reasoning: bool = False
    """Send each assistant message's stored reasoning back in later requests, as
    `reasoning_field` (and OpenRouter's reasoning_details as received). DeepSeek and Kimi
    thinking modes require it in tool loops; others reject or ignore it."""
    reasoning_field: str = "reasoning_content"
    """Field name for sent-back reasoning: "reasoning_content" (DeepSeek, Kimi, GLM, vLLM,
    SGLang, llama.cpp templates) or "reasoning" (Ollama)."""
    max_concurrency: int = 64
    """In-flight requests to this endpoint at most."""
    timeout_s: float = 120.0
    """Total timeout of one request: connecting, sending and reading the whole reply (a
    body that trickles in is cut at this deadline, not per chunk); must be > 0."""
    connect_timeout_s: float = 10.0
    """Timeout of establishing the connection; must be > 0."""
    ttfb_k: float = 4.0
    """Time-to-first-byte budget: a request with no response headers after ttfb_k x the
    p99 of this endpoint's recent successful first-byte latencies (clamped to the floor and
    ceiling below) is abandoned and retried (a hung request); must be > 0."""
    ttfb_floor_s: float = 10.0
    """The TTFB budget is never shorter than this; must be > 0."""
    ttfb_ceiling_s: float | None = None
    """The TTFB budget is never longer than this, and is this until 20 requests succeeded;
    None: timeout_s (so no budget before there is evidence); must be > 0."""
    hedge: bool | None = None
    """Hedged requests: a second copy of a request that has not answered after the
    endpoint's hedge_quantile latency; the first answer wins, the other is cancelled.
    None (default): on for hosted endpoints without prices, off for priced and self-hosted
    ones (`kind`). For a model that
    samples, a copy is a second draw and the faster (often the shorter) answer wins: set
    false where that bias matters (docs/models/hung-requests.md)."""
    kind: str | None = None
    """What serves this endpoint: "hosted" (a provider's API, where a copy of a request
    can land on another machine and win) or "self-hosted" (vLLM, SGLang, llama.cpp, Ollama:
    a copy queues behind the original on the same engine and spends its compute). None: told
    from base_url, self-hosted when its host is localhost or a loopback, private or
    link-local address, else hosted. A self-hosted endpoint is not hedged unless `hedge =
    true`, and its first-byte budget counts from its last answer (a busy server is not a
    hung one: see docs/models/hung-requests.md)."""
    hedge_quantile: float = 0.99
    """The latency quantile (of recent successful requests) after which to hedge, and never
    before 1.5 x the median latency (a copy needs about a median to answer); in (0, 1)."""
    hedge_min_s: float = 0.1
    """Never hedge a request younger than this; must be > 0."""
    backups: int = 2
    """Ramp-down backups, where hedging is on: once a sweep has no episode left to start and
    some of its slots are idle, once the endpoint's latency is known and while it has failed
    lately (a 429 or a failure in its last 50 answers, but no cluster of 429s), each request
    also goes out as up to this many copies at once,
    each on an idle slot and only if the endpoint's limits have room now. The first copy's
    answer is used unless it fails or is later than the hedge delay, so a fault costs the
    straggling episodes nothing and no answer is chosen for being fast. 0: none; at most 8."""
    max_reply_bytes: int = 8 << 20
    """Largest reply body read (8 MiB); a longer one is an error, its read stopped there."""
    max_retries: int = 6
    """Attempts after the first for retryable errors (429, 5xx, timeouts, connection errors)."""
    transport: str = "http"
    """HTTP stack: "http" (default: keep-alive HTTP/1.1 parsed by httptools, the leanest per
    call), "aiohttp" (aiohttp's ClientSession) or "openai" (the official SDK; its aiohttp
    backend when the installed version has one; needs `pip install 'sweepbench[openai]'`).
    Limits, retries, errors, size caps, redirects and proxies behave the same on all three."""
    follow_redirects: bool = False
    """Follow a 307 or 308 answer to its Location (method, body and headers kept; the API key
    only to the endpoint's own scheme, host and port), at most 5 in a row. Off: any redirect is
    an error naming the endpoint and the target. 301, 302 and 303 are errors either way
    (following them would turn the chat request into a GET): point base_url at the target."""
    proxy: str | None = None
    """HTTP proxy for this endpoint, "http://host:port"; "" for none. None (default): the
    environment's HTTPS_PROXY / HTTP_PROXY / ALL_PROXY, except for hosts in NO_PROXY and
    loopback hosts (localhost, 127.x, ::1). Proxy credentials are secrets: only in those
    environment variables, never in the config."""
    rpm: int | None = None
    """Requests per minute this endpoint+account allows; None: unknown (429s and Retry-After
    alone steer the client)."""
    tpm: int | None = None
    """Tokens (prompt + completion) per minute allowed; each call's tokens are estimated from
    its body before it is sent and corrected from the response's usage."""
    rate_headroom: float = 0.97
    """Fraction of rpm/tpm the client aims for (a little under keeps 429s near zero)."""
    adaptive_concurrency: bool = True
    """Shrink the in-flight cap (x0.7) when 429s cluster (at least 3 and 30% of the last 50
    answers), grow it back by ~1 per round trip while healthy, never above max_concurrency."""
    min_concurrency: int = 1
    """The adaptive in-flight cap never goes below this."""
    breaker_threshold: int = 10
    """Consecutive failures (5xx, timeouts, connection errors, garbage bodies) that open the
    circuit breaker; while open, calls wait instead of spending retries."""
    breaker_cooldown_s: float = 1.0
    """Seconds open before one half-open probe; doubled after each failed probe (to 30 s)."""
    breaker_max_wait_s: float | None = 600.0
    """Longest a call waits on an open breaker before failing; None: forever."""
    limits_key: str | None = None
    """Endpoints with the same key share one set of limits (one account's budget); default:
    base_url + api_key_env + model."""
    price_input_per_mtok: float = 0.0
    price_cached_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    unpriced: bool = False
    """Its prices are not known (a provider/model name the prices table lacks): reports and
    plans count its calls as unpriced, never as $0, and a spending cap cannot bound it."""
    max_cost_usd: float | None = None
    """Budget of this endpoint: a sweep starts no episode that would bring the dollars spent
    on it for the sweep's episodes (stored calls included) above this; None: no budget."""

    @property
    def scripted(self) -> bool:
        return self.name.startswith(SCRIPTED_PREFIX)

    @property
    def model_name(self) -> str:
        return self.model or self.name

    @property
    def urls(self) -> list[str]:
        """Every base URL (replica), ``base_url`` first; empty for a scripted model."""
        return _unique([self.base_url, *self.base_urls])

    @property
    def key_envs(self) -> list[str | None]:
        """Every key variable, ``api_key_env`` first; [None] without a key."""
        return _unique([self.api_key_env, *self.api_key_envs]) or [None]

    def ways(self) -> list[Endpoint]:
        """One plain endpoint per (replica, key): the ways in to this model."""
        if not (self.base_urls or self.api_key_envs):
            return [self]
        return [msgspec.structs.replace(self, base_url=url, api_key_env=key, base_urls=[],
                                        api_key_envs=[])
                for url in self.urls or [""] for key in self.key_envs]

    def validate(self) -> Endpoint:
        """ConfigError naming the endpoint and the field for what can never work: a base_url
        that is not http(s)://host, a timeout or TTFB/hedge setting that is not > 0, a TTFB
        floor above its ceiling, a hedge quantile outside (0, 1), backups outside 0..8, a size
        limit under 1 byte, a replica or key listed twice, an unknown routing."""
        where = f"endpoint {self.name!r}"
        for key, url_text in (("base_url", self.base_url),
                              *(("base_urls", u) for u in self.base_urls)):
            url = urlsplit(url_text.strip())
            if url_text and (url.scheme.lower() not in ("http", "https") or not url.hostname):
                raise ConfigError(f"{where}: {key} {url_text!r} is not an http:// or "
                                  "https:// URL with a host")
        _check_ways(self, where)
        for key in ("timeout_s", "connect_timeout_s"):
            value = getattr(self, key)
            if not 0 < value < math.inf:  # 0 or less would turn the timeout off
                raise ConfigError(f"{where}: {key} must be > 0 seconds, got {value}")
        for key in ("ttfb_k", "ttfb_floor_s", "ttfb_ceiling_s", "hedge_min_s"):
            value = getattr(self, key)
            if value is not None and not 0 < value < math.inf:
                raise ConfigError(f"{where}: {key} must be > 0, got {value}")
        if self.ttfb_ceiling_s is not None and self.ttfb_floor_s > self.ttfb_ceiling_s:
            raise ConfigError(f"{where}: ttfb_floor_s ({self.ttfb_floor_s}) is above "
                              f"ttfb_ceiling_s ({self.ttfb_ceiling_s})")
        if not 0 < self.hedge_quantile < 1:
            raise ConfigError(f"{where}: hedge_quantile must be in (0, 1), got "
                              f"{self.hedge_quantile}")
        if self.kind not in (None, "hosted", "self-hosted"):
            raise ConfigError(f"{where}: kind must be \"hosted\" or \"self-hosted\", got "
                              f"{self.kind!r}")
        if not 0 <= self.backups <= 8:
            raise ConfigError(f"{where}: backups must be in 0..8, got {self.backups}")
        if self.max_reply_bytes < 1:
            raise ConfigError(f"{where}: max_reply_bytes must be >= 1, got "
                              f"{self.max_reply_bytes}")
        self._validate_transport(where)
        return self

    def _validate_transport(self, where: str) -> None:
        if self.transport not in TRANSPORTS:
            raise ConfigError(f"{where}: transport must be one of {', '.join(TRANSPORTS)}, "
                              f"got {self.transport!r}")
        if self.transport == "openai" and importlib.util.find_spec("openai") is None:
            raise ConfigError(f"{where}: transport 'openai' needs the openai package: "
                              "pip install 'sweepbench[openai]'")
        if self.proxy:
            proxy = urlsplit(self.proxy)
            if proxy.scheme != "http" or not proxy.hostname:
                raise ConfigError(f"{where}: proxy must be an http://host:port URL")
            if proxy.username is not None or proxy.password is not None:
                raise ConfigError(f"{where}: proxy holds credentials; a secret belongs in the "
                                  "environment (HTTPS_PROXY / HTTP_PROXY), not the config")

    def api_key(self) -> str | None:
        """Read the key from the environment at call time; None when not configured."""
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ConfigError(
                f"endpoint {self.name!r}: environment variable {self.api_key_env} is not set"
            )
        return key


def _unique(items: list) -> list:
    """``items`` without empties, first occurrences kept in order."""
    return list(dict.fromkeys(i for i in items if i))


def _check_ways(ep: Endpoint, where: str) -> None:
    """Replicas and keys: none empty or listed twice, a known routing."""
    for key, given in (("base_urls", [ep.base_url, *ep.base_urls]),
                       ("api_key_envs", [ep.api_key_env, *ep.api_key_envs])):
        listed = [x.strip().rstrip("/") for x in given if x]
        if (ep.base_urls if key == "base_urls" else ep.api_key_envs) and (
                len(set(listed)) < len(listed) or not all(given[1:])):
            raise ConfigError(f"{where}: {key} lists an empty or repeated entry "
                              f"(with {key[:-1]}, the first): {listed}")
    if ep.routing not in ROUTINGS:
        raise ConfigError(f"{where}: routing must be affinity or round_robin, got {ep.routing!r}")


class SweepConfig(Struct, kw_only=True, forbid_unknown_fields=True):
    """What to run: models x tasks x trials, and how hard to push."""

    benchmarks: list[str] = field(default_factory=lambda: [
        "vitabench:delivery", "vitabench:instore", "vitabench:ota", "t1:flight+hotel+bar"])
    """Benchmark specs, e.g. "vitabench:delivery", "vitabench:delivery,instore" (cross-domain),
    "t1:single"; the default runs the built-in samples and one generated T1 split."""
    models: list[str] = field(default_factory=lambda: ["scripted/oracle", "scripted/noisy:0.3"])
    """Agent models: endpoint names from `endpoints`, provider/model names (openai/gpt-4.1,
    vllm/Qwen/Qwen3-8B: sweepbench/providers/), or scripted/... reference models."""
    user_model: str = "scripted/user"
    """The user-simulator model (named as an agent model, or scripted/user)."""
    user_mode: str = "default"
    """VitaBench user mode: default, neutral (persona removed) or solo (as upstream: a relay
    user says the whole instruction once, then the agent works alone)."""
    trials: int = 4
    """Trials per (model, task): k in Avg@k, Pass@k, Pass^k."""
    max_concurrency: int = 64
    """Episodes in flight at once across the sweep (making requests: see lend_slots)."""
    lend_slots: bool = True
    """An episode asleep before a retry (back-off, Retry-After) lends its slot to a new
    episode while the endpoint's faults are isolated, and takes the next free slot when it
    wakes: up to max_concurrency // 4 (at least 1) more episodes alive, never more making
    requests."""
    order: str = "longest"
    """The order episodes start in: "longest" (longest expected first, fair across models, in
    bands of whole trials, so the sweep ends with short episodes in flight) or "file"
    (trial-major, tasks in file order, models in config order). It never changes what an
    episode does, only when it starts."""
    data_dir: str | None = None
    """Benchmark data (task files); None: $SWEEPBENCH_DATA, else the built-in sample tasks."""
    lang: str = "en"
    """Task language where a benchmark has several (VitaBench: en, zh)."""
    task_ids: list[str] = field(default_factory=list)
    """Run only these task ids (empty: all)."""
    limit: int | None = None
    """Run only the first N tasks of each benchmark."""
    seed: int = 0
    """Seed of the scripted models' randomness (the noisy agent)."""
    max_turns: int | None = None
    """Override every task's user-turn limit."""
    max_tool_errors: int = 10
    """Tool errors an agent may make before its episode ends (T1), or the failed calls that
    end it (VitaBench 2025-12, upstream's ``max_errors``: the 10th ends it); the November
    VitaBench release, as its upstream, has no error budget."""
    max_steps: int | None = None
    """Steps an episode may take (VitaBench counts as upstream: each message one step, an
    agent message with its tool results two); None: the benchmark's default (VitaBench 300,
    T1 none)."""
    reference_latency_s: float = 0.0
    """Latency of the built-in reference server's scripted models."""
    reference_latency: str | None = None
    """Its latency distribution instead: "fixed:0.2", "uniform:0.1,0.3",
    "lognormal:median=0.2,sigma=0.5" (seeded by reference_seed)."""
    reference_faults: str | None = None
    """Faults the reference server injects, per request, e.g.
    "429=0.1,500=0.05,timeout=0.02,reset=0.01,garbage=0.01" (for testing the harness)."""
    reference_seed: int = 0
    """Seed of the reference server's fault and latency draws."""
    reference_rpm: int | None = None
    """Requests per minute the reference server enforces per model and API key (each key
    an account; 429 + Retry-After)."""
    reference_tpm: int | None = None
    """Estimated tokens per minute the reference server enforces per model and API key."""
    reference_outage: tuple[float, float] | None = None
    """(start_s, duration_s): the reference server answers 503 in that window after it starts."""
    reference_cache_entries: int = 200_000
    """Prefixes the reference server's simulated prompt cache holds (LRU, per server; the
    default sweep needs about 2,300): smaller makes it finite like a replica's; 0: none."""
    endpoints: list[Endpoint] = field(default_factory=list)
    """Model endpoints by name (OpenAI-compatible)."""
    judge_models: list[str] = field(default_factory=list)
    """LLM judges (named as agent models, or scripted/judge); the state check always runs."""
    judge_methods: list[str] = field(default_factory=lambda: ["sliding", "likert"])
    """Judge methods; each applies to its benchmark: VitaBench sliding, full,
    sliding_no_rubrics, full_no_rubrics; T1 likert."""
    judge_concurrency: int = 32
    """Episodes judged at once (each judge endpoint also keeps its own limits)."""
    response_cache: str | None = None
    """Path of an SQLite cache of model responses keyed by the exact request bytes (for
    deterministic re-runs); None: off."""
    max_cost_usd: float | None = None
    """Spending cap in dollars over the sweep's episodes (agent, user and judge calls, stored
    ones included): no episode starts once the spend plus what is in flight would pass it;
    a rerun with a higher cap continues. None: no cap (`--max-cost`)."""

    prices: str | None = None
    """A prices file for provider/model names: [models."openai/gpt-4.1"] tables of input,
    cached_input and output dollars per million tokens, replacing the shipped table's entries
    (`--prices`). Endpoints written here keep their own prices."""
    max_connections: int | None = None
    """In-flight requests per endpoint, replacing every endpoint's max_concurrency (inspect's
    --max-connections); None: each endpoint's own."""
    token_limit: int | None = None
    """Tokens (prompt + completion, summed over its calls) the agent may use in an episode;
    past it the episode ends as token_limit, a failure. None: no limit."""
    time_limit_s: float | None = None
    """Wall-clock seconds an episode may run (this process's attempt; a resumed episode's
    clock starts again); past it the episode ends as time_limit, a failure. None: no limit."""

    error_streak: int = 20
    """Stop starting episodes when this many finished episodes in a row ended in error (a
    broken setup: a wrong key, an endpoint that is down); 0: never stop."""

    def endpoint(self, name: str, reference_url: str | None = None) -> Endpoint:
        """The endpoint for a model name; scripted models live on the reference server;
        ``max_connections``, when set, is every endpoint's in-flight cap."""
        ep = self._endpoint(name, reference_url)
        cap = self.max_connections
        if cap is not None:
            ep = msgspec.structs.replace(ep, max_concurrency=cap,
                                         min_concurrency=min(ep.min_concurrency, cap))
        return ep

    def _endpoint(self, name: str, reference_url: str | None) -> Endpoint:
        for ep in self.endpoints:
            if ep.name == name:
                if ep.scripted and not ep.urls:  # limits/retries for a scripted model
                    if reference_url is None:
                        raise ConfigError(f"model {name!r} needs the reference server")
                    # the reference server on loopback stands in for a hosted API
                    return msgspec.structs.replace(ep, base_url=reference_url,
                                                   kind=ep.kind or "hosted")
                return ep
        if name.startswith(SCRIPTED_PREFIX):
            if reference_url is None:
                raise ConfigError(f"model {name!r} needs the reference server")
            return Endpoint(name=name, base_url=reference_url, max_concurrency=1 << 16,
                            max_retries=6, kind="hosted")
        known = ", ".join(ep.name for ep in self.endpoints) or "none configured"
        raise ConfigError(f"unknown model {name!r}: not a scripted/... model and not an "
                          f"endpoint in the config (endpoints: {known})")

    def judges(self) -> list[tuple[str, str]]:
        """(judge, method) pairs: the state check, then every LLM judge with every method."""
        return [(STATE_JUDGE, JudgeMethod.STATE)] + [(m, meth) for m in self.judge_models
                                       for meth in self.judge_methods]

    def validate(self) -> "SweepConfig":
        if self.trials < 1:
            raise ConfigError(f"trials must be >= 1, got {self.trials}")
        if self.max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be >= 1, got {self.max_concurrency}")
        if not self.models:
            raise ConfigError("no models to run")
        twice = sorted({m for m in self.models if self.models.count(m) > 1})
        if twice:
            raise ConfigError(f"model(s) {', '.join(map(repr, twice))} listed more than once: "
                              "their episodes would be the same; list each model once")
        if self.error_streak < 0:
            raise ConfigError(f"error_streak must be >= 0, got {self.error_streak}")
        if not self.benchmarks:
            raise ConfigError("no benchmarks to run")
        methods = {m.value for m in JudgeMethod} - {JudgeMethod.STATE}
        bad = [m for m in self.judge_methods if m not in methods]
        if bad:
            raise ConfigError(f"unknown judge method(s) {', '.join(bad)}; known: {', '.join(sorted(methods))}")
        if self.user_mode not in tuple(UserMode):
            raise ConfigError(f"user_mode must be default, neutral or solo, got {self.user_mode!r}")
        if self.order not in tuple(WorkOrder):
            raise ConfigError(f"order must be longest or file, got {self.order!r}")
        if self.lang not in ("en", "zh"):
            raise ConfigError(f"lang must be en or zh, got {self.lang!r}")
        for ep in self.endpoints:
            ep.validate()
        for where, cap in [("max_cost_usd", self.max_cost_usd),
                           *((f"endpoint {ep.name!r}: max_cost_usd", ep.max_cost_usd)
                             for ep in self.endpoints)]:
            if cap is not None and not cap >= 0:
                raise ConfigError(f"{where} must be >= 0, got {cap}")
        check_sweep_limits(self)
        return self


MAX_TRIALS = 1000
"""Trials per (model, task) at most: k beyond this is a typo, not a benchmark (the work list
of 10^9 trials would fill memory before the first episode)."""

MAX_IN_FLIGHT = 1 << 20
"""Episodes, judgings or requests in flight at most (a socket each: beyond it is a typo)."""
MAX_WAIT_S = 7 * 24 * 3600.0
"""Any timeout, wait or latency in seconds is at most a week (a longer one is a hang)."""
MAX_RETRIES = 100
MAX_REPLY_BYTES = 1 << 30
INT64 = (-(1 << 63), (1 << 63) - 1)
"""Every integer is stored in SQLite, whose integers are 64-bit."""
SAMPLING = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0)}
"""OpenAI's ranges for the sampling settings, as endpoint fields or in extra_body."""


def _in_range(where: str, value: float | None, low: float, high: float = math.inf, *,
              optional: bool = True) -> None:
    """ConfigError unless ``low <= value <= high`` (NaN fails; None passes when ``optional``)."""
    if value is None and optional:
        return
    if value is None or not value >= low:
        raise ConfigError(f"{where} must be >= {low:g}, got {value}")
    if not value <= high:
        raise ConfigError(f"{where} must be <= {high if isinstance(high, int) else f'{high:g}'}"
                          f", got {value}")


def check_numbers(where: str, value: Any) -> None:
    """ConfigError naming the first number at any depth of ``value`` (a Struct's fields, a
    dict's values, a list's items) that is not finite (NaN, inf) or not a 64-bit integer:
    every numeric setting, extra_body's included, those of fields added later too."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, float) and not math.isfinite(item):
            raise ConfigError(f"{where}{path} must be a finite number, got {item}")
        if isinstance(item, int) and not INT64[0] <= item <= INT64[1]:
            raise ConfigError(f"{where}{path} must be a 64-bit integer, got {item}")
        if isinstance(item, Struct):
            children = [(f.name, getattr(item, f.name)) for f in msgspec.structs.fields(item)]
        elif isinstance(item, dict):
            children = list(item.items())
        elif isinstance(item, (list, tuple)):
            children = [(f"[{i}]", v) for i, v in enumerate(item)]
        else:
            continue
        for key, child in reversed(children):
            sep = "" if str(key).startswith("[") or not path else "."
            stack.append((f"{path}{sep}{key}", child))


def check_sweep_limits(cfg: SweepConfig) -> None:
    """The sweep's counts and limits, every endpoint's limits, endpoint names and task ids:
    each a ConfigError naming the key (and the endpoint) instead of a traceback, a silent
    "no tasks" or a hang at run time."""
    if cfg.trials > MAX_TRIALS:
        raise ConfigError(f"trials must be <= {MAX_TRIALS}, got {cfg.trials}")
    for key in ("limit", "max_turns", "max_steps", "reference_rpm", "reference_tpm",
                "token_limit"):
        _in_range(key, getattr(cfg, key), 1)
    _in_range("max_concurrency", cfg.max_concurrency, 1, MAX_IN_FLIGHT)
    _in_range("max_connections", cfg.max_connections, 1, MAX_IN_FLIGHT)
    _in_range("time_limit_s", cfg.time_limit_s, 0, MAX_WAIT_S)
    if cfg.time_limit_s is not None and cfg.time_limit_s <= 0:
        raise ConfigError(f"time_limit_s must be > 0 seconds, got {cfg.time_limit_s}")
    _in_range("judge_concurrency", cfg.judge_concurrency, 1, MAX_IN_FLIGHT, optional=False)
    _in_range("max_tool_errors", cfg.max_tool_errors, 0, optional=False)
    _in_range("reference_latency_s", cfg.reference_latency_s, 0, MAX_WAIT_S, optional=False)
    _in_range("reference_cache_entries", cfg.reference_cache_entries, 0, optional=False)
    for key in ("seed", "reference_seed"):
        _in_range(key, getattr(cfg, key), 0, optional=False)
    for task_id in cfg.task_ids:
        if (not task_id.strip() or task_id != task_id.strip() or "/" in task_id
                or "\\" in task_id or task_id in (".", "..")):
            raise ConfigError(f"task id {task_id!r}: a task id is an id from `sweepbench "
                              "tasks`, not a path (no '/', '\\', '.' or '..') nor blank, "
                              "no spaces around it")
    seen: set[str] = set()
    for ep in cfg.endpoints:
        if ep.name in seen:
            raise ConfigError(f"endpoint {ep.name!r} is defined twice in endpoints")
        seen.add(ep.name)
        check_endpoint_limits(ep)
    check_numbers("", msgspec.structs.replace(cfg, endpoints=[]))
    for ep in cfg.endpoints:
        check_numbers(f"endpoint {ep.name!r}: ", ep)


def check_endpoint_limits(ep: Endpoint) -> None:
    """An endpoint's concurrency, rate, retry, breaker, sampling and price settings."""
    where = f"endpoint {ep.name!r}:"
    for key in ("max_concurrency", "min_concurrency"):
        _in_range(f"{where} {key}", getattr(ep, key), 1, MAX_IN_FLIGHT, optional=False)
    _in_range(f"{where} breaker_threshold", ep.breaker_threshold, 1, optional=False)
    _in_range(f"{where} load_factor", ep.load_factor, 1, optional=False)  # affinity's bound
    if ep.min_concurrency > ep.max_concurrency:
        raise ConfigError(f"{where} min_concurrency ({ep.min_concurrency}) must be <= "
                          f"max_concurrency ({ep.max_concurrency})")
    for key in ("rpm", "tpm"):
        _in_range(f"{where} {key}", getattr(ep, key), 1)
    _in_range(f"{where} max_retries", ep.max_retries, 0, MAX_RETRIES, optional=False)
    for key in ("price_input_per_mtok", "price_cached_input_per_mtok", "price_output_per_mtok"):
        _in_range(f"{where} {key}", getattr(ep, key), 0, optional=False)
    _in_range(f"{where} max_tokens", ep.max_tokens, 0, MAX_TOKEN_COUNT)
    _in_range(f"{where} max_reply_bytes", ep.max_reply_bytes, 1, MAX_REPLY_BYTES)
    for key in ("timeout_s", "connect_timeout_s", "ttfb_floor_s", "ttfb_ceiling_s",
                "hedge_min_s", "breaker_max_wait_s"):
        _in_range(f"{where} {key}", getattr(ep, key), 0, MAX_WAIT_S)
    if not 0 < ep.breaker_cooldown_s <= MAX_WAIT_S:
        raise ConfigError(f"{where} breaker_cooldown_s must be > 0 and <= {MAX_WAIT_S:g}, "
                          f"got {ep.breaker_cooldown_s}")
    if not 0 < ep.rate_headroom <= 1:
        raise ConfigError(f"{where} rate_headroom must be in (0, 1], got {ep.rate_headroom}")
    for key, (low, high) in SAMPLING.items():
        _in_range(f"{where} {key}", getattr(ep, key, None), low, high)
        if isinstance(ep.extra_body.get(key), (int, float)):
            _in_range(f"{where} extra_body.{key}", ep.extra_body[key], low, high)


def load_config(path: str | Path | None, overrides: dict[str, Any] | None = None) -> SweepConfig:
    """A SweepConfig from a TOML file (optional) with CLI overrides applied on top."""
    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"config file {p} not found") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {p} is not valid TOML: {exc}") from None
    for key, value in (overrides or {}).items():
        if value is not None:
            data[key] = value
    try:
        return msgspec.convert(data, SweepConfig).validate()
    except msgspec.ValidationError as exc:
        where = f"config file {path}" if path else "options"
        raise ConfigError(f"{where}: {exc}") from None
