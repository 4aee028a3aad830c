"""The keyword searches of the delivery and in-store tools: rank every record's text against
the keywords, show the best ones.

Both releases join the keywords into one query and rank with ``fuzzy.rerank``; they differ
by how many they show (``Release.search_top_k``), whether equal texts stay apart
(``Release.dedupe_search``), and, in the updated release (``Release.named_answers``), by
checks of the keywords first, an answer when there is nothing to rank (``No stores
available``), and by leaving out a ranked record its own lookup cannot find (a store filed
under a key other than its id: the November release fails the call on it), answering ``No
stores found matching the keywords`` when that leaves none. Its ``Error searching stores:
...`` cannot happen: the checked keywords join without fail and nothing else is caught there.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from sweepbench.benchmarks.vitabench.tools.calling import require
from sweepbench.benchmarks.vitabench.tools.fuzzy import rerank
from sweepbench.benchmarks.vitabench.tools.state import ToolState


def keyword_search(self: ToolState, keywords: Any, docs: Mapping[Hashable, str], *,
                   domain: str, what: str, show: Callable[[Any], str]) -> str:
    """The records of ``docs`` ({key: text}) best matching ``keywords``, one ``show(key)`` a
    line; ``what``: the records' plural name in answers."""
    rules = self.rules
    if rules.named_answers:
        require(keywords, "Keywords cannot be empty")
        require(isinstance(keywords, list), "Keywords must be a list")
        require(all(isinstance(kw, str) and kw.strip() for kw in keywords),
                "All keywords must be non-empty strings")
        if not docs:
            return f"No {what} available"
    ranked = rerank("".join(keywords), docs, dedupe=rules.dedupe_search)
    keys = [key for key, _, _ in ranked[:rules.search_top_k[domain]]]
    if not rules.named_answers:
        return "\n".join(show(key) for key in keys)
    shown = []
    for key in keys:
        try:
            shown.append(show(key))
        except ValueError:
            continue
    return "\n".join(shown) if shown else f"No {what} found matching the keywords"
