"""The work list: every (model, task, trial) of a config in file order, its tasks selected
by id and limit, its episodes keyed by identity and split into shards by label."""

from __future__ import annotations

import re
import time

import pytest

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.catalog import load_tasks
from sweepbench.config import load_config
from sweepbench.errors import ConfigError
from sweepbench.runner import work as work_mod
from sweepbench.runner.identity import EpisodeIdentity
from sweepbench.runner.work import (
    DEFAULT_STORE,
    Shard,
    WorkItem,
    build_work,
    new_run_id,
    select_tasks,
)

ORACLE = "scripted/oracle"
NOISY = "scripted/noisy:0.3"
DELIVERY = [t.id for t in load_tasks("vitabench:delivery")]
INSTORE = [t.id for t in load_tasks("vitabench:instore")]


def cfg(**data):
    return load_config(None, {"benchmarks": ["vitabench:delivery"], "models": [ORACLE],
                              "trials": 1, **data})


def test_the_default_store_is_one_file_under_runs():
    assert DEFAULT_STORE.as_posix() == "runs/sweepbench.sqlite"


def test_a_work_item_is_labelled_model_task_key_trial_and_its_meta_is_its_episode():
    c = cfg(trials=2, user_mode="neutral")
    item = build_work(c, None)[-1]
    assert item.episode_id == "scripted/oracle|vitabench@2025-12:delivery:en:SB-D-007|1"
    meta = item.meta(c)
    assert (meta.key, meta.label, meta.model, meta.benchmark, meta.spec, meta.domain,
            meta.task_id, meta.lang, meta.trial) == (
        item.key, item.episode_id, ORACLE, "vitabench@2025-12", "vitabench@2025-12:delivery",
        "delivery", "SB-D-007", "en", 1)
    assert (meta.user_model, meta.user_mode) == ("scripted/user", "neutral")
    assert meta.identity is item.identity and meta.identity["trial"] == 1
    assert meta.unreachable is None
    # the identity is not part of an item's equality: the key already is
    assert item == WorkItem(item.model, item.spec, item.task, item.trial, item.key, {})
    assert "identity" not in repr(item)


def test_shards_partition_the_episodes_by_label_the_same_on_every_machine():
    labels = [f"m|b:d:en:t{i}|{i % 3}" for i in range(60)]
    for n in (2, 3, 5):
        owners = [[s for s in range(n) if Shard(s, n).owns(x)] for x in labels]
        assert all(len(o) == 1 for o in owners)
        assert len({o[0] for o in owners}) == n  # every shard gets some
    assert all(Shard(0, 1).owns(x) for x in labels)
    # the split is a hash of the label: pinned, so shards run apart agree on it
    assert [next(s for s in range(3) if Shard(s, 3).owns(x)) for x in "abcd"] == [2, 2, 0, 2]
    assert [next(s for s in range(7) if Shard(s, 7).owns(x)) for x in labels[:8]] == [
        2, 5, 1, 5, 3, 2, 3, 2]


def test_a_run_id_is_the_utc_time_then_six_random_hex_digits(monkeypatch):
    ids = {new_run_id() for _ in range(20)}
    assert len(ids) == 20
    assert all(re.fullmatch(r"run-\d{8}-\d{6}-[0-9a-f]{6}", i) for i in ids)
    gmtime = time.gmtime
    monkeypatch.setattr(work_mod.time, "gmtime", lambda *_: gmtime(0))
    assert new_run_id().startswith("run-19700101-000000-")


def test_tasks_are_selected_by_id_and_limit_once_each_in_the_order_of_the_specs():
    pairs = select_tasks(cfg(benchmarks=["vitabench:instore", "vitabench:delivery"]))
    assert [t.id for _, t in pairs] == INSTORE + DELIVERY
    assert {s for s, _ in pairs} == {"vitabench@2025-12:instore", "vitabench@2025-12:delivery"}
    assert [s for s, t in pairs if t.id == DELIVERY[0]] == ["vitabench@2025-12:delivery"]
    # a task reached through two specs is selected once, under the first
    twice = select_tasks(cfg(benchmarks=["vitabench:delivery", "vitabench@2025-12:delivery"]))
    assert [t.id for _, t in twice] == DELIVERY
    # ids keep the file order, whatever order they are given in; the limit counts per spec
    picked = select_tasks(cfg(task_ids=[DELIVERY[3], DELIVERY[1]]))
    assert [t.id for _, t in picked] == [DELIVERY[1], DELIVERY[3]]
    both = cfg(benchmarks=["vitabench:delivery", "vitabench:instore"], limit=2)
    assert [t.id for _, t in select_tasks(both)] == DELIVERY[:2] + INSTORE[:2]
    assert [t.id for _, t in select_tasks(cfg(limit=1, task_ids=DELIVERY[2:5]))] == [DELIVERY[2]]


