"""The inspect_ai eval logs (``results.export.inspect_log``) at their edges, on a small store
worked out by hand: scorer names, token usage in inspect's convention, messages and tool
calls (arguments that are not an object, or not JSON), explanations, scores, sample ids of
tasks repeated across domains, each log's results (headline first, Avg@k, mean, accuracy),
spec and stats, and a missing inspect_ai said so. tests/results/test_inspect.py reads real
runs back."""

from __future__ import annotations

import builtins
from datetime import datetime

import pytest

log = pytest.importorskip("inspect_ai.log", reason="the inspect extra installs inspect_ai")

import inspect_ai.model as im
import inspect_ai.scorer as isc
import inspect_ai.tool as it

from sweepbench.errors import StoreError
from sweepbench.model_json import ArgumentsError, parse_arguments
from sweepbench.results.export import inspect_log as inspect_mod
from sweepbench.results.export.inspect_log import (
    _explanation,
    _headlines,
    _messages,
    _metrics,
    _sample_ids,
    _score,
    _usage,
    export_inspect,
    scorer_name,
)
from sweepbench.results.fmt import iso_utc
from sweepbench.results.runinfo import package_version
from sweepbench.results.selection import Selection, load_view
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import (
    AssistantMessage,
    EpisodeRecord,
    FunctionCall,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)


def test_scorer_names():
    assert scorer_name("state", "state") == "state"
    assert scorer_name("state", "sliding") == "state/sliding"
    assert scorer_name("J", "state") == "J/state"
    assert scorer_name("scripted/judge", "likert") == "scripted/judge/likert"


def test_usage_in_inspects_convention():
    u = _usage(im, Usage(100, 20, 30), 0.5)
    assert (u.input_tokens, u.output_tokens, u.total_tokens, u.input_tokens_cache_read,
            u.total_cost) == (70, 20, 120, 30, 0.5)
    u = _usage(im, Usage(10, 2, 50))  # more cached than prompted: all of it cached
    assert (u.input_tokens, u.input_tokens_cache_read, u.total_tokens, u.total_cost) == (
        0, 10, 12, None)
    u = _usage(im, Usage(10, 2))
    assert (u.input_tokens, u.input_tokens_cache_read) == (10, None)


def _call(cid: str, name: str, args: str | None) -> ToolCall:
    return ToolCall(cid, FunctionCall(name, args))


def test_messages_with_tool_calls_and_their_results():
    rec = EpisodeRecord(run_id="r", model="m", benchmark="t1", domain="d", task_id="t",
                        trial=0, termination="user_stop", messages=[
                            SystemMessage("be nice"), UserMessage("hi"),
                            AssistantMessage(tool_calls=[
                                _call("c1", "search", '{"q": 1}'), _call("c2", "list", "[1]"),
                                _call("c3", "bad", "{oops"), _call("c4", "none", None)]),
                            ToolMessage("c1", "found", name=None),
                            ToolMessage("c2", "listed", name="named"),
                            ToolMessage("c9", "lost"),
                            AssistantMessage("done")])
    out = _messages(im, it, rec)
    assert [type(x).__name__ for x in out] == [
        "ChatMessageSystem", "ChatMessageUser", "ChatMessageAssistant", "ChatMessageTool",
        "ChatMessageTool", "ChatMessageTool", "ChatMessageAssistant"]
    assert (out[0].content, out[1].content) == ("be nice", "hi")
    calls = out[2].tool_calls
    assert out[2].content == "" and out[2].model == "m"
    assert [(c.id, c.function, c.arguments) for c in calls] == [
        ("c1", "search", {"q": 1}), ("c2", "list", {}), ("c3", "bad", {}), ("c4", "none", {})]
    assert calls[0].parse_error is None and calls[3].parse_error is None
    assert calls[1].parse_error == "arguments are not an object"
    with pytest.raises(ArgumentsError) as bad:
        parse_arguments("{oops")
    assert calls[2].parse_error == str(bad.value)
    # a result's function: its own name, else its call's, else none
    assert [(x.tool_call_id, x.function, x.content) for x in out[3:6]] == [
        ("c1", "search", "found"), ("c2", "named", "listed"), ("c9", None, "lost")]
    assert out[6].content == "done" and out[6].tool_calls is None


