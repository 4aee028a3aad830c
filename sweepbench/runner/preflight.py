"""Checks before a sweep starts: a broken setup fails in seconds, naming what to fix, instead of
running every episode into the same error.

:func:`preflight`: every endpoint the sweep calls (scripted models aside) has its key variable
set, an http(s) base URL and, unless told not to, answers one real, minimal chat request (a
few tokens) without rejecting the key or failing it: a server that fails every request (5xx)
is a setup error in seconds, not a sweep held on its circuit breaker for
``breaker_max_wait_s``. For a model with several replicas or keys, every key variable is set,
each replica and each key is sent the request (:func:`probe_ways`: N replicas and M keys
cost max(N, M) requests, not N x M) and the model passes while at least one way answers.
:func:`fit_concurrency`: episodes in flight
fit the process's open-file limit (each holds sockets), instead of failing with EMFILE as model
errors.
"""

from __future__ import annotations

import asyncio
import os
import resource
from typing import Callable
from urllib.parse import urlsplit

import aiohttp

from sweepbench.client.body import BodyTemplate
from sweepbench.client.secrets import KEYS
from sweepbench.config import SCRIPTED_PREFIX, Endpoint, SweepConfig
from sweepbench.errors import ConfigError, PreflightError
from sweepbench.wire import ChatRequest, UserMessage

__all__ = ["MIN_CONCURRENCY", "fit_concurrency", "preflight", "probe_ways"]

PROBE_TIMEOUT_S = 30.0
"""Longest the one preflight request per endpoint may take."""
PROBE_BUDGET = 16
"""Completion tokens the preflight request asks for at most: it checks the endpoint answers,
not what."""
PROBE_MESSAGE = "Reply with the word OK."


def _checked_endpoints(cfg: SweepConfig, names: set[str]) -> list[Endpoint]:
    return [cfg.endpoint(n) for n in sorted(names) if not n.startswith(SCRIPTED_PREFIX)]


def static_problems(ep: Endpoint) -> list[str]:
    """What is wrong with an endpoint before any request: its URL and its key variable."""
    problems = []
    url = urlsplit(ep.base_url)
    if url.scheme not in ("http", "https") or not url.netloc:
        problems.append(f"endpoint {ep.name!r}: base_url {ep.base_url!r} is not an http(s) URL; "
                        "set it to the server's OpenAI-compatible root, e.g. "
                        "https://api.openai.com/v1")
    if ep.api_key_env and not os.environ.get(ep.api_key_env):
        problems.append(f"endpoint {ep.name!r}: environment variable {ep.api_key_env} (its "
                        f"key) is not set; export it (a config endpoint may name another "
                        "variable in api_key_env)")
    return problems


def probe_body(ep: Endpoint) -> bytes:
    """The preflight request: one short user message, as the endpoint sends every request
    (its model name, extra_body, budget field), asking for at most :data:`PROBE_BUDGET`
    tokens."""
    request = ChatRequest(model=ep.model_name, messages=[UserMessage(PROBE_MESSAGE)],
                          max_tokens=PROBE_BUDGET)
    return BodyTemplate.for_endpoint(ep).plain(request)


async def _server_text(resp: aiohttp.ClientResponse) -> str:
    try:
        raw = await resp.content.read(2048)
    except (aiohttp.ClientError, OSError, asyncio.TimeoutError):
        return ""
    text = " ".join(KEYS.scrub(raw.decode("utf-8", "replace")).split())
    return f": {text[:160]}" if text else ""


async def probe(session: aiohttp.ClientSession, ep: Endpoint) -> str | None:
    """One real, minimal chat request (``POST {base_url}/chat/completions``): None when the
    endpoint answers it, a problem when it cannot be reached, rejects the key, does not know
    the model or URL (404), or fails it (5xx or 408: a server that fails the first request
    of a sweep would hold every episode on its circuit breaker)."""
    url = ep.base_url.rstrip("/") + "/chat/completions"
    headers = {"Content-Type": "application/json"}
    if ep.api_key_env:
        KEYS.register(ep.api_key_env)  # scrubbed from the server's text we quote
        headers["Authorization"] = f"Bearer {os.environ[ep.api_key_env]}"
    timeout = aiohttp.ClientTimeout(total=PROBE_TIMEOUT_S,
                                    connect=min(ep.connect_timeout_s, PROBE_TIMEOUT_S))
    try:
        async with session.post(url, data=probe_body(ep), headers=headers, timeout=timeout,
                                allow_redirects=False) as resp:
            status = resp.status
            text = await _server_text(resp) if status >= 400 else ""
    except asyncio.TimeoutError:
        return (f"endpoint {ep.name!r}: no answer to a chat request from {url} within "
                f"{PROBE_TIMEOUT_S:.0f}s; is the server up and the base_url right?")
    except (aiohttp.ClientError, OSError) as exc:
        why = type(exc).__name__ if not str(exc) else str(exc)
        return (f"endpoint {ep.name!r}: cannot reach {url} ({why}); is the server running "
                "and the base_url right?")
    if status in (401, 403):
        key = f"the key in {ep.api_key_env}" if ep.api_key_env else "requests without a key"
        return (f"endpoint {ep.name!r}: {url} rejected {key} (HTTP {status}); check the key "
                "(and api_key_env)")
    if status == 404:
        return (f"endpoint {ep.name!r}: {url} answered a chat request for model "
                f"{ep.model_name!r} with HTTP 404{text}; check base_url and model")
    if status >= 500 or status == 408:
        return (f"endpoint {ep.name!r}: {url} failed a chat request (HTTP {status}{text}); "
                "the server is not answering requests, fix it or wait until it does")
    return None


