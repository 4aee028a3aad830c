"""A configured key echoed back in any form: found and scrubbed before any cut; a 200 reply that
holds it is an error of its endpoint, never a reply (issue 9, point 4)."""

from __future__ import annotations

import base64
import traceback

import pytest

from sweepbench.client.facade import ModelClient
from sweepbench.client.secrets import MIN_RUN, KeyRing
from sweepbench.client.transports.memory import Answer, MemoryTransport, completion
from sweepbench.config import Endpoint
from sweepbench.errors import FatalError, ModelError
from sweepbench.wire import ChatRequest, UserMessage

CANARY = "sk-canary-3b9e7d1f0a2c4e6b8d0f1a3c5e7b9d2f"
ENV = "SWEEPBENCH_SCRUB_CANARY"


def forms(key: str) -> dict[str, str]:
    """Every way a hostile server may echo ``key``."""
    raw = key.encode()
    return {
        "whole": key,
        "cut-head": key[:MIN_RUN],
        "cut-tail": key[-MIN_RUN:],
        "cut-middle": key[11:30],
        "bearer-cut": "Bearer " + key[:22] + "...",
        "upper": key.upper(),
        "split-lines": key[:13] + "\n    " + key[13:27] + "\r\n" + key[27:],
        "split-escaped": key[:17] + "\\n" + key[17:],
        "spaced": " ".join(key),
        "base64": base64.b64encode(raw).decode(),
        "base64-basic": base64.b64encode(b"user:" + raw).decode(),
        "base64-offset": base64.b64encode(b"xy" + raw + b"z").decode(),
        "urlsafe": base64.urlsafe_b64encode(b"\xfb\xff" + raw).decode(),
        "base64-cut": base64.b64encode(raw).decode()[4:20],
    }


def pieces(key: str) -> list[str]:
    """What must never be found: every MIN_RUN piece of the key and of its base64."""
    b64 = base64.b64encode(key.encode()).decode()
    return [s[i:i + MIN_RUN] for s in (key, key.upper(), b64)
            for i in range(len(s) - MIN_RUN + 1)]


def leaked(text: str) -> list[str]:
    squeezed = "".join(text.split()).replace("\\n", "")
    return [p for p in pieces(CANARY) if p in squeezed]


@pytest.fixture
def ring(monkeypatch) -> KeyRing:
    monkeypatch.setenv(ENV, CANARY)
    ring = KeyRing()
    ring.register(ENV)
    return ring


@pytest.mark.parametrize("name", list(forms(CANARY)))
def test_every_form_is_found_and_scrubbed(ring, name) -> None:
    form = forms(CANARY)[name]
    text = f"error: {form} (request 42)"
    assert ring.leaks(text)
    clean = ring.scrub(text)
    assert "[redacted]" in clean and clean.startswith("error: ") and clean.endswith("(request 42)")
    assert not ring.leaks(clean) and not leaked(clean)


def test_short_runs_and_other_text_are_left_alone(ring, monkeypatch) -> None:
    text = f"sk-cana is {CANARY[:MIN_RUN - 1]}, the quick brown fox, " + "a" * 10_000
    assert not ring.leaks(text) and ring.scrub(text) == text
    monkeypatch.delenv(ENV)  # a variable that is not set holds no key
    assert not ring.active and ring.scrub(CANARY) == CANARY


@pytest.mark.parametrize("name", ["whole", "cut-head", "cut-middle", "base64-cut", "spaced"])
@pytest.mark.parametrize("prefix", range(9))
def test_any_alignment_after_any_text_is_found(ring, name, prefix) -> None:
    """The quick test reads the text in 4-character pieces: a key after any number of
    characters, multi-byte ones too, is still found (issue 12)."""
    lead = ("日本ü🚀 x" * 3)[:prefix]
    text = f"{lead}{forms(CANARY)[name]} and then " + "words " * 300
    assert ring.leaks(text)
    assert not leaked(ring.scrub(text))


def test_a_key_that_is_not_ascii_is_found_too(monkeypatch) -> None:
    monkeypatch.setenv(ENV, "clé-secrète-ü-日本-0123456789")
    ring = KeyRing()
    ring.register(ENV)
    for prefix in range(5):
        text = "x" * prefix + "see secrète-ü-日本 here " + "words " * 100
        assert ring.leaks(text) and "secrète" not in ring.scrub(text)
    assert not ring.leaks("secr and 日本 alone " + "words " * 100)


def client(transport: MemoryTransport, **kw) -> ModelClient:
    ep = Endpoint(name="echoer", base_url="http://h/v1", api_key_env=ENV, **kw)
    return ModelClient(ep, transport=transport, backoff_base_s=0.0, backoff_max_s=0.0)