def test_explanations_list_rubrics_then_reasons():
    assert _explanation(None) is None and _explanation([1]) is None and _explanation({}) is None
    assert _explanation({"rubrics": [], "why": ""}) is None
    details = {"rubrics": [{"rubric": "paid", "met": True, "reasoning": "receipt"},
                           {"rubric": "sent", "met": False},
                           {"met": None, "reasoning": "no window"},
                           {"rubric": "odd", "met": "yes"}, "not a rubric"],
               "note": "n", "why": "w", "reasoning": "r"}
    assert _explanation(details) == ("[met] paid: receipt\n[not met] sent:\n[unjudged] : no "
                                     "window\n[unjudged] odd:\nr\nw\nn")
    assert _explanation({"why": 3, "note": "only"}) == "only"


def test_scores_value_answer_and_metadata():
    sc = _score(isc, {"score": 0.25, "passed": True, "details": {"why": "w"}})
    assert (sc.value, sc.answer, sc.explanation) == (0.25, "passed", "w")
    assert sc.metadata == {"passed": True, "score": 0.25, "details": {"why": "w"}}
    sc = _score(isc, {"score": None, "passed": False, "details": {}})
    assert (sc.value, sc.answer, sc.explanation) == (0.0, "failed", None)
    sc = _score(isc, {"score": None, "passed": True, "details": {}})
    assert sc.value == 1.0 and type(sc.value) is float
    sc = _score(isc, {"score": 0.5, "passed": None, "details": {}})
    assert (sc.value, sc.answer) == (0.5, None)


def _row(key: str, task: str, domain: str = "d", lang: str = "en") -> dict:
    return {"episode_key": key, "task_id": task, "domain": domain, "lang": lang}


def test_sample_ids_name_the_domain_and_language_only_where_a_task_id_repeats():
    rows = [_row("k1", "a", "hotel"), _row("k2", "a", "flight"), _row("k3", "b"),
            _row("k4", "b"), _row("k5", "c", lang="en"), _row("k6", "c", lang="zh")]
    assert _sample_ids(rows) == {"k1": "hotel:en:a", "k2": "flight:en:a", "k3": "b",
                                 "k4": "b", "k5": "d:en:c", "k6": "d:zh:c"}


def test_metrics_of_a_scorer():
    js = [{"score": 0.5, "passed": True}, {"score": None, "passed": False},
          {"score": None, "passed": None}, {"score": 1.0, "passed": None}]
    assert _metrics(js) == {"mean": (0.5 + 0.0 + 1.0) / 3, "accuracy": 0.5}
    assert _metrics([{"score": None, "passed": None}]) == {}
    assert _metrics([{"score": 0.25, "passed": None}]) == {"mean": 0.25}


def test_headlines_are_the_reports_avg_at_k_per_row():
    def r(key, task, trial, status="done"):
        return {"episode_key": key, "task_id": task, "domain": "d", "lang": "en",
                "trial": trial, "status": status}

    groups = {("m", "t1"): [r("a0", "a", 0), r("a1", "a", 1), r("b0", "b", 0),
                            r("b1", "b", 1, "error")],
              ("n", "t1"): [r("x", "a", 0)], ("m", "vb"): [r("v", "a", 0)]}
    judged = {"a0": [{"judge": "J", "method": "likert", "passed": False},
                     {"judge": "state", "method": "state", "passed": True}],
              "a1": [{"judge": "state", "method": "state", "passed": False}],
              "b0": [{"judge": "state", "method": "state", "passed": True}],
              "b1": [], "x": [], "v": [{"judge": "state", "method": "state", "passed": True}]}
    got = _headlines(groups, judged, {"t1": "state", "vb": None})
    # m: task a 1 of 2, task b 1 of 2 (the error fails): 0.5; n: its one episode unjudged;
    # vb has no headline scorer: every verdict unjudged
    assert got == {("m", "t1"): {"avg_at_k": 0.5, "k": 2.0}}


def _meta(key: str, task: str, domain: str, trial: int, model: str = "m") -> EpisodeMeta:
    return EpisodeMeta(key=key, label=f"{model}|t1:{domain}:en:{task}|{trial}", model=model,
                       benchmark="t1", domain=domain, task_id=task, lang="en", trial=trial,
                       user_model="U", user_mode="default")


