"""What every transport shares (client/transports/base.py): telling a refused connection
through the errors that wrap it, and the error for a reply over the size cap."""

from __future__ import annotations

import errno

import pytest

from sweepbench.client.transports.base import (
    DEFAULT_MAX_REPLY_BYTES,
    redirect_target,
    refused,
    same_origin,
    too_large,
)
from sweepbench.config import Endpoint
from sweepbench.errors import FatalError, RetryableError


def wrapped(inner: BaseException, *, via: str) -> BaseException:
    outer = RuntimeError("outer")
    setattr(outer, via, inner)
    return outer


def test_a_refused_connection_is_told_however_it_is_wrapped():
    assert refused(ConnectionRefusedError())
    assert refused(OSError(errno.ECONNREFUSED, "refused"))
    assert refused(wrapped(ConnectionRefusedError(), via="__cause__"))
    assert refused(wrapped(wrapped(ConnectionRefusedError(), via="__context__"), via="__cause__"))
    # aiohttp's ClientConnectorError keeps the OS error as ``os_error``, not as a cause
    assert refused(wrapped(OSError(errno.ECONNREFUSED, "refused"), via="os_error"))


def test_other_failures_are_not_refusals_and_a_cause_loop_ends():
    assert not refused(OSError(errno.ECONNRESET, "reset"))
    assert not refused(TimeoutError())
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__cause__, b.__cause__ = b, a
    assert not refused(a)


def test_a_reply_over_the_cap_is_fatal_and_says_where_and_how_much():
    err = too_large("ep", "http://h/v1/chat/completions", 1024)
    assert isinstance(err, FatalError) and not isinstance(err, RetryableError)
    assert str(err) == ("ep: reply from http://h/v1/chat/completions is larger than "
                        "max_reply_bytes (1024); not read further")
    assert err.endpoint == "ep"
    assert DEFAULT_MAX_REPLY_BYTES == Endpoint(name="e").max_reply_bytes


def test_an_error_carrying_the_refused_errno_is_a_refusal_and_a_kept_os_error_is_read():
    err = RuntimeError("connector")
    err.errno = errno.ECONNREFUSED  # aiohttp's errors carry the OS error's errno
    assert refused(err)
    assert not refused(wrapped(OSError(errno.ECONNRESET, "reset"), via="os_error"))
    assert not refused(wrapped(RuntimeError("x"), via="os_error"))


# ---- redirects and origins (unit tests, exact values) ------------------------------------------


def _fatal(*args) -> FatalError:
    with pytest.raises(FatalError) as info:
        redirect_target(*args)
    return info.value


def test_a_redirect_target_is_read_from_either_spelling_of_location():
    base = "http://h/v1/chat/completions"
    for headers in ({"Location": "/v2/chat"}, {"location": " /v2/chat "}):
        assert redirect_target("ep", base, 307, headers, True, 0) == "http://h/v2/chat"
    assert redirect_target("ep", base, 308, {"Location": "https://other/x"}, True, 4) == \
        "https://other/x"
    assert redirect_target("ep", base, 307, {}, True, 0) is None  # no Location: not a redirect
    assert redirect_target("ep", base, 200, {"Location": "/x"}, True, 0) is None


def test_a_redirect_not_followed_names_the_endpoint_the_target_and_why():
    base = "http://h/v1"
    err = _fatal("ep", base, 308, {"Location": "ftp://h/x"}, True, 0)
    assert str(err) == ("ep: http://h/v1 redirects (308) to ftp://h/x; not followed (not an "
                        "http:// or https:// URL)")
    assert (err.endpoint, err.status) == ("ep", 308)
    assert "not an http:// or https:// URL" in str(_fatal("ep", base, 307, {"Location": "https:///x"},
                                                          True, 0))
    assert "more than 5 redirects in a row" in str(_fatal("ep", base, 307, {"Location": "/x"}, True, 5))
    exact = "http://h/" + "a" * 191  # 200 characters: shown whole
    assert f"to {exact};" in str(_fatal("ep", base, 307, {"Location": exact}, False, 0))
    longer = exact + "b"
    assert f"to {exact}...;" in str(_fatal("ep", base, 307, {"Location": longer}, False, 0))


def test_an_origin_is_scheme_host_and_port_with_the_defaults_filled_in():
    assert same_origin("HTTP://Host/a", "http://host:80/b")
    assert same_origin("https://h/a", "https://h:443/b")
    assert not same_origin("http://h:443/", "https://h:443/")
    assert not same_origin("http://a/", "http://b/")
    assert not same_origin("http:///x", "http://xxxx/")
    assert not same_origin("http://h:99999/", "http://h/")  # a port out of range is no port
    assert not same_origin("http://h:99999/", "http://h:1/")