def req() -> ChatRequest:
    return ChatRequest(model="x", messages=[UserMessage("hi")])


def everything(err: BaseException, c: ModelClient) -> str:
    return ("".join(traceback.format_exception(err)) + repr(err) + str(vars(err))
            + repr(vars(c)) + str(c.health()))


@pytest.mark.parametrize("where", ["content", "tool-args", "reasoning", "id"])
@pytest.mark.parametrize("name", ["whole", "cut-middle", "upper", "split-lines", "base64",
                                  "urlsafe"])
async def test_a_200_that_holds_the_key_is_an_error_of_the_endpoint(monkeypatch, where, name):
    monkeypatch.setenv(ENV, CANARY)
    form = forms(CANARY)[name]
    body = {
        "content": completion(f"sure, your key is {form}"),
        "tool-args": completion(None, tool_calls=[{"id": "c1", "type": "function", "function": {
            "name": "send", "arguments": {"note": form}}}]),
        "reasoning": completion("ok", reasoning_content=f"the header said {form}"),
        "id": {**completion("ok"), "id": form},
    }[where]
    transport = MemoryTransport(Answer(body=body), completion("fine"))
    c = client(transport, max_retries=3)
    with pytest.raises(FatalError) as info:
        await c.complete(req())
    assert transport.count == 1  # not retried: it would echo again
    assert str(info.value).startswith("echoer: the reply from http://h/v1/chat/completions "
                                      "contains an API key")
    assert not leaked(everything(info.value, c))


@pytest.mark.parametrize("status", [400, 401, 429, 500])
@pytest.mark.parametrize("name", list(forms(CANARY)))
async def test_error_texts_are_scrubbed_before_they_are_cut(monkeypatch, status, name) -> None:
    monkeypatch.setenv(ENV, CANARY)
    form = forms(CANARY)[name]
    # the key straddles the 80- and 400-character cuts, and sits in a non-JSON body too
    message = "x" * 390 + form
    transport = MemoryTransport(
        Answer(status, {"error": {"message": message, "type": form}},
               headers={"Retry-After": form, "X-Echo": form}),
        Answer(status, ("y" * 70 + form).encode()),
        Answer(200, ("z" * 75 + form).encode()))  # a garbled 200 quoting its body's start
    c = client(transport, max_retries=2)
    with pytest.raises(ModelError) as info:
        await c.complete(req())
    text = everything(info.value, c) + repr(info.value.failures)
    assert not leaked(text), (name, leaked(text))


async def test_an_internal_error_that_quotes_the_key_is_stored_scrubbed(monkeypatch, tmp_path):
    """A bug whose message holds the key (a library echoing a request) is recorded without it."""
    from sweepbench.client.secrets import KEYS
    from sweepbench.config import load_config
    from sweepbench.runner import sweep as sweep_module
    from sweepbench.store.runstore import RunStore

    monkeypatch.setenv(ENV, CANARY)
    KEYS.register(ENV)  # as a client of an endpoint with this key variable does

    async def broken(*args, **kwargs):
        raise RuntimeError(f"request failed: Authorization: Bearer {CANARY[:24]}")

    monkeypatch.setattr(sweep_module, "run_episode", broken)
    cfg = load_config(None, {"benchmarks": ["t1:bar"], "models": ["scripted/oracle"],
                             "trials": 1, "limit": 2, "error_streak": 0})
    with RunStore(tmp_path / "s.sqlite") as store:
        await sweep_module.Sweep(cfg, store).run()
        errors = [r.error for r in store.records().values()]
    assert len(errors) == 2 and all(e.startswith("internal error: RuntimeError") for e in errors)
    assert all("[redacted]" in e and not leaked(e) for e in errors), errors


def test_a_proxy_urls_password_is_a_secret_and_the_rest_of_it_is_not(monkeypatch) -> None:
    monkeypatch.setenv("SB_TEST_PROXY", "http://agent:pa%40ss-w0rd-5544@proxy.corp:3128")
    monkeypatch.setenv("SB_TEST_PLAIN_PROXY", "http://proxy.other:3128")
    ring = KeyRing()
    ring.register_url_password("SB_TEST_PROXY")
    ring.register_url_password("SB_TEST_PLAIN_PROXY")
    assert ring.scrub("via proxy.corp:3128 as agent, password pa@ss-w0rd-5544") == (
        "via proxy.corp:3128 as agent, password [redacted]")
    assert ring.scrub("http://proxy.other:3128 and http://proxy.corp:3128") == (
        "http://proxy.other:3128 and http://proxy.corp:3128")


# ---- the edges: separators, alignments, the encoded forms, URL passwords, where a key sits ---


