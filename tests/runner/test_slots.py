"""Slot lending: an episode asleep before a retry lends its sweep slot to a new episode and
takes the next free one when it wakes, so the sweep stays busy while the episodes making
requests never exceed ``max_concurrency``."""

from __future__ import annotations

import asyncio
import json

import msgspec
import pytest

from sweepbench.config import Endpoint, load_config
from sweepbench.store.runstore import RunStore
from sweepbench.runner import build as build_mod
from sweepbench.client.facade import ModelClient
from sweepbench.client.hedging import IdleSlots
from sweepbench.client.limits import EndpointLimits
from sweepbench.client.outcomes import FAILED, LIMITED
from sweepbench.runner.slots import LEASE, Slots, lending_workers
from sweepbench.runner.sweep import Sweep
from sweepbench.client.transports.memory import Answer, MemoryTransport, completion

from ..support import FakeClock


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def done(task: asyncio.Task):
    """The task's result, failing (not hanging) if it waits for a slot nobody gives it."""
    return await asyncio.wait_for(task, 2.0)


class Alarm:
    """A sleep that lasts until the test rings."""

    def __init__(self) -> None:
        self.ring = asyncio.Event()

    async def sleep(self, _seconds: float) -> None:
        await self.ring.wait()


async def test_a_sleeper_lends_its_slot_and_wakes_before_any_new_start():
    slots = Slots(2, IdleSlots())
    assert await slots.start() and await slots.start()
    a, b = slots.lease(), slots.lease()
    third = asyncio.create_task(slots.start())
    await settle()
    assert not third.done()  # both slots held
    alarm = Alarm()
    sleeper = asyncio.create_task(a.sleep(1.0, alarm.sleep))
    assert await done(third)  # started on the slot the sleeper lent
    assert (slots.asleep, slots.lends, a.held) == (1, 1, False)
    fourth = asyncio.create_task(slots.start())
    alarm.ring.set()
    await settle()
    assert not sleeper.done() and not fourth.done()  # awake, but no slot is free
    assert slots.asleep == 0
    b.release()  # an episode ends: its slot goes to the woken sleeper, not to the new start
    await done(sleeper)
    assert a.held and not fourth.done()
    a.release()
    assert await done(fourth)
    assert slots.free == 0


async def test_closing_ends_waiting_starts_and_idles_the_free_slots():
    spare = IdleSlots()
    slots = Slots(2, spare)
    assert await slots.start()
    lease = slots.lease()
    assert slots.free == 1
    slots.close(ramp_down=True)
    assert spare.idle == 1 and slots.free == 0
    assert await slots.start() is False
    lease.release()  # after the close a freed slot is idle, for ramp-down backups
    assert spare.idle == 2

    slots = Slots(1, IdleSlots())
    assert await slots.start()
    waiting = asyncio.create_task(slots.start())
    await settle()
    slots.close(ramp_down=True)
    assert await done(waiting) is False


async def test_a_sleeper_waking_after_the_close_takes_an_idle_slot_unless_a_backup_uses_it():
    spare = IdleSlots()
    slots = Slots(2, spare)
    assert await slots.start() and await slots.start()
    a, b = slots.lease(), slots.lease()
    slots.close(ramp_down=True)
    alarm = Alarm()
    sleeper = asyncio.create_task(a.sleep(1.0, alarm.sleep))
    await settle()
    assert spare.idle == 1  # its slot is idle meanwhile
    assert spare.take()  # and a backup copy goes out on it
    alarm.ring.set()
    await settle()
    assert not sleeper.done()  # the idle slot is in use: wait for it
    spare.give()  # the copy ended: the slot goes to the sleeper
    await done(sleeper)
    assert a.held and spare.idle == 0 and spare.lent == 0

    # an idle slot nobody uses is taken at once
    alarm = Alarm()
    alarm.ring.set()
    await a.sleep(1.0, alarm.sleep)
    assert a.held and spare.idle == 0
    b.release()
    a.release()
    assert spare.idle == 2


