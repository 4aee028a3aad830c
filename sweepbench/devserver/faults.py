"""Faults, latency and limits of the reference server: specs, and their seeded decisions.

The reference server uses these to behave like a busy provider, reproducibly:

``FaultSpec``      ``"429=0.1,500=0.05,timeout=0.02,reset=0.01,garbage=0.01"``: per request,
                   which fault (if any) to inject.
``LatencySpec``    ``"fixed:0.2"``, ``"uniform:0.1,0.3"``, ``"lognormal:median=0.2,sigma=0.5"``.
``parse_outage``   ``"START,DURATION"`` (seconds after the server starts) for the CLI.
``RateLimiter``    requests and tokens per minute over a sliding one-minute window.
``PrefixCache``    a provider prompt cache: the longest previously seen message prefix.
``AttemptLedger``  how many times each distinct request body has been seen.

What makes a run reproducible *and* lets a retry succeed: every random decision for a request
is drawn from ``request_rng(seed, body_digest, attempt)``, where ``attempt`` is how many times
that exact body has reached the decision before (``AttemptLedger``). A retry sends the same
body, so it gets the next, independent draw, and the sequence of draws for one call is a pure
function of (seed, body): the same calls fail the same number of times in every run, whatever
the concurrency or timing. Bodies differ between episodes (the request carries the episode's
identity and its whole conversation), so episodes get independent draws.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "FAULT_KINDS",
    "AttemptLedger",
    "FaultSpec",
    "LatencySpec",
    "LimitDecision",
    "PrefixCache",
    "RateLimiter",
    "body_digest",
    "parse_outage",
    "request_rng",
]

FAULT_KINDS: tuple[str, ...] = ("429", "500", "502", "503", "timeout", "hang", "reset",
                                "garbage", "overflow", "length")
"""``429``/``5xx``: that status with an OpenAI-style error body (429 with Retry-After);
``timeout``: hang without answering (bounded) so the client's timeout fires; ``hang``: never
send a byte (a hung request: held until the client gives up or the server stops); ``reset``: abort
the connection without a response; ``garbage``: a 200 whose body is not JSON or is cut off;
``overflow``: a 400 saying the prompt exceeds the model's context (OpenAI's words and code);
``length``: the policy's answer with ``finish_reason: "length"`` (cut at max_tokens)."""


def body_digest(raw: bytes) -> bytes:
    return hashlib.blake2b(raw, digest_size=16).digest()


def request_rng(seed: int, digest: bytes, attempt: int) -> random.Random:
    """The RNG of one request's decisions: a pure function of (seed, body, attempt)."""
    return random.Random(f"{seed}|{digest.hex()}|{attempt}")