def _record(task: str, domain: str, trial: int, error: str | None = None,
            run_id: str = "r2") -> EpisodeRecord:
    return EpisodeRecord(
        run_id=run_id, model="m", benchmark="t1", domain=domain, task_id=task, trial=trial,
        termination="error" if error else "user_stop", error=error, turns=2, tool_calls=1,
        wall_s=1.25, agent_usage=Usage(100, 10, 40), user_usage=Usage(30, 3),
        messages=[UserMessage("first"), AssistantMessage("one"), UserMessage("second"),
                  AssistantMessage("last")])


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r1", {}, prices={"J": {"input": 2.0, "output": 10.0}})
        s.begin_run("r2", {}, prices={"J": {"input": 2.0, "output": 10.0}})
        eps = [("k0", "a", "hotel", 0, None), ("k1", "a", "hotel", 1, "boom"),
               ("k2", "a", "flight", 0, None), ("k3", "b", "hotel", 0, None)]
        for key, task, domain, trial, error in eps:
            s.select("r2", [_meta(key, task, domain, trial)])
            s.episode_started(_meta(key, task, domain, trial), run_id="r2")
            s.episode_finished(key, _record(task, domain, trial, error))
        s.select("r2", [_meta("k9", "c", "hotel", 0)])  # still running: in no log
        s.episode_started(_meta("k9", "c", "hotel", 0), run_id="r2")
        s.judgment("k0", judge="state", method="state", passed=True, score=None,
                   details={"why": "all met"})
        s.judgment("k0", judge="J", method="likert", passed=None, score=0.75, details={})
        s.judgment("k1", judge="state", method="state", passed=True, score=None, details={})
        s.judgment("k2", judge="state", method="state", passed=False, score=None, details={})
        s.judgment("k2", judge="A", method="full", passed=None, score=None, details={})
        s.judgment("k3", judge="J", method="likert", passed=None, score=0.25, details={})
        for seq, (p, c) in enumerate([(1000, 100), (500, 0)]):
            s.event("k0", seq, "model_call", {"role": "judge", "usage": {
                "prompt_tokens": p, "completion_tokens": c}}, journal="judge|J|likert",
                run_id="r2", endpoint="J")
        s.event("k0", 0, "model_call", {"role": "agent", "usage": {"prompt_tokens": 7}},
                run_id="r2", endpoint="m")
        s.flush_sync()
        yield s


def _when(text: str) -> datetime:
    """A time inspect wrote (its own ISO form) or ours (``...Z``), to compare."""
    return datetime.fromisoformat(text)