async def test_a_sleeper_cancelled_holds_no_slot_and_a_grant_to_a_cancelled_waiter_moves_on():
    slots = Slots(1, IdleSlots())
    assert await slots.start()
    lease = slots.lease()
    started = asyncio.create_task(slots.start())
    sleeper = asyncio.create_task(lease.sleep(1.0, Alarm().sleep))
    assert await done(started)
    other = slots.lease()
    sleeper.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sleeper
    assert not lease.held and slots.asleep == 0
    lease.release()  # nothing to give back
    assert slots.free == 0
    # a start granted a slot and cancelled in the same loop turn passes the slot on
    late = asyncio.create_task(slots.start())
    then = asyncio.create_task(slots.start())
    await settle()
    other.release()  # granted to `late`...
    late.cancel()  # ...which is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await late
    assert await done(then)


async def test_a_stop_keeps_the_free_slots_from_backups():
    """A sweep that stops starting (budget, error streak, signal) is not a ramp-down: its
    slots never turn idle, so no backup copy is sent on them; a sleeper still gets one back."""
    spare = IdleSlots()
    slots = Slots(3, spare)
    assert await slots.start() and await slots.start()
    a, b = slots.lease(), slots.lease()
    slots.close(ramp_down=False)
    assert await slots.start() is False
    slots.close(ramp_down=True)  # the first close decides
    assert slots.free == 1 and spare.idle == 0 and not spare.take()
    alarm = Alarm()
    alarm.ring.set()
    b.release()
    assert spare.idle == 0 and slots.free == 2
    await a.sleep(1.0, alarm.sleep)  # lent to nobody, taken back from the free ones
    assert a.held and slots.free == 2 and spare.idle == 0
    a.release()
    assert slots.free == 3 and spare.idle == 0 and spare.sent == 0


def test_lending_workers():
    assert lending_workers(1) == 1
    assert lending_workers(32) == 8
    assert lending_workers(256) == 64


def client_on(transport: MemoryTransport, clock: FakeClock) -> ModelClient:
    ep = Endpoint(name="m", base_url="http://h/v1", hedge=False)
    return ModelClient(ep, transport=transport,
                       limits=EndpointLimits.for_endpoint(ep, clock=clock))


async def lent_sleeps(client: ModelClient) -> int:
    """Calls the client once in a task with a lease; how many slots it lent meanwhile."""
    slots = Slots(1, IdleSlots())
    assert await slots.start()
    lease = slots.lease()

    async def call() -> None:
        LEASE.set(lease)
        await client.complete(msgspec.json.encode({"model": "x", "messages": []}))

    await asyncio.create_task(call())
    assert lease.held  # taken back after the sleep
    return slots.lends


async def test_the_client_lends_only_while_the_endpoint_faults_are_isolated():
    ok = Answer(body=completion("hi"))
    busy = Answer(status=429, headers={"Retry-After": "1"}, body={"error": {"message": "slow"}})
    clock = FakeClock()
    client = client_on(MemoryTransport(busy, ok), clock)
    assert await lent_sleeps(client) == 1
    assert clock.slept and clock.slept[0] >= 1.0  # the Retry-After, honoured

    # 429s clustering (the endpoint at its rate limit): more work would not help
    client = client_on(MemoryTransport(busy, ok), FakeClock())
    for _ in range(20):
        client.limits.outcomes.add(LIMITED)
    assert client.limits.outcomes.limit_hit()
    assert await lent_sleeps(client) == 0

    # most recent requests failed: an endpoint in trouble is sent no more work
    client = client_on(MemoryTransport(busy, ok), FakeClock())
    for _ in range(20):
        client.limits.outcomes.add(FAILED)
    assert await lent_sleeps(client) == 0

    # no lease (a judge's call, or lending off): the sleep keeps what it holds
    clock = FakeClock()
    client = client_on(MemoryTransport(busy, ok), clock)
    await client.complete(msgspec.json.encode({"model": "x", "messages": []}))
    assert clock.slept


