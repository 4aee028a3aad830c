"""Episodes are the unit of identity: a store accumulates, and nothing stale is reused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from sweepbench.benchmarks import catalog
from sweepbench.benchmarks.catalog import load_tasks
from sweepbench.benchmarks.vitabench import judge_prompts
from sweepbench.benchmarks.vitabench.tasks import SAMPLES
from sweepbench.config import Endpoint, load_config
from sweepbench.errors import ConfigError
from sweepbench.results.report import build_report
from sweepbench.store.runstore import RunStore
from sweepbench.runner.build import benchmark_info
from sweepbench.runner.identity import NOT_SENT, endpoint_identity
from sweepbench.runner.sweep import Sweep
from sweepbench.runner.work import build_work
from sweepbench.wire import EpisodeRecord

from ..support import without_backups

METRICS = ("k", "tasks", "episodes", "errors", "avg", "pass_at_k", "pass_hat_k", "state",
           "unjudged", "unfinished", "metrics", "method_scores")


def metrics(report: dict) -> dict:
    return {b: {m: {k: v.get(k) for k in METRICS} for m, v in bs["models"].items()}
            for b, bs in report["benchmarks"].items()}


def new_calls(store: RunStore, before: set[str]) -> tuple[int, int, set[str]]:
    """(agent + user calls, judge calls) journaled for episodes not in ``before``."""
    new = set(store.episode_status()) - before
    calls = store.model_calls(new)
    return (sum(1 for c in calls if not c.journal), sum(1 for c in calls if c.journal), new)


async def step(store: RunStore, **cfg) -> tuple[Sweep, int, int, int]:
    """One sweep; (sweep, new episodes, requests to agents/user, requests to the judge)."""
    before = set(store.episode_status())
    models = cfg.get("models", ["scripted/oracle", "scripted/noisy:0.3"])
    sweep = Sweep(load_config(None, {"judge_models": ["scripted/judge"], "max_concurrency": 16,
                                     "endpoints": without_backups(*models, "scripted/user"),
                                     **cfg}), store)
    await sweep.run()
    requests = sweep.reference.requests if sweep.reference else {}
    judge = requests.get("scripted/judge", 0)
    episodes = sum(requests.values()) - judge
    calls, judge_calls, new = new_calls(store, before)
    # every request was for an episode not stored before: exactly their journaled calls
    assert episodes == calls and judge == judge_calls
    return sweep, len(new), episodes, judge


async def test_a_store_grows_by_trials_models_and_benchmarks(tmp_path):
    delivery = [t.id for t in load_tasks("vitabench:delivery")]
    bar = [t.id for t in load_tasks("t1:bar")][:3]
    with RunStore(tmp_path / "grow.sqlite") as s:
        base = {"benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle"]}
        _, n1, r1, _ = await step(s, **base, trials=2)
        _, n2, r2, _ = await step(s, **base, trials=4)
        assert n1 == n2 == 2 * len(delivery) and 0 < r2 and r1 > 0
        _, n3, _, _ = await step(s, **{**base, "models": ["scripted/oracle", "scripted/noisy:0.3"]},
                                 trials=4)
        assert n3 == 4 * len(delivery)  # only the new model's
        _, n4, _, _ = await step(s, benchmarks=["t1:bar"], limit=3, trials=4,
                                 models=["scripted/oracle", "scripted/noisy:0.3"])
        assert n4 == 2 * 4 * 3  # only the new benchmark's
        again, n5, r5, j5 = await step(s, benchmarks=["t1:bar"], limit=3, trials=4,
                                       models=["scripted/oracle", "scripted/noisy:0.3"])
        assert (n5, r5, j5) == (0, 0, 0) and again.reference is None  # nothing to ask anyone
        grown = build_report(s, benchmarks=benchmark_info())
    with RunStore(tmp_path / "whole.sqlite") as w:  # one run of the whole thing
        _, n, _, _ = await step(w, benchmarks=["vitabench:delivery", "t1:bar"],
                                task_ids=delivery + bar, trials=4,
                                models=["scripted/oracle", "scripted/noisy:0.3"])
        assert n == n1 + n2 + n3 + n4
        whole = build_report(w, benchmarks=benchmark_info())
    assert metrics(grown) == metrics(whole)
    assert grown["benchmarks"]["vitabench@2025-12"]["source"]["judge"] == "scripted/judge"


def sample_data_dir(tmp_path: Path) -> Path:
    """The built-in delivery samples as a data dir (so the test can edit them)."""
    folder = tmp_path / "data" / "vitabench" / "delivery"
    folder.mkdir(parents=True)
    shutil.copy(SAMPLES / "vitabench_delivery.json", folder / "tasks_en.json")
    return tmp_path / "data"


def forget_loaded_files() -> None:
    """What a new process would see: task files and templates read again."""
    catalog._load.cache_clear()
    catalog._index.cache_clear()
    judge_prompts._load_dir.cache_clear()


@pytest.fixture
def fresh_files():
    forget_loaded_files()
    yield
    forget_loaded_files()


async def test_a_changed_task_file_makes_only_its_episodes_new(tmp_path, fresh_files):
    data = sample_data_dir(tmp_path)  # no upstream templates: sweepbench's own prompts
    cfg = {"benchmarks": ["vitabench+own-prompts:delivery"], "models": ["scripted/oracle"], "trials": 2,
           "data_dir": str(data), "judge_models": []}
    with RunStore(tmp_path / "s.sqlite") as s:
        _, n, _, _ = await step(s, **cfg)
        path = data / "vitabench" / "delivery" / "tasks_en.json"
        tasks = json.loads(path.read_text())
        tasks[2]["instructions"] += " Please hurry."
        path.write_text(json.dumps(tasks))
        forget_loaded_files()
        sweep, n2, _, _ = await step(s, **cfg)
        assert n2 == 2  # the edited task's two trials; the other tasks' episodes reused
        assert sweep.changed == {"task content": 2}
        report = build_report(s)
        assert report["superseded"] == 2  # the stale ones are kept, never counted
        vita = report["benchmarks"]["vitabench@2025-12+own-prompts"]["models"]["scripted/oracle"]
        assert vita["unjudged"] == n  # every (task, trial) once
        edited = {k for k, r in s.records().items() if r.task_id == tasks[2]["id"]}
        assert len(edited) == 4 and len(edited & set(s.run_selection(sweep.run_id))) == 2


async def test_a_changed_prompt_makes_the_episodes_new(tmp_path, fresh_files):
    data = sample_data_dir(tmp_path)
    prompts = data / "vitabench" / "upstream" / "prompts"
    prompts.mkdir(parents=True)
    template = prompts / "agent_system_prompt.yaml"
    template.write_text("english: |-\n  You help with orders. Now: {time}.\n")
    (prompts.parent / "tool_descriptions.json").write_text("{}")  # the tools' own, then
    cfg = {"benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle"], "trials": 1,
           "data_dir": str(data), "judge_models": []}
    with RunStore(tmp_path / "s.sqlite") as s:
        _, n, _, _ = await step(s, **cfg)
        system = s.episodes()[0].messages[0].content
        assert system.startswith("You help with orders.")  # the template was used
        _, unchanged, _, _ = await step(s, **cfg)
        assert unchanged == 0
        template.write_text("english: |-\n  You help with orders, politely. Now: {time}.\n")
        forget_loaded_files()
        sweep, n2, _, _ = await step(s, **cfg)
        assert n2 == n and sweep.changed == {"prompts, tools or benchmark code": n}
        latest = {s.records()[k].messages[0].content for k in s.run_selection(sweep.run_id)}
        assert all("politely" in text for text in latest)


def store_as_run(store: RunStore, cfg_data: dict, run_id: str) -> None:
    """Record every episode of a config as finished (no model needed to test identities)."""
    cfg = load_config(None, cfg_data)
    store.begin_run(run_id, msgspec.to_builtins(cfg))
    for item in build_work(cfg, None):
        store.episode_started(item.meta(cfg), run_id=run_id)
        t = item.task
        store.episode_finished(item.key, EpisodeRecord(
            run_id=run_id, model=item.model, benchmark=t.benchmark, domain=t.domain,
            task_id=t.id, lang=t.lang, trial=item.trial, termination="user_stop"))
    store.flush_sync()


def test_an_endpoints_model_name_makes_new_episodes_its_display_name_does_not(tmp_path):
    ep = {"name": "agent", "base_url": "https://api.example.com/v1", "model": "m-2025-01",
          "api_key_env": "KEY_A", "max_concurrency": 8, "price_input_per_mtok": 1.0}
    cfg = {"benchmarks": ["vitabench:delivery"], "models": ["agent"], "trials": 2,
           "endpoints": [ep]}
    with RunStore(tmp_path / "s.sqlite") as s:
        store_as_run(s, cfg, "r1")
        n = len(s.episode_status())

        def work(**changes):
            c = load_config(None, {**cfg, "endpoints": [{**ep, **changes}],
                                   "models": [changes.get("name", "agent")]})
            sweep = Sweep(c, s)
            todo, stored = sweep.work()
            return len(todo), len(stored), dict(sweep.changed)

        # not what is sent: the same episodes (a rename relabels them when selected)
        assert work(api_key_env="KEY_B", max_concurrency=2, price_input_per_mtok=9.0) == (0, n, {})
        assert work(name="agent-renamed") == (0, n, {})
        # what is sent: new episodes, and the store says why the old ones are not reused
        assert work(model="m-2025-06") == (n, 0, {"agent endpoint": n})
        assert work(extra_body={"top_p": 0.5}) == (n, 0, {"agent endpoint": n})
        assert work(temperature=0.0) == (n, 0, {"agent endpoint": n})


def test_endpoint_identity_is_what_is_sent():
    a = Endpoint(name="a", base_url="https://x/v1/", model="m", api_key_env="K")
    assert endpoint_identity(a) == {"base_url": "https://x/v1", "model": "m"}
    b = msgspec.structs.replace(a, name="b", api_key_env="L", rpm=10, max_cost_usd=3.0)
    assert endpoint_identity(b) == endpoint_identity(a)
    # the road a request takes is not what it says: a proxy or a redirect changes no episode
    c = msgspec.structs.replace(a, proxy="http://egress.corp:3128", follow_redirects=True)
    assert endpoint_identity(c) == endpoint_identity(a)
    assert endpoint_identity(Endpoint(name="m", base_url="https://x/v1")) == endpoint_identity(a)
    assert endpoint_identity(Endpoint(name="scripted/oracle", base_url="http://127.0.0.1:1")) == {
        "scripted": "scripted/oracle"}


def test_the_same_endpoint_twice_is_an_error():
    ep = {"base_url": "https://api.example.com/v1", "model": "m"}
    cfg = load_config(None, {"models": ["a", "b"], "benchmarks": ["vitabench:delivery"],
                             "endpoints": [{"name": "a", **ep}, {"name": "b", **ep}]})
    with pytest.raises(ConfigError, match="same endpoint"):
        build_work(cfg, None)


def test_identity_covers_trial_seed_user_and_limits():
    base = {"benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle"], "trials": 2}
    keys = {i.key for i in build_work(load_config(None, base), None)}
    assert len(keys) == 2 * len(load_tasks("vitabench:delivery"))
    for change in ({"seed": 1}, {"user_model": "scripted/user:5"}, {"user_mode": "neutral"},
                   {"max_turns": 5}, {"max_tool_errors": 3}, {"token_limit": 1000},
                   {"time_limit_s": 60.0}):
        other = {i.key for i in build_work(load_config(None, {**base, **change}), None)}
        assert not other & keys, change
    # speed, judges and the spec a task is reached through do not change an episode
    same = {i.key for i in build_work(load_config(None, {
        **base, "max_concurrency": 3, "max_connections": 2, "judge_models": ["scripted/judge"],
        "benchmarks": ["vitabench:delivery", "vitabench:delivery"]}), None)}
    assert same == keys


def test_the_november_release_keeps_the_identity_its_episodes_had_before_releases_had_names():
    """So a store's November episodes are reused by ``--release 2025-11``, never paid for
    again; the updated release's episodes are others."""
    def keys(spec):
        cfg = load_config(None, {"benchmarks": [spec], "models": ["scripted/oracle"],
                                 "trials": 1})
        return [i.key for i in build_work(cfg, None)]

    november = keys("vitabench@2025-11:delivery")
    # the first sample task's key as commit 4b4db47 (before releases had names) computed it
    assert november[0] == "ep-e389ef189eb10d5b9d7a272f3bb5b4c4"
    assert not set(november) & set(keys("vitabench:delivery"))
    assert keys("vitabench:delivery") == keys("vitabench@2025-12:delivery")


