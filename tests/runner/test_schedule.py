"""The order a sweep starts episodes in: longest expected first, fair across models, in bands
of whole trials; history over the task's own hint; ``order = "file"`` as before."""

from __future__ import annotations

import dataclasses
import heapq
import sqlite3
from collections import Counter

import pytest

from sweepbench.cli import main
from sweepbench.config import load_config
from sweepbench.datasets.task import Task
from sweepbench.errors import ConfigError
from sweepbench.store.runstore import RunStore
from sweepbench.runner import schedule as schedule_mod
from sweepbench.runner.plan import episode_calls
from sweepbench.runner.schedule import (
    BAND_SLOTS,
    WorkQueue,
    _best_move,
    longest_first,
    order_work,
    pack_tail,
    plan_queue,
    trial_bands,
)
from sweepbench.runner.sweep import Sweep
from sweepbench.runner.work import WorkItem, build_work

BASE = {"benchmarks": ["vitabench:delivery", "vitabench:instore", "t1:flight+hotel+bar"],
        "models": ["scripted/oracle", "scripted/noisy:0.3"], "trials": 3}


def items(lengths: dict[str, list[float]], trials: int = 1) -> tuple[list, list[float]]:
    """Work items in file order (trial-major, then task, then model) with given lengths:
    ``{model: [length of its episode of task 0, of task 1, ...]}``."""
    n = max(len(v) for v in lengths.values())
    tasks = [Task(id=f"t{i}", benchmark="x", domain="d", instructions="") for i in range(n)]
    out, lens = [], []
    for trial in range(trials):
        for i, task in enumerate(tasks):
            for model, ls in lengths.items():
                if i < len(ls):
                    out.append(WorkItem(model, "x:d", task, trial))
                    lens.append(ls[i])
    return out, lens


def test_longest_first_inside_a_band_ties_keep_a_tasks_trials_together_in_file_order():
    work, lens = items({"m": [3, 9, 5, 9, 1]}, trials=2)
    order = longest_first(work, lens, band=10)  # both trials in one band
    assert [(w.task.id, w.trial) for w in order] == [
        ("t1", 0), ("t1", 1), ("t3", 0), ("t3", 1), ("t2", 0), ("t2", 1),
        ("t0", 0), ("t0", 1), ("t4", 0), ("t4", 1)]


def test_bands_are_whole_trials_in_order_and_a_remainder_joins_the_last():
    work, lens = items({"m": [1, 2, 3]}, trials=5)  # 3 items per trial
    bands = trial_bands(work, 6)
    assert [sorted({work[i].trial for i in b}) for b in bands] == [[0, 1], [2, 3, 4]]
    assert [sorted({work[i].trial for i in b}) for b in trial_bands(work, 0)] == [
        [0], [1], [2], [3], [4]]
    assert len(trial_bands(work, 100)) == 1
    order = longest_first(work, lens, band=6)
    # a sweep cut after the first band has trials 0 and 1 whole, and nothing else
    assert Counter(w.trial for w in order[:6]) == {0: 3, 1: 3}
    assert [w.task.id for w in order[:6]] == ["t2", "t2", "t1", "t1", "t0", "t0"]


def test_models_are_interleaved_by_share_of_their_expected_calls():
    # a's episodes are all longer than b's: plain LPT would start every a before any b
    work, lens = items({"a": [20, 18, 16, 14], "b": [4, 3, 2, 1]}, trials=1)
    order = longest_first(work, lens, band=100)
    assert [w.model for w in order] == ["a", "b", "a", "b", "a", "b", "a", "b"]
    # b has twice a's work in as many episodes: two of b's calls are started per call of a
    work, lens = items({"a": [2] * 6, "b": [4] * 12})
    order = longest_first(work, lens, band=100)
    models = "".join(w.model for w in order)
    assert Counter(models) == {"a": 6, "b": 12}
    for n in range(1, len(models) + 1):  # every prefix holds each model's share of work
        share_a = 2 * models[:n].count("a") / 12
        share_b = 4 * models[:n].count("b") / 48
        assert abs(share_a - share_b) <= 2 / 12 + 1e-9, models[:n]
    assert min(models.rindex("a"), models.rindex("b")) >= len(models) - 3  # ending together


