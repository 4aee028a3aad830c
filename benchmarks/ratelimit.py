"""Rate limits: how close the client runs to an enforced RPM/TPM limit, and how many 429s.

The reference server enforces ``rpm_limit`` and ``tpm_limit`` (sliding one-minute window,
429 with Retry-After beyond them) with a random model latency. Many concurrent episodes
(append-only conversations sent through ``ModelClient.conversation()``) push as hard as they
can for a fixed time. Measured, per configuration:

- ``configured``: the endpoint's limits are known (``EndpointLimits(rpm=, tpm=)``): the RPM
  and TPM buckets pace the client; adaptive concurrency, Retry-After pauses on top.
- ``adaptive`` (opt-in, ``--modes configured adaptive``): limits unknown to the client:
  only AIMD concurrency and Retry-After pauses. The server's window is a sliding minute that
  starts empty, so this mode measures only after a 65 s warm-up (a client that knows nothing
  gets the whole first minute's budget at once, which says nothing about steady state).

``ratio_to_limit`` is the achieved rate of the binding limit (answered requests per minute
over RPM, or answered tokens per minute over TPM, whichever is higher) and ``share_429`` the
share of HTTP requests answered 429 (over the whole run, warm-up included); rates are
measured after ``--warmup`` seconds (the buckets' one-second initial burst would otherwise
inflate short runs); medians over ``--repeats`` runs. Headline numbers are
the ``configured`` ones (target: ratio >= 0.9 with share_429 <= 0.05). Prints one JSON object
last. ``--quick``: shorter runs (under a minute in all).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time

from sweepbench.config import Endpoint
from sweepbench.errors import ModelError
from sweepbench.client.facade import ModelClient
from sweepbench.client.results import CallResult
from sweepbench.client.limits import EndpointLimits
from sweepbench.devserver.server import ReferenceServer
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    SystemMessage,
    ToolSpec,
    UserMessage,
)

MODEL = "bench/echo"
SYSTEM = "You are a helpful travel agent. " * 40  # a realistic, cacheable prefix
TOOLS = [ToolSpec(function={"name": f"tool_{i}", "description": "Looks things up. " * 8,
                            "parameters": {"type": "object", "properties": {
                                "q": {"type": "string"}}}}) for i in range(8)]


def policy(req: ChatRequest) -> AssistantMessage:
    n = len(req.messages)
    return AssistantMessage(f"Answer {n}: " + "details " * (5 + n % 20))


async def episode_worker(client: ModelClient, stop_at: float, rng: random.Random,
                         stats: dict[str, float]) -> None:
    while time.perf_counter() < stop_at:
        convo = client.conversation()
        messages: list = [SystemMessage(SYSTEM)]
        for turn in range(rng.randrange(4, 16)):
            if time.perf_counter() >= stop_at:
                return
            messages.append(UserMessage(f"turn {turn}: " + "please help " * rng.randrange(2, 30)))
            try:
                result: CallResult = await convo(ChatRequest(model="", messages=messages[:],
                                                             tools=TOOLS))
            except ModelError:
                stats["failed"] += 1
                break
            now = time.perf_counter()
            if now > stop_at:
                return  # finished after the deadline: outside the measured window
            if now >= stats["measure_from"]:
                stats["answered"] += 1
                stats["tokens"] += result.usage.prompt_tokens + result.usage.completion_tokens
            stats["cached"] += result.usage.cached_prompt_tokens
            stats["prompt"] += result.usage.prompt_tokens
            messages.append(result.message)


async def run_once(mode: str, *, rpm: int, tpm: int, duration_s: float, warmup_s: float,
                   workers: int, seed: int) -> dict[str, float]:
    server = ReferenceServer(lambda name: policy if name == MODEL else None, models=[MODEL],
                             rpm_limit=rpm, tpm_limit=tpm, latency="uniform:0.05,0.25",
                             seed=seed)
    async with server:
        ep = Endpoint(name="bench", model=MODEL, base_url=server.url, max_concurrency=workers,
                      max_retries=50, timeout_s=30.0)
        limits = (EndpointLimits(max_concurrency=workers, rpm=rpm, tpm=tpm) if mode ==
                  "configured" else EndpointLimits(max_concurrency=workers))
        stats = {"answered": 0.0, "tokens": 0.0, "failed": 0.0, "cached": 0.0, "prompt": 0.0,
                 "measure_from": 0.0}
        async with ModelClient(ep, limits=limits, backoff_base_s=0.05,
                               backoff_max_s=2.0) as client:
            t0 = time.perf_counter()
            stats["measure_from"] = t0 + warmup_s
            stop_at = t0 + warmup_s + duration_s
            rng = random.Random(seed)
            tasks = [asyncio.create_task(episode_worker(client, stop_at, random.Random(
                rng.random()), stats)) for _ in range(workers)]
            await asyncio.sleep(warmup_s + duration_s)
            elapsed = time.perf_counter() - stats["measure_from"]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        s = server.stats()
    requests = sum(s["requests"].values())
    limited = sum(s["limited"].values())
    per_min = 60.0 / elapsed
    rpm_ratio = stats["answered"] * per_min / rpm
    tpm_ratio = stats["tokens"] * per_min / tpm
    return {
        "ratio_to_limit": max(rpm_ratio, tpm_ratio),
        "rpm_ratio": rpm_ratio,
        "tpm_ratio": tpm_ratio,
        "share_429": limited / requests if requests else 0.0,
        "requests": requests,
        "answered": stats["answered"],
        "failed": stats["failed"],
        "cached_share": stats["cached"] / stats["prompt"] if stats["prompt"] else 0.0,
        "final_concurrency": limits.concurrency.limit,
        "pauses": limits.pauses,
    }


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.median(r[k] for r in runs), 4) for k in runs[0]}


async def main_async(args: argparse.Namespace) -> dict:
    out: dict = {}
    for mode in args.modes:
        runs = []
        for i in range(args.repeats):
            warmup = args.warmup if mode == "configured" else max(args.warmup, 65.0)
            r = await run_once(mode, rpm=args.rpm, tpm=args.tpm, duration_s=args.duration,
                               warmup_s=warmup, workers=args.workers, seed=i)
            print(mode, i, json.dumps({k: round(v, 4) for k, v in r.items()}), flush=True)
            runs.append(r)
        out[mode] = median_of(runs)
    head = out.get("configured") or next(iter(out.values()))
    return {
        "ratio_to_limit": head["ratio_to_limit"],
        "share_429": head["share_429"],
        "target": {"ratio_to_limit": ">= 0.9", "share_429": "<= 0.05"},
        "rpm_limit": args.rpm, "tpm_limit": args.tpm, "duration_s": args.duration,
        "warmup_s": args.warmup,
        "repeats": args.repeats, "workers": args.workers,
        **{mode: v for mode, v in out.items()},
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="short runs, under a minute in all")
    p.add_argument("--rpm", type=int, default=1800)
    p.add_argument("--tpm", type=int, default=900_000)
    p.add_argument("--duration", type=float, default=None, help="seconds per run")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--workers", type=int, default=64, help="concurrent episodes")
    p.add_argument("--warmup", type=float, default=2.0,
                   help="seconds before measuring (the buckets' initial burst)")
    p.add_argument("--modes", nargs="+", default=["configured"],
                   choices=["configured", "adaptive"],
                   help="adaptive runs need the server's one-minute window full: +65 s each")
    args = p.parse_args()
    if args.duration is None:
        args.duration = 10.0 if args.quick else 45.0
    try:
        import uvloop

        runner = asyncio.Runner(loop_factory=uvloop.new_event_loop)
    except ImportError:  # pragma: no cover
        runner = asyncio.Runner()
    with runner:
        result = runner.run(main_async(args))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