NOT_SENT_VALUES = {
    "name": "other", "api_key_env": "OTHER_KEY", "max_concurrency": 3, "timeout_s": 5.0,
    "connect_timeout_s": 2.0, "max_retries": 1, "transport": "aiohttp", "rpm": 10, "tpm": 1000,
    "rate_headroom": 0.5, "adaptive_concurrency": False, "min_concurrency": 2,
    "breaker_threshold": 3, "breaker_cooldown_s": 9.0, "breaker_max_wait_s": 5.0,
    "limits_key": "shared", "price_input_per_mtok": 1.0, "price_cached_input_per_mtok": 0.5,
    "price_output_per_mtok": 2.0, "max_cost_usd": 3.0,
    "max_reply_bytes": 1024, "backups": 0, "unpriced": True, "follow_redirects": True,
    "proxy": "http://127.0.0.1:3128", "kind": "self-hosted",
    "base_urls": ["https://x/v1", "https://y/v1"], "api_key_envs": ["K1", "K2"],
    "routing": "round_robin", "load_factor": 1.5,
}


def test_no_field_of_how_fast_where_from_or_at_what_price_is_in_the_identity():
    assert set(NOT_SENT_VALUES) == NOT_SENT  # each one an Endpoint field
    base = Endpoint(name="a", base_url="https://x/v1", model="m")
    for name, value in NOT_SENT_VALUES.items():
        assert value != getattr(base, name), name
        changed = msgspec.structs.replace(base, **{name: value})
        assert endpoint_identity(changed) == {"base_url": "https://x/v1", "model": "m"}, name