def probe_ways(ep: Endpoint) -> list[Endpoint]:
    """The ways in preflight sends its request on: each of the N replicas and each of the M
    keys at least once, paired along the diagonal (replica ``i mod N`` with key ``i mod M``),
    max(N, M) requests. What the request checks of a replica (up, serving the model, not
    failing) does not depend on the key, nor what it checks of a key (accepted) on the
    replica, so the rest of the N x M pairs would only multiply the requests: 32 replicas
    and 8 keys are 32 requests, not 256."""
    ways = ep.ways()  # replica-major: way r * M + k is (replica r, key k)
    n, m = len(ep.urls or [""]), len(ep.key_envs)
    return [ways[(i % n) * m + i % m] for i in range(max(n, m))]


def _none_answered(ep: Endpoint, sent: int) -> str:
    """What a model with several ways in had probed when none of them answered."""
    n, m = len(ep.urls or [""]), len(ep.key_envs)
    what = " and ".join(f"{k} {word}{'s' if k > 1 else ''}"
                        for k, word in ((n, "replica"), (m, "key")) if k > 1)
    pairs = f", not all {n * m} pairs" if n > 1 and m > 1 else ""
    return (f"endpoint {ep.name!r}: none of its ways in answered ({sent} requests: each of "
            f"its {what} once{pairs})")


async def preflight(cfg: SweepConfig, names: set[str], *, request: bool = True) -> None:
    """Raise :class:`PreflightError` naming every endpoint of ``names`` that cannot work.

    ``request``: also send each network endpoint one minimal chat request per replica and
    per key (:func:`probe_ways`; all at once; scripted models send none; ``--no-preflight``
    turns it off)."""
    endpoints = _checked_endpoints(cfg, names)
    problems = list(dict.fromkeys(  # a key variable unset is said once, not per replica
        p for ep in endpoints for way in ep.ways() for p in static_problems(way)))
    if not problems and request and endpoints:
        sent = [probe_ways(ep) for ep in endpoints]
        async with aiohttp.ClientSession() as session:
            found = iter(await asyncio.gather(*(probe(session, w) for one in sent
                                                  for w in one)))
        # a model with several ways in can run while one of them answers
        for ep, got in ((ep, [next(found) for _ in one]) for ep, one in zip(endpoints, sent)):
            if all(got):
                problems += ([_none_answered(ep, len(got))] if len(got) > 1 else []) + got
    if problems:
        hint = "" if not request else " (--no-preflight skips the request)"
        raise PreflightError(f"preflight failed{hint}: " + "; ".join(problems))


# ---- open files ---------------------------------------------------------------------------

MIN_CONCURRENCY = 4
"""Fewer episodes in flight than this: refuse rather than crawl."""

RESERVE_FDS = 64
"""Descriptors kept for everything but sockets: the store and its WAL, the lock, the loop."""


def _open_fds() -> int:
    for where in ("/proc/self/fd", "/dev/fd"):
        try:
            return len(os.listdir(where))
        except OSError:
            continue
    return 32


def fit_concurrency(cfg: SweepConfig, names: set[str], todo: int, *,
                    warn: Callable[[str], None]) -> int:
    """Episodes in flight that fit the open-file limit (RLIMIT_NOFILE): the config's, or
    fewer with a warning; :class:`ConfigError` when not even :data:`MIN_CONCURRENCY` fit.

    An episode holds a socket per model client it has used (its agent's and the user's pools
    keep them); on the built-in reference server each socket has a server end too. The soft
    limit is first raised towards the hard one where that is allowed.
    """
    wanted = max(1, min(cfg.max_concurrency, todo))
    local = any(n.startswith(SCRIPTED_PREFIX) for n in names)  # in-process server: 2 ends
    per_socket = 2 if local else 1
    per_episode = (len(set(cfg.models)) + 1) * per_socket
    judges = cfg.judge_concurrency * len(cfg.judge_models) * per_socket
    fixed = _open_fds() + RESERVE_FDS + judges
    need = fixed + wanted * per_episode
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and need > soft and (hard == resource.RLIM_INFINITY
                                                           or hard > soft):
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY or need <= soft:
        return wanted
    fit = (soft - fixed) // per_episode
    advice = f"raise it (e.g. `ulimit -n {need}`)"
    if fit < MIN_CONCURRENCY:
        raise ConfigError(f"the open-file limit (ulimit -n) is {soft}: too low for even "
                          f"{MIN_CONCURRENCY} episodes in flight (about {per_episode} file "
                          f"descriptors each, {fixed} for the rest); {advice}")
    warn(f"warning: {wanted} episodes in flight need about {need} file descriptors but the "
         f"open-file limit (ulimit -n) is {soft}: running {fit} in flight instead; {advice} "
         "to run more")
    return fit
