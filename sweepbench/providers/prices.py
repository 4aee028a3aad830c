"""The prices of well-known models: a small table shipped with sweepbench
(``prices.toml``: dollars per million tokens, each entry with its source and the date it was
read), which a user's prices file extends or replaces entry by entry.

A model the tables lack stays unpriced (its calls count as unpriced in reports, never $0):
a guess would make a budget or a comparison wrong without saying so.
"""

from __future__ import annotations

import math
import tomllib
from importlib import resources
from pathlib import Path

import msgspec
from msgspec import Struct

from sweepbench.errors import ConfigError

__all__ = ["ModelPrice", "load_prices", "shipped_prices"]


class ModelPrice(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One model's prices, US dollars per million tokens."""

    input: float
    output: float
    cached_input: float | None = None
    """Prompt tokens served from the provider's cache; None: priced as input (never less
    than what was paid)."""
    source: str = ""
    """Where the numbers come from (a URL)."""
    read: str = ""
    """When they were read (YYYY-MM-DD)."""

    @property
    def cached(self) -> float:
        return self.input if self.cached_input is None else self.cached_input


class _Table(Struct, forbid_unknown_fields=True):
    models: dict[str, ModelPrice] = {}


def _parse(text: str, where: str) -> dict[str, ModelPrice]:
    try:
        table = msgspec.convert(tomllib.loads(text), _Table)
    except (tomllib.TOMLDecodeError, msgspec.ValidationError) as exc:
        raise ConfigError(f"prices file {where}: {exc} (expected [models.\"provider/model\"] "
                          "tables with input, output and optionally cached_input)") from None
    for name, p in table.models.items():
        for key in ("input", "output", "cached_input"):
            value = getattr(p, key)
            if value is not None and not 0 <= value < math.inf:
                raise ConfigError(f"prices file {where}: {name}: {key} must be a number >= 0, "
                                  f"got {value}")
    return table.models


def shipped_prices() -> dict[str, ModelPrice]:
    """The table shipped with sweepbench."""
    text = resources.files("sweepbench.providers").joinpath("prices.toml").read_text("utf-8")
    return _parse(text, "prices.toml (shipped)")


def load_prices(path: str | Path | None = None) -> dict[str, ModelPrice]:
    """The shipped table with the entries of the prices file at ``path`` over it."""
    table = shipped_prices()
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"prices file {path}: cannot read it ({exc.strerror or exc})") from None
        table.update(_parse(text, str(path)))
    return table
