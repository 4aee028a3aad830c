"""Request parity with upstream VitaBench: every recorded case of ``golden/requests/``.

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

Tool outputs and tool schemas (the ``tools`` arrays) are compared too.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from aiohttp import web

from sweepbench.config import Endpoint, SweepConfig
from sweepbench.store.runstore import RunStore
from sweepbench.runner.sweep import Sweep

# ---- the double ----------------------------------------------------------------------------

CHOICES = (("delivery_store_search_recommand", {"keywords": ["奶茶"]}),
           ("instore_shop_search_recommend", {"keywords": ["火锅"]}),
           ("get_user_all_orders", {}))


def _agent(body: dict[str, Any], solo: bool) -> dict[str, Any]:
    if body["messages"][-1]["role"] == "user":
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        name, args = next((c for c in CHOICES if c[0] in offered), CHOICES[-1])
        return {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_mock_1", "type": "function",
            "function": {"name": name,
                         "arguments": json.dumps(args, ensure_ascii=False, separators=(",", ":"))}}]}
    return {"role": "assistant", "content": "###STOP###" if solo else "AGENT_TEXT_REPLY"}


def _user(body: dict[str, Any]) -> dict[str, Any]:
    spoke = any(m["role"] == "assistant" for m in body["messages"])
    return {"role": "assistant", "content": "###STOP###" if spoke else "USER_TURN_1 I need some help."}


def _judge(body: dict[str, Any]) -> dict[str, Any]:
    prompt = body["messages"][-1]["content"]
    keys = dict.fromkeys(re.findall(r'"rubric_idx": "(rubric_\d+)"', prompt))
    verdicts = [{"rubric_idx": k, "justification": "scripted", "meetExpectation": True}
                for k in keys]
    return {"role": "assistant", "content": json.dumps(verdicts)}


class GoldenScriptDouble:
    """A test double: the scripted OpenAI-compatible server the request goldens were recorded
    with (``golden/README.md``), recording every request body with its path.

    ``async with GoldenScriptDouble() as server``: ``server.url``, ``server.requests``. Its
    answers are fixed by the README, not a model's:

    - agent: after a user message, one tool call (id ``call_mock_1``):
      ``delivery_store_search_recommand {"keywords": ["奶茶"]}`` if offered, else
      ``instore_shop_search_recommend {"keywords": ["火锅"]}``, else ``get_user_all_orders``;
      otherwise the text ``AGENT_TEXT_REPLY``. Solo agent: the tool call, then ``###STOP###``.
    - user: ``USER_TURN_1 I need some help.`` first, then ``###STOP###``.
    - judge: a JSON array marking every ``rubric_N`` named in its prompt as met.

    Tool-call arguments are sent compact and unescaped (``{"keywords":["奶茶"]}``), as a model
    writes them: how the agent is shown them later is the harness's doing.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        role = request.match_info["role"]
        body = json.loads(await request.read())
        self.requests.append({"path": f"/upstream/{role}", "body": body})
        if role in ("agent", "agent-solo"):
            message = _agent(body, solo=role == "agent-solo")
        elif role == "user":
            message = _user(body)
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

CASES = {
    # file stem: (domain of the task file, lang, task id, domains of the environment, solo)
    **{f"delivery_{lang}_{tid}": ("delivery", lang, tid, "delivery", False)
       for lang in ("en", "zh") for tid in ("10711001", "10711002", "10714001")},
    **{f"instore_en_{tid}": ("instore", "en", tid, "instore", False)
       for tid in ("10826004", "10826012")},
    **{f"cross_{lang}_10711001": ("delivery", lang, "10711001", "delivery,instore", False)
       for lang in ("en", "zh")},
    "solo_delivery_en_10711001": ("delivery", "en", "10711001", "delivery", True),
    "solo_delivery_zh_10711001": ("delivery", "zh", "10711001", "delivery", True),
    "solo_instore_en_10826004": ("instore", "en", "10826004", "instore", True),
}
QUIRKS = ("headers", "name", "base_url")


def golden(shared_data, stem: str) -> list[dict[str, Any]]:
    path = shared_data / "vitabench" / "golden" / "requests" / f"{stem}.jsonl"
    if not path.is_file():
        pytest.skip(f"request golden {path} is absent")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


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


async def run_case(stem: str, shared_data, tmp_path) -> list[dict[str, Any]]:
    """One episode of the case's task, then the sliding judge, through ``Sweep`` over HTTP."""
    file_domain, lang, task_id, env_domains, solo = CASES[stem]
    # upstream ran this single-domain task in the merged environment of env_domains
    spec = (f"vitabench:{env_domains}" if env_domains == file_domain
            else f"vitabench:{env_domains},tasks={file_domain}")
    async with GoldenScriptDouble() as server:
        agent = "up-agent-solo" if solo else "up-agent"
        cfg = SweepConfig(
            benchmarks=[spec], models=[agent], user_model="up-user", judge_models=["up-judge"],
            judge_methods=["sliding"], trials=1, data_dir=str(shared_data), lang=lang,
            task_ids=[task_id],
            user_mode="solo" if solo else "default",
            endpoints=[Endpoint(name=n, base_url=f"{server.url}/upstream/{n.removeprefix('up-')}",
                                max_retries=0)
                       for n in (agent, "up-user", "up-judge")])
        with RunStore(tmp_path / "run.sqlite") as store:
            outcome = await Sweep(cfg, store).run()
            judgments = store.judgments()
        assert outcome.errors == 0
    sliding = [j for j in judgments if j["method"] == "sliding"]
    assert len(sliding) == 1 and sliding[0]["score"] == 1.0 and sliding[0]["passed"]
    return server.requests


@pytest.mark.parametrize("stem", sorted(CASES))
async def test_requests(stem, shared_data, tmp_path):
    expected = golden(shared_data, stem)
    got = await run_case(stem, shared_data, tmp_path)
    assert [r["path"] for r in got] == [r["path"] for r in expected]
    for i, (mine, theirs) in enumerate(zip(normalized(got), normalized(expected))):
        assert mine == theirs, f"{stem}: request {i + 1} ({theirs['path']}) differs"
