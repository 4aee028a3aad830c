"""What every transport shares (client/transports/base.py): telling a refused connection
through the errors that wrap it, and the error for a reply over the size cap."""

from __future__ import annotations

import errno

from sweepbench.client.transports.base import DEFAULT_MAX_REPLY_BYTES, refused, too_large
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