async def test_a_sweep_lends_slots_keeps_requests_within_its_slots_and_gets_the_same_results(
        tmp_path, monkeypatch):
    """429s with a Retry-After: with lending on, episodes start on the sleepers' slots; the
    requests in flight never exceed max_concurrency (hedging and backups off, so one request
    per episode), and every trajectory and metric is the one a sweep without lending gets."""
    make = build_mod.reference_server
    monkeypatch.setattr(build_mod, "reference_server",
                        lambda cfg, **kw: make(cfg, fault_retry_after_s=0.05, **kw))
    posts = {"now": 0, "peak": 0}
    post = ModelClient._post

    async def counted(self, body, headers, flight):
        posts["now"] += 1
        posts["peak"] = max(posts["peak"], posts["now"])
        try:
            return await post(self, body, headers, flight)
        finally:
            posts["now"] -= 1

    monkeypatch.setattr(ModelClient, "_post", counted)
    one = {"hedge": False, "backups": 0, "max_concurrency": 1 << 16}
    base = {"benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle",
            "scripted/noisy:0.3"], "trials": 2, "max_concurrency": 4,
            "reference_latency": "uniform:0.005,0.02", "reference_faults": "429=0.2",
            "judge_models": [], "endpoints": [
                {"name": n, **one} for n in ("scripted/oracle", "scripted/noisy:0.3",
                                              "scripted/user")]}
    out = {}
    for lend in (True, False):
        posts["peak"] = 0
        with RunStore(tmp_path / f"{lend}.sqlite") as store:
            sweep = Sweep(load_config(None, {**base, "lend_slots": lend}), store)
            outcome = await sweep.run()
            calls = store.model_calls(set(store.episode_status()))
            out[lend] = {
                "transcripts": {(r.model, r.task_id, r.trial): msgspec.json.encode(r.messages)
                                for r in store.episodes(outcome.run_id)},
                "lends": sweep.slots.lends, "peak": posts["peak"],
                "rate_limited": sum(c.attempts > 1 for c in calls),
                "stalls": [json.loads(c.stalls) for c in calls if c.stalls],
            }
        assert outcome.errors == 0 and outcome.episodes == len(out[lend]["transcripts"])
        assert sweep.slots.asleep == 0
    assert out[True]["transcripts"] == out[False]["transcripts"]
    assert out[True]["rate_limited"] > 0
    assert out[True]["lends"] > 0 and out[False]["lends"] == 0
    assert out[True]["peak"] <= 4 and out[False]["peak"] <= 4
    assert not out[True]["stalls"]  # no hedges, no backups: one request per episode


@pytest.mark.parametrize("lend", [True, False])
async def test_a_sweep_stopped_by_its_errors_sends_no_backups_on_its_free_slots(
        tmp_path, monkeypatch, lend):
    """The error streak stops new starts while episodes still run; their requests must not
    get backup copies on the slots the stop left free (that is for a ramp-down only)."""
    from sweepbench.client import hedging as hedge_mod

    sweeps: list[Sweep] = []
    after_stop = []
    take = hedge_mod.IdleSlots.take

    def counted_take(self):
        ok = take(self)
        if ok and sweeps and sweeps[0].error_stop:
            after_stop.append(1)
        return ok

    monkeypatch.setattr(hedge_mod.IdleSlots, "take", counted_take)
    eps = [{"name": n, "hedge": True, "backups": 2, "max_concurrency": 1 << 16,
            "max_retries": 0, "breaker_threshold": 1000}
           for n in ("scripted/oracle", "scripted/noisy:0.3", "scripted/user")]
    cfg = load_config(None, {
        "benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle", "scripted/noisy:0.3"],
        "trials": 4, "max_concurrency": 8, "reference_latency": "uniform:0.005,0.02",
        "reference_faults": "500=0.08", "judge_models": [], "endpoints": eps,
        "error_streak": 3, "reference_seed": 1, "lend_slots": lend})
    with RunStore(tmp_path / "s.sqlite") as store:
        sweeps.append(Sweep(cfg, store))
        outcome = await asyncio.wait_for(sweeps[0].run(), 60)
    assert outcome.error_stop and outcome.not_started > 0
    assert not after_stop
    slots = sweeps[0].slots
    assert not slots.ramp_down and slots.spare.idle == 0 and slots.free == 8


async def test_a_worker_that_fails_outside_its_episode_stops_the_others(tmp_path):
    """A failure in the sweep's own code (here the progress callback) ends the sweep with that
    error, and no other worker goes on starting episodes after it."""
    counts = {"started": 0, "finished": 0}

    class Boom(Exception):
        pass

    def progress(kind, **info):
        if kind in counts:
            counts[kind] += 1
        if kind == "finished" and counts["finished"] == 3:
            raise Boom("a display bug")

    cfg = load_config(None, {
        "benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle", "scripted/noisy:0.3"],
        "trials": 3, "max_concurrency": 4, "reference_latency": "uniform:0.005,0.02",
        "judge_models": []})
    with RunStore(tmp_path / "s.sqlite") as store:
        with pytest.raises(Boom):
            await asyncio.wait_for(Sweep(cfg, store, progress=progress).run(), 60)
        started = counts["started"]
        await asyncio.sleep(0.3)  # episodes take ~0.1 s here: time for several more starts
        assert counts["started"] == started
        assert not [t for t in asyncio.all_tasks() if t is not asyncio.current_task()
                    and "worker" in t.get_coro().__qualname__]