def makespan(lengths: list[float], slots: int) -> float:
    """When ``slots`` slots, each taking the next episode when free, finish ``lengths``."""
    free = [0.0] * slots
    for n in lengths:
        heapq.heapreplace(free, free[0] + n)
    return max(free)


def test_the_last_band_is_packed_where_lpt_leaves_a_slot_idle():
    # LPT on 2 slots: 3|3, 5|3, 5|5, 7|5: makespan 7; packed 3+3 | 2+2+2: 6, the ideal
    work, lens = items({"m": [3, 3, 2, 2, 2]})
    plain = longest_first(work, lens, band=100)
    packed = longest_first(work, lens, band=100, slots=2)
    length = {id(w): n for w, n in zip(work, lens)}
    assert makespan([length[id(w)] for w in plain], 2) == 7
    assert makespan([length[id(w)] for w in packed], 2) == 6
    assert sorted(map(id, packed)) == sorted(map(id, work))
    # more slots than episodes: nothing to pack, the order stays longest first
    assert longest_first(work, lens, band=100, slots=8) == plain


def test_only_the_last_band_moves_and_packing_starts_where_the_earlier_bands_leave_off():
    work, lens = items({"m": [3, 3, 2, 2, 2]}, trials=4)
    plain = longest_first(work, lens, band=10)  # two bands of two trials
    packed = longest_first(work, lens, band=10, slots=3)
    assert packed[:10] == plain[:10]
    assert {w.trial for w in packed[10:]} == {2, 3}
    length = {id(w): n for w, n in zip(work, lens)}
    assert makespan([length[id(w)] for w in plain], 3) == 17
    assert makespan([length[id(w)] for w in packed], 3) == 16  # 48 calls on 3 slots: ideal
    # pack_tail alone: slots already busy for different times get the work that evens them
    assert makespan_from([4.0, 0.0], [0, 1, 2], [4, 2, 2]) == 6


def makespan_from(free: list[float], tail: list[int], lengths: list[float]) -> float:
    heap = list(free)
    heapq.heapify(heap)
    for i in pack_tail(tail, lengths, list(free)):
        heapq.heapreplace(heap, heap[0] + lengths[i])
    return max(heap)


def test_packing_moves_an_episode_and_takes_the_move_that_evens_the_pair_most():
    # [1, 1, 1, 5] in this order leaves 2 | 6: no swap evens it, moving a 1 over does (3 | 5)
    assert makespan_from([0.0, 0.0], [0, 1, 2, 3], [1, 1, 1, 5]) == 5
    # the busiest slot holds 5, 3 and 1 (9), the other nothing: giving the 5 leaves 4 | 5
    lengths = [5.0, 3.0, 1.0]
    assert _best_move([[], [0, 1, 2]], [0.0, 9.0], lengths) == (1, 0, 0, None)
    assert _best_move([[0], [1]], [5.0, 5.0], lengths) is None  # even: nothing to do


def test_packing_the_default_set_comes_within_two_calls_of_the_ideal():
    cfg = load_config(None, {"trials": 8})
    work = build_work(cfg, None)
    est = {w.key: n for w, (n, _) in zip(work, episode_calls(cfg, None, work, None))}
    for slots in (32, 100):
        plain = [est[w.key] for w in longest_first(work, list(est.values()),
                                                    band=BAND_SLOTS * slots)]
        order = order_work(work, cfg, None, None, slots=slots)
        packed = [est[w.key] for w in order]
        ideal = sum(est.values()) / slots
        assert makespan(packed, slots) < min(ideal + 2, makespan(plain, slots)), slots
        # the earlier bands as they were, but for one episode of each model and task first
        probes = len({(w.model, w.task.key) for w in work})
        assert len({(w.model, w.task.key) for w in order[:probes]}) == probes
        first = [w for w in longest_first(work, list(est.values()), band=BAND_SLOTS * slots)
                 ][:slots + probes]
        assert [w.key for w in order[probes:slots]] == [
            w.key for w in first if w not in order[:probes]][:slots - probes]


