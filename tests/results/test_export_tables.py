"""The export's three tables as columns (``results.export.tables``), on a small store whose
every cell is worked out by hand: the judge/method column groups and their names (collisions
numbered), each table's cells for a done, a failed, a running and an uncalled episode, and
the same cells whatever the chunk size."""

from __future__ import annotations

import warnings

import pytest

from sweepbench.results.export import tables as tables_mod
from sweepbench.results.export.columns import as_list
from sweepbench.results.export.tables import (
    COLUMNS,
    judge_prefix,
    plan_tables,
    snake,
    table_chunks,
)
from sweepbench.results.selection import Selection, load_view
from sweepbench.runner.build import benchmark_info
from sweepbench.store.reads import StoreReads
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import EpisodeRecord, Usage

T1_LABEL = benchmark_info()["t1"]["headline_label"]


def _record(task: str, benchmark: str = "t1", error: str | None = None) -> EpisodeRecord:
    return EpisodeRecord(
        run_id="r", model="m", benchmark=benchmark, domain="hotel", task_id=task, trial=0,
        termination="error" if error else "user_stop", error=error, turns=2, steps=5,
        agent_calls=3, user_calls=1, tool_calls=4, tool_errors=1, wall_s=1.5,
        agent_usage=Usage(100, 20, 80, 12), user_usage=Usage(50, 5, 0, 1))


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", {}, prices={"m": {"input": 1.0, "output": 2.0},
                                     "J": {"input": 4.0}})
        for key, bench, unreachable in (("k0", "t1", None), ("k1", "t1", None),
                                        ("k2", "t1", "no such hotel"), ("k3", "vitabench", None)):
            meta = EpisodeMeta(key=key, label=f"m|{bench}:hotel:en:{key}|0", model="m",
                               benchmark=bench, domain="hotel", task_id=key, lang="en",
                               trial=0, user_model="U", user_mode="default",
                               unreachable=unreachable)
            s.select("r", [meta])
            s.episode_started(meta, run_id="r")
        s.episode_finished("k0", _record("k0"))
        s.episode_finished("k1", _record("k1", error="boom"))
        s.episode_finished("k3", _record("k3", benchmark="vitabench"))
        call = {"role": "agent", "usage": {"prompt_tokens": 1000, "completion_tokens": 10},
                "latency_s": 0.5, "attempts": 1}
        s.event("k0", 0, "model_call", call, run_id="r", endpoint="m")
        s.event("k0", 1, "model_call", {**call, "latency_s": 1.5, "attempts": 3}, run_id="r",
                endpoint="m")
        s.event("k0", 0, "model_call", {"role": "judge", "usage": {"prompt_tokens": 100,
                                                                    "completion_tokens": 7}},
                journal="judge|J|likert", run_id="r", endpoint="J")
        s.event("k2", 0, "model_call", {"role": "user", "usage": {"prompt_tokens": 9}},
                run_id="r", endpoint="free")
        s.event("k3", 0, "model_call", {"role": "user", "usage": {"prompt_tokens": 500}},
                run_id="r", endpoint="m")
        s.judgment("k0", judge="state", method="state", passed=True, score=1.0,
                   details={"tool": {"f1": 0.5}, "n": 3, "why": "x", "passed": True,
                            "score": 0.9})
        s.judgment("k0", judge="J", method="likert", passed=None, score=0.5, details={},
                   run_id="r", judge_key="J@http://j/v1")
        s.judgment("k1", judge="state", method="state", passed=True, score=0.0,
                   details={"unreachable": "gone", "tool": {"f1": 1}, "m": 2.5})
        s.judgment("k3", judge="J", method="sliding", passed=False, score=0.25,
                   details={"rubrics": [{"met": True}]}, run_id="r2")
        s.flush_sync()
        yield s


def _table(store, table: str, **kw) -> dict[str, list]:
    view = load_view([store], Selection())
    plan = plan_tables(store, view, benchmark_info())
    out: dict[str, list] = {}
    for chunk in table_chunks(store, view, plan, table, benchmark_info(), **kw):
        for name, col in chunk.items():
            out.setdefault(name, []).extend(as_list(col))
    return out


