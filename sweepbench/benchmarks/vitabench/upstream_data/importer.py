"""A VitaBench data dir built from upstream's own files: ``import_data(source, out)``.

``source`` is upstream's repository (a clone or work tree, at any commit) or its dataset
release (``<domain>/tasks*.json``). Written to ``out``:

- ``<domain>/tasks*.json``: the task files, bytes unchanged (each checked to be a JSON list of
  tasks with ids, so a broken file is refused now rather than in the middle of a run);
- ``upstream/prompts/*.yaml``: upstream's prompt templates, bytes unchanged;
- ``upstream/tool_descriptions.json``: the tools' descriptions, parsed out of upstream's schema
  sources (``upstream_schema``) into the shape sweepbench reads;
- ``LICENSE``, and ``manifest.json`` (``manifest``): commit, release, sha256 per file, and
  what the source lacked.

The release is told by ``release_detect`` (HEAD's commit, tool names, task files); a mix is
refused before anything is written. Task files the source lacks (upstream's snapshots leave out
files of 4 MiB and more) are listed in the manifest, not an error: the data dir is usable for
what it has. ``out`` is assembled in a temporary sibling and renamed into place, so a failed
import leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import yaml
from msgspec import Struct, field

from sweepbench.benchmarks.vitabench.release import RELEASES
from sweepbench.benchmarks.vitabench.tools.state import DOMAINS
from sweepbench.benchmarks.vitabench.upstream_data import upstream_schema
from sweepbench.benchmarks.vitabench.upstream_data.git_head import (
    head_commit,
    is_bare_repository,
)
from sweepbench.benchmarks.vitabench.upstream_data.manifest import (
    Manifest,
    write_manifest,
)
from sweepbench.benchmarks.vitabench.upstream_data.release_detect import (
    RELEASE_TASK_FILES,
    Signal,
    commit_signal,
    decide,
    names_signal,
    task_file_signal,
)
from sweepbench.errors import DataDirError, SourceError

__all__ = ["import_data", "summary"]

CHECKOUT_TASKS = "data/vita/domains"
CHECKOUT_PROMPTS = "src/vita/prompts"
PROMPTS = "upstream/prompts"
DESCRIPTIONS = "upstream/tool_descriptions.json"
LICENSE = "LICENSE"


class _Plan(Struct, kw_only=True):
    """Everything an import will write, read and checked before anything is written."""

    kind: str
    files: dict[str, bytes] = field(default_factory=dict)
    signals: list[Signal] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    commit: str | None = None


def _kind(source: Path) -> str:
    if not source.is_dir():
        raise SourceError(f"{source}: not a directory")
    if is_bare_repository(source):
        raise SourceError(f"{source}: a bare git repository has no files to read; make a work "
                          f"tree of it (git -C {source} worktree add DIR COMMIT) and import that")
    if (source / "src" / "vita").is_dir() or (source / CHECKOUT_TASKS).is_dir():
        return "checkout"
    if any(source.glob("*/tasks*.json")):
        return "dataset"
    raise SourceError(f"{source}: neither upstream VitaBench's repository (no src/vita, no "
                      f"{CHECKOUT_TASKS}) nor its dataset release (no <domain>/tasks*.json)")


def _task_list(rel: str, data: bytes) -> list[Any]:
    try:
        tasks = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise SourceError(f"{rel}: not valid JSON: {exc}") from None
    if not isinstance(tasks, list):
        raise SourceError(f"{rel}: should be a list of tasks, got {type(tasks).__name__}")
    for i, task in enumerate(tasks):
        task_id = task.get("id") if isinstance(task, dict) else None
        if not isinstance(task_id, (str, int)) or isinstance(task_id, bool):
            raise SourceError(f"{rel}: task #{i} is not a task with an id")
    return tasks


def _read_tasks(plan: _Plan, source: Path, tasks_dir: Path) -> None:
    for path in sorted(tasks_dir.glob("*/tasks*.json")):
        if not path.is_file() or path.parent.name.startswith("."):
            continue
        key = path.relative_to(tasks_dir).as_posix()
        rel = path.relative_to(source).as_posix()
        data = path.read_bytes()
        signal = task_file_signal(rel, key, data, _task_list(rel, data))
        if signal is None:
            plan.notes.append(f"{rel}: not a released file, and nothing in it tells a release")
        else:
            plan.signals.append(signal)
        plan.files[key] = data
    if not plan.files:
        raise SourceError(f"{tasks_dir}: no task files (<domain>/tasks*.json)")


def _read_prompts(plan: _Plan, source: Path) -> None:
    folder = source / CHECKOUT_PROMPTS
    templates = sorted(p for p in folder.glob("*.yaml") if p.is_file())
    if not templates:
        plan.absent.append(PROMPTS)
        return
    for path in templates:
        rel = path.relative_to(source).as_posix()
        data = path.read_bytes()
        try:
            value = yaml.safe_load(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise SourceError(f"{rel}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        except yaml.YAMLError as exc:
            raise SourceError(f"{rel}: not YAML: {str(exc).splitlines()[0]}") from None
        if not isinstance(value, dict):
            raise SourceError(f"{rel}: should be a mapping of template texts, got "
                              f"{type(value).__name__}")
        plan.files[f"{PROMPTS}/{path.name}"] = data


def _read_descriptions(plan: _Plan, source: Path) -> None:
    descriptions = upstream_schema.tool_descriptions(source)
    if descriptions is None:
        plan.absent.append(DESCRIPTIONS)
        return
    for domain, (rel, _) in upstream_schema.schema_sources().items():
        names = {tool for entries in descriptions[domain].values() for tool in entries}
        signal = names_signal(rel, names)
        plan.signals += [signal] if signal else []
    for domain in DOMAINS:
        rel = f"src/vita/domains/{domain}/tools.py"
        if (source / rel).is_file():
            signal = names_signal(rel, upstream_schema.tool_functions(source / rel, rel))
            plan.signals += [signal] if signal else []
    plan.files[DESCRIPTIONS] = upstream_schema.encode(descriptions)


def _plan(source: Path) -> _Plan:
    plan = _Plan(kind=_kind(source))
    if plan.kind == "dataset":
        _read_tasks(plan, source, source)
        plan.absent += [PROMPTS, DESCRIPTIONS]
    else:
        plan.commit = head_commit(source)
        signal = commit_signal(plan.commit)
        if signal is not None:
            plan.signals.append(signal)
        elif plan.commit:
            plan.notes.append(f".git HEAD: commit {plan.commit[:7]}, not a release's commit")
        _read_tasks(plan, source, source / CHECKOUT_TASKS)
        _read_prompts(plan, source)
        _read_descriptions(plan, source)
    if (source / LICENSE).is_file():
        plan.files[LICENSE] = (source / LICENSE).read_bytes()
    else:
        plan.absent.append(LICENSE)
    return plan


def _ready(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DataDirError(f"{out}: exists and is not an empty directory; choose a new one "
                           f"(an import never mixes its files with others)")


def _write(out: Path, files: dict[str, bytes], manifest: Manifest) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    try:
        for rel, data in files.items():
            path = partial / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        write_manifest(partial, manifest)
        if out.is_dir():
            out.rmdir()
        os.replace(partial, out)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def import_data(source: Path, out: Path, *, release: str | None = None) -> Manifest:
    """Build the data dir ``out`` (the vitabench folder itself) from ``source``; see the
    module docstring. ``release`` names the release when the files cannot tell (or to insist
    on one). Raises SourceError for a source file that is not as upstream's layout promises,
    ReleaseError / ReleaseMixError when the release cannot be told or the files mix releases,
    DataDirError when ``out`` is not empty, ConfigError for an unknown ``release``."""
    source, out = Path(source), Path(out)
    _ready(out)
    plan = _plan(source)
    decision = decide(str(source), plan.signals, named=release, notes=plan.notes)
    expected = RELEASE_TASK_FILES[decision.release]
    absent = sorted(k for k in expected if k not in plan.files) + plan.absent
    manifest = Manifest(
        release=decision.release, release_commit=RELEASES[decision.release].commit,
        upstream_commit=plan.commit, matched_by=decision.matched_by, source=plan.kind,
        files={rel: hashlib.sha256(data).hexdigest() for rel, data in sorted(plan.files.items())},
        absent=absent, evidence=decision.evidence)
    _write(out, plan.files, manifest)
    return manifest


def summary(manifest: Manifest, out: Path) -> str:
    """A few lines for the CLI: what was written where, of which release, and what is absent."""
    told = {"commit": "HEAD's commit", "content": "the files", "name": "the name given"}
    head = manifest.upstream_commit
    lines = [f"VitaBench {manifest.release} (upstream {manifest.release_commit}), told by "
             f"{told.get(manifest.matched_by, manifest.matched_by)}"
             + (f"; the source is at {head[:7]}" if head and manifest.matched_by != "commit"
                else "") + f" -> {out}"]
    tasks = [rel for rel in manifest.files if rel.endswith(".json") and "/" in rel
             and not rel.startswith("upstream/")]
    lines.append(f"  task files: {', '.join(tasks)}")
    templates = sum(rel.startswith(PROMPTS + "/") for rel in manifest.files)
    if templates or DESCRIPTIONS in manifest.files:
        lines.append(f"  upstream: {templates} prompt templates"
                     + (", tool descriptions" if DESCRIPTIONS in manifest.files else ""))
    if manifest.absent:
        lines.append(f"  not in the source: {', '.join(manifest.absent)}")
    return "\n".join(lines)