def test_the_default_order_is_longest_first_fair_and_deterministic():
    cfg = load_config(None, BASE)
    work = build_work(cfg, None)
    lens = {(w.model, w.task.key): n for w, (n, _) in zip(work, episode_calls(cfg, None, work,
                                                                                None))}
    order = order_work(work, cfg, None, None, slots=100)
    assert sorted(w.key for w in order) == sorted(w.key for w in work)  # a permutation
    assert [w.key for w in order_work(work, cfg, None, None, slots=100)] == [
        w.key for w in order]
    assert len(trial_bands(work, BAND_SLOTS * 100)) == 1  # each model longest first
    for model in cfg.models:
        mine = [lens[w.model, w.task.key] for w in order if w.model == model]
        assert mine == sorted(mine, reverse=True) and mine[0] > mine[-1]
    assert {w.model for w in order[:2]} == set(cfg.models)
    # the file order ends with T1 (the longest); the default ends with the shortest
    assert lens[work[-1].model, work[-1].task.key] > lens[order[-1].model, order[-1].task.key]
    file = order_work(work, load_config(None, {**BASE, "order": "file"}), None, None, slots=100)
    assert [w.key for w in file] == [w.key for w in work]


async def test_history_of_the_task_is_used_over_the_task_hint(tmp_path):
    cfg1 = load_config(None, {**BASE, "models": ["scripted/oracle"], "trials": 1,
                              "max_concurrency": 16})
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(cfg1, store).run()
        measured = {r["task_id"]: n for r, n in _calls_by_episode(store)}
        cfg = load_config(None, {**BASE, "models": ["scripted/oracle"], "trials": 2})
        todo = [w for w in build_work(cfg, None) if w.trial == 1]
        estimates = episode_calls(cfg, store, todo, None)
        assert {src for _, src in estimates} == {"history of the task"}
        assert [n for n, _ in estimates] == [measured[w.task.id] for w in todo]
        hinted = [n for n, _ in episode_calls(cfg, None, todo, None)]
        assert hinted != [n for n, _ in estimates]  # the hint is rough: history reorders
        with_history = order_work(todo, cfg, store, None, slots=16)
    ranks = [measured[w.task.id] for w in with_history]
    assert ranks == sorted(ranks, reverse=True)
    without = [measured[w.task.id] for w in order_work(todo, cfg, None, None, slots=16)]
    assert without != ranks


async def test_a_continued_episode_counts_only_the_calls_it_has_left(tmp_path):
    cfg = load_config(None, {**BASE, "models": ["scripted/oracle"], "trials": 2,
                             "max_concurrency": 16})
    first = load_config(None, {**BASE, "models": ["scripted/oracle"], "trials": 1,
                               "max_concurrency": 16})
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(first, store).run()  # trial 0's episodes: every call journaled
        measured = {r["episode_key"]: n for r, n in _calls_by_episode(store)}
        work = build_work(cfg, None)
        assert store.journaled_calls([w.key for w in work]) == measured
        order = order_work(work, cfg, store, None, slots=1000)  # one band: both trials
    trial = [w.trial for w in order]
    fresh = trial.count(1)
    # trial 1's episodes (all their calls ahead) start before trial 0's (nothing left) ...
    assert trial == [1] * fresh + [0] * (len(order) - fresh) and fresh == len(measured)
    # ... longest first by the task's history; the journaled ones, one call left each, in
    # file order
    by_task = {w.task.key: measured[w.key] for w in work if w.trial == 0}
    ranks = [by_task[w.task.key] for w in order[:fresh]]
    assert ranks == sorted(ranks, reverse=True) and ranks[0] > ranks[-1]
    assert [w.key for w in order[fresh:]] == [w.key for w in work if w.trial == 0]


