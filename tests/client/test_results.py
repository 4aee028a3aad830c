"""What a call gives back (client/results.py): the journal's stall counts, retries, a cut-short
reply, and the books a call writes on the error that ends it."""

from __future__ import annotations

from sweepbench.client.results import AttemptFailure, CallLedger, CallResult
from sweepbench.client.secrets import KEYS
from sweepbench.errors import ServerError
from sweepbench.wire import AssistantMessage, Usage


def result(**kw) -> CallResult:
    kw.setdefault("attempts", 1)
    kw.setdefault("statuses", [200])
    return CallResult(message=AssistantMessage(content="x"), usage=Usage(3, 1), latency_s=0.1,
                      **kw)


def test_stalls_are_told_only_when_a_request_hung_or_was_hedged():
    assert result().stalls is None
    assert result(hung=1).stalls == {"hung": 1, "hedged": 0, "hedge_won": False}
    billed = result(hedged=2, hedge_won=True, hedge_usage=Usage(6, 2)).stalls
    assert billed == {"hung": 0, "hedged": 2, "hedge_won": True, "hedge_usage": Usage(6, 2)}


def test_retries_are_the_requests_past_the_first_and_none_from_the_cache():
    assert [result(attempts=n).retries for n in (0, 1, 2, 7)] == [0, 0, 1, 6]


def test_a_reply_cut_short_is_truncated_a_finished_one_is_not():
    assert [result(finish_reason=r).truncated for r in ("stop", "tool_calls", None)] == [
        False, False, False]
    assert all(result(finish_reason=r).truncated
               for r in ("length", "max_tokens", "content_filter", "abort"))


def test_an_error_leaving_a_call_carries_its_requests_and_no_key(monkeypatch):
    monkeypatch.setenv("SWEEPBENCH_RESULTS_TEST_KEY", "sk-results-test-3b8e1f0a9c7d5e2f")
    KEYS.register("SWEEPBENCH_RESULTS_TEST_KEY")
    call = CallLedger(hung=1)
    call.statuses += [500, 0, 503]
    call.failures.append(AttemptFailure(error="ServerError", status=500, message="HTTP 500"))
    call.hedged = 2
    err = ServerError("ep: HTTP 503: key sk-results-test-3b8e1f0a9c7d5e2f rejected",
                      endpoint="ep", status=503)
    call.tag(err)
    assert (err.attempts, err.statuses, err.hung, err.hedged) == (3, [500, 0, 503], 1, 2)
    assert err.failures == call.failures and err.failures is not call.failures
    assert err.statuses is not call.statuses  # later attempts do not rewrite it
    assert "sk-results" not in str(err) and "[redacted]" in str(err)


def test_a_call_starts_with_empty_books():
    call = CallLedger()
    assert (call.statuses, call.failures, call.rate_limited, call.waited, call.backoff,
            call.payload, call.hung, call.hedged, call.hedge_won, call.hedge_usage) == (
        [], [], 0, 0.0, 0.0, b"", 0, 0, False, None)
    assert CallLedger(hung=2).hung == 2