def ring_of(monkeypatch, key: str, *, url: bool = False) -> KeyRing:
    monkeypatch.setenv(ENV, key)
    ring = KeyRing()
    if url:
        ring.register_url_password(ENV)
    else:
        ring.register(ENV)
    return ring


@pytest.mark.parametrize("escape", ["\\n", "\\r", "\\t"])
def test_a_key_cut_by_escaped_line_breaks_into_short_pieces_is_found(ring, escape) -> None:
    text = escape.join(CANARY[i:i + 5] for i in range(0, len(CANARY), 5))  # no run of 8
    assert ring.leaks(text) and ring.scrub(text) == "[redacted]"


def key_only(raw: bytes, pad: int) -> str:
    """The characters of the base64 of ``raw`` after ``pad`` bytes that no byte around it can
    change: those every variant of the surrounding bytes agrees on."""
    variants = [base64.b64encode(before * pad + raw + after).decode()
                for before in (b"\0", b"\xff") for after in (b"", b"\0\0\0", b"\xff\xff\xff")]
    same = [all(v[i] == variants[0][i] for v in variants) for i in range(len(variants[0]))]
    return "".join(c for c, s in zip(variants[0], same, strict=True) if s)


@pytest.mark.parametrize("key", [
    "sk-~~~???~~~>>>?-0",
    "sk-~~~???~~~>>>?-W",  # 18 bytes ending in W: its base64 ends in an X, no padding
    "ab~?>~",
])
def test_the_encoded_forms_are_what_the_key_alone_decides_at_each_alignment(key) -> None:
    from sweepbench.client.secrets import _encodings

    want = [key]
    for pad in range(3):
        inner = key_only(key.encode(), pad)
        for form in (inner, inner.replace("+", "-").replace("/", "_")):
            if len(form) >= MIN_RUN and form not in want:
                want.append(form)
    got = _encodings(key)
    assert got == want
    if len(key) == 6:  # 6 bytes: 8 characters at the first alignment
        assert [len(f) for f in got[1:]] == [MIN_RUN, MIN_RUN]  # both alphabets
    else:  # both alphabets' forms, '+' and '/' in one, '-' and '_' in the other
        assert any("+" in f and "/" in f for f in got) and any("-" in f and "_" in f for f in got)


@pytest.mark.parametrize(("url", "password"), [
    ("http://agent:p@ss:w0rd-secret@proxy.corp:3128", "p@ss:w0rd-secret"),  # raw '@' and ':'
    ("agent:hunter2-hunter2@proxy.corp:3128", "hunter2-hunter2"),  # no scheme
    ("http://agent:hunter2-hunter2@proxy.corp/p?next=https://x", "hunter2-hunter2"),
])
def test_the_password_of_a_proxy_url_is_its_userinfo_after_the_first_colon(
        monkeypatch, url, password) -> None:
    ring = ring_of(monkeypatch, url, url=True)
    assert ring.scrub(f"proxy agent:{password} said no") == "proxy agent:[redacted] said no"


def test_a_key_of_exactly_min_run_characters_is_a_key(monkeypatch) -> None:
    ring = ring_of(monkeypatch, "Zq8#Lm2!")
    assert len("Zq8#Lm2!") == MIN_RUN and ring.active
    assert ring.leaks("Zq8#Lm2!") and ring.scrub("key Zq8#Lm2! here") == "key [redacted] here"


def test_no_key_no_leak(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    ring = KeyRing()
    ring.register(ENV)
    assert not ring.leaks(CANARY, "any text at all, long enough")


@pytest.mark.parametrize("lead", range(4))
def test_the_last_min_run_characters_are_found_at_every_alignment(ring, lead) -> None:
    tail = CANARY[-MIN_RUN:]
    assert ring.leaks("x" * lead + tail)
    assert ring.scrub("x" * lead + tail) == "x" * lead + "[redacted]"


def test_every_text_is_read_short_clean_or_none_before_the_one_that_leaks(ring) -> None:
    assert ring.leaks(None, "", "short", "a clean text well over eight characters", CANARY)
    assert ring.leaks(CANARY[:MIN_RUN])  # exactly MIN_RUN characters


def test_every_occurrence_is_scrubbed_wherever_it_sits(ring) -> None:
    assert ring.scrub(f"{CANARY} and {CANARY}, {CANARY}") == (
        "[redacted] and [redacted], [redacted]")
    assert ring.scrub(CANARY + " tail") == "[redacted] tail"
    assert ring.scrub("x" + CANARY) == "x[redacted]"
    assert ring.scrub("xy" + CANARY) == "xy[redacted]"


def test_a_run_of_one_repeated_character_is_scrubbed_to_its_end(monkeypatch) -> None:
    ring = ring_of(monkeypatch, "sk-" + "z" * 16)
    assert ring.scrub("got " + "z" * 9 + ".") == "got [redacted]."