def simulate(queue: WorkQueue, seconds: dict[str, float], slots: int) -> float:
    """Run ``queue`` on ``slots`` workers with a fake clock, each episode taking
    ``seconds[task id]``: the makespan."""
    now = 0.0
    queue._clock = lambda: now
    running: list[tuple[float, int, WorkItem]] = []
    for n, item in zip(range(slots), queue):
        heapq.heappush(running, (seconds[item.task.id], n, item))
    n = slots
    while running:
        now, _, item = heapq.heappop(running)
        queue.finished(item)
        nxt = next(queue, None)
        if nxt is not None:
            heapq.heappush(running, (now + seconds[nxt.task.id], n, nxt))
            n += 1
    return now


def test_the_last_band_is_repacked_with_the_durations_the_sweep_saw():
    # the estimates are wrong both ways: every other task (by planned length) takes half as
    # long as planned, the rest half as long again; the queue learns the true durations from
    # the probes and the earlier bands and packs the last band with them
    cfg = load_config(None, {**BASE, "models": ["scripted/oracle"], "trials": 12})
    work = build_work(cfg, None)
    planned = [n for n, _ in episode_calls(cfg, None, work, None)]
    tasks = sorted({w.task.id: n for w, n in zip(work, planned)}.items(), key=lambda kv: kv[1])
    seconds = {tid: 0.1 * n * (0.5 if rank % 2 else 1.5) for rank, (tid, n) in enumerate(tasks)}
    slots = 16
    ideal = sum(seconds[w.task.id] for w in work) / slots
    learned = plan_queue(work, cfg, None, None, slots=slots)
    assert learned._tail > 0  # more than one band
    blind = WorkQueue(list(learned.items), tail=0, slots=slots)
    with_learning, without = simulate(learned, seconds, slots), simulate(blind, seconds, slots)
    assert learned.repacked and not blind.repacked
    # within a tenth of the longest episode of the ideal; the plan alone is not
    assert with_learning < ideal + 0.1 * max(seconds.values()) < without


def test_a_repack_waits_for_every_task_left_and_ignores_replayed_episodes():
    work, _ = items({"m": [5.0, 4.0, 3.0]}, trials=4)
    work = [dataclasses.replace(w, key=f"k{i}") for i, w in enumerate(work)]
    now = 0.0
    queue = WorkQueue(work, tail=6, slots=2, replayed={work[2].key},
                      clock=lambda: now)
    taken = [next(queue) for _ in range(3)]
    now = 1.0
    for item in taken:
        queue.finished(item)  # t0, t1 seen; t2's only episode was replayed: not seen
    assert len(queue._seen) == 2
    for _ in range(3):
        next(queue)
    next(queue)  # the first of the last band: t2 never seen, so no repack
    assert not queue.repacked
    queue.finished(work[5])  # a fresh t2 episode ends
    next(queue)
    assert queue.repacked


def test_a_task_left_only_in_the_last_band_is_probed_and_the_repack_still_comes():
    # a continued sweep: one task's earlier trials are done, only its last trial is left, so
    # all its episodes sit in the last band; one of them goes first with the other probes,
    # the last band starts one place later, and the repack happens
    cfg = load_config(None, {**BASE, "models": ["scripted/oracle"], "trials": 12})
    full = build_work(cfg, None)
    late = full[0].task.id
    work = [w for w in full if w.task.id != late or w.trial == 11]
    plain = plan_queue([w for w in work if w.task.id != late], cfg, None, None, slots=16)
    queue = plan_queue(work, cfg, None, None, slots=16)
    probes = {w.task.id for w in plain.items[:len({w.task.id for w in plain.items})]}
    assert late not in probes and queue.items[len(probes)].task.id == late
    left = [w.task.id for w in queue.items[queue._tail:]]  # the probe left the last band
    assert left.count(late) == sum(w.task.id == late for w in work) - 1
    seconds = {w.task.id: 1.0 + len(w.task.id) % 3 for w in work}
    simulate(queue, seconds, 16)
    assert queue.repacked


