"""VitaBench task files to Tasks.

Real tasks live in ``<data_dir>/vitabench/<domain>/tasks_en.json`` (English) or ``tasks.json``
(Chinese); ``data_dir`` may also be the ``vitabench`` folder itself. Without a data dir the
project's own sample tasks (``samples/vitabench_<domain>.json``, English) are used. Files are
untrusted: every problem is a ``TaskError`` naming the file, the task and what is wrong.

Several domains make a cross-domain composition: the tasks of every listed domain, each tagged
with the whole composition (``domain="delivery,instore"``) so that it runs with the merged
toolkit, and keyed apart from the same task run alone. A task's ``message_history`` (turns that
happened before the episode) is kept as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError

SAMPLES = Path(__file__).parent / "samples"
_FILES = {"en": "tasks_en.json", "zh": "tasks.json"}
_REQUIRED = ("instructions", "environment", "user_scenario")
_TYPES = {"instructions": str, "environment": dict, "user_scenario": dict,
          "message_history": list, "evaluation_criteria": dict}


def load_tasks(domains: tuple[str, ...], *, data_dir: Path | None, lang: str = "en") -> list[Task]:
    """The tasks of each domain in turn, in file order."""
    if lang not in _FILES:
        raise TaskError(f"unknown language {lang!r} for VitaBench: use one of {', '.join(_FILES)}")
    if not domains:
        raise TaskError("no VitaBench domain given")
    composition = ",".join(domains)
    tasks: list[Task] = []
    seen: dict[str, str] = {}
    for domain in dict.fromkeys(domains):
        path = _task_file(domain, data_dir, lang)
        for t in _load_file(path, composition, lang):
            if t.id in seen:
                raise TaskError(f"{path}: task id {t.id!r} is also in {seen[t.id]}; a composition "
                                f"needs ids unique across its domains")
            seen[t.id] = str(path)
            tasks.append(t)
    return tasks


def _task_file(domain: str, data_dir: Path | None, lang: str) -> Path:
    if data_dir is None:
        if lang != "en":
            raise TaskError(f"the built-in VitaBench samples are English only (asked for {lang!r}); "
                            f"pass a data dir for real tasks")
        path = SAMPLES / f"vitabench_{domain}.json"
        if not path.is_file():
            raise TaskError(f"no built-in VitaBench sample tasks for domain {domain!r}; pass a data dir")
        return path
    root = data_dir / "vitabench" if (data_dir / "vitabench").is_dir() else data_dir
    path = root / domain / _FILES[lang]
    if not path.is_file():
        raise TaskError(f"{path}: no VitaBench task file for domain {domain!r} ({lang})")
    return path


def _load_file(path: Path, domain: str, lang: str) -> list[Task]:
    try:
        raw = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise TaskError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(raw, list):
        raise TaskError(f"{path}: expected a list of tasks, got {type(raw).__name__}")
    tasks = [_task(entry, i, path, domain, lang) for i, entry in enumerate(raw)]
    seen: set[str] = set()
    for t in tasks:
        if t.id in seen:
            raise TaskError(f"{path}: task id {t.id!r} appears more than once")
        seen.add(t.id)
    return tasks


def _task(entry: Any, index: int, path: Path, domain: str, lang: str) -> Task:
    if not isinstance(entry, dict):
        raise TaskError(f"{path}: task #{index}: not an object")
    task_id = entry.get("id")
    if not isinstance(task_id, (str, int)) or isinstance(task_id, bool):
        raise TaskError(f"{path}: task #{index}: id is missing or not a string")
    where = f"{path}: task {task_id}"
    missing = [k for k in _REQUIRED if entry.get(k) is None]
    if missing:
        raise TaskError(f"{where}: missing {', '.join(missing)}")
    for key, kind in _TYPES.items():
        if entry.get(key) is not None and not isinstance(entry[key], kind):
            raise TaskError(f"{where}: {key} should be a {kind.__name__}, got {type(entry[key]).__name__}")
    history = entry.get("message_history") or []
    if not all(isinstance(m, dict) for m in history):
        raise TaskError(f"{where}: message_history should be a list of messages (objects)")
    return Task(
        id=str(task_id),
        benchmark="vitabench",
        domain=domain,
        lang=lang,
        instructions=entry["instructions"],
        persona=entry["user_scenario"],
        environment=entry["environment"],
        message_history=history,
        evaluation=entry.get("evaluation_criteria") or {},
        source=str(path),
    )
