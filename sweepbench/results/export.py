"""Exports of a store's episodes (all of them, or one run's selection): trajectories as
JSONL, results as CSV.

- ``export_trajectories``: one ``EpisodeRecord`` per line (msgspec JSON, the store's own
  encoding), finished episodes only; ``read_trajectories`` reads such a file back.
- ``export_results_csv``: one row per episode (running ones too, with empty outcome cells):
  the episode's columns (its key and label, ``unreachable`` with the reason when no agent can
  pass its task), its record's counters and token usage, its cost in dollars at the stored
  prices (``cost_agent``, ``cost_user``, ``cost_judge``, ``cost_total``; empty when none of
  its calls is priced), then for every judge/method pair ``<judge>/<method>:passed``,
  ``:score`` and one column per numeric value of that pair's details, nested objects
  flattened with "_" (``:tool_f1``, ``:calls``, ...). Booleans are written 1/0, missing
  values empty.

Both write to a temporary file next to the target and rename it into place, so a failed
export never leaves a half-written file under the requested name.
"""

from __future__ import annotations

import csv
import math
import os
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator

import msgspec

from sweepbench.errors import ReportError, StoreError
from sweepbench.results.cost import Spend
from sweepbench.results.report import numeric_details
from sweepbench.results.store import RunStore
from sweepbench.results.view import EpisodeView, Selection, load_view
from sweepbench.wire import EpisodeRecord

__all__ = ["export_results_csv", "export_trajectories", "read_trajectories"]

_EPISODE_COLUMNS = ("run_id", "episode_key", "label", "model", "benchmark", "spec", "domain",
                    "task_id", "lang", "trial", "user_model", "user_mode", "status",
                    "termination", "unreachable", "started_at", "finished_at")
_RECORD_COLUMNS = ("turns", "agent_calls", "user_calls", "tool_calls", "tool_errors", "wall_s")
_USAGE = ("prompt_tokens", "cached_prompt_tokens", "completion_tokens")
_COST_COLUMNS = ("cost_agent", "cost_user", "cost_judge", "cost_total")


def _view(store: RunStore, run_id: str | None) -> EpisodeView:
    try:
        return load_view([store], Selection(run_id=run_id))
    except ReportError as exc:
        raise StoreError(str(exc)) from None


def _replace_into(path: Path, write: Any) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            n = write(f)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return n


def export_trajectories(store: RunStore, run_id: str | None, path: str | Path) -> int:
    """Write the finished episodes (of ``run_id``'s selection, or all) to ``path`` as JSONL;
    returns how many."""
    view = _view(store, run_id)
    by_key = store.records(view.keys)
    records = [by_key[k] for k in view.keys if k in by_key]
    encoder = msgspec.json.Encoder()

    def write(f: Any) -> int:
        for r in records:
            f.write(encoder.encode(r).decode("utf-8"))
            f.write("\n")
        return len(records)

    return _replace_into(Path(path), write)


def read_trajectories(path: str | Path) -> Iterator[EpisodeRecord]:
    """The records of a JSONL trajectory file; a bad line raises ValueError naming it."""
    decoder = msgspec.json.Decoder(EpisodeRecord)
    with open(path, "rb") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield decoder.decode(line)
            except msgspec.DecodeError as e:
                raise ValueError(f"{path}:{i}: not an EpisodeRecord: {e}") from e


def _cell(v: Any) -> Any:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    if isinstance(v, bool):
        return int(v)
    return v


def export_results_csv(store: RunStore, run_id: str | None, path: str | Path) -> int:
    """Write one CSV row per episode (of ``run_id``'s selection, or all) to ``path``; returns
    the number of rows."""
    view = _view(store, run_id)
    rows = view.rows
    records = store.records(view.keys)
    spend = Spend.of(view.calls(), view.prices())
    judged: dict[str, dict[str, dict]] = defaultdict(dict)  # episode -> "j/m" -> judgment
    detail_keys: dict[str, set[str]] = defaultdict(set)
    for j in view.judgments():
        name = f"{j['judge']}/{j['method']}"
        judged[j["episode_key"]][name] = j
        j["numeric"] = numeric_details(j["details"])
        detail_keys[name].update(k for k in j["numeric"] if k not in ("passed", "score"))
    pairs = sorted(detail_keys.keys() | {n for js in judged.values() for n in js})
    judgment_columns = [(p, field) for p in pairs
                        for field in ("passed", "score", *sorted(detail_keys[p]))]
    header = [*_EPISODE_COLUMNS, *_RECORD_COLUMNS,
              *(f"{who}_{u}" for who in ("agent", "user") for u in _USAGE), "error",
              *_COST_COLUMNS, *(f"{p}:{field}" for p, field in judgment_columns)]

    def write(f: Any) -> int:
        out = csv.writer(f)
        out.writerow(header)
        for r in rows:
            eid = r["episode_key"]
            rec = records.get(eid)
            mine = judged.get(eid, {})
            state = (mine.get("state/state") or {}).get("details") or {}
            row = [r[c] for c in _EPISODE_COLUMNS]
            if not row[_EPISODE_COLUMNS.index("unreachable")]:  # older stores: the check says
                row[_EPISODE_COLUMNS.index("unreachable")] = state.get("unreachable")
            if rec is None:
                row += [None] * (len(_RECORD_COLUMNS) + 2 * len(_USAGE) + 1)
            else:
                row += [getattr(rec, c) for c in _RECORD_COLUMNS]
                row += [getattr(u, c) for u in (rec.agent_usage, rec.user_usage) for c in _USAGE]
                row.append(rec.error)
            if eid in spend.by_episode:
                roles = spend.by_episode[eid]
                row += [roles["agent"], roles["user"], roles["judge"], sum(roles.values())]
            else:
                row += [None] * len(_COST_COLUMNS)
            for p, field in judgment_columns:
                j = mine.get(p)
                if j is None:
                    row.append(None)
                elif field in ("passed", "score"):
                    row.append(j[field])
                else:
                    row.append(j["numeric"].get(field))
            out.writerow([_cell(v) for v in row])
        return len(rows)

    return _replace_into(Path(path), write)
