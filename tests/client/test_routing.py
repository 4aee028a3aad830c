"""The fleet's router: affinity bounded by load, round robin, keys by load, draining."""

from __future__ import annotations

import pytest

from sweepbench.client.routing import Router
from tests.support import FakeClock


def router(replicas=(0, 1), policy="affinity", load_factor=1.2, clock=None):
    clock = clock or FakeClock()
    labels = [f"w{i}" for i in range(len(replicas))]
    return Router(list(replicas), labels, policy=policy, load_factor=load_factor,
                  cooldown_s=1.0, clock=clock.now)


def test_a_tasks_requests_go_to_its_home_replica_while_it_is_under_the_bound():
    r = router()
    home = r.ranking("task-a")[0]
    picks = [r.pick("task-a").replica for _ in range(3)]
    # 3 in flight, all on home: the bound is ceil(1.2 * 3 / 2) = 2 < 3, so the third spills
    assert picks == [home, home, 1 - home]


def test_no_replica_goes_above_the_bound_whatever_the_hashing():
    r = router(replicas=(0, 1, 2), load_factor=1.25)
    for _ in range(300):
        r.pick("one-hot-task")  # every request wants the same replica
    # the first two fill to 1.25 x the mean (125), the third takes the rest
    assert sorted(r.replica_load) == [50, 125, 125]


def test_an_episode_stays_on_its_replica_while_under_the_bound_even_off_its_home():
    r = router()
    home = r.ranking("t")[0]
    way = r.pick("t", sticky=1 - home)
    assert way.replica == 1 - home


def test_finished_requests_free_their_load():
    r = router()
    way = r.pick("t")
    r.finished(way, ok=True)
    assert r.replica_load == [0, 0] and way.load == 0 and way.calls == 1


def test_without_affinity_the_least_loaded_replica_is_taken():
    r = router()
    a = r.pick("t")
    assert r.pick().replica == 1 - a.replica


def test_round_robin_takes_every_way_in_turn():
    r = router(replicas=(0, 1, 2), policy="round_robin")
    assert [r.pick("t", sticky=0).index for _ in range(5)] == [0, 1, 2, 0, 1]


def test_keys_of_a_replica_are_spread_by_load():
    r = router(replicas=(0, 0, 0))  # one replica, three keys
    assert [r.pick("t").index for _ in range(6)] == [0, 1, 2, 0, 1, 2]


def test_a_way_down_is_drained_probed_after_its_cooldown_and_taken_back():
    clock = FakeClock()
    r = router(clock=clock)
    w0 = r.ways[0]
    r._start(w0, clock.now())
    r.finished(w0, ok=False, down=True)
    assert w0.drained and r.admitted() == 1
    assert {r.pick("t").replica for _ in range(4)} == {1}  # drained: none go there
    clock.advance(1.0)
    probe = r.pick("t")
    assert probe is w0 and w0.probing
    r.finished(probe, ok=False, down=True)  # still down: drained for another interval
    assert w0.drained_until == clock.now() + 1.0
    clock.advance(0.5)
    assert r.pick("t").replica == 1  # not yet
    clock.advance(0.5)
    probe = r.pick("t")
    r.finished(probe, ok=True)
    assert probe is w0 and not w0.drained and r.readmitted == 1


def test_a_429_does_not_drain_a_way():
    r = router()
    way = r.pick("t")
    r.finished(way, ok=False, down=False)
    assert not way.drained and way.failed == 1


def test_with_every_way_drained_pick_waits_for_the_first_probe():
    clock = FakeClock()
    r = router(clock=clock)
    for w in r.ways:
        r._start(w, clock.now())
        r.finished(w, ok=False, down=True)
    assert r.pick("t") is None and r.due_in() == 1.0
    clock.advance(0.25)
    assert r.due_in() == 0.75


def test_mean_loads_integrate_requests_in_flight_over_time():
    clock = FakeClock()
    r = router(clock=clock)
    a = r.pick()
    b = r.pick()
    clock.advance(2.0)
    r.finished(a, ok=True)
    clock.advance(2.0)
    assert sorted(r.mean_loads()) == [0.5, 1.0]
    r.finished(b, ok=True)


def test_rankings_are_deterministic_and_spread_tasks():
    r1, r2 = router(replicas=(0, 1, 2, 3)), router(replicas=(0, 1, 2, 3))
    tasks = [f"task-{i}" for i in range(400)]
    firsts = [r1.ranking(t)[0] for t in tasks]
    assert firsts == [r2.ranking(t)[0] for t in tasks]
    assert all(70 <= firsts.count(k) <= 130 for k in range(4))


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="routing must be"):
        router(policy="random")


def test_a_call_goes_to_a_way_it_has_not_failed_on_while_there_is_one():
    r = router()
    home = r.ranking("t")[0]
    assert r.pick("t", avoid=frozenset({home})).replica == 1 - home
    assert r.pick("t", avoid=frozenset({0, 1})).replica in (0, 1)  # none left: any up
    rr = router(policy="round_robin")
    assert rr.pick(avoid=frozenset({0})).index == 1


def test_tasks_are_homed_on_the_least_loaded_replica_and_their_trials_follow():
    r = router()
    # 40 tasks of 4 trials each start at once (a sweep whose episodes all fit its slots)
    tasks = [f"task-{i}" for i in range(40)]
    homes = {t: r.pick(t).replica for t in tasks}
    for t in tasks:
        assert {r.pick(t).replica for _ in range(3)} == {homes[t]}  # no task split
    assert r.replica_load == [80, 80]  # hashing alone splits 40 tasks unevenly