@pytest.mark.parametrize(("change", "part"), [
    ({"temperature": 0.0}, {"temperature": 0.0}),
    ({"max_tokens": 64}, {"max_tokens": 64}),
    ({"max_tokens_field": "max_completion_tokens"},
     {"max_tokens_field": "max_completion_tokens"}),
    ({"tool_choice": "auto"}, {"tool_choice": "auto"}),
    ({"tool_choice": {"type": "function"}}, {"tool_choice": {"type": "function"}}),
    ({"send_reasoning": True}, {"send_reasoning": True}),
    ({"extra_body": {"top_p": 0.5, "stop": ["x"]}}, {"extra_body": {"top_p": 0.5, "stop": ["x"]}}),
])
def test_what_is_sent_is_in_the_identity_and_what_is_unset_is_not(change, part):
    base = Endpoint(name="a", base_url="https://x/v1///", model="m")
    ident = endpoint_identity(msgspec.structs.replace(base, **change))
    assert ident == {**part, "model": "m", "base_url": "https://x/v1"}
    unset = msgspec.structs.replace(base, temperature=None, extra_body={}, tool_choice=None)
    assert endpoint_identity(unset) == {"model": "m", "base_url": "https://x/v1"}
    # only trailing slashes go
    xs = msgspec.structs.replace(base, base_url="https://x/XX//")
    assert endpoint_identity(xs)["base_url"] == "https://x/XX"


