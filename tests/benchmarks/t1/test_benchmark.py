"""T1-Bench's benchmark object: the check scores an episode's calls as §3.2.1 does, and the
scripted referee and judge doubles answer as documented."""

from __future__ import annotations

import msgspec

from sweepbench.benchmarks.t1.benchmark import T1
from sweepbench.benchmarks.t1.metrics import calls_from_messages, score
from sweepbench.benchmarks.t1.oracle import gold_plan
from sweepbench.benchmarks.t1.prompts import judge_prompt, transcript
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    EpisodeRecord,
    FunctionCall,
    ToolCall,
    ToolMessage,
    UserMessage,
)

BENCH = T1()


def record(messages) -> EpisodeRecord:
    return EpisodeRecord(run_id="r", model="m", benchmark="t1", domain="flight", task_id="t",
                         trial=0, termination="user_stop", messages=messages)


def agent_messages(calls) -> list:
    """The calls as an agent's messages, each followed by the output it saw."""
    msgs: list = [UserMessage("hello")]
    for k, c in enumerate(calls):
        msgs.append(AssistantMessage(None, tool_calls=[
            ToolCall(f"c{k}", FunctionCall(c.name, msgspec.json.encode(c.arguments).decode()))]))
        msgs.append(ToolMessage(f"c{k}", c.output, c.name))
    return msgs


def test_check_of_the_gold_calls_passes_with_every_metric_at_one(tasks, run_steps):
    task = tasks[0]
    msgs = agent_messages(run_steps(task, gold_plan(task)))
    judged = BENCH.check(task, record(msgs))
    assert (judged["passed"], judged["score"]) == (True, 1.0)
    expected = score(task, calls_from_messages(msgs)).as_dict()
    assert expected.pop("passed") is True
    assert judged["details"] == expected
    assert judged["details"]["tool"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "accuracy": 1.0}


def test_check_without_calls_fails_with_zero_recall(tasks):
    task = tasks[0]
    judged = BENCH.check(task, record([UserMessage("hello"), AssistantMessage("Bye.")]))
    assert (judged["passed"], judged["score"]) == (False, 0.0)
    assert "passed" not in judged["details"]
    assert judged["details"]["tool"]["recall"] == 0.0 and judged["details"]["output_em"] == 0.0


def test_scripted_referee_answers_the_classifier_and_the_exit_check(tasks):
    task = tasks[0]
    assert msgspec.json.decode(BENCH.scripted_referee("classifier", task).content) == list(task.domains)
    exit_reply = msgspec.json.decode(BENCH.scripted_referee("exit", task).content)
    assert exit_reply["should_end"] is False
    assert BENCH.scripted_referee("other", task) is None


def test_scripted_judge_follows_the_hint_else_the_prompt_digest():
    def scores(meta, text="judge this"):
        req = ChatRequest(model="m", messages=[UserMessage(text)], sweepbench=meta)
        reply = msgspec.json.decode(BENCH.scripted_judge(req).content)
        assert {v["reasoning"] for v in reply.values()} == {"scripted verdict"}
        return reply["helpfulness"]["score"], reply["coherence"]["score"]
    assert scores({"judge_hint": True}) == (5, 5)
    assert scores({"judge_hint": False}) == (1, 1)
    free = [scores(None, f"prompt {i}") for i in range(40)]
    assert all(1 <= h <= 5 and 1 <= c <= 5 for h, c in free)
    assert len(set(free)) > 5 and free == [scores({}, f"prompt {i}") for i in range(40)]


async def test_likert_judge_reads_the_transcript_and_scores_the_mean(tasks):
    task, seen = tasks[0], []
    msgs = [UserMessage("Find me a flight"), AssistantMessage("Here is one.")]

    class Reply:
        message = AssistantMessage('{"helpfulness": {"score": 4, "reasoning": "ok"}, '
                                   '"coherence": {"score": 3, "reasoning": "ok"}}')

    async def call(req):
        seen.append(req)
        return Reply()
    judged = await BENCH.judge(task, record(msgs), "likert", call, data_dir=None)
    assert judged["passed"] is None and judged["score"] == (3.5 - 1) / 4
    assert (judged["details"]["helpfulness"], judged["details"]["coherence"]) == (4, 3)
    assert seen[0].messages[0].content == judge_prompt(transcript(msgs), None)


# ---- the adapter's own methods, one each, on hand-made tasks and doubles -------------------

import random  # noqa: E402
from pathlib import Path  # noqa: E402
from types import SimpleNamespace  # noqa: E402

import pytest  # noqa: E402

from sweepbench.benchmarks.base import specs_hash, template_probe  # noqa: E402
from sweepbench.benchmarks.t1 import benchmark as t1_benchmark  # noqa: E402
from sweepbench.benchmarks.t1 import oracle, prompts  # noqa: E402
from sweepbench.benchmarks.t1.data import tasks as t1_tasks  # noqa: E402
from sweepbench.benchmarks.t1.episode import T1Protocol  # noqa: E402
from sweepbench.datasets.task import Task  # noqa: E402
from sweepbench.ids import UserMode, content_hash  # noqa: E402
from sweepbench.simulator.scripted.plan import Step  # noqa: E402

HAND = Task(id="hand", benchmark="t1", domain="food_and_dining,hotel", instructions="Book a table.")