def test_an_episode_taken_but_not_run_holds_no_slot_in_the_repack():
    # a worker that takes an episode and then stops (interrupted, over budget) puts it back:
    # the repack then sees one episode running, not two, and counts no duration for it
    work, _ = items({"m": [5.0, 4.0]}, trials=3)
    work = [dataclasses.replace(w, key=f"k{i}") for i, w in enumerate(work)]
    now = 0.0
    queue = WorkQueue(work, tail=4, slots=2, clock=lambda: now)
    first, second = next(queue), next(queue)
    now = 1.0
    queue.finished(first)
    queue.finished(second)
    running, stopped = next(queue), next(queue)
    queue.put_back(stopped)
    assert list(queue._running) == [queue._index[running.key]]
    queue.finished(stopped)  # reported again after the put-back: not counted
    assert [n for _, n in queue._seen.values()] == [1, 1]


def _calls_by_episode(store: RunStore) -> list[tuple[dict, int]]:
    rows = {r["episode_key"]: r for r in store.episode_rows()}
    n = Counter(c.episode_key for c in store.model_calls() if not c.journal)
    return [(rows[k], n[k]) for k in rows]


async def test_a_sweep_starts_its_episodes_in_the_order(tmp_path):
    base = {**BASE, "trials": 1, "max_concurrency": 1, "benchmarks": ["vitabench:delivery",
                                                                      "t1:flight+hotel+bar"]}
    started = {}
    for order in ("longest", "file"):
        cfg = load_config(None, {**base, "order": order})
        seen: list[str] = []

        def progress(kind, **info):
            if kind == "started":
                seen.append(info["item"].key)

        with RunStore(tmp_path / f"{order}.sqlite") as store:
            await Sweep(cfg, store, progress=progress).run()
        work = build_work(cfg, None)
        assert seen == [w.key for w in order_work(work, cfg, None, None, slots=1)]
        started[order] = seen
    assert started["file"] == [w.key for w in build_work(cfg, None)]
    assert started["longest"] != started["file"]
    assert sorted(started["longest"]) == sorted(started["file"])
    db = sqlite3.connect(tmp_path / "longest.sqlite")
    assert db.execute("SELECT count(*) FROM episodes WHERE status = 'done'").fetchone()[0] == len(
        started["longest"])


def test_order_is_a_config_field_and_a_run_option(tmp_path, capsys):
    assert load_config(None, {}).order == "longest"
    with pytest.raises(ConfigError, match="order must be longest or file"):
        load_config(None, {"order": "random"})
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "--order {longest,file}" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        main(["run", "--order", "random"])
    assert "invalid choice: 'random'" in capsys.readouterr().err
    out = tmp_path / "s.sqlite"
    assert main(["run", "--benchmark", "vitabench:delivery", "--model", "scripted/oracle",
                 "--trials", "1", "--order", "file", "--out", str(out), "--no-progress"]) == 0
    db = sqlite3.connect(out)
    (config,) = db.execute("SELECT config FROM runs").fetchone()
    assert '"order":"file"' in config.replace(" ", "")


# ---- the parts, exactly --------------------------------------------------------------------

def keyed(work: list[WorkItem]) -> list[WorkItem]:
    return [dataclasses.replace(w, key=f"k{i}") for i, w in enumerate(work)]