def test_a_scripted_endpoint_is_its_name_whatever_its_options():
    ep = Endpoint(name="scripted/noisy:0.3", base_url="http://127.0.0.1:9", temperature=1.0)
    assert endpoint_identity(ep) == {"scripted": "scripted/noisy:0.3"}
    cfg = load_config(None, {"benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle"],
                             "endpoints": [{"name": "scripted/oracle", "max_retries": 1}]})
    # a scripted model configured without a URL is identified all the same
    assert build_work(cfg, None)[0].identity["agent"] == {"scripted": "scripted/oracle"}


def test_the_identity_holds_trial_seed_user_and_limits_as_configured():
    cfg = load_config(None, {"benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle"],
                             "trials": 2, "seed": 7, "user_mode": "neutral", "max_steps": 40,
                             "max_tool_errors": 4})
    item = build_work(cfg, None)[-1]
    ident = item.identity
    assert ident["v"] == 1 and ident["trial"] == 1 and ident["seed"] == 7
    assert ident["user"] == {"scripted": "scripted/user"} and ident["user_mode"] == "neutral"
    assert ident["benchmark"] == "vitabench@2025-12"
    assert ident["limits"] == {"max_turns": item.task.max_turns, "max_tool_errors": 4,
                               "max_steps": 40}
    assert item.task.max_turns == 30
    turns = load_config(None, {"benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle"],
                               "max_turns": 5})
    assert build_work(turns, None)[0].identity["limits"]["max_turns"] == 5


