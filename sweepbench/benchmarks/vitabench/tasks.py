"""VitaBench task files to Tasks, as upstream VitaBench picks them.

- One domain (``vitabench:delivery``, ``vitabench:ota``): ``<data_dir>/vitabench/<domain>/``
  ``tasks_en.json`` (English) or ``tasks.json`` (Chinese), run in that domain's environment.
- Several domains (``vitabench:delivery,instore,ota``, the paper's cross-domain set):
  upstream's ``cross_domain/`` task file, run in the merged environment of exactly the listed
  domains, in the listed order; each task is tagged with the composition
  (``domain="delivery,instore,ota"``).
- ``tasks=<folder>`` among the domains (``vitabench:delivery,instore,tasks=delivery``): that
  folder's task file in the merged environment of the other listed domains (upstream's
  ``--task-set-name``), e.g. single-domain tasks with every tool of the composition. The
  option stays in the tasks' domain, so their keys differ from the same tasks run otherwise.

``data_dir`` may also be the ``vitabench`` folder itself. Without a data dir the project's own
sample tasks (``samples/vitabench_<folder>.json``, English) are used. Files are untrusted:
every problem is a ``TaskError`` naming the file, the task and what is wrong. A task's
``message_history`` (turns that happened before the episode) is kept as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from sweepbench.benchmarks.vitabench.tools.state import DOMAINS, env_domains
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError

SAMPLES = Path(__file__).parent / "samples"
_FILES = {"en": "tasks_en.json", "zh": "tasks.json"}
_REQUIRED = ("instructions", "environment", "user_scenario")
_TYPES = {"instructions": str, "environment": dict, "user_scenario": dict,
          "message_history": list, "evaluation_criteria": dict}


CROSS_DOMAIN = "cross_domain"
_UPSTREAM = "https://github.com/meituan-longcat/vitabench (data/vita/domains/{folder}/{file})"


def load_tasks(domains: tuple[str, ...], *, data_dir: Path | None, lang: str = "en") -> list[Task]:
    """The tasks of a spec's domains (see the module docstring), in file order."""
    if lang not in _FILES:
        raise TaskError(f"unknown language {lang!r} for VitaBench: use one of {', '.join(_FILES)}")
    env = tuple(dict.fromkeys(env_domains(domains)))
    folder = _folder(domains, env)
    tag = ",".join(dict.fromkeys(domains)) if len(env) > 1 or folder not in env else env[0]
    return _load_file(_task_file(folder, data_dir, lang), tag, lang)


def _folder(domains: tuple[str, ...], env: tuple[str, ...]) -> str:
    """The task folder a spec's domains name."""
    options = dict(d.partition("=")[::2] for d in domains if "=" in d)
    unknown = sorted(set(options) - {"tasks"})
    if unknown:
        raise TaskError(f"unknown VitaBench option {unknown[0]!r} in {','.join(domains)!r}; "
                        f"the one option is tasks=<folder> (which task file to run)")
    if not env:
        raise TaskError("no VitaBench domain given")
    odd = [d for d in env if d not in DOMAINS]
    if odd and (len(env) > 1 or "tasks" in options):
        raise TaskError(f"no VitaBench environment for domain {odd[0]!r}; known: {', '.join(DOMAINS)}")
    if "tasks" in options:
        if not options["tasks"].strip():
            raise TaskError("tasks= names no task folder (e.g. tasks=delivery)")
        return options["tasks"].strip()
    return env[0] if len(env) == 1 else CROSS_DOMAIN


def _task_file(folder: str, data_dir: Path | None, lang: str) -> Path:
    if data_dir is None:
        if lang != "en":
            raise TaskError(f"the built-in VitaBench samples are English only (asked for {lang!r}); "
                            f"pass a data dir for real tasks")
        path = SAMPLES / f"vitabench_{folder}.json"
        if not path.is_file():
            raise TaskError(f"no built-in VitaBench sample tasks for {folder!r}; pass a data dir")
        return path
    root = data_dir / "vitabench" if (data_dir / "vitabench").is_dir() else data_dir
    path = root / folder / _FILES[lang]
    if not path.is_file():
        what = "cross-domain tasks" if folder == CROSS_DOMAIN else f"tasks of {folder!r}"
        raise TaskError(f"{path}: no VitaBench task file ({what}, {lang}); put upstream's file "
                        f"there, from {_UPSTREAM.format(folder=folder, file=_FILES[lang])}")
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