def test_a_task_keeps_its_home_when_loads_change_and_returns_to_it_after_a_drain():
    clock = FakeClock()
    r = router(clock=clock)
    for _ in range(3):
        r._start(r.ways[0], clock.now())  # replica 0 carries three requests
    assert r.pick("new").replica == 1  # first seen: the least loaded replica
    for _ in range(3):
        r._start(r.ways[1], clock.now())  # replica 1 is now the busier one
    assert r.replica_load == [3, 4] and r.pick("new").replica == 1  # its home, under the bound
    way = r.ways[1]
    r._start(way, clock.now())
    r.finished(way, ok=False, down=True)
    assert r.pick("new").replica == 0 and r.pick("new").replica == 0  # drained: elsewhere
    clock.advance(1.0)
    probe = r.pick("other")
    r.finished(probe, ok=True)  # replica 1 answers its probe: taken back
    assert probe.replica == 1 and not way.drained
    assert r.pick("new").replica == 1  # the task is home again


# ---- the router's books at their edges (unit tests, exact values) ----------------------------


def test_defaults_bound_of_1_2_and_a_cooldown_of_one_second():
    clock = FakeClock()
    r = Router([0, 1], ["a", "b"], clock=clock.now)
    assert [w.label for w in r.ways] == ["a", "b"]
    home = r.ranking("t")[0]
    # 3 in flight: ceil(1.2 * 3 / 2) = 2 per replica (2.2 would allow 4)
    assert [r.pick("t").replica for _ in range(3)] == [home, home, 1 - home]
    way = r.ways[0]
    r._start(way, clock.now())
    r.finished(way, ok=False, down=True)
    assert way.drained_until == clock.now() + 1.0 and r.due_in() == 1.0


def test_replicas_and_labels_must_pair_up():
    with pytest.raises(ValueError):
        Router([0, 1], ["only one"], clock=FakeClock().now)


def test_counters_count_every_call_failure_and_readmission():
    clock = FakeClock()
    r = router(replicas=(0,), clock=clock)
    way = r.ways[0]
    for _ in range(2):
        assert r.pick("t") is way
    assert (way.load, way.calls) == (2, 2)
    r.finished(way, ok=False)  # not down by default: a 429
    assert not way.drained and way.failed == 1
    r.finished(way, ok=False, down=True)
    assert way.failed == 2 and way.drained
    for _ in range(2):
        clock.advance(1.0)
        probe = r.pick("t")
        r.finished(probe, ok=True)
        r._start(way, clock.now())
        r.finished(way, ok=False, down=True)
    assert r.readmitted == 2


def test_down_since_is_when_the_last_way_was_drained_until_one_answers():
    clock = FakeClock()
    r = router(replicas=(0, 1, 2), clock=clock)
    assert r.down_since is None
    for i, way in enumerate(r.ways):
        clock.advance(0.25)
        r._start(way, clock.now())
        r.finished(way, ok=False, down=True)
        assert r.admitted() == 2 - i
        assert r.down_since == (clock.now() if i == 2 else None)
    t_down = clock.now()
    clock.advance(0.5)
    r._start(r.ways[2], clock.now())
    r.finished(r.ways[2], ok=False, down=True)  # a later failure keeps the first time
    assert r.down_since == t_down
    clock.advance(1.0)
    probe = r.pick("t")
    r.finished(probe, ok=True)
    assert r.down_since is None and r.admitted() == 1


def test_due_in_and_probe_in():
    clock = FakeClock()
    r = router(clock=clock)
    assert r.due_in() == 1.0 and r.probe_in() == 1.0  # nothing drained: one cool-down
    w0 = r.ways[0]
    r._start(w0, clock.now())
    r.finished(w0, ok=False, down=True)
    clock.advance(0.25)
    assert r.due_in() == 0.75 and r.probe_in() == 0.75
    clock.advance(0.75)
    probe = r.pick("t")
    assert probe is w0 and r.probe_in() == 0.0  # its answer decides first
    assert r.due_in() == 1.0  # no other way drained
    r.finished(probe, ok=True)
    assert r.probe_in() == 1.0


def test_an_episode_leaves_its_replica_at_the_bound():
    clock = FakeClock()
    r = router(clock=clock)
    for _ in range(2):
        r._start(r.ways[0], clock.now())
    # loads [2, 0]: the bound is ceil(1.2 * 3 / 2) = 2, which replica 0 has reached
    assert r.pick("t", sticky=0).replica == 1
    assert r.pick("t", sticky=1).replica == 1  # loads [2, 1]: 1 < ceil(1.2 * 4 / 2) = 3


def test_mean_loads_add_the_ways_of_a_replica_over_short_spans():
    clock = FakeClock()
    r = router(replicas=(0, 0, 1), clock=clock)
    for way in r.ways[:2]:  # both keys of replica 0 carry a request
        r._start(way, clock.now())
    clock.advance(0.5)
    assert r.mean_loads() == [2.0, 0.0]


def test_rankings_are_rendezvous_hashing():
    """Losing a replica moves only the tasks whose first choice it was: each ranking over
    three replicas is the one over four without the fourth."""
    small, big = router(replicas=(0, 1, 2)), router(replicas=(0, 1, 2, 3))
    for i in range(200):
        t = f"task-{i}"
        assert small.ranking(t) == [k for k in big.ranking(t) if k != 3]
        assert small.ranking(t) is small.ranking(t)  # kept


def test_the_rankings_and_homes_kept_are_bounded(monkeypatch):
    from sweepbench.client import routing

    monkeypatch.setattr(routing, "_RANKINGS", 2)
    r = router()
    for t in ("a", "b"):
        r.pick(t)
    assert (len(r._rankings), len(r._homes)) == (2, 2)
    r.pick("c")  # at the bound: both are cleared before c is kept
    assert (len(r._rankings), len(r._homes)) == (1, 1)
