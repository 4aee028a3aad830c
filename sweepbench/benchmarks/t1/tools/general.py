"""The two general tools: save something under a cache key, and read a cache entry back.

Search and filter results are cached by the tools themselves (``<tool>_results_<n>``); the
agent can also save its own notes. The agent's prompt carries a summary of every key, so it
can reuse earlier results instead of searching again.
"""

from __future__ import annotations

from typing import Any

from sweepbench.benchmarks.t1.tools.docs import documented
from sweepbench.benchmarks.t1.tools.state import Cached, Episode
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

DOCS = {
    "cache_key": "The key to read or write, as listed in the cache summary.",
    "value": "What to keep (any JSON value).",
    "summary": 'A short description of what is kept, shown in the cache summary (e.g. "3 hotels picked").',
}


@tool("general")
@documented(DOCS)
def save_to_cache(db: Episode, cache_key: str, value: Any, summary: str = "") -> dict:
    """Save a value under a key of your choice, to read back later with get_results_from_cache."""
    key = str(cache_key).strip()
    if not key:
        raise ToolError("`cache_key` must not be empty")
    if key in db.cache and db.cache[key].rows is not None:
        raise ToolError(f"{key!r} holds tool results and cannot be overwritten; choose another key")
    db.cache[key] = Cached(summary=str(summary).strip() or f"saved value ({type(value).__name__})", value=value)
    return {"cache_key": key, "saved": True}


@tool("general")
@documented(DOCS)
def get_results_from_cache(db: Episode, cache_key: str, offset: int = 0) -> dict:
    """Read a cache entry: a page of cached search or filter results, or a saved value."""
    entry = db.cache.get(str(cache_key).strip())
    if entry is None:
        known = ", ".join(sorted(db.cache)) or "the cache is empty"
        raise ToolError(f"no cache entry {cache_key!r}; keys: {known}")
    if entry.rows is None:
        return {"cache_key": cache_key, "summary": entry.summary, "value": entry.value}
    if offset < 0 or (offset and offset >= len(entry.rows)):
        raise ToolError(f"`offset` must be between 0 and {max(len(entry.rows) - 1, 0)}")
    return {"summary": entry.summary, **db.page(cache_key, entry.rows, entry.render, offset)}