def test_best_move_takes_the_first_move_leaving_the_pair_lowest():
    # busiest 15 (9 + 6), the other 2: giving the 9 overshoots (6 | 11), giving the 6 leaves
    # 9 | 8 and swapping the 9 for the 2 leaves 8 | 9, both 9: the first found is taken
    lengths = [9.0, 6.0, 2.0]
    assert _best_move([[2], [0, 1]], [2.0, 15.0], lengths) == (1, 0, 0, 2)
    # the least busy slot first; a slot it cannot even out with is passed for the next
    assert _best_move([[], [0], [1]], [0.0, 9.0, 6.0], [9.0, 6.0]) is None
    assert _best_move([[], [2, 3], [0, 1]], [1.0, 4.0, 11.0], [10.0, 1.0, 2.0, 2.0]) == (
        2, 0, 1, None)


@pytest.mark.parametrize(("jobs", "load", "lengths", "move"), [
    # a move of 1e-9 is no move; one leaving the pair within 1e-9 of even is none either
    ([[3], [0, 1, 2]], [0.5, 0.500000003], [0.5, 1e-09, 2e-09, 0.5], (1, 0, 2, None)),
    ([[0, 2], [1, 3]], [1e-09, 2.000000001], [1e-09, 1e-09, 0.0, 2.0], None),
    # a later move better by 1e-9 or less does not replace the first
    ([[3], [0, 1, 2]], [1.5, 2.000000004], [3e-09, 2.0, 1e-09, 1.5], (1, 0, 0, None)),
])
def test_best_move_ignores_differences_within_its_tolerance(jobs, load, lengths, move):
    assert _best_move(jobs, load, lengths) == move


def test_models_with_unequal_work_are_merged_by_the_share_they_started():
    # a: 2 calls in all, b: 20; after one episode each both have started half
    work, lens = items({"a": [1, 1], "b": [10, 10]})
    assert [w.model for w in longest_first(work, lens, band=100)] == ["a", "b", "a", "b"]
    # nothing expected at all: every share stays 0, ties go to the model met first
    work, lens = items({"a": [0, 0], "b": [0, 0]})
    assert [(w.model, w.task.id) for w in longest_first(work, lens, band=100)] == [
        ("a", "t0"), ("a", "t1"), ("b", "t0"), ("b", "t1")]


def test_nothing_to_order_is_an_empty_order_and_a_remainder_joins_the_band_before_it():
    assert longest_first([], [], band=4, slots=2) == []
    work, _ = items({"m": [1, 2, 3]}, trials=7)  # 3 a trial: bands of 2 trials, 7th joins
    assert [sorted({work[i].trial for i in b}) for b in trial_bands(work, 6)] == [
        [0, 1], [2, 3], [4, 5, 6]]
    work, _ = items({"m": [1, 2, 3]}, trials=3)
    assert [sorted({work[i].trial for i in b}) for b in trial_bands(work, 6)] == [[0, 1, 2]]


def planned(monkeypatch, lengths: list[float]) -> list:
    """``episode_calls`` answering ``lengths``, in the items' order; the data dirs it was
    asked with."""
    asked = []

    def calls(cfg, store, items, data_dir):
        asked.append(data_dir)
        return [(n, "test") for n in lengths[:len(items)]]

    monkeypatch.setattr(schedule_mod, "episode_calls", calls)
    return asked


class Journaled:
    """A store that has journaled ``done`` calls of some episodes."""

    def __init__(self, done: dict[str, int]) -> None:
        self.done, self.asked = done, []

    def journaled_calls(self, keys):
        self.asked.append(list(keys))
        return {k: n for k, n in self.done.items() if k in keys}


CFG = load_config(None, {"benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle"]})


def test_two_episodes_are_ordered_and_the_estimates_use_the_data_dir(monkeypatch, tmp_path):
    work = keyed(items({"m": [1, 2]})[0])
    asked = planned(monkeypatch, [1.0, 2.0])
    assert [w.key for w in order_work(work, CFG, None, tmp_path, slots=4)] == ["k1", "k0"]
    assert asked == [tmp_path]
    assert [w.key for w in order_work(work[:1], CFG, None, tmp_path, slots=4)] == ["k0"]
    file = plan_queue(work, load_config(None, {"order": "file"}), None, tmp_path, slots=4)
    assert [w.key for w in file.items] == ["k0", "k1"] and file._tail == 0
    assert asked == [tmp_path]  # no estimates for the file order