def test_tasks_are_loaded_from_the_data_dir_in_the_language_configured(tmp_path):
    from sweepbench.errors import TaskError

    with pytest.raises(TaskError, match=f"{tmp_path}/delivery/tasks_en.json: no VitaBench task"):
        select_tasks(cfg(data_dir=str(tmp_path)))
    with pytest.raises(TaskError, match="English only \\(asked for 'zh'\\)"):
        select_tasks(cfg(lang="zh"))


def test_a_task_id_no_benchmark_has_is_an_error_naming_each_once():
    with pytest.raises(ConfigError) as caught:
        select_tasks(cfg(benchmarks=["vitabench:delivery", "vitabench:instore"],
                         task_ids=["nope", DELIVERY[0], "zz", "nope", INSTORE[1]]))
    assert str(caught.value) == (
        "no task 'nope', 'zz' in vitabench:delivery, vitabench:instore (en); `sweepbench "
        "tasks --benchmark SPEC` lists the ids")
    # an id matched by one spec and not another is found
    found = select_tasks(cfg(benchmarks=["vitabench:delivery", "vitabench:instore"],
                             task_ids=[INSTORE[0]]))
    assert [t.id for _, t in found] == [INSTORE[0]]


def test_the_work_is_trial_major_then_tasks_then_models_each_keyed_by_its_identity():
    c = cfg(models=[NOISY, ORACLE], trials=2, task_ids=DELIVERY[:2])
    work = build_work(c, None)
    assert [(w.trial, w.task.id, w.model) for w in work] == [
        (t, task, m) for t in (0, 1) for task in DELIVERY[:2] for m in (NOISY, ORACLE)]
    ident = EpisodeIdentity(c, None)
    for w in work:
        assert w.spec == "vitabench@2025-12:delivery"
        assert w.identity == ident.of(w.model, w.task, w.trial)
        assert w.key == ident.key(w.identity)
    assert len({w.key for w in work}) == len(work)


def test_a_shard_holds_its_part_of_the_work():
    c = cfg(models=[NOISY, ORACLE], trials=3)
    whole = build_work(c, None)
    parts = [build_work(c, None, Shard(i, 3)) for i in range(3)]
    assert sorted(w.key for p in parts for w in p) == sorted(w.key for w in whole)
    for i, part in enumerate(parts):
        assert part and all(Shard(i, 3).owns(w.episode_id) for w in part)
        assert part == [w for w in whole if w in part]  # file order kept
    assert build_work(c, None, Shard(0, 1)) == whole


def test_each_item_says_why_its_task_cannot_be_passed(monkeypatch):
    bench = registry.get("vitabench@2025-12")
    monkeypatch.setattr(type(bench), "unreachable",
                        lambda self, t: "no such shop" if t.id == DELIVERY[1] else None)
    work = build_work(cfg(trials=2, task_ids=DELIVERY[:3]), None)
    assert [(w.task.id, w.unreachable) for w in work] == [
        (DELIVERY[0], None), (DELIVERY[1], "no such shop"), (DELIVERY[2], None)] * 2
    assert work[1].meta(cfg()).unreachable == "no such shop"


def test_the_identities_are_made_with_the_data_dir(monkeypatch, tmp_path):
    made = []

    def identity(cfg, data_dir):
        made.append(data_dir)
        return EpisodeIdentity(cfg, None)

    monkeypatch.setattr(work_mod, "EpisodeIdentity", identity)
    build_work(cfg(), tmp_path)
    assert made == [tmp_path]


def test_two_models_on_the_same_endpoint_are_refused():
    ep = {"base_url": "https://api.example.com/v1", "model": "m"}
    c = cfg(models=["a", "c", "b"], endpoints=[
        {"name": "a", **ep}, {"name": "b", **ep}, {"name": "c", **ep, "model": "other"}])
    with pytest.raises(ConfigError) as caught:
        build_work(c, None)
    assert str(caught.value) == (
        "models 'a' and 'b' are the same endpoint (same URL, model and request options): "
        "their episodes would be the same; list it once")
    next_to = cfg(models=["c", "a", "b"], endpoints=[
        {"name": "a", **ep}, {"name": "b", **ep}, {"name": "c", **ep, "model": "other"}])
    with pytest.raises(ConfigError, match="models 'a' and 'b' are the same endpoint"):
        build_work(next_to, None)
    ok = cfg(models=["a", "c"], endpoints=[{"name": "a", **ep},
                                           {"name": "c", **ep, "model": "other"}])
    assert len(build_work(ok, None)) == 2 * len(DELIVERY)