def test_a_log_by_hand(store, tmp_path):
    view = load_view([store], Selection())
    paths = export_inspect(store, view, tmp_path / "logs")
    runs = {r["run_id"]: r for r in store.runs()}
    created = runs["r2"]["created_at"]
    stamp = iso_utc(created).replace(":", "-").replace(".", "-")
    assert paths == [tmp_path / "logs" / f"{stamp}_t1_m.eval"]
    ev = log.read_eval_log(str(paths[0]))
    assert ev.status == "success"
    assert (ev.eval.task, ev.eval.task_id, ev.eval.run_id, ev.eval.model) == (
        "t1", "t1_m", "r2", "m")
    assert _when(ev.eval.created) == _when(iso_utc(created)) == _when(ev.stats.started_at)
    assert ev.eval.dataset.name == "t1" and ev.eval.dataset.samples == 3
    assert ev.eval.dataset.sample_ids == ["b", "flight:en:a", "hotel:en:a"]
    assert ev.eval.config.epochs == 2
    assert ev.eval.metadata["sweepbench_row"] == "m" and ev.eval.metadata["runs"] == ["r2"]
    assert ev.eval.metadata["user_models"] == ["U"]
    assert ev.eval.metadata["stores"] == [str(store.path)]
    rows = {r["episode_key"]: r for r in view.rows}
    assert _when(ev.stats.completed_at) == _when(iso_utc(max(rows[k]["finished_at"]
                                                      for k in ("k0", "k1", "k2", "k3"))))
    # results: the headline (the state check) first, with the row's Avg@k and k
    res = ev.results
    assert (res.total_samples, res.completed_samples) == (4, 4)
    assert res.metadata == {"headline_scorer": "state"}
    assert [(x.name, x.scorer, x.scored_samples, x.unscored_samples, x.metadata)
            for x in res.scores] == [("state", "state", 3, 1, {"headline": True}),
                                     ("J/likert", "J/likert", 2, 2, {"headline": False})]
    state, likert = res.scores
    # tasks hotel:a (k0 passed, k1 an error: failed), flight:a (failed), hotel:b (unjudged);
    # k: the fewest trials of a task (flight:a's one)
    assert {k: v.value for k, v in state.metrics.items()} == {
        "avg_at_k": (0.5 + 0.0) / 2, "k": 1.0, "mean": 2 / 3, "accuracy": 2 / 3}
    assert list(state.metrics)[:2] == ["avg_at_k", "k"]
    assert {k: v.value for k, v in likert.metrics.items()} == {"mean": 0.5}
    # samples as inspect reads them back (by id, then epoch); the headline's score first
    samples = {x.metadata["episode_key"]: x for x in ev.samples}
    assert [x.metadata["episode_key"] for x in ev.samples] == ["k3", "k2", "k0", "k1"]
    k0, k1, k2, k3 = (samples[k] for k in ("k0", "k1", "k2", "k3"))
    assert (k0.id, k0.epoch, k1.id, k1.epoch, k2.id, k3.id) == (
        "hotel:en:a", 1, "hotel:en:a", 2, "flight:en:a", "b")
    assert list(k0.scores) == ["state", "J/likert"]
    assert (k0.scores["state"].value, k0.scores["state"].answer,
            k0.scores["state"].explanation) == (1.0, "passed", "all met")
    assert k0.scores["J/likert"].value == 0.75
    assert list(k2.scores) == ["state"]  # A/full judged nothing: no score
    assert list(k3.scores) == ["J/likert"]
    assert k0.input == "first" and k0.output.completion == "last" and k0.target == ""
    assert [(x.role, x.text) for x in k0.messages] == [
        ("user", "first"), ("assistant", "one"), ("user", "second"), ("assistant", "last")]
    assert k0.output.model == "m" and k0.output.choices[0].stop_reason == "stop"
    assert k0.total_time == 1.25 and k0.error is None
    assert k1.error.message == "boom"
    assert (_when(k0.started_at), _when(k0.completed_at)) == (
        _when(iso_utc(rows["k0"]["started_at"])), _when(iso_utc(rows["k0"]["finished_at"])))
    assert k0.metadata == {
        "episode_key": "k0", "episode_label": "m|t1:hotel:en:a|0", "benchmark": "t1",
        "domain": "hotel", "lang": "en", "task_id": "a", "trial": 0,
        "termination": "user_stop", "status": "done", "unreachable": None, "turns": 2,
        "tool_calls": 1, "judge_cost_usd": {"J": (1000 * 2.0 + 100 * 10.0) / 1e6
                                            + 500 * 2.0 / 1e6}}
    assert k1.metadata["judge_cost_usd"] == {} and k1.metadata["status"] == "error"
    # usage: the agent's and the user simulator's from the record, the judge's from its calls
    u = k0.model_usage
    assert list(u) == ["m", "U", "J"]
    assert (u["m"].input_tokens, u["m"].input_tokens_cache_read, u["m"].output_tokens) == (
        60, 40, 10)
    assert (u["U"].input_tokens, u["U"].output_tokens) == (30, 3)
    assert (u["J"].input_tokens, u["J"].output_tokens, u["J"].total_tokens) == (1500, 100, 1600)
    assert list(k1.model_usage) == ["m", "U"]
    totals = ev.stats.model_usage
    assert (totals["m"].input_tokens, totals["m"].output_tokens) == (4 * 60, 4 * 10)
    assert totals["J"].total_tokens == 1600 and totals["U"].total_tokens == 4 * 33


