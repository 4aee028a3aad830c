"""Request parity with upstream VitaBench: every recorded case of ``golden/requests/``, for
both releases (``shared/data`` with ``vitabench@2025-11``, upstream 96f3b85;
``shared/data-v2`` with ``vitabench@2025-12``, upstream 742e240).

Each case runs through sweepbench's real path (``Sweep``: the episode loop, the model client
over HTTP, the judge pool) against :class:`GoldenScriptDouble`, a test double that drives the
conversation the way the goldens' README states, and the request sequences are compared
request by request as JSON values, after these normalizations:

- upstream's client quirks named in the goldens' README: ``headers``, ``name``, ``base_url``
  in the body;
- null and absent are the same: sweepbench omits null fields (``tools``/``tool_choice`` of the
  user and judge, ``content`` of a tool-call message, ``tool_calls`` of a text message) and
  never sends ``stream`` (false, the API's default);
- the top-level ``name`` upstream's client adds to each tool call beside ``function.name`` is
  not sent (outside the chat-completions schema; strict servers refuse unknown fields).

Tool outputs and tool schemas (the ``tools`` arrays) are compared too. For the ``toolerr``
cases the episode's outcome is compared with upstream's saved result (``*.result.json``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, NamedTuple

import pytest
from aiohttp import web

from sweepbench.benchmarks.vitabench.episode import MAX_STEPS
from sweepbench.config import Endpoint, SweepConfig
from sweepbench.store.runstore import RunStore
from sweepbench.runner.sweep import Sweep
from sweepbench.wire import AssistantMessage, SystemMessage, ToolMessage

# ---- the double ----------------------------------------------------------------------------


class Script(NamedTuple):
    """How the double answers in one case (the goldens' README, "Scripted behaviour")."""

    search: str
    """The delivery store search tool's name in the case's release."""
    reasoning: bool = False
    """Replies carry ``reasoning_content``: ``AGENT_THINK_<n>`` / ``USER_THINK_<n>`` (n: the
    role's request number in the case, from 1)."""
    calls: tuple[tuple[str, dict], ...] | None = None
    """The agent's tool call for request n (id ``call_mock_<n>``), then text; None: the
    default script (a search after each user message)."""

    def agent(self, body: dict[str, Any], solo: bool, n: int) -> dict[str, Any]:
        if self.calls is not None:
            call = self.calls[n - 1] if n <= len(self.calls) else None
            message = _text("AGENT_TEXT_REPLY") if call is None else _call(*call, n=n)
        elif body["messages"][-1]["role"] == "user":
            offered = {t["function"]["name"] for t in body.get("tools") or []}
            choices = ((self.search, {"keywords": ["奶茶"]}),
                       ("instore_shop_search_recommend", {"keywords": ["火锅"]}),
                       ("get_user_all_orders", {}))
            message = _call(*next((c for c in choices if c[0] in offered), choices[-1]), n=1)
        else:
            message = _text("###STOP###" if solo else "AGENT_TEXT_REPLY")
        return {**message, "reasoning_content": f"AGENT_THINK_{n}"} if self.reasoning else message

    def user(self, body: dict[str, Any], n: int) -> dict[str, Any]:
        spoke = any(m["role"] == "assistant" for m in body["messages"])
        message = _text("###STOP###" if spoke else "USER_TURN_1 I need some help.")
        return {**message, "reasoning_content": f"USER_THINK_{n}"} if self.reasoning else message


def _text(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def _call(name: str, args: dict, *, n: int) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [{
        "id": f"call_mock_{n}", "type": "function",
        "function": {"name": name,
                     "arguments": json.dumps(args, ensure_ascii=False, separators=(",", ":"))}}]}


def _judge(body: dict[str, Any]) -> dict[str, Any]:
    prompt = body["messages"][-1]["content"]
    keys = dict.fromkeys(re.findall(r'"rubric_idx": "(rubric_\d+)"', prompt))
    verdicts = [{"rubric_idx": k, "justification": "scripted", "meetExpectation": True}
                for k in keys]
    return _text(json.dumps(verdicts))


class GoldenScriptDouble:
    """A test double: the scripted OpenAI-compatible server the request goldens were recorded
    with (``golden/README.md``), recording every request body with its path.

    ``async with GoldenScriptDouble(script) as server``: ``server.url``, ``server.requests``.
    Its answers are fixed by the README, not a model's:

    - agent: after a user message, one tool call (id ``call_mock_1``): the release's delivery
      store search ``{"keywords": ["奶茶"]}`` if offered, else
      ``instore_shop_search_recommend {"keywords": ["火锅"]}``, else ``get_user_all_orders``;
      otherwise the text ``AGENT_TEXT_REPLY``. Solo agent: the tool call, then ``###STOP###``.
      The ``toolerr`` cases: the script's call for each agent request, then the text.
    - user: ``USER_TURN_1 I need some help.`` first, then ``###STOP###``.
    - judge: a JSON array marking every ``rubric_N`` named in its prompt as met.

    Tool-call arguments are sent compact and unescaped (``{"keywords":["奶茶"]}``), as a model
    writes them: how the agent is shown them later is the harness's doing.
    """

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.asked: Counter[str] = Counter()  # agent (solo too), user, judge
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        role = request.match_info["role"]
        body = json.loads(await request.read())
        self.requests.append({"path": f"/upstream/{role}", "body": body})
        self.asked[role.removesuffix("-solo")] += 1
        n = self.asked[role.removesuffix("-solo")]
        if role in ("agent", "agent-solo"):
            message = self.script.agent(body, role == "agent-solo", n)
        elif role == "user":
            message = self.script.user(body, n)
        elif role == "judge":
            message = _judge(body)
        else:
            return web.json_response({"error": {"message": f"no role {role}"}}, status=404)
        return web.json_response({
            "id": f"golden-{len(self.requests)}", "object": "chat.completion", "created": 0,
            "model": body.get("model", ""),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    async def __aenter__(self) -> "GoldenScriptDouble":
        app = web.Application()
        app.router.add_post("/upstream/{role}/chat/completions", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


# ---- running a case -------------------------------------------------------------------------


class Case(NamedTuple):
    file_domain: str
    """The task file the task is in."""
    lang: str
    task_id: str
    env_domains: str
    """The domains of the environment it ran in (upstream's merged environment when wider)."""
    solo: bool = False
    reasoning: bool = False
    calls: tuple[tuple[str, dict], ...] | None = None


def _nope(store_args: dict, order_args: dict) -> tuple[tuple[str, dict], ...]:
    """The ``toolerr`` script: three store look-ups, then nine order look-ups."""
    return ((("get_delivery_store_info", store_args),) * 3
            + (("get_delivery_order_status", order_args),) * 9)


BOTH = {
    **{f"delivery_{lang}_{tid}": Case("delivery", lang, tid, "delivery")
       for lang in ("en", "zh") for tid in ("10711001", "10711002", "10714001")},
    **{f"instore_en_{tid}": Case("instore", "en", tid, "instore")
       for tid in ("10826004", "10826012")},
    **{f"cross_{lang}_10711001": Case("delivery", lang, "10711001", "delivery,instore")
       for lang in ("en", "zh")},
    "solo_delivery_en_10711001": Case("delivery", "en", "10711001", "delivery", solo=True),
    "solo_delivery_zh_10711001": Case("delivery", "zh", "10711001", "delivery", solo=True),
    "solo_instore_en_10826004": Case("instore", "en", "10826004", "instore", solo=True),
}
UPDATED = {
    **{f"reasoning_delivery_{lang}_10711001": Case("delivery", lang, "10711001", "delivery",
                                                   reasoning=True) for lang in ("en", "zh")},
    "toolerr_en_10711001": Case("delivery", "en", "10711001", "delivery",
                                calls=_nope({"store_id": "NOPE"}, {"order_id": "NOPE"})),
    "toolerr_raise_en_10711001": Case("delivery", "en", "10711001", "delivery",
                                      calls=_nope({}, {})),
}
RELEASES = {
    # release: (the fixture of its data dir, its delivery store search, its cases)
    "2025-11": ("shared_data", "delivery_store_search_recommand", BOTH),
    "2025-12": ("shared_data_v2", "delivery_store_search_recommend", {**BOTH, **UPDATED}),
}
QUIRKS = ("headers", "name", "base_url")
RESULT_KEYS = ("termination_reason", "reward", "reward_note", "steps", "num_messages",
               "agent_tool_calls", "tool_messages_error_true", "num_errors_counted",
               "max_errors", "max_steps", "requests")
"""What a ``*.result.json`` says of upstream's episode (the rest describes the case)."""


def golden(data_dir, stem: str) -> list[dict[str, Any]]:
    path = data_dir / "vitabench" / "golden" / "requests" / f"{stem}.jsonl"
    if not path.is_file():
        pytest.skip(f"request golden {path} is absent")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def upstream_result(data_dir, stem: str) -> dict[str, Any] | None:
    path = data_dir / "vitabench" / "golden" / "requests" / f"{stem}.result.json"
    if not path.is_file():
        return None
    result = json.loads(path.read_text(encoding="utf-8"))
    return {k: result[k] for k in RESULT_KEYS}


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def normalized(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The comparable part of each request (see the module docstring)."""
    out = []
    for r in requests:
        body = {k: v for k, v in r["body"].items() if k not in QUIRKS and k != "stream"}
        body = _drop_nulls(body)
        for m in body["messages"]:
            for tc in m.get("tool_calls") or []:
                tc.pop("name", None)
        out.append({"path": r["path"], "body": body})
    return out


class Ran(NamedTuple):
    requests: list[dict[str, Any]]
    result: dict[str, Any]
    """The episode and its sliding judgment, as a ``*.result.json`` says them."""


def spec_of(release: str, case: Case) -> str:
    # upstream ran this single-domain task in the merged environment of env_domains
    name = f"vitabench@{release}"
    return (f"{name}:{case.env_domains}" if case.env_domains == case.file_domain
            else f"{name}:{case.env_domains},tasks={case.file_domain}")


async def run_case(release: str, stem: str, data_dir, tmp_path) -> Ran:
    """One episode of the case's task, then the sliding judge, through ``Sweep`` over HTTP."""
    _, search, cases = RELEASES[release]
    case = cases[stem]
    name = f"vitabench@{release}"
    spec = spec_of(release, case)
    async with GoldenScriptDouble(Script(search, case.reasoning, case.calls)) as server:
        agent = "up-agent-solo" if case.solo else "up-agent"
        cfg = SweepConfig(
            benchmarks=[spec], models=[agent], user_model="up-user", judge_models=["up-judge"],
            judge_methods=["sliding"], trials=1, data_dir=str(data_dir), lang=case.lang,
            task_ids=[case.task_id],
            user_mode="solo" if case.solo else "default",
            endpoints=[Endpoint(name=n, base_url=f"{server.url}/upstream/{n.removeprefix('up-')}",
                                max_retries=0)
                       for n in (agent, "up-user", "up-judge")])
        with RunStore(tmp_path / "run.sqlite") as store:
            # no preflight request: every request is compared with upstream's, and counted
            outcome = await Sweep(cfg, store, check_endpoints=False).run()
            (record,) = store.episodes(outcome.run_id)
            (sliding,) = [j for j in store.judgments() if j["method"] == "sliding"]
        assert outcome.errors == 0
    assert record.benchmark == name
    calls = [tc for m in record.messages if isinstance(m, AssistantMessage)
             for tc in m.tool_calls or ()]
    assert len(calls) == record.tool_calls == sum(isinstance(m, ToolMessage)
                                                  for m in record.messages)
    return Ran(server.requests, {
        "termination_reason": record.termination, "reward": sliding["score"],
        "reward_note": sliding["details"].get("note"), "steps": record.steps,
        "num_messages": sum(not isinstance(m, SystemMessage) for m in record.messages),
        "agent_tool_calls": record.tool_calls,
        # a failed call is a tool message flagged as an error, and each one counts
        "tool_messages_error_true": record.tool_errors, "num_errors_counted": record.tool_errors,
        "max_errors": cfg.max_tool_errors, "max_steps": cfg.max_steps or MAX_STEPS,
        "requests": dict(Counter(r["path"] for r in server.requests))})


@pytest.mark.parametrize("release,stem", [
    pytest.param(release, stem, id=f"{release}-{stem}")
    for release, (_, _, cases) in RELEASES.items() for stem in sorted(cases)])
async def test_requests(release, stem, request, tmp_path):
    data_dir = request.getfixturevalue(RELEASES[release][0])
    expected = golden(data_dir, stem)
    ran = await run_case(release, stem, data_dir, tmp_path)
    assert [r["path"] for r in ran.requests] == [r["path"] for r in expected]
    for i, (mine, theirs) in enumerate(zip(normalized(ran.requests), normalized(expected))):
        assert mine == theirs, f"{stem}: request {i + 1} ({theirs['path']}) differs"
    if upstream_result(data_dir, stem) is None:  # the scripted judge marks every rubric as met
        assert (ran.result["termination_reason"], ran.result["reward"]) == (
            "agent_stop" if stem.startswith("solo_") else "user_stop", 1.0)


@pytest.mark.parametrize("stem", sorted(s for s, case in UPDATED.items() if case.calls))
async def test_the_episode_ends_as_upstreams(stem, shared_data_v2, tmp_path):
    """Termination, reward and its note, steps, messages, tool calls and errors, requests per
    role: as upstream's saved result of the case (``*.result.json``)."""
    expected = upstream_result(shared_data_v2, stem)
    if expected is None:
        pytest.skip(f"{stem}.result.json is absent")
    ran = await run_case("2025-12", stem, shared_data_v2, tmp_path)
    assert ran.result == expected
