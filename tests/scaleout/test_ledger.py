"""The driver's ledger of an account's limits, leased to workers: exact numbers on a fake clock."""

from __future__ import annotations

import pytest

from sweepbench.client.transports.memory import VirtualClock
from sweepbench.scaleout.ledger import Account, Ledger
from sweepbench.scaleout.messages import LimitsInfo, Want


def account(**kw) -> tuple[Account, VirtualClock]:
    clock = VirtualClock()
    return Account(LimitsInfo(**{"max_concurrency": 10, "headroom": 1.0, **kw}),
                   clock=clock), clock


def test_requests_leased_never_exceed_what_the_account_bucket_holds():
    acct, clock = account(rpm=600)  # 10/s, a second of burst banked
    a = acct.grant("a", Want(requests=8))
    b = acct.grant("b", Want(requests=8))
    assert (a.requests, b.requests) == (8, 2)  # 10 banked in all, never into debt
    assert acct.grant("b", Want(requests=5)).requests == 0
    clock.advance(0.5)
    assert acct.grant("a", Want(requests=100)).requests == 5  # half a second of rate


def test_shares_of_the_cap_never_add_up_past_it_while_a_worker_drains():
    acct, _ = account(adaptive=False)
    assert acct.grant("a", Want(demand=10)).concurrency == 10  # alone: all of it
    # b wants 10 too; a still holds its 10 in flight: b gets nothing yet
    assert acct.grant("b", Want(demand=10)).concurrency == 0
    # a reports: its 10 in flight, demand 10 -> its share shrinks to 5, but it is counted
    # as holding 10 until it shows it applied the smaller share
    assert acct.grant("a", Want(demand=10, in_flight=10)).concurrency == 10
    assert acct.grant("a", Want(demand=10, in_flight=10)).concurrency == 10
    assert acct.grant("b", Want(demand=10)).concurrency == 0
    # a's requests finish: it drains to 4 in flight and is given its half
    assert acct.grant("a", Want(demand=10, in_flight=4)).concurrency == 5
    assert acct.grant("a", Want(demand=10, in_flight=4)).concurrency == 5
    assert acct.grant("b", Want(demand=10)).concurrency == 5
    assert sum(acct.held.values()) <= 10


def test_a_dead_workers_share_is_taken_back():
    acct, _ = account(adaptive=False)
    acct.grant("a", Want(demand=6, in_flight=0))
    acct.grant("b", Want(demand=4))
    acct.reclaim("a")
    assert acct.grant("b", Want(demand=10, in_flight=4)).concurrency == 10


def test_clustered_429s_from_every_worker_shrink_the_one_cap_once_per_round_trip():
    acct, clock = account(max_concurrency=100)
    clock.advance(1.0)
    # two workers report 429s whose requests were sent before the first decrease
    acct.grant("a", Want(demand=50, overload_ages=[0.2, 0.1]))
    acct.grant("b", Want(demand=50, overload_ages=[0.15]))
    assert acct.concurrency.cap == 70  # one decrease (x0.7), not three
    clock.advance(1.0)
    acct.grant("a", Want(demand=50, overload_ages=[0.1]))  # sent after it: another
    assert acct.concurrency.cap == 49


def test_a_retry_after_told_to_one_worker_holds_every_worker_once():
    acct, clock = account()
    assert acct.grant("a", Want(pause_s=2.0)).pause_s == 0.0  # a knows already
    assert acct.grant("b", Want()).pause_s == pytest.approx(2.0)
    assert acct.grant("b", Want()).pause_s == 0.0  # told once
    clock.advance(3.0)
    assert acct.grant("c", Want()).pause_s == 0.0  # over


def test_tokens_are_leased_per_account_key_only_for_accounts_registered():
    ledger = Ledger(clock=VirtualClock())
    ledger.register({"k": LimitsInfo(max_concurrency=4, tpm=6000, headroom=1.0)})
    grants = ledger.grant("a", {"k": Want(tokens=50, demand=1), "other": Want(tokens=5)})
    assert list(grants) == ["k"] and grants["k"].tokens == 50 and grants["k"].requests == 0
    assert ledger.shares() == {"k": {"a": 4}}