def test_a_file_order_queue_is_never_repacked():
    work = keyed(items({"m": [5.0, 4.0, 3.0]}, trials=3)[0])
    queue = plan_queue(work, load_config(None, {"order": "file"}), None, None, slots=2)
    seconds = {"t0": 1.0, "t1": 9.0, "t2": 2.0}
    simulate(queue, seconds, 2)
    assert not queue.repacked and [w.key for w in queue.items] == [w.key for w in work]


def test_journaled_calls_shorten_an_episode_to_what_it_has_left(monkeypatch):
    work = keyed(items({"m": [5, 2.5, 1.5]})[0])
    planned(monkeypatch, [5.0, 2.5, 1.5])
    # k0 has 3 of 5 calls done: 2 left, under k1's 2.5; k2 has all done: 1 left at least,
    # under k2's... own 1.5 it would have had fresh
    store = Journaled({"k0": 3, "k2": 9})
    queue = plan_queue(work, CFG, store, None, slots=8)
    assert store.asked == [["k0", "k1", "k2"]]
    assert [w.key for w in queue.items] == ["k1", "k0", "k2"]
    assert queue._replayed == {"k0", "k2"}
    # a journal with no calls is no replay
    queue = plan_queue(work, CFG, Journaled({"k1": 0}), None, slots=8)
    assert queue._replayed == set() and [w.key for w in queue.items] == ["k0", "k1", "k2"]
    # 4 of 5 done: 1 left, below a fresh 1.5
    queue = plan_queue(work, CFG, Journaled({"k0": 4}), None, slots=8)
    assert [w.key for w in queue.items] == ["k1", "k2", "k0"]


def test_one_slot_bands_two_episodes_and_a_kind_first_in_the_last_band_is_probed(monkeypatch):
    # trial 0: t0, t1; trial 1: t0, t1, t2 (t2 only there, the longest): bands of 2 on 1 slot
    tasks = [Task(id=f"t{i}", benchmark="x", domain="d", instructions="") for i in range(3)]
    work = keyed([WorkItem("m", "x:d", tasks[i], 0) for i in (0, 1)]
                 + [WorkItem("m", "x:d", tasks[i], 1) for i in (0, 1, 2)])
    planned(monkeypatch, [1.0, 2.0, 1.0, 2.0, 3.0])
    for slots in (0, 1):
        queue = plan_queue(work, CFG, None, None, slots=slots)
        # probes t1, t0 (first band), then t2 (the last band's first): the last band is
        # two places on
        assert [w.key for w in queue.items] == ["k1", "k0", "k4", "k3", "k2"]
        assert queue._tail == 3 and queue._slots == 1


def queue_of(kinds: list[tuple[str, str]], **kw) -> WorkQueue:
    """A queue of (model, task id) episodes keyed k0, k1, ... in this order."""
    tasks = {t: Task(id=t, benchmark="x", domain="d", instructions="") for _, t in kinds}
    work = [WorkItem(m, "x:d", tasks[t], 0, key=f"k{i}") for i, (m, t) in enumerate(kinds)]
    return WorkQueue(work, **kw)


def test_a_repack_comes_when_the_last_unseen_kind_has_left_the_queue():
    # t2's episode before the last band was replayed: not seen to finish; once its last
    # episode is taken every kind left has been seen, and the next take repacks
    now = 0.0
    queue = queue_of([("m", "t0"), ("m", "t1"), ("m", "t2"), ("m", "t2"), ("m", "t0"),
                      ("m", "t1")], tail=3, slots=2, replayed={"k2"}, clock=lambda: now)
    for _ in range(3):
        queue.finished(next(queue))
    assert set(queue._seen) == {("m", "x:d:en:t0"), ("m", "x:d:en:t1")}
    assert next(queue).key == "k3" and not queue.repacked  # t2 was still left
    next(queue)
    assert queue.repacked


