"""The answer window: its last answers only, and a cluster of 429s needing both a count and
a share."""

from __future__ import annotations

import pytest

from sweepbench.client.outcomes import ANSWERED, FAILED, LIMITED, AnswerWindow


def test_answer_window_counts_its_last_answers_only() -> None:
    w = AnswerWindow(size=4, share=0.5, min_count=2)
    w.add(LIMITED)
    assert not w.limit_hit()  # one 429: under min_count
    w.add(FAILED)
    w.add(LIMITED)
    assert w.limit_hit() and (w.limited, w.failed, len(w)) == (2, 1, 3)
    for _ in range(3):
        w.add(ANSWERED)  # full at four: the first LIMITED and the FAILED drop out
    assert (w.limited, w.failed, len(w)) == (1, 0, 4)
    w.add(ANSWERED)
    assert (w.limited, w.failed, len(w)) == (0, 0, 4)
    w.add(LIMITED)
    w.add(LIMITED)
    assert w.limit_hit()  # 2 of 4: at the share
    w.add(ANSWERED)
    w.add(ANSWERED)
    assert w.limit_hit()  # still 2 of 4
    w.add(ANSWERED)
    assert not w.limit_hit() and w.limited == 1  # the first of the two dropped out
    assert w.failing_share == 0.0 and AnswerWindow(50, 0.3, 3).failing_share == 0.0


def test_answer_window_share_needs_both_count_and_share() -> None:
    w = AnswerWindow(size=10, share=0.3, min_count=3)
    for outcome in (LIMITED, LIMITED, LIMITED):
        w.add(outcome)
    assert w.limit_hit()  # 3 of 3
    for _ in range(7):
        w.add(ANSWERED)
    assert w.limit_hit()  # 3 of 10: at the share
    w.add(FAILED)  # a LIMITED drops out: 2 of 10
    assert not w.limit_hit() and w.failing_share == pytest.approx(0.1)
    for size, share, min_count in ((0, 0.3, 3), (10, 1.5, 3), (10, -0.1, 3), (10, 0.3, 0)):
        with pytest.raises(ValueError, match=rf"share in \[0, 1\]; got {size}, {min_count}, "):
            AnswerWindow(size, share, min_count)
    one = AnswerWindow(1, 1.0, 1)  # the smallest window; every answer a 429 at share 1
    one.add(FAILED)
    assert one.failing_share == 1.0 and not one.limit_hit()
    one.add(LIMITED)
    assert one.limit_hit() and one.failing_share == 0.0 and (one.limited, one.failed) == (1, 0)


def test_the_share_may_be_0_or_1_and_nothing_outside() -> None:
    w = AnswerWindow(size=2, share=0.0, min_count=1)  # any 429 at all is a cluster
    w.add(ANSWERED)
    w.add(LIMITED)
    assert w.limit_hit()
    assert AnswerWindow(size=1, share=1.0, min_count=1).share == 1.0
    for bad in (-0.01, 1.01):
        with pytest.raises(ValueError) as err:
            AnswerWindow(size=2, share=bad, min_count=1)
        assert str(err.value) == ("need size >= 1, min_count >= 1, share in [0, 1]; got "
                                  f"2, 1, {bad}")
