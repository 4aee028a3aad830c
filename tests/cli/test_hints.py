"""What to fix before a rerun: a fix for each error no retry fixes, none for the others."""

from __future__ import annotations

import pytest

from sweepbench.cli.hints import fix_for, fixes


@pytest.mark.parametrize(("reason", "starts"), [
    ("agent model call failed: a: HTTP 400: unknown field 'foo'", "the server refused the request"),
    ("agent model call failed: a: HTTP 401: bad key", "the server refused the key"),
    ("judge call failed: a: HTTP 403: forbidden", "the key may not use this model"),
    ("user model call failed: a: HTTP 404: no such model", "the server knows no such model"),
    ("agent model call failed: a: HTTP 400: maximum context length is 8192 tokens",
     "the conversation outgrew the model's context"),
    ("agent model call failed: endpoint 'a': environment variable K is not set",
     "set the key's environment variable"),
    ("agent model call failed: a: HTTP 429: insufficient_quota", "the account is out of credit"),
    (("agent model call failed: vllm/scripted/oracle: HTTP 400: scripted models need the "
      "`sweepbench` request field (task, spec, lang)"), "the reference server's scripted models"),
])
def test_an_error_no_retry_fixes_gets_its_fix(reason, starts):
    assert fix_for(reason).startswith(starts)


@pytest.mark.parametrize("reason", [
    "agent model call failed: a: HTTP 429: slow down", "agent model call failed: a: HTTP 500",
    "agent model call failed: a: HTTP 503: busy", "agent model call failed: timed out",
    "agent reply cut short (finish_reason length)", "HTTP 4000 is no status"])
def test_an_error_a_rerun_may_fix_gets_none(reason):
    assert fix_for(reason) is None


def test_fixes_are_said_once_each_in_the_order_first_needed():
    assert fixes(["a: HTTP 404", "a: HTTP 500", "b: HTTP 401", "c: HTTP 404"]) == [
        fix_for("HTTP 404"), fix_for("HTTP 401")]