def test_the_repack_starts_at_the_tail_and_a_tail_of_one_counts():
    for tail in (1, 2):
        queue = queue_of([("m", "t0")] * 3, tail=tail, slots=1, clock=lambda: 0.0)
        for _ in range(tail):
            queue.finished(next(queue))
        assert not queue.repacked
        next(queue)  # the tail-th: the first of the last band
        assert queue.repacked


def test_the_repack_packs_with_mean_durations_onto_the_slots_as_they_are(monkeypatch):
    kinds = [("m", f"t{i}") for i in range(4)]
    now = 0.0
    queue = queue_of(kinds * 3, tail=8, slots=4, clock=lambda: now)
    seen = {}

    def pack(tail, lengths, free):
        seen.update(tail=list(tail), lengths=list(lengths), free=list(free))
        return list(reversed(tail))

    monkeypatch.setattr(schedule_mod, "pack_tail", pack)
    first = [next(queue) for _ in range(4)]
    now = 2.0
    queue.finished(first[0])  # t0: 2 s
    queue.finished(first[1])  # t1: 2 s
    now = 3.0
    queue.finished(first[2])  # t2: 3 s
    second = [next(queue) for _ in range(4)]  # taken at 3 s
    now = 7.0
    queue.finished(second[0])  # t0 again: 4 s, mean 3
    queue.finished(second[2])  # t2 again: 4 s, mean 3.5
    queue.finished(first[3])  # t3: 7 s
    queue.put_back(second[3])  # t3 again: will not run
    queue.put_back(second[3])  # twice is harmless
    assert queue._seen == {("m", "x:d:en:t0"): [6.0, 2], ("m", "x:d:en:t1"): [2.0, 1],
                           ("m", "x:d:en:t2"): [7.0, 2], ("m", "x:d:en:t3"): [7.0, 1]}
    now = 8.5
    nxt = next(queue)  # the 9th: the last band starts
    assert queue.repacked
    assert seen["tail"] == [8, 9, 10, 11]
    assert seen["lengths"] == [3.0, 2.0, 3.5, 7.0] * 3
    # running: the second t1 (2 s expected, 5.5 s in: overdue, none left); 3 slots free
    assert seen["free"] == [0.0, 0.0, 0.0, 0.0]
    assert nxt.key == "k11" and [w.key for w in queue] == ["k10", "k9", "k8"]


def test_a_running_episode_counts_its_expected_rest_and_an_unseen_one_none(monkeypatch):
    now = 0.0
    queue = queue_of([("a", "t0"), ("b", "t0"), ("a", "t1"), ("a", "t0"), ("a", "t1")],
                     tail=3, slots=3, clock=lambda: now)
    seen = {}
    monkeypatch.setattr(schedule_mod, "pack_tail",
                        lambda tail, lengths, free: seen.update(free=free) or tail)
    taken = [next(queue) for _ in range(3)]  # (a, t0), (b, t0), (a, t1)
    now = 10.0
    queue.finished(taken[0])  # (a, t0): 10 s
    now = 14.0
    # (a, t1) runs since 0 s: 14 s in, its kind unseen; (b, t0) too
    queue._running[queue._index["k0"]] = 9.0  # and (a, t0) again since 9 s: 5 s in
    queue._running[queue._index["k1"]] = 13.5  # (b, t0) since 13.5 s
    queue._new_seen = True
    assert not seen
    next(queue)
    assert "free" not in seen  # (a, t1) is left in the queue, unseen: no repack yet
    queue.finished(taken[2])  # (a, t1): 14 s
    next(queue)
    # (a, t0): 10 s expected, 5 in: 5 left; (b, t0): unseen, none; the (a, t0) just taken
    # at 14 s: all 10
    assert seen["free"] == [0.0, 5.0, 10.0]
