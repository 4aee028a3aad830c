"""What the client needs installed: openai only for its transport (an extra), no retry library."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from sweepbench.client.transports.openai import OpenAITransport
from sweepbench.config import Endpoint
from sweepbench.errors import ConfigError, FatalError

PIP = "pip install 'sweepbench[openai]'"


def test_an_endpoint_asking_for_the_openai_transport_without_openai_names_the_extra(
        monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # as if not installed
    with pytest.raises(ConfigError) as info:
        Endpoint(name="sdk", base_url="http://h/v1", transport="openai").validate()
    assert str(info.value) == (f"endpoint 'sdk': transport 'openai' needs the openai package: "
                               f"{PIP}")
    Endpoint(name="plain", base_url="http://h/v1", transport="http").validate()  # not needed


def test_the_openai_transport_without_openai_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(FatalError) as info:
        OpenAITransport("http://h/v1", name="sdk", timeout_s=1.0, connect_timeout_s=1.0)
    assert str(info.value) == f"sdk: transport 'openai' needs the openai package: {PIP}"
    assert "\n" not in str(info.value)


def test_an_unknown_transport_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"^endpoint 'x': transport must be one of http, "
                                          r"aiohttp, openai, got 'curl'$"):
        Endpoint(name="x", base_url="http://h/v1", transport="curl").validate()


RETRIES_WITHOUT_OPENAI_OR_TENACITY = textwrap.dedent("""
    import asyncio, sys
    sys.modules["openai"] = None
    sys.modules["tenacity"] = None
    import sweepbench.cli.app, sweepbench.runner.sweep
    from sweepbench.config import Endpoint
    from sweepbench.client.facade import ModelClient
    from sweepbench.client.transports.memory import Answer, MemoryTransport, VirtualClock
    from sweepbench.client.limits import EndpointLimits
    from sweepbench.wire import ChatRequest, UserMessage

    async def main():
        ep = Endpoint(name="m", base_url="http://memory.invalid/v1", max_retries=3)
        clock = VirtualClock()
        fail = Answer(500, {"error": {"message": "boom"}})
        transport = MemoryTransport(fail, fail, Answer(), clock=clock)
        client = ModelClient(ep, transport=transport, backoff_base_s=0.001,
                             limits=EndpointLimits.for_endpoint(ep, clock=clock))
        result = await client.complete(ChatRequest(model="m", messages=[UserMessage("hi")]))
        print(result.statuses, sorted(m for m in ("openai", "tenacity") if sys.modules.get(m)))

    asyncio.run(main())
""")


def test_a_sweep_retries_with_neither_openai_nor_tenacity_installed() -> None:
    out = subprocess.run([sys.executable, "-c", RETRIES_WITHOUT_OPENAI_OR_TENACITY],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[500, 500, 200] []"