@pytest.fixture
def paper_dir(tmp_path) -> Path:
    """A data dir holding stand-ins of the paper's five prompt files, each one recognisable."""
    folder = tmp_path / "t1" / "prompts"
    folder.mkdir(parents=True)
    texts = {"user": "## PERSONA\nx\n## USER\nx\n## GOAL\nx\nRULES:\nPAPER USER",
             "assistant": "PAPER ASSISTANT", "classifier": "PAPER CLASSIFIER",
             "exit": "PAPER EXIT\nThe user:\nx\nSo far:\n{history_text}",
             "judge": "PAPER JUDGE {conversation_text}"}
    for role, text in texts.items():
        (folder / prompts.FILES[role]).write_text(text, encoding="utf-8")
    return tmp_path


def test_load_tasks_asks_for_the_domains_as_one_split_selector(monkeypatch):
    seen = []

    def load(split, *, data_dir, lang):
        seen.append((split, data_dir, lang))
        return ["tasks"]
    monkeypatch.setattr(t1_tasks, "load_tasks", load)
    assert BENCH.load_tasks(("flight", "hotel"), data_dir=Path("d"), lang="en") == ["tasks"]
    assert seen == [("flight,hotel", Path("d"), "en")]


def test_tasks_summary_adds_the_selected_count_unless_all_domains(monkeypatch):
    monkeypatch.setattr(t1_tasks, "catalog_summary", lambda: {"total": 3})
    assert BENCH.tasks_summary(("all",), [HAND, HAND]) == {"total": 3}
    assert BENCH.tasks_summary(("flight",), [HAND, HAND]) == {"total": 3, "selected": 2}


def test_toolkit_state_and_final_state_are_the_tools(monkeypatch):
    seen = []
    tools = SimpleNamespace(toolkit=lambda task: seen.append(("toolkit", task)) or "kit",
                            new_state=lambda task: seen.append(("state", task)) or "state",
                            final_state=lambda state: seen.append(("final", state)) or {"f": 1})
    monkeypatch.setattr(t1_benchmark, "TOOLS", tools)
    assert (BENCH.toolkit(HAND), BENCH.new_state(HAND), BENCH.final_state("s")) == ("kit", "state", {"f": 1})
    assert seen == [("toolkit", HAND), ("state", HAND), ("final", "s")]


def test_episode_protocol_reads_the_prompts_of_the_data_dir():
    protocol = BENCH.episode_protocol(HAND, data_dir=Path("d"), user_mode=UserMode.DEFAULT)
    assert isinstance(protocol, T1Protocol) and protocol.data_dir == Path("d")


def test_gold_plan_and_corrupt_are_the_oracle(monkeypatch):
    seen = []
    monkeypatch.setattr(oracle, "gold_plan", lambda task: seen.append(task) or ["plan"])
    monkeypatch.setattr(oracle, "corrupt", lambda step, rng, task: seen.append((step, rng, task)) or "bad")
    step, rng = Step(tool="search_hotel"), random.Random(1)
    assert (BENCH.gold_plan(HAND), BENCH.corrupt(step, rng, HAND)) == (["plan"], "bad")
    assert seen == [HAND, (step, rng, HAND)]


def test_fingerprint_is_the_code_the_tool_schemas_and_the_four_prompts_for_the_probe(paper_dir):
    probe = template_probe(HAND)
    own = [prompts.user_prompt(probe, None), prompts.assistant_prompt(probe, ["food_and_dining", "hotel"], {}, None),
           prompts.classifier_prompt(None), prompts.exit_prompt(probe, "", None)]
    paper = [prompts.user_prompt(probe, paper_dir),
             prompts.assistant_prompt(probe, ["food_and_dining", "hotel"], {}, paper_dir),
             prompts.classifier_prompt(paper_dir), prompts.exit_prompt(probe, "", paper_dir)]
    assert "PAPER USER" in paper[0] and paper[1].startswith("PAPER ASSISTANT")
    assert paper[2] == "PAPER CLASSIFIER" and paper[3].startswith("PAPER EXIT")
    tools = specs_hash(t1_benchmark.TOOLS.toolkit(HAND).specs())
    for data_dir, texts in ((None, own), (paper_dir, paper)):
        assert BENCH.fingerprint(HAND, data_dir) == content_hash(
            {"code": "1", "tools": tools, "prompts": texts})
    # the task's own content is not in it (the episode identity hashes that)
    assert BENCH.fingerprint(msgspec.structs.replace(HAND, instructions="other"), None) == \
        BENCH.fingerprint(HAND, None)


async def test_likert_judge_reads_the_paper_prompt_of_the_data_dir(paper_dir):
    msgs, seen = [UserMessage("Find me a flight"), AssistantMessage("Here is one.")], []

    async def call(req):
        seen.append(req)
        return SimpleNamespace(message=AssistantMessage(
            '{"helpfulness": {"score": 5, "reasoning": "ok"}, "coherence": {"score": 4, "reasoning": "ok"}}'))
    judged = await BENCH.judge(HAND, record(msgs), "likert", call, data_dir=paper_dir)
    assert seen[0].messages[0].content == "PAPER JUDGE " + transcript(msgs)
    assert judged["score"] == (4.5 - 1) / 4
