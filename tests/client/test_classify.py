"""What an answer means (client/classify.py): the status and body of each kind of failure
become the error they are, which is what decides a retry; a 2xx body that carries an error or
cannot be read; the Retry-After header."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import msgspec
import pytest

from sweepbench.errors import (
    AuthenticationError,
    BadRequestError,
    ContextLengthError,
    FatalError,
    InvalidResponseError,
    ModelError,
    NotFoundError,
    QuotaExceededError,
    RateLimitError,
    RetryableError,
    ServerError,
)
from sweepbench.client.classify import (
    MAX_SERVER_TEXT,
    classify,
    parse_retry_after,
    read_reply,
    scrub_error,
    server_text,
)
from sweepbench.client.secrets import KEYS
from sweepbench.client.shapes import InBandError, decode_reply
from sweepbench.client.transports.memory import Answer, completion

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


@pytest.mark.parametrize(
    ("code", "text", "error"),
    [(429, "slow down", RateLimitError), (429, "insufficient_quota", QuotaExceededError),
     (408, "", ServerError), (500, "", ServerError), (503, "", ServerError),
     (400, "context_length_exceeded", ContextLengthError), (400, "bad", BadRequestError),
     (401, "", AuthenticationError), (403, "", AuthenticationError), (404, "", NotFoundError),
     (422, "", FatalError), (302, "", FatalError)],
)
def test_every_error_names_its_endpoint_and_status_and_says_what_the_server_said(
        code, text, error):
    err = classify("ep", code, None, "said this", text)
    assert type(err) is error
    assert (err.endpoint, err.status, str(err)) == ("ep", code, f"ep: HTTP {code}: said this")


def test_retry_after_without_headers_is_none():
    assert parse_retry_after(None) is None


def test_a_body_that_is_not_utf8_is_shown_with_replacement_characters():
    assert server_text(b"\xff bad gateway \xfe") == ("\ufffd bad gateway \ufffd",) * 2


# ---- a 2xx body ----------------------------------------------------------------------------

KEY = "sk-classify-7c1e9a3b5d2f4e6a8b0c"
URL = "http://h/v1/chat/completions"


@pytest.fixture
def key(monkeypatch) -> str:
    monkeypatch.setenv("SWEEPBENCH_CLASSIFY_TEST_KEY", KEY)
    KEYS.register("SWEEPBENCH_CLASSIFY_TEST_KEY")
    return KEY


def escaped(text: str) -> str:
    """``text`` with every character a JSON escape: the raw body holds no run of it."""
    return "".join(f"\\u{ord(c):04x}" for c in text)


def body_with(where: str) -> bytes:
    """A reply whose field ``where`` holds the key; JSON-escaped unless ``where`` is a field
    the reply does not decode, so only the decoded field (or only the raw body) shows it."""
    body = completion("fine", reasoning_content="thought")
    msg = body["choices"][0]["message"]
    mark = "@KEY@"
    if where == "raw":
        body["system_fingerprint"] = mark
    elif where in ("content", "reasoning_content"):
        msg[where] = f"it is {mark}"
    elif where in ("id", "model"):
        body[where] = mark
    elif where in ("tool-name", "tool-arguments"):
        fn = {"name": "send", "arguments": '{"note": "hi"}'}
        fn["name" if where == "tool-name" else "arguments"] = mark
        msg["tool_calls"] = [{"id": "c1", "type": "function", "function": fn}]
    elif where == "reasoning_details":
        msg["reasoning_details"] = [{"type": "reasoning.text", "text": mark}]
    form = KEY if where == "raw" else escaped(KEY)
    return msgspec.json.encode(body).replace(mark.encode(), form.encode())


def test_a_reply_without_a_key_is_read():
    reply = read_reply("ep", URL, msgspec.json.encode(completion("fine")))
    assert reply.message.content == "fine" and reply.model == "mem"


@pytest.mark.parametrize("where", ["raw", "content", "reasoning_content", "id", "model",
                                   "tool-name", "tool-arguments", "reasoning_details"])
def test_a_reply_holding_a_key_in_its_body_or_any_field_is_refused(key, where):
    with pytest.raises(FatalError) as info:
        read_reply("ep", URL, body_with(where))
    assert type(info.value) is FatalError and info.value.endpoint == "ep"
    assert str(info.value) == (
        f"ep: the reply from {URL} contains an API key (whole, cut, re-cased or base64); "
        "refused: an endpoint that echoes keys is not shown to any model")


def test_a_key_no_variable_holds_now_is_not_looked_for():
    assert read_reply("ep", URL, body_with("content")).message.content == f"it is {KEY}"


def inband_text(body: bytes) -> str:
    """What :func:`decode_reply` reads an error inside a 2xx body as."""
    with pytest.raises(InBandError) as info:
        decode_reply(body)
    return info.value.text


def test_an_error_inside_a_2xx_with_a_code_is_classified_and_says_where_it_was():
    body = msgspec.json.encode({"error": {"message": "upstream down", "code": 503}})
    with pytest.raises(ServerError) as info:
        read_reply("ep", URL, body)
    assert str(info.value) == f"ep: HTTP 503: {inband_text(body)} (in a 2xx body)"
    assert (info.value.endpoint, info.value.status, info.value.retry_after) == ("ep", 503, None)


@pytest.mark.parametrize(
    ("code", "text", "error"),
    [(429, "insufficient_quota", QuotaExceededError), (429, "slow down", RateLimitError),
     (400, "context_length_exceeded", ContextLengthError), (400, "bad field", BadRequestError)])
def test_an_error_inside_a_2xx_is_classified_by_its_words_too(code, text, error):
    body = msgspec.json.encode({"error": {"message": text, "code": code}})
    with pytest.raises(ModelError) as info:
        read_reply("ep", URL, body)
    assert type(info.value) is error and info.value.status == code


def test_an_error_inside_a_2xx_without_a_code_is_an_invalid_response_without_the_key(key):
    body = msgspec.json.encode({"error": {"message": f"bad key {KEY}"}})
    with pytest.raises(InvalidResponseError) as info:
        read_reply("ep", URL, body)
    shown = inband_text(body).replace(KEY, "[redacted]")
    assert KEY in inband_text(body) and "[redacted]" in shown
    assert str(info.value) == f"ep: a 2xx body carrying an error: {shown}"
    assert info.value.endpoint == "ep" and info.value.status is None


def test_a_body_that_is_not_a_reply_says_why_and_how_it_starts_cut_after_scrubbing(key):
    body = completion("fine")
    body["choices"][0]["message"]["role"] = "r" * 300
    body["id"] = "z" * 70 + KEY
    with pytest.raises(InvalidResponseError) as info:
        read_reply("ep", URL, msgspec.json.encode(body))
    why = f"unexpected shape (Invalid enum value '{'r' * 300}"[:200]
    start = '{"id":"' + "z" * 70 + "[redacted]"[:3]
    assert str(info.value) == f"ep: invalid response from {URL}: {why}; body starts {start!r}"
    assert info.value.endpoint == "ep"


def test_a_body_that_is_not_utf8_starts_with_replacement_characters():
    with pytest.raises(InvalidResponseError) as info:
        read_reply("ep", URL, b"\xff\xfe not json")
    assert str(info.value).endswith("; body starts '\ufffd\ufffd not json'")


def test_an_errors_message_loses_the_key_it_quotes(key):
    err = ServerError(f"ep: HTTP 500: bad key {KEY}", endpoint="ep", status=500)
    assert scrub_error(err) == "ep: HTTP 500: bad key [redacted]"
    assert str(err) == "ep: HTTP 500: bad key [redacted]" and err.args == (str(err),)
    clean = ServerError("ep: HTTP 500: nothing secret", endpoint="ep", status=500)
    assert scrub_error(clean) == "ep: HTTP 500: nothing secret" == str(clean)
