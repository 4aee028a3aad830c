"""What an answer means (client/classify.py): the status and body of each kind of failure
become the error they are, which is what decides a retry; a 2xx body that carries an error or
cannot be read; the Retry-After header."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from sweepbench.errors import (
    AuthenticationError,
    BadRequestError,
    ContextLengthError,
    FatalError,
    InvalidResponseError,
    NotFoundError,
    QuotaExceededError,
    RateLimitError,
    RetryableError,
    ServerError,
)
from sweepbench.client.classify import MAX_SERVER_TEXT, classify, parse_retry_after, server_text
from sweepbench.client.transports.memory import Answer

from .rig import OK, Rig, status


# ---- status -> error ------------------------------------------------------------------------


async def test_408_is_retried() -> None:
    assert (await Rig(status(408), OK)()).statuses == [408, 200]


@pytest.mark.parametrize(
    ("code", "error", "code_str", "message"),
    [
        (400, BadRequestError, None, "bad field"),
        (400, ContextLengthError, "context_length_exceeded", "too long"),
        (400, ContextLengthError, None, "This model's maximum context length is 8192 tokens"),
        (413, ContextLengthError, None, "prompt is too long: 210000 tokens > 200000 maximum"),
        (401, AuthenticationError, None, "bad key"),
        (403, AuthenticationError, None, "forbidden"),
        (404, NotFoundError, None, "no such model"),
        (422, FatalError, None, "unprocessable"),
        (429, QuotaExceededError, "insufficient_quota", "You exceeded your current quota"),
    ],
)
async def test_fatal_errors_are_not_retried(code, error, code_str, message) -> None:
    rig = Rig(status(code, message, code_str=code_str))
    with pytest.raises(FatalError) as info:
        await rig()
    assert type(info.value) is error
    assert not isinstance(info.value, RetryableError)
    assert rig.transport.count == 1 and info.value.attempts == 1 and info.value.status == code
    assert message in str(info.value)


@pytest.mark.parametrize(
    "bad",
    [b"<html>gateway hiccup</html>", b'{"choices": [{"mess', b'{"unexpected": true}',
     b'{"choices": []}'],
    ids=["not-json", "truncated-json", "wrong-shape", "no-choices"],
)
async def test_invalid_body_is_retried(bad: bytes) -> None:
    result = await Rig(Answer(body=bad), OK)()
    assert result.attempts == 2 and result.statuses == [200, 200]
    assert result.failures[0].error == "InvalidResponseError"


async def test_invalid_body_exhausted_raises_invalid_response_naming_the_endpoint() -> None:
    rig = Rig(Answer(body=b"garbage"), max_retries=1)
    with pytest.raises(InvalidResponseError) as info:
        await rig()
    assert rig.transport.count == 2
    assert str(info.value).startswith("test-model: invalid response from "
                                      "http://memory.invalid/v1/chat/completions")


async def test_error_inside_a_200_is_classified_by_its_code() -> None:
    inband = Answer(body={"error": {"message": "Provider returned error", "code": 502}})
    result = await Rig(inband, OK)()
    assert result.statuses == [200, 200]
    assert result.failures[0].error == "ServerError"
    assert "Provider returned error" in result.failures[0].message
    rig = Rig(Answer(body={"error": {"message": "no code here"}}), max_retries=0)
    with pytest.raises(InvalidResponseError, match="no code here"):
        await rig()


# ---- helpers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("2", 2.0), ("0.5", 0.5), ("-3", 0.0), ("soon", None), ("", None), ("nan", None)],
)
def test_retry_after_parsing(value: str, expected: float | None) -> None:
    assert parse_retry_after({"Retry-After": value}) == expected


def test_retry_after_http_date() -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    seconds = parse_retry_after({"Retry-After": format_datetime(when, usegmt=True)})
    assert seconds is not None and 25 <= seconds <= 31


# ---- the classification itself ------------------------------------------------------------


def test_only_a_503_and_a_429_carry_the_servers_retry_after():
    wait = {"Retry-After": "2"}
    busy = classify("ep", 503, wait, "busy", "busy")
    assert type(busy) is ServerError and busy.retry_after == 2.0 and busy.status == 503
    assert classify("ep", 500, wait, "boom", "boom").retry_after is None
    limited = classify("ep", 429, {"Retry-After": "1.5"}, "slow down", "slow down")
    assert type(limited) is RateLimitError and limited.retry_after == 1.5
    assert type(classify("ep", 408, None, "", "")) is ServerError  # a timeout, retried
    assert type(classify("ep", 429, wait, "x", "insufficient_quota")) is QuotaExceededError


def test_the_message_names_the_endpoint_and_status_and_shows_only_what_is_given():
    teapot = classify("ep", 418, None, "a teapot", "a teapot, type x")
    assert str(teapot) == "ep: HTTP 418: a teapot"
    assert str(classify("ep", 302, None, "", "")) == "ep: HTTP 302"
    assert type(classify("ep", 302, None, "", "")) is FatalError


def test_server_text_prefers_the_error_message_and_cuts_it_after_scrubbing():
    body = b'{"error": {"message": "bad field", "type": "invalid_request", "code": "x1"}}'
    shown, text = server_text(body)
    assert shown == "bad field" and "invalid_request" in text and "x1" in text
    assert server_text(b"  <html>gateway</html>  ") == ("<html>gateway</html>",) * 2
    long = server_text(b"y" * 5000)
    assert long == ("y" * MAX_SERVER_TEXT,) * 2
