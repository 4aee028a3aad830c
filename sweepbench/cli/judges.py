"""Which LLM judges a ``run`` or ``plan`` uses when none is named.

A store grows: a model added later (``run --model X`` into the quick start's store) must be
judged like the models already in it, or its column of a benchmark whose headline is an LLM
judge (VitaBench's) is undefined. So, unless judges are named (``--judge-model``, or
``judge_models`` in the config), the sweep keeps the judges the store's earlier runs were
judged with; in a store without any, the embedded default (no config, no ``--model``) is
judged by the judge double. ``run`` and ``plan`` decide it here, alike, so a plan counts the
judge calls its run will make.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import msgspec

from sweepbench.config import SCRIPTED_PREFIX, Endpoint, SweepConfig

__all__ = ["DEFAULT_JUDGE", "stored_judges", "sweep_judges"]

DEFAULT_JUDGE = "scripted/judge"
"""The embedded default's judge: the judge double, so VitaBench has its paper's headline."""


def stored_judges(path: Path) -> tuple[list[str], dict[str, dict]]:
    """The LLM judges the runs in the store at ``path`` were configured with (first used
    first), and their stored endpoint definitions (no secrets: a key is a variable's name)."""
    from sweepbench.cli.common import open_store

    if not path.is_file():
        return [], {}
    with open_store(path, read_only=True) as store:  # a read: no lock (the run takes it)
        runs = store.runs()
    names: dict[str, None] = {}
    endpoints: dict[str, dict] = {}
    for run in runs:
        config = run["config"] if isinstance(run["config"], dict) else {}
        for name in config.get("judge_models") or []:
            names[str(name)] = None
        for ep in config.get("endpoints") or []:
            if isinstance(ep, dict) and "name" in ep:
                endpoints.setdefault(str(ep["name"]), ep)
    return list(names), endpoints


def sweep_judges(cfg: SweepConfig, args: argparse.Namespace, path: Path) -> SweepConfig:
    """``cfg`` with the judges the sweep into the store at ``path`` uses (see the module)."""
    if args.judge_model or (args.config and cfg.judge_models):
        return cfg  # named: exactly those
    names, stored = stored_judges(path)
    defined = {ep.name for ep in cfg.endpoints}
    kept, added = [], []
    for name in names:
        if name in defined or name.startswith(SCRIPTED_PREFIX):
            kept.append(name)
        elif name in stored:  # the store's own definition of it (prices, limits, URL)
            try:
                added.append(msgspec.convert(stored[name], Endpoint))
            except msgspec.ValidationError:
                continue  # stored by a version with other fields: not guessed at
            kept.append(name)
    if kept:
        return msgspec.structs.replace(cfg, judge_models=kept,
                                       endpoints=[*cfg.endpoints, *added])
    if not (args.config or getattr(args, "model", None)):
        return msgspec.structs.replace(cfg, judge_models=[DEFAULT_JUDGE])
    return cfg
