"""VitaBench's two upstream releases, as data: what differs between them, in one place.

Upstream published the benchmark twice. The November 2025 release (commit 96f3b85) and the
updated one (commits 5ec7ee4 ... 742e240, December 2025 code, released January 2026, the one
behind the leaderboard and every number published since) differ in task files, tool names,
tool answers and checks, search sizes and episode rules. A user names the release they mean
(``vitabench`` is the current one, ``vitabench@2025-11`` the first); everything that differs
reads it from a :class:`Release`, so the code of both stays one code and a difference is a
field here, never a copy of a module.
"""

from __future__ import annotations

from msgspec import Struct

from sweepbench.errors import ConfigError

__all__ = ["CURRENT", "RELEASES", "Release", "release", "releases_naming"]


class Release(Struct, frozen=True, kw_only=True):
    """One upstream release of VitaBench and the rules it differs by."""

    name: str
    """How users name it: ``2025-11`` or ``2025-12`` (after its code's month)."""
    commit: str
    """The upstream commit its behaviour is read from."""
    summary: str
    """One line for reports and ``--help``."""
    tool_renames: dict[str, str]
    """Tool name in the November release -> its name in this one (identity when absent)."""
    search_top_k: dict[str, int]
    """Domain -> how many results a keyword search returns at most."""
    dedupe_search: bool
    """Search ranking keeps candidates with equal texts apart (upstream's rerank appends
    ``-`` to repeats) instead of collapsing them."""
    named_answers: bool
    """Not-found, status and failure answers name the record and its state (``Order X status:
    paid``, ``Error: Store S not found``), returned as ordinary answers, with the updated
    release's input checks; else the November texts."""
    writes_update_time: bool
    """Paying, cancelling and modifying a delivery order set its ``update_time``."""
    cancelled_is_final: bool
    """A cancelled delivery order's note cannot be changed any more (``Cannot modify order X
    as it is already cancelled``); else modifying it changes the note as for any order."""
    tool_errors_count: bool
    """A tool message flagged as an error counts toward the episode's error limit (ending it
    as ``too_many_errors`` after ``max_errors``, scored 0 without judging)."""
    resend_reasoning: bool
    """An assistant message's reasoning text is sent back on that message (as
    ``reasoning_content``) in every later agent request."""


RELEASES: dict[str, Release] = {
    "2025-11": Release(
        name="2025-11", commit="96f3b85",
        summary="the November 2025 release (upstream 96f3b85)",
        tool_renames={},
        search_top_k={"delivery": 100, "instore": 1000, "ota": 100},
        dedupe_search=False, named_answers=False, writes_update_time=False,
        cancelled_is_final=False, tool_errors_count=False, resend_reasoning=False),
    "2025-12": Release(
        name="2025-12", commit="742e240",
        summary="the updated release (upstream 742e240, Dec 2025 code, released Jan 2026)",
        tool_renames={"delivery_store_search_recommand": "delivery_store_search_recommend",
                      "delivery_product_search_recommand": "delivery_product_search_recommend",
                      "hotel_search_recommand": "hotel_search_recommend"},
        search_top_k={"delivery": 50, "instore": 50, "ota": 50},
        dedupe_search=True, named_answers=True, writes_update_time=True,
        cancelled_is_final=True, tool_errors_count=True, resend_reasoning=True),
}
CURRENT = "2025-12"
"""What a bare ``vitabench`` means."""


def release(name: str | None) -> Release:
    """The release called ``name`` (None: the current one); a ConfigError naming the known
    ones otherwise."""
    key = CURRENT if name is None else name
    found = RELEASES.get(key)
    if found is None:
        raise ConfigError(f"unknown VitaBench release {name!r}; known: "
                          f"{', '.join(RELEASES)} ({CURRENT} is the current one)")
    return found


def _spellings() -> set[str]:
    return {n for rules in RELEASES.values() for pair in rules.tool_renames.items() for n in pair}


def releases_naming(names: set[str]) -> list[str]:
    """The releases whose tool names ``names`` (tools called, or described) can be: a renamed
    tool's spelling of another release rules a release out; names with none of the renamed
    tools fit every release."""
    renamed = {old for rules in RELEASES.values() for old in rules.tool_renames}
    return [rules.name for rules in RELEASES.values()
            if not names & (_spellings() - {rules.tool_renames.get(o, o) for o in renamed})]