def _number(item: str, text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{what}: {item!r}: {text.strip()!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{what}: {item!r}: {text.strip()!r} is not a finite number")
    return value


# ---- faults ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FaultSpec:
    """Fault kinds with their per-request probabilities (summing to at most 1)."""

    rates: tuple[tuple[str, float], ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> FaultSpec:
        """``"429=0.1,500=0.05,timeout=0.02"``; empty or None: no faults."""
        what = "fault spec"
        rates: dict[str, float] = {}
        for item in (text or "").split(","):
            item = item.strip()
            if not item:
                continue
            kind, sep, value = item.partition("=")
            kind = kind.strip().lower()
            if not sep:
                raise ValueError(f"{what}: {item!r}: expected KIND=PROBABILITY")
            if kind not in FAULT_KINDS:
                raise ValueError(
                    f"{what}: {item!r}: unknown fault kind {kind!r} "
                    f"(known: {', '.join(FAULT_KINDS)})"
                )
            if kind in rates:
                raise ValueError(f"{what}: {item!r}: fault kind {kind!r} given twice")
            p = _number(item, value, what)
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{what}: {item!r}: probability must be in [0, 1]")
            rates[kind] = p
        total = sum(rates.values())
        if total > 1.0 + 1e-9:
            raise ValueError(f"{what}: {text!r}: probabilities sum to {total:g} > 1")
        return cls(tuple((k, p) for k, p in rates.items() if p > 0))

    def __bool__(self) -> bool:
        return bool(self.rates)

    @property
    def total(self) -> float:
        return sum(p for _, p in self.rates)

    def decide(self, u: float) -> str | None:
        """The fault for a uniform draw ``u`` in [0, 1): a kind, or None (answer normally)."""
        acc = 0.0
        for kind, p in self.rates:
            acc += p
            if u < acc:
                return kind
        return None

    def __str__(self) -> str:
        return ",".join(f"{k}={p:g}" for k, p in self.rates)


# ---- latency ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LatencySpec:
    """A latency distribution: ``fixed`` (a), ``uniform`` (a, b), ``lognormal`` (median, sigma,
    optional cap)."""

    kind: str = "fixed"
    a: float = 0.0
    b: float = 0.0
    cap: float | None = None

    _PARAMS: ClassVar[dict[str, tuple[str, ...]]] = {"fixed": ("s",), "uniform": ("low", "high"),
               "lognormal": ("median", "sigma", "max")}

    @classmethod
    def parse(cls, text: str | None) -> LatencySpec:
        """``"0.2"`` or ``"fixed:0.2"``; ``"uniform:0.1,0.3"``;
        ``"lognormal:median=0.2,sigma=0.5"`` (optionally ``,max=5``). Positional or named."""
        what = "latency spec"
        text = (text or "").strip()
        if not text:
            return cls()
        kind, sep, rest = text.partition(":")
        kind = kind.strip().lower()
        if not sep:
            kind, rest = "fixed", text
        if kind not in cls._PARAMS:
            raise ValueError(
                f"{what}: {text!r}: unknown distribution {kind!r} "
                f"(known: {', '.join(cls._PARAMS)}; e.g. fixed:0.2, uniform:0.1,0.3, "
                f"lognormal:median=0.2,sigma=0.5)"
            )
        names = cls._PARAMS[kind]
        values: dict[str, float] = {}
        for i, item in enumerate(p.strip() for p in rest.split(",")):
            if not item:
                raise ValueError(f"{what}: {text!r}: empty parameter")
            name, eq, value = item.partition("=")
            if eq:
                name = name.strip().lower()
                if name not in names:
                    raise ValueError(f"{what}: {item!r}: {kind} takes {', '.join(names)}")
            else:
                if i >= len(names):
                    raise ValueError(f"{what}: {item!r}: too many parameters for {kind}")
                name, value = names[i], item
            if name in values:
                raise ValueError(f"{what}: {item!r}: {name} given twice")
            v = _number(item, value, what)
            if v < 0:
                raise ValueError(f"{what}: {item!r}: {name} must be >= 0")
            values[name] = v
        required = [n for n in names if n != "max"]
        missing = [n for n in required if n not in values]
        if missing:
            raise ValueError(f"{what}: {text!r}: {kind} needs {', '.join(missing)}")
        if kind == "fixed":
            return cls("fixed", values["s"])
        if kind == "uniform":
            if values["low"] > values["high"]:
                raise ValueError(f"{what}: {text!r}: low must be <= high")
            return cls("uniform", values["low"], values["high"])
        if values["median"] <= 0:
            raise ValueError(f"{what}: {text!r}: median must be > 0")
        return cls("lognormal", values["median"], values["sigma"], values.get("max"))

    def __bool__(self) -> bool:
        return not (self.kind == "fixed" and self.a == 0.0)

    @property
    def upper(self) -> float | None:
        """The longest latency this spec can give (None: unbounded)."""
        if self.kind == "fixed":
            return self.a
        if self.kind == "uniform":
            return self.b
        return self.cap

    def sample(self, rng: random.Random) -> float:
        if self.kind == "fixed":
            return self.a
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b)
        value = self.a * math.exp(self.b * rng.gauss(0.0, 1.0))
        return value if self.cap is None else min(value, self.cap)

    def __str__(self) -> str:
        if self.kind == "fixed":
            return f"fixed:{self.a:g}"
        if self.kind == "uniform":
            return f"uniform:{self.a:g},{self.b:g}"
        cap = f",max={self.cap:g}" if self.cap is not None else ""
        return f"lognormal:median={self.a:g},sigma={self.b:g}{cap}"


# ---- outage ----------------------------------------------------------------------------------


def parse_outage(text: str) -> tuple[float, float]:
    """``"START,DURATION"`` in seconds after the server starts, e.g. ``"10,5"``."""
    what = "outage"
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2:
        raise ValueError(f"{what}: {text!r}: expected START,DURATION (seconds)")
    start, duration = (_number(text, p, what) for p in parts)
    return check_outage((start, duration))


def check_outage(outage: Sequence[float]) -> tuple[float, float]:
    if len(outage) != 2:
        raise ValueError(f"outage: {outage!r}: expected (start_s, duration_s)")
    start, duration = float(outage[0]), float(outage[1])
    if not (math.isfinite(start) and start >= 0):
        raise ValueError(f"outage: start must be >= 0 seconds, got {start}")
    if not (math.isfinite(duration) and duration > 0):
        raise ValueError(f"outage: duration must be > 0 seconds, got {duration}")
    return start, duration


# ---- rate limits -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LimitDecision:
    allowed: bool
    retry_after_s: float
    """Seconds until the request would fit (0 when allowed; inf when it never can)."""
    limited_by: str | None
    """"requests" or "tokens" when refused."""
    remaining_requests: int | None
    remaining_tokens: int | None


class RateLimiter:
    """Requests and tokens per minute over a sliding window (``window_s``, default 60).

    ``admit(now, tokens)`` records an admitted request with its prompt tokens and returns an
    entry; ``add_tokens(entry, n)`` adds the completion's tokens once known. A refused request
    is not recorded. Times are seconds on any monotonic clock the caller chooses.
    """

    def __init__(self, *, rpm: int | None = None, tpm: int | None = None,
                 window_s: float = 60.0) -> None:
        for name, v in (("rpm", rpm), ("tpm", tpm)):
            if v is not None and v < 1:
                raise ValueError(f"{name} limit must be >= 1, got {v}")
        self.rpm, self.tpm, self.window_s = rpm, tpm, window_s
        self._entries: deque[list[float]] = deque()  # oldest first
        self._tokens = 0

    def _expire(self, now: float) -> None:
        cutoff = now - self.window_s
        while self._entries and self._entries[0][0] <= cutoff:
            entry = self._entries.popleft()
            self._tokens -= int(entry[1])
            entry[2] = 0.0  # expired: late tokens no longer count

    def _remaining(self) -> tuple[int | None, int | None]:
        req = None if self.rpm is None else max(0, self.rpm - len(self._entries))
        tok = None if self.tpm is None else max(0, self.tpm - self._tokens)
        return req, tok

    def check(self, now: float, tokens: int) -> LimitDecision:
        """Would a request of ``tokens`` fit now? Does not record it."""
        self._expire(now)
        wait_req = wait_tok = 0.0
        if self.rpm is not None and len(self._entries) >= self.rpm:
            # The oldest entries must leave until one slot is free.
            oldest = self._entries[len(self._entries) - self.rpm]
            wait_req = oldest[0] + self.window_s - now
        if self.tpm is not None:
            if tokens > self.tpm:
                wait_tok = math.inf
            elif self._tokens + tokens > self.tpm:
                need, freed = self._tokens + tokens - self.tpm, 0
                for at, n, _ in self._entries:
                    freed += int(n)
                    if freed >= need:
                        wait_tok = at + self.window_s - now
                        break
        req, tok = self._remaining()
        if wait_req <= 0 and wait_tok <= 0:
            return LimitDecision(True, 0.0, None, req, tok)
        by = "tokens" if wait_tok >= wait_req else "requests"
        return LimitDecision(False, max(wait_req, wait_tok), by, req, tok)

    def admit(self, now: float, tokens: int) -> tuple[LimitDecision, list[float] | None]:
        decision = self.check(now, tokens)
        if not decision.allowed:
            return decision, None
        entry = [now, float(tokens), 1.0]  # admitted_at, tokens, still in the window
        self._entries.append(entry)
        self._tokens += tokens
        req, tok = self._remaining()
        return LimitDecision(True, 0.0, None, req, tok), entry

    def add_tokens(self, entry: list[float], tokens: int) -> None:
        if entry[2]:
            entry[1] += tokens
            self._tokens += tokens

    def remaining(self, now: float) -> tuple[int | None, int | None]:
        self._expire(now)
        return self._remaining()


# ---- prompt prefix cache --------------------------------------------------------------------


class PrefixCache:
    """A provider-style prompt cache: prefixes of recent prompts at message boundaries.

    A prompt is (model, tools, messages); its prefixes are the tools plus the first ``i``
    messages, identified by a running hash. ``lookup`` gives the byte length of the longest
    prefix seen before; ``remember`` stores every prefix of a processed prompt (LRU bounded
    to ``max_entries`` prefixes). Deterministic: the same sequence of prompts gives the same
    answers.
    """

    _HEADS = 64  # (model, tools) hash states kept: every request of a sweep shares a few

    def __init__(self, max_entries: int = 200_000) -> None:
        self.max_entries = max_entries
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self._heads: dict[tuple[str, bytes | None], tuple[Any, list[tuple[bytes, int]]]] = {}

    def _head(self, model: str, tools: bytes | None) -> tuple[Any, list[tuple[bytes, int]]]:
        """The running hash after (model, tools) and the tools-only prefix: the same for
        every request of a sweep to one model, so hashed once (tool lists run to tens of KB)."""
        head = self._heads.get((model, tools))
        if head is None:
            h = hashlib.blake2b(digest_size=16)
            h.update(model.encode() + b"\x00")
            out: list[tuple[bytes, int]] = []
            if tools:
                h.update(tools)
                out.append((h.copy().digest(), len(tools)))
            h.update(b"\x00")
            if len(self._heads) >= self._HEADS:
                self._heads.clear()
            head = self._heads[(model, tools)] = (h, out)
        return head

    def prefixes(self, model: str, tools: bytes | None, messages: Iterable[bytes]
                 ) -> list[tuple[bytes, int]]:
        """(key, byte length) of each prefix, shortest first; the tools-only prefix (when
        there are tools) and one per message. Lengths count the JSON list separators, so the
        full prefix is never longer than the encoded prompt."""
        head, first = self._head(model, tools)
        h = head.copy()
        out = list(first)
        size = len(tools) if tools else 0
        for raw in messages:
            h.update(len(raw).to_bytes(8, "little"))
            h.update(raw)
            size += len(raw) + 1  # the comma (or opening bracket) before each message
            out.append((h.copy().digest(), size))
        return out

    def lookup(self, prefixes: Sequence[tuple[bytes, int]]) -> int:
        for key, size in reversed(prefixes):
            if key in self._seen:
                return size
        return 0

    def remember(self, prefixes: Sequence[tuple[bytes, int]]) -> None:
        seen = self._seen
        for key, _ in prefixes:
            if key in seen:
                seen.move_to_end(key)
            else:
                seen[key] = None
        while len(seen) > self.max_entries:
            seen.popitem(last=False)

    def __len__(self) -> int:
        return len(self._seen)


# ---- attempts ---------------------------------------------------------------------------------


class AttemptLedger:
    """How many times each request body has been seen (LRU bounded): the attempt number."""

    def __init__(self, max_entries: int = 1 << 20) -> None:
        self.max_entries = max_entries
        self._counts: OrderedDict[tuple[bytes, str], int] = OrderedDict()

    def next(self, digest: bytes, stream: str = "") -> int:
        """1 for the first time ``digest`` is seen on ``stream``, then 2, 3, ..."""
        key = (digest, stream)
        n = self._counts.pop(key, 0) + 1
        self._counts[key] = n
        if len(self._counts) > self.max_entries:
            self._counts.popitem(last=False)
        return n