# ---- the edges: cancellations, double releases, counts -------------------------------------


async def test_a_start_cancelled_while_waiting_leaves_no_slot_and_no_waiter():
    slots = Slots(1, IdleSlots())
    assert await slots.start()
    lease = slots.lease()
    waiting = asyncio.create_task(slots.start())
    await settle()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert slots.free == 0 and not slots._starts
    # a start refused by the close and cancelled before it ran frees no slot either
    refused = asyncio.create_task(slots.start())
    await settle()
    slots.close(ramp_down=False)
    refused.cancel()
    with pytest.raises(asyncio.CancelledError):
        await refused
    assert slots.free == 0
    lease.release()
    assert slots.free == 1


async def test_a_lease_released_twice_frees_one_slot():
    slots = Slots(2, IdleSlots())
    assert await slots.start()
    lease = slots.lease()
    lease.release()
    lease.release()
    assert slots.free == 2 and not lease.held


async def test_sleepers_are_counted_while_asleep_and_every_lend_is():
    slots = Slots(2, IdleSlots())
    assert await slots.start() and await slots.start()
    a, b = slots.lease(), slots.lease()
    alarm = Alarm()
    sleepers = [asyncio.create_task(x.sleep(1.0, alarm.sleep)) for x in (a, b)]
    await settle()
    assert (slots.asleep, slots.lends, slots.free) == (2, 2, 2)
    alarm.ring.set()
    await done(asyncio.gather(*sleepers))
    assert (slots.asleep, slots.lends, slots.free) == (0, 2, 0) and a.held and b.held


async def test_a_lease_not_held_sleeps_what_it_is_asked_holding_nothing():
    slots = Slots(1, IdleSlots())
    assert await slots.start()
    lease = slots.lease()
    lease.release()
    slept = []

    async def sleep(seconds):
        slept.append(seconds)

    await lease.sleep(2.5, sleep)
    assert slept == [2.5] and not lease.held
    assert (slots.asleep, slots.lends, slots.free) == (0, 0, 1)


async def test_a_woken_sleeper_granted_a_slot_and_cancelled_passes_it_on():
    slots = Slots(1, IdleSlots())
    assert await slots.start()
    first = slots.lease()
    alarm = Alarm()
    sleeper = asyncio.create_task(first.sleep(1.0, alarm.sleep))
    assert await done(asyncio.create_task(slots.start()))  # on the lent slot
    second = slots.lease()
    later = asyncio.create_task(slots.start())
    alarm.ring.set()
    await settle()
    assert not sleeper.done()  # awake, waiting for a slot
    second.release()  # granted to the sleeper...
    sleeper.cancel()  # ...cancelled before it ran
    with pytest.raises(asyncio.CancelledError):
        await sleeper
    assert await done(later)  # the slot went on to the waiting start
    assert not first.held


async def test_the_ramp_down_adds_the_free_slots_to_the_idle_ones():
    spare = IdleSlots(idle=2)
    slots = Slots(3, spare)
    assert await slots.start()
    slots.close(ramp_down=True)
    assert spare.idle == 4 and slots.free == 0


async def test_a_slot_given_back_while_the_waiting_sleeper_is_being_cancelled_stays_idle():
    spare = IdleSlots(idle=1)
    slots = Slots(1, spare)
    assert await slots.start()
    lease = slots.lease()
    slots.close(ramp_down=True)
    alarm = Alarm()
    sleeper = asyncio.create_task(lease.sleep(1.0, alarm.sleep))
    await settle()
    assert spare.idle == 2 and spare.take() and spare.take()  # copies on both idle slots
    alarm.ring.set()
    await settle()
    assert not sleeper.done()  # awake, every idle slot in use
    sleeper.cancel()  # the sleeper's wait is cancelled, its task not yet run...
    spare.give()  # ...when a copy gives its slot back: nobody to hand it to
    assert (spare.idle, spare.lent) == (2, 1)
    with pytest.raises(asyncio.CancelledError):
        await sleeper
    assert (spare.idle, spare.lent) == (2, 1) and not slots._wakers
