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
    RetryableError,
)
from sweepbench.client.classify import parse_retry_after
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