def test_snake_writes_any_name_as_lower_case_ascii_words():
    assert snake("scripted/noisy:0.3") == "scripted_noisy_0_3"
    assert snake("__Tool F1__") == "tool_f1"
    assert snake("état") == "tat"
    assert snake("") == snake("!!") == snake("é") == "x"
    assert judge_prefix("scripted/judge", "Likert") == "judge_scripted_judge_likert"


def test_the_plan_has_a_column_group_per_judge_and_method(store):
    view = load_view([store], Selection())
    plan = plan_tables(store, view, benchmark_info())
    # sorted pairs; passed and score first, then the numeric details by name (not the
    # details' own passed / score, not text, not lists)
    assert [(pair, field, col, typ) for pair, field, col, typ in plan.pair_columns] == [
        (("J", "likert"), "passed", "judge_j_likert_passed", "bool"),
        (("J", "likert"), "score", "judge_j_likert_score", "float64"),
        (("J", "sliding"), "passed", "judge_j_sliding_passed", "bool"),
        (("J", "sliding"), "score", "judge_j_sliding_score", "float64"),
        (("state", "state"), "passed", "judge_state_state_passed", "bool"),
        (("state", "state"), "score", "judge_state_state_score", "float64"),
        (("state", "state"), "m", "judge_state_state_m", "float64"),
        (("state", "state"), "n", "judge_state_state_n", "float64"),
        (("state", "state"), "tool_f1", "judge_state_state_tool_f1", "float64"),
    ]
    assert plan.types["calls"] == {n: t for n, t, _ in COLUMNS["calls"]}
    assert plan.types["judgments"] == {n: t for n, t, _ in COLUMNS["judgments"]}
    assert list(plan.types["episodes"]) == [n for n, _, _ in COLUMNS["episodes"]] + [
        c for _, _, c, _ in plan.pair_columns]
    assert plan.types["episodes"]["judge_state_state_passed"] == "bool"
    assert plan.sources["t1"]["judge"] == "state" and plan.sources["t1"]["method"] == "state"
    assert plan.sources["vitabench"]["method"] == "sliding"


