"""Money under control: stored prices price every call, and a cap stops a sweep near it."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from sweepbench.cli import BUDGET_EXIT, main
from sweepbench.config import load_config
from sweepbench.results.cost import Spend
from sweepbench.results.profile import Prices
from sweepbench.results.report import build_report
from sweepbench.store.codec import register
from sweepbench.store.runstore import RunStore
from sweepbench.runner.budget import Budget
from sweepbench.runner.plan import prior_per_episode
from sweepbench.runner.sweep import Sweep
from sweepbench.wire import Usage

# dollars per million tokens, high so that a small sweep costs cents
PRICES = {"scripted/oracle": (300.0, 30.0, 1200.0), "scripted/user": (100.0, 10.0, 400.0),
          "scripted/judge": (200.0, 20.0, 800.0)}
ENDPOINTS = [{"name": n, "price_input_per_mtok": i, "price_cached_input_per_mtok": c,
              "price_output_per_mtok": o} for n, (i, c, o) in PRICES.items()]
BASE = {"benchmarks": ["vitabench:delivery", "t1:bar"], "models": ["scripted/oracle"],
        "trials": 2, "max_concurrency": 4, "judge_models": ["scripted/judge"],
        "endpoints": ENDPOINTS, "reference_latency_s": 0.002}


def stored_cost(path) -> tuple[float, dict[str, float]]:
    """Every stored call's usage at its run's stored price, straight from the tables."""
    db = sqlite3.connect(path)
    register(db)  # sb_json: compressed payloads (store.codec) as JSON text
    prices = {r: json.loads(p) for r, p in db.execute("SELECT run_id, prices FROM runs")}
    total, by_role = 0.0, {"agent": 0.0, "user": 0.0, "judge": 0.0}
    for journal, run_id, endpoint, payload in db.execute(
            "SELECT journal, run_id, endpoint, sb_json(payload) FROM events "
            "WHERE kind = 'model_call'"):
        usage = json.loads(payload).get("usage") or {}
        p = prices[run_id][endpoint]
        prompt, cached = usage.get("prompt_tokens", 0), usage.get("cached_prompt_tokens", 0)
        cost = ((prompt - cached) * p["input"] + cached * p["cached_input"]
                + usage.get("completion_tokens", 0) * p["output"]) / 1e6
        role = "judge" if journal else json.loads(payload)["role"]
        total += cost
        by_role["agent" if role == "agent" else role if role == "judge" else "user"] += cost
    db.close()
    return total, by_role


def test_report_cost_is_stored_usage_times_stored_prices_without_a_config(tmp_path, capsys):
    config = tmp_path / "sweep.toml"
    config.write_text("\n".join(
        ["[[endpoints]]\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in ep.items())
         for ep in ENDPOINTS]) + "\n")
    store = tmp_path / "s.sqlite"
    assert main(["run", "--config", str(config), "--benchmark", "vitabench:delivery",
                 "--benchmark", "t1:bar", "--model", "scripted/oracle", "--trials", "1",
                 "--judge-model", "scripted/judge", "--out", str(store), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["report", str(store), "--json"]) == 0  # no --config: the stored prices
    report = json.loads(capsys.readouterr().out)
    total, by_role = stored_cost(store)
    cost = report["cost"]
    assert cost["total"] == pytest.approx(total) and total > 0
    assert {r: cost[r] for r in by_role} == pytest.approx(by_role)
    assert all(by_role[r] > 0 for r in ("agent", "user", "judge"))
    assert cost["unpriced_calls"] == 0
    assert sum(cost["by_benchmark"].values()) == pytest.approx(total)
    assert sum(cost["by_task"].values()) == pytest.approx(total)
    per_bench = [bs["models"]["scripted/oracle"]["cost"] for bs in report["benchmarks"].values()]
    assert sum(c["total"] for c in per_bench) == pytest.approx(total)
    t1 = report["benchmarks"]["t1"]["models"]["scripted/oracle"]
    assert t1["cost"]["per_pass"] == pytest.approx(t1["cost"]["total"] / t1["passed"])
    capsys.readouterr()
    assert main(["report", str(store)]) == 0
    assert f"total ${total:,.4f}" in " ".join(capsys.readouterr().out.split())


async def test_max_cost_stops_within_one_in_flight_window_and_a_higher_cap_continues(tmp_path):
    with RunStore(tmp_path / "full.sqlite") as full:
        whole = await Sweep(load_config(None, BASE), full).run()
        report = build_report(full)
        per_episode = [sum(roles.values()) for roles in _episode_costs(full).values()]
    total = report["cost"]["total"]
    cap = 0.3 * total
    window = BASE["max_concurrency"] * max(per_episode)  # what can be in flight at once
    cfg = load_config(None, {**BASE, "max_cost_usd": cap})
    with RunStore(tmp_path / "capped.sqlite") as store:
        first = await Sweep(cfg, store, prior=prior_per_episode(cfg, store)).run()
        assert first.budget_stop and "spend cap" in first.budget_stop
        assert 0 < first.episodes < whole.episodes and first.not_started > 0
        spent = build_report(store)["cost"]["total"]
        assert spent <= cap + window and spent == pytest.approx(first.spent)
        assert "running" not in store.episode_status().values()  # in flight: finished
        assert store.run(first.run_id)["status"] == "budget"
        # the same cap again: at most what its estimate still allows, never past the window
        same = await Sweep(cfg, store, prior=prior_per_episode(cfg, store)).run()
        assert same.budget_stop and first.episodes + same.episodes < whole.episodes
        again = build_report(store)["cost"]["total"]
        assert again <= cap + window
        assert same.spent == pytest.approx(again)  # the stored spend counted, not only the new
        higher = load_config(None, {**BASE, "max_cost_usd": 10 * total})
        rest = await Sweep(higher, store).run()
        assert rest.budget_stop is None
        assert first.episodes + same.episodes + rest.episodes == whole.episodes
        final = build_report(store)
    keys = ("tasks", "episodes", "avg", "pass_at_k", "pass_hat_k", "state", "unjudged")
    for b, bs in report["benchmarks"].items():
        for m, e in bs["models"].items():
            assert {k: final["benchmarks"][b]["models"][m][k] for k in keys} == {
                k: e[k] for k in keys}


async def test_an_endpoint_budget_stops_the_episodes_that_use_it(tmp_path):
    eps = [dict(ep) for ep in ENDPOINTS]
    eps[1]["max_cost_usd"] = 0.0  # the user simulator may cost nothing
    cfg = load_config(None, {**BASE, "endpoints": eps})
    with RunStore(tmp_path / "s.sqlite") as store:
        outcome = await Sweep(cfg, store, prior=prior_per_episode(cfg, store)).run()
    assert outcome.episodes == 0 and "endpoint 'scripted/user' budget" in outcome.budget_stop


def test_max_cost_from_the_command_line_exits_with_its_own_status(tmp_path, capsys):
    config = tmp_path / "sweep.toml"
    config.write_text("\n".join(
        ["[[endpoints]]\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in ep.items())
         for ep in ENDPOINTS]) + "\n")
    args = ["run", "--config", str(config), "--benchmark", "t1:bar", "--model", "scripted/oracle",
            "--trials", "2", "--out", str(tmp_path / "s.sqlite"), "--no-progress"]
    assert main([*args, "--max-cost", "0.000001"]) == BUDGET_EXIT
    err = capsys.readouterr().err
    assert "stopped by the spending cap" in err and "higher --max-cost" in err
    assert main([*args, "--max-cost", "1000"]) == 0
    with pytest.raises(SystemExit) as usage:
        main(["run", "--max-cost", "-1"])
    assert usage.value.code == 2


def _episode_costs(store: RunStore) -> dict[str, dict[str, float]]:
    from sweepbench.results.cost import prices_by_run

    return dict(Spend.of(store.model_calls(), prices_by_run(store.runs())).by_episode)


def test_a_hedged_call_costs_its_billed_losing_copies_too():
    from sweepbench.results.cost import call_cost
    from sweepbench.results.profile import as_prices
    from sweepbench.store.reads import ModelCallRow

    prices = {"r": {"m": as_prices({"input": 3.0, "cached_input": 1.0, "output": 10.0})}}

    def cost(stalls):
        row = ModelCallRow("e", "", "r", "m", "agent", 1000, 100, 200, 1.0, 1, None, stalls)
        return call_cost(row, prices).cost

    alone = (800 * 3.0 + 200 * 1.0 + 100 * 10.0) / 1e6
    assert cost(None) == pytest.approx(alone)
    billed = json.dumps({"hung": 0, "hedged": 1, "hedge_won": False, "hedge_usage": {
        "prompt_tokens": 1000, "completion_tokens": 100, "cached_prompt_tokens": 200}})
    assert cost(billed) == pytest.approx(2 * alone)  # the loser billed like the winner
    free = json.dumps({"hung": 1, "hedged": 1, "hedge_won": True})  # cancelled before a byte
    assert cost(free) == pytest.approx(alone)
    for junk in ("{not json", '["a"]', json.dumps({"hedge_usage": {"prompt_tokens": -5}}),
                 json.dumps({"hedge_usage": {"completion_tokens": "9"}})):
        assert cost(junk) == pytest.approx(alone)  # unreadable: the winner's own cost only


# ---- Budget alone: exact dollars at the edges ----------------------------------------------
# Prices in dollars per million tokens chosen so that every cost is a binary fraction (exact
# in floating point): an input token costs $0.25, a cached one $0.125, an output one $0.5.

def _prices():
    return Prices(input=250_000.0, cached_input=125_000.0, output=500_000.0)


def _usage(prompt=0, completion=0, cached=0):
    return Usage(prompt_tokens=prompt, completion_tokens=completion, cached_prompt_tokens=cached)


def _stored(total, **by_endpoint):
    s = Spend()
    s.total = total
    s.by_endpoint.update(by_endpoint)
    return s


def _budget(cap=None, endpoint_caps=None, stored=None, prior=None):
    return Budget(cap=cap, endpoint_caps=endpoint_caps or {},
                  prices={"a": _prices(), "b": _prices()}, stored=stored, prior=prior)


def test_a_live_call_is_charged_at_its_endpoints_prices_and_adds_to_the_stored_spend():
    b = _budget(cap=10.0, stored=_stored(2.0, a=1.5, b=0.5))
    assert (b.spent, b.spent_on("a"), b.spent_on("b")) == (2.0, 1.5, 0.5)
    b.charge("a", _usage(prompt=4, cached=2, completion=1))  # 2*.25 + 2*.125 + 1*.5
    assert (b.live_total, b.spent, b.spent_on("a"), b.spent_on("b")) == (1.25, 3.25, 2.75, 0.5)
    b.charge("a", _usage(prompt=1))
    assert (b.live_total, b.spent, b.spent_on("a")) == (1.5, 3.5, 3.0)
    b.charge("b", _usage(completion=2))
    assert (b.spent, b.spent_on("a"), b.spent_on("b")) == (4.5, 3.0, 1.5)


def test_a_cached_answer_and_an_unpriced_endpoint_cost_nothing():
    b = _budget(cap=10.0)
    b.charge("a", _usage(prompt=4, completion=4), attempts=0)  # from the response cache
    b.charge("nowhere", _usage(prompt=4, completion=4))  # no price for it: not guessed
    assert (b.spent, b.spent_on("a"), b.spent_on("nowhere")) == (0.0, 0.0, 0.0)
    b.charge("a", _usage(prompt=4), attempts=2)  # retried: billed once, as usage says
    assert b.spent == 1.0


def test_without_any_cap_every_episode_may_start():
    b = _budget(prior={"a": 1e9})
    assert not b.active
    assert b.may_start(in_flight=100, endpoints={"a"}) and b.stopped is None


def test_a_sweep_cap_alone_or_an_endpoint_cap_alone_makes_the_budget_active():
    assert _budget(cap=0.0).active and _budget(endpoint_caps={"a": 0.0}).active
    only_sweep = _budget(cap=1.0, prior={"a": 2.0})
    assert not only_sweep.may_start(0, {"a"})


def test_the_prior_is_the_estimate_until_an_episode_finishes_then_the_mean_of_this_sweep():
    b = _budget(cap=100.0, prior={"a": 0.5, "b": 0.25})
    assert (b.per_episode(), b.per_episode("a"), b.per_episode("b"), b.per_episode("c")) == (
        0.75, 0.5, 0.25, 0.0)
    b.charge("a", _usage(prompt=12))  # $3 on a
    b.charge("b", _usage(completion=2))  # $1 on b
    assert b.per_episode() == 0.75  # nothing finished: still the prior
    b.episode_done()
    assert (b.per_episode(), b.per_episode("a"), b.per_episode("b")) == (4.0, 3.0, 1.0)
    b.episode_done()
    assert (b.per_episode(), b.per_episode("a"), b.per_episode("b"), b.per_episode("c")) == (
        2.0, 1.5, 0.5, 0.0)


def test_the_stored_spend_counts_against_the_cap_so_a_rerun_with_the_same_cap_starts_nothing():
    # a first run stopped at $9.50 of a $10 cap; the same cap again, $1 an episode
    again = _budget(cap=10.0, stored=_stored(9.5, a=9.5), prior={"a": 1.0})
    assert not again.may_start(0, {"a"})
    assert again.stopped == ("spend cap $10.0000 reached: $9.5000 spent on this selection, "
                             "and one more episode would cost ~$1.0000")
    higher = _budget(cap=10.5, stored=_stored(9.5, a=9.5), prior={"a": 1.0})
    assert higher.may_start(0, {"a"})  # exactly up to the cap is allowed


def test_episodes_in_flight_count_with_the_one_about_to_start_and_make_it_wait():
    b = _budget(cap=4.0, prior={"a": 1.0})
    assert b.may_start(3, {"a"})  # 3 running + this one: $4 of $4
    assert b.stopped is None
    assert not b.may_start(4, {"a"})  # $5 > $4: wait for one in flight to end
    assert b.stopped is None
    b.charge("a", _usage(prompt=20))  # $5 spent: over the cap, nothing in flight any more
    assert not b.may_start(0, {"a"})
    assert b.stopped == ("spend cap $4.0000 reached: $5.0000 spent on this selection, and "
                         "one more episode would cost ~$1.0000")


def test_live_spend_counts_against_the_cap():
    b = _budget(cap=4.0, prior={"a": 1.0})
    b.charge("a", _usage(prompt=12))  # $3 spent by the episodes in flight
    assert b.may_start(0, {"a"})  # $3 + $1
    b.charge("a", _usage(prompt=1))  # $0.25 more
    assert not b.may_start(0, {"a"})
    assert b.stopped == ("spend cap $4.0000 reached: $3.2500 spent on this selection, "
                         "and one more episode would cost ~$1.0000")


def test_once_stopped_nothing_starts_again_even_when_it_would_fit():
    b = _budget(cap=4.0, prior={"a": 5.0})
    assert not b.may_start(0, {"a"})
    first = b.stopped
    b.prior["a"] = 1.0
    assert not b.may_start(0, {"a"})  # would fit now, but a stopped sweep stays stopped
    assert b.stopped == first


def test_an_endpoint_cap_sees_stored_and_live_spend_on_that_endpoint_only():
    b = _budget(endpoint_caps={"a": 5.0}, stored=_stored(8.0, a=2.0, b=6.0),
                prior={"a": 1.0, "b": 100.0})
    assert b.may_start(2, {"a", "b"})  # a: $2 + 3 * $1 = $5; b has no cap, the sweep none
    b.charge("a", _usage(completion=1))  # $0.5 live on a
    assert b.may_start(1, {"a"})  # $2.5 + 2 * $1
    assert not b.may_start(2, {"a"}) and b.stopped is None  # $2.5 + 3 * $1: wait
    b.charge("a", _usage(completion=6))  # $3 more: $5.5 on a
    assert not b.may_start(0, {"a"})
    assert b.stopped == ("endpoint 'a' budget $5.0000 reached: $5.5000 spent on it for this "
                         "selection, and one more episode would cost ~$1.0000")


def test_an_endpoint_cap_uses_the_endpoints_own_mean_once_episodes_finish():
    b = _budget(endpoint_caps={"b": 3.0}, prior={"a": 0.0, "b": 0.0})
    b.charge("b", _usage(completion=2))  # $1 on b
    b.charge("a", _usage(completion=8))  # $4 on a: not b's
    b.episode_done()
    assert b.may_start(0, {"a", "b"})  # b: $1 + 1 * $1
    assert b.may_start(1, {"a", "b"})  # b: $1 + 2 * $1 = $3
    assert not b.may_start(2, {"a", "b"}) and b.stopped is None
    b.charge("b", _usage(completion=3))  # $2.5 on b, one finished: $2.5 an episode
    assert not b.may_start(0, {"a", "b"})
    assert b.stopped.startswith("endpoint 'b' budget $3.0000 reached: $2.5000 spent on it")


def test_an_endpoint_cap_applies_only_to_episodes_that_use_the_endpoint():
    b = _budget(endpoint_caps={"b": 0.5}, stored=_stored(1.0, b=1.0))
    assert b.may_start(0, {"a"})
    assert not b.may_start(0, {"a", "b"})


def test_the_first_endpoint_over_its_cap_in_name_order_is_the_one_named():
    b = _budget(endpoint_caps={"a": 0.5, "b": 0.5}, stored=_stored(2.0, a=1.0, b=1.0))
    assert not b.may_start(0, {"b", "a"})
    assert b.stopped.startswith("endpoint 'a' budget")


def test_the_sweep_cap_is_checked_before_the_endpoint_caps():
    b = _budget(cap=1.0, endpoint_caps={"a": 1.0}, stored=_stored(2.0, a=2.0))
    assert not b.may_start(0, {"a"})
    assert b.stopped.startswith("spend cap $1.0000 reached: $2.0000 spent")


def test_the_estimate_is_the_finished_episodes_spend_not_the_spend_in_flight():
    """32 episodes in flight have spent $1 each when the first one ends, at $2: the estimate
    is $2 an episode (the finished one), not $33 (everything spent, over one)."""
    b = _budget(cap=1000.0, prior={"a": 0.5})
    tabs = [b.episode_started() for _ in range(33)]
    for tab in tabs:
        b.charge("a", _usage(prompt=4), tab=tab)  # $1 each
    b.charge("a", _usage(prompt=4), tab=tabs[0])  # the first one: $2 in all
    b.episode_done(tabs[0])
    assert (b.spent, b.per_episode(), b.per_episode("a")) == (34.0, 2.0, 2.0)
    # in flight: 32 episodes with $1 each spent, so $1 each still to come, not $2
    assert b.committed(32) == 32.0 and b.committed(32, "a") == 32.0
    b.charge("a", _usage(completion=2))  # a judge's call, outside any episode: finished work
    assert b.per_episode() == 3.0


def test_an_episode_that_spent_more_than_the_estimate_commits_nothing_more():
    b = _budget(cap=100.0, prior={"a": 1.0})
    tab = b.episode_started()
    b.charge("a", _usage(prompt=20), tab=tab)  # $5, over the $1 estimate
    assert b.committed(1) == 0.0 and b.committed(3) == 2.0  # two more without a tab: $1 each


def test_a_cap_that_would_be_passed_waits_while_episodes_run_and_stops_when_none_do():
    b = _budget(cap=10.0, prior={"a": 4.0})
    first, second = b.episode_started(), b.episode_started()
    assert not b.may_start(2, {"a"}) and b.stopped is None  # $0 + 2 x $4 + $4 > $10: wait
    b.charge("a", _usage(prompt=4), tab=first)  # it cost $1
    b.episode_done(first)
    assert b.may_start(1, {"a"})  # $1 spent, the other ~$1 more, this one ~$1
    b.charge("a", _usage(prompt=32), tab=second)  # $8
    b.episode_done(second)
    assert not b.may_start(0, {"a"})  # $9 spent + ~$4.50
    assert b.stopped == ("spend cap $10.0000 reached: $9.0000 spent on this selection, and "
                         "one more episode would cost ~$4.5000")


async def test_a_cap_stops_within_one_in_flight_window_of_it_and_says_so_consistently(tmp_path):
    """16 episodes in flight, known prices: the spend when the sweep stops lies within one
    in-flight window's cost of the cap, on both sides (it stopped at a third of it when the
    estimate divided the spend in flight by the episodes finished)."""
    wide = {**BASE, "max_concurrency": 16, "trials": 4}
    with RunStore(tmp_path / "full.sqlite") as full:
        await Sweep(load_config(None, wide), full).run()
        total = build_report(full)["cost"]["total"]
        per_episode = [sum(roles.values()) for roles in _episode_costs(full).values()]
    # one in-flight window: what the episodes in flight at once cost, on average
    window = wide["max_concurrency"] * sum(per_episode) / len(per_episode)
    cap = 0.5 * total
    assert window < cap  # the bound says something
    cfg = load_config(None, {**wide, "max_cost_usd": cap})
    with RunStore(tmp_path / "capped.sqlite") as store:
        outcome = await Sweep(cfg, store, prior=prior_per_episode(cfg, store)).run()
        spent = build_report(store)["cost"]["total"]
    assert cap - window <= spent <= cap + window
    assert spent == pytest.approx(outcome.spent)
    match = re.fullmatch(r"spend cap \$([\d,.]+) reached: \$([\d,.]+) spent on this "
                         r"selection, and one more episode would cost ~\$([\d,.]+)",
                         outcome.budget_stop)
    said_cap, then, each = (float(g.replace(",", "")) for g in match.groups())
    assert said_cap == pytest.approx(cap, abs=1e-4)
    assert then + each > said_cap and then <= spent  # reached, as it says, by what it says


def test_an_episodes_tab_adds_up_its_calls_in_total_and_per_endpoint():
    b = _budget(cap=100.0)
    tab = b.episode_started()
    b.charge("a", _usage(prompt=4), tab=tab)  # $1
    b.charge("a", _usage(prompt=8), tab=tab)  # $2
    b.charge("b", _usage(completion=2), tab=tab)  # $1
    assert (tab.total, dict(tab.by_endpoint)) == (4.0, {"a": 3.0, "b": 1.0})


def test_per_endpoint_estimates_and_commitments_leave_out_what_tabs_spent_elsewhere():
    """An episode in flight that has not called ``b`` yet has spent $0 on it: the finished
    episode's $2 on b is the estimate, and the one in flight is still expected to spend it."""
    b = _budget(cap=100.0, endpoint_caps={"b": 50.0})
    done, running = b.episode_started(), b.episode_started()
    b.charge("b", _usage(prompt=8), tab=done)  # $2 on b
    b.episode_done(done)
    b.charge("a", _usage(prompt=12), tab=running)  # $3 on a only
    assert b.per_episode("b") == 2.0 and b.per_episode("a") == 0.0
    assert b.committed(1, "b") == 2.0  # its $3 on a is not spend on b
    assert b.committed(1) == 0.0  # in total it has spent $3, past the $2 estimate


def test_an_endpoint_over_its_cap_stops_an_episode_even_when_the_sweep_cap_has_room():
    b = _budget(cap=100.0, endpoint_caps={"b": 1.0}, prior={"a": 0.5, "b": 2.0})
    assert not b.may_start(0, {"a", "b"})
    assert b.stopped == ("endpoint 'b' budget $1.0000 reached: $0.0000 spent on it for this "
                         "selection, and one more episode would cost ~$2.0000")


def test_an_episode_said_done_twice_or_without_a_start_changes_only_the_count():
    b = _budget(cap=100.0)
    tab = b.episode_started()
    b.episode_done(tab)
    b.episode_done(tab)  # a second end of the same episode: nothing left to close
    b.episode_done(object())  # type: ignore[arg-type] - a tab this budget never opened
    assert b.finished == 3 and b.open == {}
