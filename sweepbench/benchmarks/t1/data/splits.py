"""The T1-Bench splits of the paper's Table 4, and how split names resolve to domains.

A split is named by its domains joined with ``+`` in Table 4's order ("hotel+vehicle_rental"),
or is one of the two applied-thinking splits ("8-domain", "11-domain"). Tiers group splits by
how many domains they combine: single, double, triple, quadruple, 8-domain, 11-domain.
``t1:<name>`` selects a split, a tier, a single domain, or (order-insensitively) the split of
a comma-separated domain list; ``t1`` or ``t1:all`` selects all 525 templates.
"""

from __future__ import annotations

from dataclasses import dataclass

from sweepbench.benchmarks.t1.data.ontology import DOMAINS

EIGHT = ("flight", "hotel", "vehicle_rental", "attraction", "food_and_dining", "cafe", "bar", "live_show")


@dataclass(frozen=True)
class Split:
    name: str
    tier: str
    domains: tuple[str, ...]
    templates: int

    @property
    def max_turns(self) -> int:
        return 50 if self.tier in ("8-domain", "11-domain") else 25


def _combo(tier: str, *domains: str) -> Split:
    return Split("+".join(domains), tier, domains, 20)


SPLITS: tuple[Split, ...] = (
    *(Split(d, "single", (d,), 25) for d in DOMAINS),
    _combo("double", "attraction", "cafe"),
    _combo("double", "attraction", "dessert"),
    _combo("double", "food_and_dining", "hotel"),
    _combo("double", "hotel", "vehicle_rental"),
    _combo("double", "live_show", "food_and_dining"),
    _combo("double", "vehicle_rental", "attraction"),
    _combo("triple", "attraction", "food_and_dining", "cafe"),
    _combo("triple", "flight", "hotel", "bar"),
    _combo("triple", "vehicle_rental", "food_and_dining", "hotel"),
    _combo("triple", "vehicle_rental", "hotel", "attraction"),
    _combo("quadruple", "flight", "hotel", "vehicle_rental", "attraction"),
    _combo("quadruple", "vehicle_rental", "hotel", "food_and_dining", "bar"),
    Split("8-domain", "8-domain", EIGHT, 5),
    Split("11-domain", "11-domain", DOMAINS, 5),
)
TIERS = ("single", "double", "triple", "quadruple", "8-domain", "11-domain")
BY_NAME = {s.name: s for s in SPLITS}


def resolve(selector: str) -> tuple[Split, ...]:
    """The splits a selector names; ValueError with the valid names when it names none."""
    text = selector.strip().lower()
    if text in ("", "all"):
        return SPLITS
    if text in BY_NAME:
        return (BY_NAME[text],)
    if text in TIERS:
        return tuple(s for s in SPLITS if s.tier == text)
    wanted = frozenset(p.strip() for p in text.replace("+", ",").split(",") if p.strip())
    for s in SPLITS:
        if frozenset(s.domains) == wanted:
            return (s,)
    raise ValueError(f"unknown T1 split {selector!r}; use all, a tier ({', '.join(TIERS)}) "
                     f"or a split: {', '.join(BY_NAME)}")


def domains_of(selector: str) -> tuple[str, ...]:
    """Every domain the selector's splits use, in the canonical domain order."""
    used = {d for s in resolve(selector) for d in s.domains}
    return tuple(d for d in DOMAINS if d in used)