def test_pairs_whose_names_meet_get_numbered_groups_and_a_detail_one_column(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", {})
        meta = EpisodeMeta(key="k", label="m|t1:hotel:en:k|0", model="m", benchmark="t1",
                           domain="hotel", task_id="k", lang="en", trial=0)
        s.select("r", [meta])
        s.episode_started(meta, run_id="r")
        s.judgment("k", judge="a", method="b-c", passed=True, score=1.0,
                   details={"x-y": 1, "x_y": 2, "Z": True})
        s.judgment("k", judge="a-b", method="c", passed=False, score=0.0, details={})
        s.judgment("k", judge="a-b", method="c2", passed=False, score=0.0, details={})
        s.flush_sync()
        plan = plan_tables(s, load_view([s], Selection()))
    assert [(pair, field, col) for pair, field, col, _ in plan.pair_columns] == [
        (("a", "b-c"), "passed", "judge_a_b_c_passed"),
        (("a", "b-c"), "score", "judge_a_b_c_score"),
        (("a", "b-c"), "Z", "judge_a_b_c_z"),
        (("a", "b-c"), "x-y", "judge_a_b_c_x_y"),  # x_y snakes to the same column: left out
        (("a-b", "c"), "passed", "judge_a_b_c_2_passed"),
        (("a-b", "c"), "score", "judge_a_b_c_2_score"),
        (("a-b", "c2"), "passed", "judge_a_b_c2_passed"),
        (("a-b", "c2"), "score", "judge_a_b_c2_score"),
    ]


def test_the_judgments_table_by_hand(store):
    t = _table(store, "judgments")
    assert list(t) == [n for n, _, _ in COLUMNS["judgments"]]
    rows = list(zip(t["episode_key"], t["episode_label"], t["judge"], t["method"], t["passed"],
                    t["score"], t["headline"], t["run_id"], t["judge_key"],
                    t["details_json"]))
    assert sorted(rows) == [
        ("k0", "m|t1:hotel:en:k0|0", "J", "likert", None, 0.5, False, "r", "J@http://j/v1",
         "{}"),
        ("k0", "m|t1:hotel:en:k0|0", "state", "state", True, 1.0, True, None, "",
         '{"tool":{"f1":0.5},"n":3,"why":"x","passed":true,"score":0.9}'),
        ("k1", "m|t1:hotel:en:k1|0", "state", "state", True, 0.0, True, None, "",
         '{"unreachable":"gone","tool":{"f1":1},"m":2.5}'),
        # VitaBench's headline: its sliding judge, the one judge model present
        ("k3", "m|vitabench:hotel:en:k3|0", "J", "sliding", False, 0.25, True, "r2", "",
         '{"rubrics":[{"met":true}]}'),
    ]
    assert all(isinstance(c, float) and c > 1e9 for c in t["created_at"])


def test_the_episodes_table_by_hand(store):
    t = _table(store, "episodes")
    view = load_view([store], Selection())
    plan = plan_tables(store, view, benchmark_info())
    assert list(t) == list(plan.types["episodes"])
    assert t["episode_key"] == ["k0", "k1", "k2", "k3"]
    assert t["episode_label"] == [f"m|{b}:hotel:en:k{i}|0" for i, b in
                                  enumerate(["t1", "t1", "t1", "vitabench"])]
    assert (t["run_id"], t["model"], t["spec"]) == (["r"] * 4, ["m"] * 4, [None] * 4)
    assert t["benchmark"] == ["t1", "t1", "t1", "vitabench"]
    vita_label = benchmark_info()["vitabench"]["headline_label"]
    assert t["headline"] == [T1_LABEL] * 3 + [vita_label]
    assert (t["domain"], t["task_id"], t["lang"], t["trial"]) == (
        ["hotel"] * 4, ["k0", "k1", "k2", "k3"], ["en"] * 4, [0] * 4)
    assert (t["user_model"], t["user_mode"]) == (["U"] * 4, ["default"] * 4)
    assert t["status"] == ["done", "error", "running", "done"]
    assert t["termination"] == ["user_stop", "error", None, "user_stop"]
    assert t["error"] == [None, "boom", None, None]
    # the row's own reason first, else the state check's
    assert t["unreachable"] == [None, "gone", "no such hotel", None]
    assert all(isinstance(x, float) for x in t["started_at"])
    assert [x is None for x in t["finished_at"]] == [False, False, True, False]
    for col, v in (("turns", 2), ("steps", 5), ("agent_calls", 3), ("user_calls", 1),
                   ("tool_calls", 4), ("tool_errors", 1), ("wall_s", 1.5),
                   ("agent_prompt_tokens", 100), ("agent_completion_tokens", 20),
                   ("agent_cached_prompt_tokens", 80), ("agent_reasoning_tokens", 12),
                   ("user_prompt_tokens", 50), ("user_completion_tokens", 5),
                   ("user_cached_prompt_tokens", 0), ("user_reasoning_tokens", 1)):
        assert t[col] == [v, v, None, v], col
    assert t["judge_prompt_tokens"] == [100, 0, 0, 0]
    assert t["judge_completion_tokens"] == [7, 0, 0, 0]
    assert t["agent_latency_mean_s"] == [1.0, None, None, None]
    assert t["agent_latency_max_s"] == [1.5, None, None, None]
    assert t["retries"] == [2, 0, 0, 0]
    # k0: two agent calls of 1000 prompt and 10 completion tokens at 1 and 2 $/M, a judge
    # call of 100 prompt tokens at 4 $/M; k2's one call is unpriced, k1 made none, k3 one
    # user call of 500 prompt tokens at 1 $/M
    assert t["cost_agent_usd"] == [2 * (1000 * 1.0 + 10 * 2.0) / 1e6, None, None, 0.0]
    assert t["cost_user_usd"] == [0.0, None, None, 500 / 1e6]
    assert t["cost_judge_usd"] == [100 * 4.0 / 1e6, None, None, 0.0]
    assert t["cost_total_usd"] == [2 * (1000 * 1.0 + 10 * 2.0) / 1e6 + 100 * 4.0 / 1e6, None,
                                   None, 500 / 1e6]
    assert t["unpriced_calls"] == [0, 0, 1, 0]
    assert t["headline_judge"] == ["state", "state", "state", "J"]
    assert t["headline_method"] == ["state", "state", "state", "sliding"]
    assert t["passed"] == [True, False, None, False]  # an error fails, whatever was judged
    assert t["score"] == [1.0, 0.0, None, 0.25]
    assert t["judge_state_state_passed"] == [True, True, None, None]
    assert t["judge_state_state_score"] == [1.0, 0.0, None, None]
    assert t["judge_state_state_tool_f1"] == [0.5, 1, None, None]
    assert t["judge_state_state_n"] == [3, None, None, None]
    assert t["judge_state_state_m"] == [None, 2.5, None, None]
    assert t["judge_j_likert_passed"] == [None] * 4
    assert t["judge_j_likert_score"] == [0.5, None, None, None]
    assert t["judge_j_sliding_passed"] == [None, None, None, False]
    assert t["judge_j_sliding_score"] == [None, None, None, 0.25]


def test_the_calls_table_is_the_chunks_calls(store):
    t = _table(store, "calls")
    assert t["episode_key"] == ["k0", "k0", "k0", "k2", "k3"]
    assert t["episode_label"] == ["m|t1:hotel:en:k0|0"] * 3 + ["m|t1:hotel:en:k2|0",
                                                               "m|vitabench:hotel:en:k3|0"]
    assert t["source"] == ["agent", "agent", "judge", "user", "user"]
    assert t["cost_usd"] == [(1000 * 1.0 + 10 * 2.0) / 1e6] * 2 + [400 / 1e6, None, 500 / 1e6]


@pytest.mark.parametrize("chunk", [1, 2, 3])
def test_every_chunk_size_gives_the_same_tables(store, monkeypatch, chunk):
    whole = {t: _table(store, t) for t in ("episodes", "calls", "judgments")}
    monkeypatch.setattr(tables_mod, "CHUNK", chunk)
    for t in ("episodes", "calls", "judgments"):
        assert _table(store, t) == whole[t], t
    # the calls table hands each chunk's sums on; the episodes table takes them in order
    sums: list = []
    assert _table(store, "calls", sums=sums) == whole["calls"]
    assert len(sums) == -(-4 // chunk)
    assert _table(store, "episodes", sums=sums) == whole["episodes"]


def test_an_episode_without_timed_calls_warns_of_nothing(store):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's 0 / 0 for a mean of no latencies
        assert _table(store, "episodes")["agent_latency_mean_s"] == [1.0, None, None, None]


def test_the_episodes_table_takes_the_calls_sums_instead_of_reading_them_again(store,
                                                                            monkeypatch):
    whole = _table(store, "episodes")
    sums: list = []
    _table(store, "calls", sums=sums)
    monkeypatch.setattr(tables_mod, "read_calls", lambda *a: pytest.fail("read again"))
    assert _table(store, "episodes", sums=sums) == whole


def test_an_older_store_without_facts_gives_the_same_episodes_from_its_records(store,
                                                                            monkeypatch):
    whole = _table(store, "episodes")
    monkeypatch.setattr(StoreReads, "has_facts", property(lambda self: False))
    monkeypatch.setattr(StoreReads, "episode_facts", lambda *a: pytest.fail("no facts"))
    assert _table(store, "episodes") == whole


def test_a_runs_tables_have_only_its_episodes_judges(store):
    meta = EpisodeMeta(key="other", label="m|t1:hotel:en:o|0", model="m", benchmark="t1",
                       domain="hotel", task_id="o", lang="en", trial=0)
    store.begin_run("r2", {})
    store.select("r2", [meta])
    store.episode_started(meta, run_id="r2")
    store.judgment("other", judge="X", method="y", passed=True, score=1.0, details={"z": 1})
    store.flush_sync()
    everything = plan_tables(store, load_view([store], Selection()))
    assert ("X", "y") in {pair for pair, _, _, _ in everything.pair_columns}
    mine = plan_tables(store, load_view([store], Selection(run_id="r")))
    assert {pair for pair, _, _, _ in mine.pair_columns} == {
        ("J", "likert"), ("J", "sliding"), ("state", "state")}