def test_a_row_with_no_recorded_run_dates_from_its_first_episode(store, tmp_path,
                                                                 monkeypatch):
    view = load_view([store], Selection())
    view.runs = []  # as when a run's row is gone: its episodes' own times
    paths = export_inspect(store, view, tmp_path)
    first = min(r["started_at"] for r in view.rows if r["episode_key"] != "k9")
    ev = log.read_eval_log(str(paths[0]))
    assert _when(ev.eval.created) == _when(iso_utc(first))
    assert paths[0].name.startswith(iso_utc(first).replace(":", "-").replace(".", "-") + "_")


def test_a_log_per_row_and_benchmark_in_order(store, tmp_path):
    store.select("r1", [_meta("n0", "a", "hotel", 0, model="n/x")])
    store.episode_started(_meta("n0", "a", "hotel", 0, model="n/x"), run_id="r1")
    store.episode_finished("n0", _record("a", "hotel", 0, run_id="r1"))
    store.flush_sync()
    paths = export_inspect(store, load_view([store], Selection()), tmp_path)
    assert [p.name.split("_", 1)[1] for p in paths] == ["t1_m.eval", "t1_n_x.eval"]
    ev = log.read_eval_log(str(paths[1]))
    assert (ev.eval.run_id, ev.eval.task_id, ev.eval.dataset.sample_ids) == ("r1", "t1_n_x",
                                                                              ["a"])
    assert _when(ev.eval.created) == _when(iso_utc(
        {r["run_id"]: r for r in store.runs()}["r1"]["created_at"]))
    assert ev.results.scores == [] and ev.samples[0].scores is None


def test_without_inspect_ai_the_export_says_how_to_get_it(store, tmp_path, monkeypatch):
    real = builtins.__import__

    def no_inspect(name, *a, **kw):
        if name.startswith("inspect_ai"):
            raise ImportError(name)
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_inspect)
    with pytest.raises(StoreError) as err:
        export_inspect(store, load_view([store], Selection()), tmp_path / "out")
    assert str(err.value) == "inspect_ai logs need inspect_ai: pip install 'sweepbench[inspect]'"
    assert isinstance(err.value.__cause__, ImportError)
    assert not (tmp_path / "out").exists()



def _odd_store(path):
    """Episodes at the edges: no user model, a user model that is the agent's, a judge that
    is the user model, three scorers, no messages, an error without words, a benchmark whose
    headline judge has judged nothing, a cached and an unpriced judge call."""
    with RunStore(path) as s:
        s.begin_run("r", {}, prices={"U": {"input": 1.0, "cached_input": 0.5}})

        def episode(key, *, model="m", user=None, bench="t1", messages=True, error=None,
                    extra=()):
            meta = EpisodeMeta(key=key, label=f"{model}|{bench}:d:en:{key}|0", model=model,
                               benchmark=bench, domain="d", task_id=key, lang="en", trial=0,
                               user_model=user)
            s.select("r", [meta])
            s.episode_started(meta, run_id="r")
            rec = _record(key, "d", 0, run_id="r")
            s.episode_finished(key, EpisodeRecord(
                run_id="r", model=model, benchmark=bench, domain="d", task_id=key, trial=0,
                termination="error" if error == "" else "user_stop", error=error or None,
                agent_usage=Usage(10, 1), user_usage=Usage(20, 2),
                messages=[*rec.messages, *extra] if messages else []))

        episode("e0", extra=[AssistantMessage(tool_calls=[_call("c1", "find", '{"a": 1}')]),
                             ToolMessage("c1", "found")])  # no user model: "user"
        episode("e1", user="m")  # the user simulator is the agent's model
        episode("e2", user="U", messages=False, error="")
        episode("v0", bench="vitabench")
        s.event("e2", 0, "model_call", {"role": "judge", "usage": {
            "prompt_tokens": 100, "cached_prompt_tokens": 40, "completion_tokens": 5}},
            journal="judge|U|likert", run_id="r", endpoint="U")
        s.event("e2", 0, "model_call", {"role": "judge", "usage": {"prompt_tokens": 7}},
                journal="judge|K|full", run_id="r", endpoint="K")  # no price
        for key in ("e0", "e1", "e2"):
            s.judgment(key, judge="state", method="state", passed=True, score=None, details={})
        s.judgment("e2", judge="U", method="likert", passed=None, score=0.5, details={})
        s.judgment("e2", judge="K", method="full", passed=False, score=None, details={})
        s.flush_sync()


