"""IdentityMemo: a value per object, worked out once, by identity and not by equality."""

from __future__ import annotations

import gc
import weakref

import pytest

from sweepbench.memo import IdentityMemo


def test_a_value_is_made_once_per_object_and_an_equal_object_gets_its_own():
    made = []

    def make(obj: list) -> int:
        made.append(obj)
        return len(made)

    memo: IdentityMemo[list, int] = IdentityMemo()
    a, b = [1, 2], [1, 2]
    assert [memo.get(a, make), memo.get(a, make), memo.get(b, make)] == [1, 1, 2]
    assert made == [a, b] and made[0] is a and made[1] is b


def test_a_failure_is_not_kept_and_the_next_call_tries_again():
    calls = []

    def make(obj: list) -> str:
        calls.append(obj)
        if len(calls) == 1:
            raise ValueError("broken")
        return "ok"

    memo: IdentityMemo[list, str] = IdentityMemo()
    obj: list = []
    with pytest.raises(ValueError):
        memo.get(obj, make)
    assert memo.get(obj, make) == "ok" and len(calls) == 2 and len(memo) == 1


def test_a_bounded_memo_drops_the_least_recently_used():
    memo: IdentityMemo[list, int] = IdentityMemo(size=2)
    a, b, c = [0], [1], [2]
    memo.get(a, lambda o: 10)
    memo.get(b, lambda o: 20)
    assert memo.get(a, lambda o: -1) == 10  # a used again: b is now the oldest
    memo.get(c, lambda o: 30)
    assert len(memo) == 2
    assert memo.get(b, lambda o: 21) == 21  # b was dropped and is made again
    assert memo.get(c, lambda o: -1) == 30


def test_an_entry_holds_its_object_so_its_id_is_not_reused_while_kept():
    class Obj:
        pass

    memo: IdentityMemo[Obj, int] = IdentityMemo(size=1)
    obj = Obj()
    ref = weakref.ref(obj)
    memo.get(obj, lambda o: 1)
    del obj
    gc.collect()
    assert ref() is not None
    memo.get(Obj(), lambda o: 2)  # pushes the first one out: now it may go
    gc.collect()
    assert ref() is None