def test_what_changed_names_the_parts_that_differ_in_words():
    from sweepbench.runner.identity import what_changed

    old = {"v": 1, "agent": {"scripted": "a"}, "task": "t", "fingerprint": "f", "trial": 0,
           "user": {"scripted": "u"}, "user_mode": "default", "seed": 0, "limits": {"x": 1}}
    assert what_changed(old, dict(old)) == []
    assert what_changed({"legacy": True}, old) == ["identity not recorded (older store)"]
    new = {**old, "task": "t2", "fingerprint": "f2", "agent": {}, "user": {}, "user_mode": "n",
           "seed": 1, "limits": {}, "trial": 3}
    assert what_changed(old, new) == [
        "task content", "prompts, tools or benchmark code", "agent endpoint", "user model",
        "user mode", "seed", "episode limits"]
    assert what_changed(old, {**old, "seed": 2}) == ["seed"]
    assert what_changed({k: v for k, v in old.items() if k != "user_mode"}, old) == ["user mode"]


def test_an_empty_string_sent_is_in_the_identity_unlike_an_option_left_out():
    """``assistant_empty_content = ""`` sends ``"content": ""`` where None leaves the field
    out (llama.cpp answers 500 to null): other requests, other episodes."""
    base = Endpoint(name="a", base_url="https://x/v1", model="m")
    empty = msgspec.structs.replace(base, assistant_empty_content="")
    assert endpoint_identity(empty) == {"assistant_empty_content": "", "model": "m",
                                        "base_url": "https://x/v1"}
    assert endpoint_identity(empty) != endpoint_identity(base)
    assert endpoint_identity(msgspec.structs.replace(base, tool_choice=""))["tool_choice"] == ""


def test_the_episode_limits_hold_the_token_and_time_limits_only_when_set():
    base = {"benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle"]}
    limited = load_config(None, {**base, "token_limit": 9000, "time_limit_s": 60.0})
    item = build_work(limited, None)[0]
    assert item.identity["limits"] == {"max_turns": item.task.max_turns, "max_tool_errors": 10,
                                       "max_steps": None, "token_limit": 9000,
                                       "time_limit_s": 60.0}
    assert set(build_work(load_config(None, base), None)[0].identity["limits"]) == {
        "max_turns", "max_tool_errors", "max_steps"}


def test_an_endpoint_without_a_url_is_identified_by_an_empty_one():
    ep = Endpoint(name="a", model="m")
    assert ep.urls == [] and endpoint_identity(ep) == {"model": "m", "base_url": ""}
