"""Model names to endpoints: a ``provider/model`` name the config does not define becomes the
endpoint a TOML file would have written for it.

A name the config defines keeps its TOML meaning (the config wins); ``scripted/...`` names
are the reference server's. Any other name must start with a provider of
:data:`~sweepbench.providers.table.PROVIDERS` (or ``openai-api/<service>/``), else it is
a ConfigError listing what it could have been. The endpoint gets every option's default, the
prices of the prices table (unpriced when it has none), and, for hosted providers, no hedging
(a hedged copy is paid for). Keys are read at request time, so ``plan`` needs none; a
missing key is the preflight's one-line error naming the variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import msgspec

from sweepbench.config import SCRIPTED_PREFIX, Endpoint, SweepConfig
from sweepbench.errors import ConfigError
from sweepbench.providers.prices import ModelPrice, load_prices
from sweepbench.providers.table import (
    HOSTED,
    OPENAI_API,
    PROVIDERS,
    ProviderModel,
    parse_model_name,
)

__all__ = ["Resolved", "resolve_models"]


class Resolved(msgspec.Struct, frozen=True):
    """One provider model resolved to an endpoint, and how (for the run header)."""

    endpoint: Endpoint
    found: ProviderModel
    price: ModelPrice | None

    def describe(self) -> str:
        """One line: where requests go, the key variable, the prices and their source."""
        ep, pm, p = self.endpoint, self.found, self.price
        where = ("default" if pm.base_url_from == "default"
                 else f"from {pm.base_url_from}")
        key = f"key from {pm.key_env}" if pm.key_env else "no key"
        if p is None:
            cost = "unpriced (not in the prices table; give prices with --prices FILE)"
        else:
            cost = (f"${p.input:g} input, ${p.cached:g} cached, ${p.output:g} output per "
                    f"million tokens ({p.source or 'prices file'}"
                    f"{', read ' + p.read if p.read else ''})")
        return (f"model {ep.name}: {pm.provider} at {ep.base_url} ({where}), model "
                f"{ep.model_name!r}, {key}; {cost}")


def _endpoint(name: str, pm: ProviderModel, price: ModelPrice | None) -> Endpoint:
    prices = {} if price is None else {
        "price_input_per_mtok": price.input, "price_cached_input_per_mtok": price.cached,
        "price_output_per_mtok": price.output}
    return Endpoint(name=name, base_url=pm.base_url, model=pm.model, api_key_env=pm.key_env,
                    kind=pm.kind, hedge=False if pm.kind == HOSTED else None,
                    unpriced=price is None, **prices).validate()


def _unknown(name: str, cfg: SweepConfig) -> ConfigError:
    known = ", ".join(ep.name for ep in cfg.endpoints) or "none configured"
    return ConfigError(
        f"unknown model {name!r}: not an endpoint in the config (endpoints: {known}), not "
        f"scripted/..., and not provider/model with a provider of {', '.join(PROVIDERS)} "
        f"or {OPENAI_API}/<service>/<model>")


def resolve_models(cfg: SweepConfig, env: Mapping[str, str] | None = None
                   ) -> tuple[SweepConfig, list[Resolved]]:
    """``cfg`` with an endpoint for every provider model it names (agents, the user model,
    judges) that its endpoints lack, and what each was resolved to."""
    env = os.environ if env is None else env
    defined = {ep.name for ep in cfg.endpoints}
    names = [n for n in dict.fromkeys([*cfg.models, cfg.user_model, *cfg.judge_models])
             if n not in defined and not n.startswith(SCRIPTED_PREFIX)]
    if not names and cfg.prices is None:
        return cfg, []
    table = load_prices(cfg.prices)  # a prices file given is checked even if nothing needs it
    resolved = []
    for name in names:
        try:
            found = parse_model_name(name, env)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if found is None:
            raise _unknown(name, cfg)
        price = table.get(name)
        resolved.append(Resolved(_endpoint(name, found, price), found, price))
    if cfg.max_cost_usd is not None:
        blind = [r.endpoint.name for r in resolved if r.endpoint.unpriced]
        if blind:
            raise ConfigError(f"--max-cost cannot bound {', '.join(blind)}: no prices known "
                              "(give them with --prices FILE, or an endpoint in the config)")
    cfg = msgspec.structs.replace(cfg, endpoints=[*cfg.endpoints,
                                                  *(r.endpoint for r in resolved)])
    return cfg, resolved
