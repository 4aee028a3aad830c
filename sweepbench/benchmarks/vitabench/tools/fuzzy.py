"""Upstream's fuzzy matching (``thefuzz`` over RapidFuzz), reproduced on RapidFuzz alone.

``rerank`` is how every search, the weather city and the address lookup rank texts: RapidFuzz's
partial ratio over lower-cased, punctuation-free texts, every candidate kept, best first by the
unrounded score (ties in candidate order), the score then rounded as thefuzz reports it. The
candidates are the documents' texts, mapped back to keys through a text -> key table, so in
the November release duplicate texts all map to the last key that has that text; the updated
release first makes repeated texts distinct by appending ``-`` (which the text processing then
drops again, so scores are unchanged) and every key keeps its place. The plain matches compare
raw text (case and punctuation count).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from rapidfuzz import fuzz, process, utils


def rerank(query: Any, docs: Mapping[Hashable, str], *,
           dedupe: bool) -> list[tuple[Any, str, int]]:
    """(key, text, score) for every document, best first; ``dedupe``: repeated texts are kept
    apart (``Release.dedupe_search``)."""
    if dedupe:
        docs = _distinct(docs)
    candidates = list(docs.values())
    key_of = {text: key for key, text in docs.items()}
    hits = process.extract(utils.default_process(query), candidates, scorer=fuzz.partial_ratio,
                           processor=utils.default_process, limit=None, score_cutoff=0)
    return [(key_of[text], text, int(round(score))) for text, score, _ in hits]


def _distinct(docs: Mapping[Hashable, str]) -> dict[Hashable, str]:
    """Each text made unique by appending ``-`` until it is new, in document order."""
    seen: set[str] = set()
    out = {}
    for key, text in docs.items():
        while text in seen:
            text += "-"
        seen.add(text)
        out[key] = text
    return out


def fuzzy_match(query: Any, text: Any) -> bool:
    """Upstream's lenient city filter (unprocessed partial ratio of at least 40)."""
    return int(round(fuzz.partial_ratio(query, text))) >= 40


def fuzzy_ratio_match(query: Any, text: Any) -> bool:
    """Upstream's sanity check of a geocoded address (unprocessed ratio of at least 20)."""
    return int(round(fuzz.ratio(query, text))) >= 20