def test_a_log_at_its_edges(tmp_path):
    _odd_store(tmp_path / "s.sqlite")
    with RunStore(tmp_path / "s.sqlite") as s:
        paths = export_inspect(s, load_view([s], Selection()), tmp_path / "a" / "b",
                               benchmarks={"vitabench": {"headline": "sliding"}})
    evs = [log.read_eval_log(str(p)) for p in paths]  # a log per row: model, user model
    assert sorted((ev.eval.task, ev.eval.metadata["sweepbench_row"]) for ev in evs) == [
        ("t1", "m [user None, None]"), ("t1", "m [user U, None]"), ("t1", "m [user m, None]"),
        ("vitabench", "m [user None, None]")]
    assert all(ev.eval.packages == {"sweepbench": package_version()} for ev in evs)
    of = {x.metadata["episode_key"]: (ev, x) for ev in evs for x in ev.samples}
    (l0, e0), (l1, e1), (l2, e2), (vb, _) = (of[k] for k in ("e0", "e1", "e2", "v0"))
    assert (l0.eval.metadata["user_models"], l1.eval.metadata["user_models"]) == ([""], ["m"])
    call = e0.messages[4].tool_calls[0]
    assert (call.id, call.function, call.arguments) == ("c1", "find", {"a": 1})
    assert e0.messages[5].function == "find"
    assert {k: (u.input_tokens, u.output_tokens) for k, u in e0.model_usage.items()} == {
        "m": (10, 1), "user": (20, 2)}
    assert {k: (u.input_tokens, u.output_tokens) for k, u in e1.model_usage.items()} == {
        "m": (30, 3)}  # agent and user simulator on one model: summed
    u = e2.model_usage
    assert (u["U"].input_tokens, u["U"].input_tokens_cache_read, u["U"].output_tokens) == (
        20 + 60, 40, 2 + 5)  # the user simulator's and the judge's, cached apart
    assert (u["K"].input_tokens, u["K"].output_tokens) == (7, 0)
    assert e2.metadata["judge_cost_usd"] == {"U": (60 * 1.0 + 40 * 0.5) / 1e6, "K": 0.0}
    assert list(e2.scores) == ["state", "K/full", "U/likert"]  # the headline, then by name
    assert [x.name for x in l2.results.scores] == ["state", "K/full", "U/likert"]
    assert e2.input == "" and e2.output.choices == [] and e2.messages == []
    assert e2.error.message == "error"
    # no sliding judgment yet: no headline scorer
    assert vb.results.metadata == {"headline_scorer": None} and vb.results.scores == []


def test_a_log_takes_the_benchmarks_headlines(tmp_path):
    _odd_store(tmp_path / "s.sqlite")
    with RunStore(tmp_path / "s.sqlite") as s:
        paths = export_inspect(s, load_view([s], Selection()), tmp_path / "out",
                               benchmarks={"t1": {"headline": "full"}})
    evs = [log.read_eval_log(str(p)) for p in paths]
    e2 = next(ev for ev in evs if any(x.metadata["episode_key"] == "e2" for x in ev.samples))
    assert e2.results.metadata == {"headline_scorer": "K/full"}
    assert [x.name for x in e2.results.scores] == ["K/full", "U/likert", "state"]


def test_a_log_reads_a_chunk_of_keys_at_a_time(store, tmp_path, monkeypatch):
    monkeypatch.setattr(inspect_mod, "CHUNK", 1)
    asked = []
    for name in ("records", "judgments", "model_calls"):
        real = getattr(store, name)
        monkeypatch.setattr(store, name, lambda keys=None, _r=real, _n=name, **kw: (
            asked.append((_n, keys)), _r(keys, **kw))[1])
    paths = export_inspect(store, load_view([store], Selection()), tmp_path)
    assert len(log.read_eval_log(str(paths[0])).samples) == 4
    assert all(keys is not None for _, keys in asked)
    first = [keys for n, keys in asked if n == "records"][:5]
    assert sorted(first) == [["k0"], ["k1"], ["k2"], ["k3"], ["k9"]]
    assert [sorted(keys) for n, keys in asked if n == "model_calls"] == [
        ["k0", "k1", "k2", "k3"]]  # the log's episodes
