"""VitaBench's benchmark object on its scoring paths: the state check's verdict as a judgment,
the judge's verdict with the check's riding along for the scripted double only."""

from __future__ import annotations

import msgspec

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.vitabench.oracle import gold_plan
from sweepbench.benchmarks.vitabench.state_check import check_vitabench
from sweepbench.wire import AssistantMessage, EpisodeRecord, Usage, UserMessage

BENCH = registry.get("vitabench")
TASK = next(t for t in BENCH.load_tasks(("delivery",), data_dir=None, lang="en")
            if t.evaluation.get("overall_rubrics"))


def record(final_state) -> EpisodeRecord:
    return EpisodeRecord(run_id="r", model="m", benchmark="vitabench", domain="delivery",
                         task_id=TASK.id, trial=0, termination="user_stop",
                         messages=[AssistantMessage("Hello"), UserMessage("noodles, please")],
                         final_state=final_state)


def test_check_is_the_state_check_as_a_judgment(run_plan):
    final, _ = run_plan(TASK, gold_plan(TASK))
    assert BENCH.check(TASK, record(final)) == {"passed": True, "score": 1.0,
                                               "details": {"why": None, "unreachable": None}}
    failed = BENCH.check(TASK, record({"orders": {}}))
    expected = msgspec.to_builtins(check_vitabench(TASK, {"orders": {}}))
    assert expected.pop("passed") is False
    assert failed == {"passed": False, "score": 0.0, "details": expected}
    assert failed["details"]["why"]


class Recorder:
    def __init__(self, text: str) -> None:
        self.text, self.requests = text, []

    async def __call__(self, req):
        self.requests.append(req)

        class Reply:
            message, usage, latency_s = AssistantMessage(self.text), Usage(3, 1), 0.0
        return Reply()


async def test_judge_verdict_with_the_check_riding_along(run_plan):
    final, _ = run_plan(TASK, gold_plan(TASK))
    call = Recorder('{"justification": "fine", "meetExpectation": true}')
    judged = await BENCH.judge(TASK, record(final), "full_no_rubrics", call, data_dir=None)
    assert (judged["passed"], judged["score"]) == (True, 1.0)
    assert "passed" not in judged["details"] and "score" not in judged["details"]
    assert judged["details"]["method"] == "full_no_rubrics" and judged["details"]["calls"] == 1
    assert call.requests[0].sweepbench["reference_verdict"] is True

    call = Recorder('{"justification": "no", "meetExpectation": false}')
    judged = await BENCH.judge(TASK, record({"orders": {}}), "full_no_rubrics", call, data_dir=None)
    assert (judged["passed"], judged["score"]) == (False, 0.0)
    assert call.requests[0].sweepbench["reference_verdict"] is False

    await BENCH.judge(TASK, record(None), "full_no_rubrics", call, data_dir=None)
    assert call.requests[-1].sweepbench["reference_verdict"] is None


# ---- the adapter's own methods, one each: objects made in the test, doubles for the parts ----

import random  # noqa: E402
from pathlib import Path  # noqa: E402
from types import SimpleNamespace  # noqa: E402

import pytest  # noqa: E402

from sweepbench.benchmarks.base import specs_hash, template_probe  # noqa: E402
from sweepbench.benchmarks.vitabench import benchmark as vb  # noqa: E402
from sweepbench.benchmarks.vitabench import oracle, prompts, tasks  # noqa: E402
from sweepbench.benchmarks.vitabench.benchmark import VitaBench  # noqa: E402
from sweepbench.benchmarks.vitabench.data_check import OWN_PROMPTS  # noqa: E402
from sweepbench.benchmarks.vitabench.episode import VitaBenchProtocol  # noqa: E402
from sweepbench.benchmarks.vitabench.release import RELEASES  # noqa: E402
from sweepbench.benchmarks.vitabench.tools import RELEASE_TOOLS  # noqa: E402
from sweepbench.datasets.task import Task  # noqa: E402
from sweepbench.errors import TaskError  # noqa: E402
from sweepbench.ids import UserMode, content_hash  # noqa: E402
from sweepbench.simulator.scripted.plan import Step  # noqa: E402

HAND = Task(id="hand", benchmark="vitabench", domain="delivery", lang="zh", instructions="noodles")


@pytest.fixture
def upstream_dir(tmp_path) -> Path:
    """A data dir with upstream's parts as stand-ins: four recognisable prompt templates and a
    tool descriptions file describing one tool (named alike in both releases)."""
    folder = tmp_path / "upstream" / "prompts"
    folder.mkdir(parents=True)
    for name, text in (("agent_system_prompt", "UP AGENT {time}"), ("solo_agent_system_prompt", "UP SOLO {time}"),
                       ("user_system_prompt", "UP USER {instructions}"),
                       ("dummy_user_system_prompt", "UP DUMMY {instructions}")):
        (folder / f"{name}.yaml").write_text(f"english: '{text}'\nchinese: '{text} zh'\n", encoding="utf-8")
    described = {lang: {"get_delivery_store_info": {"description": f"UP STORE INFO {lang}"}}
                 for lang in ("en", "zh")}
    (tmp_path / "upstream" / "tool_descriptions.json").write_bytes(
        msgspec.json.encode({"delivery": described}))
    return tmp_path


def test_an_object_is_named_for_its_release_and_variant():
    old, own = VitaBench("2025-11"), VitaBench("2025-12", own_prompts=True)
    assert (old.name, old.release, old.rules, old.own_prompts) == (
        "vitabench@2025-11", "2025-11", RELEASES["2025-11"], False)
    assert old.tools is RELEASE_TOOLS["2025-11"] and own.tools is RELEASE_TOOLS["2025-12"]
    assert old.headline_label == VitaBench.headline_label
    assert (own.name, own.release, own.own_prompts) == ("vitabench@2025-12+own-prompts", "2025-12", True)
    assert own.headline_label == f"{VitaBench.headline_label}; {OWN_PROMPTS}"
    assert VitaBench().name == "vitabench@2025-12"  # the current release


def test_the_november_release_keeps_the_identity_it_was_recorded_under():
    assert VitaBench("2025-11").identity_name == "vitabench"
    assert VitaBench("2025-11", own_prompts=True).identity_name == "vitabench"
    assert VitaBench("2025-12").identity_name == "vitabench@2025-12"


def test_with_release_reads_the_release_and_the_one_variant():
    base = VitaBench("2025-12")
    assert base.with_release("2025-11") is vb._released("2025-11", False)
    got = [(b.release, b.own_prompts) for b in (
        base.with_release("2025-11"), base.with_release("2025-11+own-prompts"),
        base.with_release(""), base.with_release("+own-prompts"))]
    assert got == [("2025-11", False), ("2025-11", True), ("2025-12", False), ("2025-12", True)]
    with pytest.raises(TaskError) as err:
        base.with_release("2025-11+fast")
    assert str(err.value) == ("unknown VitaBench variant 'fast' in '2025-11+fast'; the one variant "
                              "is +own-prompts")


def test_prompts_come_from_upstream_s_files_unless_own_prompts(upstream_dir, tmp_path):
    upstream, own = VitaBench("2025-12"), VitaBench("2025-12", own_prompts=True)
    assert upstream._prompt_dir(upstream_dir) == upstream_dir and upstream._prompt_dir(None) is None
    assert own._prompt_dir(upstream_dir) is None
    bare = tmp_path / "bare"
    bare.mkdir()
    with pytest.raises(TaskError, match="without upstream's upstream/prompts/"):
        upstream._prompt_dir(bare)
    assert own._prompt_dir(bare) is None  # nothing of upstream's is needed then


def test_build_data_dir_imports_upstream_s_files_and_summarises_them(monkeypatch):
    from sweepbench.benchmarks.vitabench.upstream_data import importer

    seen = []
    monkeypatch.setattr(importer, "import_data", lambda source, out, *, release: seen.append(
        (source, out, release)) or "manifest")
    monkeypatch.setattr(importer, "summary", lambda manifest, out: f"{manifest} in {out}")
    got = VitaBench().build_data_dir(Path("src"), Path("out"), release="2025-11")
    assert got == "manifest in out" and seen == [(Path("src"), Path("out"), "2025-11")]


def test_load_tasks_checks_the_release_and_names_each_task_with_the_benchmark(monkeypatch):
    bench, seen = VitaBench("2025-11"), []
    named = Task(id="a", benchmark="vitabench@2025-11", domain="delivery", instructions="x")
    plain = Task(id="b", benchmark="vitabench", domain="delivery", instructions="y")
    monkeypatch.setattr(vb, "check_release", lambda *a: seen.append(("check", *a)))
    monkeypatch.setattr(tasks, "load_tasks", lambda domains, *, data_dir, lang: seen.append(
        ("load", domains, data_dir, lang)) or [named, plain])
    got = bench.load_tasks(("delivery",), data_dir=Path("d"), lang="zh")
    assert seen == [("check", Path("d"), RELEASES["2025-11"], "vitabench@2025-11"),
                    ("load", ("delivery",), Path("d"), "zh")]
    assert got[0] is named and got[1] == msgspec.structs.replace(plain, benchmark="vitabench@2025-11")


def test_the_samples_load_under_the_release_s_name():
    loaded = VitaBench("2025-11").load_tasks(("delivery",), data_dir=None, lang="en")
    assert loaded and {t.benchmark for t in loaded} == {"vitabench@2025-11"}


def test_tools_state_and_records_are_the_release_s_tools(upstream_dir):
    bench, seen = VitaBench("2025-12"), []
    bench.tools = SimpleNamespace(
        toolkit=lambda task: seen.append(("toolkit", task)) or "kit",
        new_state=lambda task: seen.append(("state", task)) or "state",
        final_state=lambda state: seen.append(("final", state)) or {"f": 1},
        record_ids=lambda state: seen.append(("ids", state)) or ["o1"],
        descriptions=lambda task, data_dir: seen.append(("descriptions", task, data_dir)) or {"t": {}})
    assert (bench.toolkit(HAND), bench.new_state(HAND), bench.final_state("s"), bench.record_ids("s")) == (
        "kit", "state", {"f": 1}, ["o1"])
    assert bench.tool_descriptions(HAND, upstream_dir) == {"t": {}}
    assert seen == [("toolkit", HAND), ("state", HAND), ("final", "s"), ("ids", "s"),
                    ("descriptions", HAND, upstream_dir)]
    own = VitaBench("2025-12", own_prompts=True)
    own.tools = bench.tools
    own.tool_descriptions(HAND, upstream_dir)
    assert seen[-1] == ("descriptions", HAND, None)


def test_tools_summary_is_the_dependency_graph(monkeypatch):
    monkeypatch.setattr(vb, "graph_stats", lambda toolkit: {"of": toolkit})
    assert VitaBench().tools_summary("kit") == {"of": "kit"}


def test_episode_protocol_has_the_prompt_dir_the_mode_and_the_rules(upstream_dir):
    protocol = VitaBench("2025-11").episode_protocol(HAND, data_dir=upstream_dir, user_mode=UserMode.SOLO)
    assert isinstance(protocol, VitaBenchProtocol)
    assert (protocol.data_dir, protocol.mode, protocol.rules) == (upstream_dir, UserMode.SOLO, RELEASES["2025-11"])
    own = VitaBench("2025-11", own_prompts=True).episode_protocol(HAND, data_dir=upstream_dir,
                                                                  user_mode=UserMode.DEFAULT)
    assert own.data_dir is None


async def test_judge_passes_the_prompt_dir_language_and_method_on(monkeypatch, upstream_dir):
    seen = []

    async def judge_episode(task, messages, **kw):
        seen.append((task, messages, kw))
        return {"passed": True, "score": 0.5, "method": kw["method"]}
    monkeypatch.setattr(vb, "judge_episode", judge_episode)
    bench, call = VitaBench("2025-12"), object()
    rec = msgspec.structs.replace(record(None), messages=[UserMessage("hi")])
    judged = await bench.judge(HAND, rec, "full", call, data_dir=upstream_dir)
    assert judged == {"passed": True, "score": 0.5, "details": {"method": "full"}}
    assert seen == [(HAND, [UserMessage("hi")], {"call": call, "method": "full", "data_dir": upstream_dir,
                                                 "lang": "zh", "meta": {"reference_verdict": None}})]
    await VitaBench("2025-12", own_prompts=True).judge(HAND, rec, "full", call, data_dir=upstream_dir)
    assert seen[-1][2]["data_dir"] is None


def test_fingerprint_is_the_code_tool_schemas_and_every_mode_s_prompts(upstream_dir):
    def expected(bench, data_dir, task):
        probe = template_probe(task)
        return content_hash({
            "code": "1", "tools": specs_hash(bench.toolkit(task).specs(bench.tool_descriptions(task, data_dir))),
            "prompts": [prompts.GREETING.get(task.lang, prompts.GREETING["en"]),
                        prompts.agent_system_prompt(probe, data_dir=data_dir, mode="default"),
                        prompts.agent_system_prompt(probe, data_dir=data_dir, mode="solo"),
                        prompts.user_system_prompt(probe, data_dir=data_dir, neutral=False),
                        prompts.user_system_prompt(probe, data_dir=data_dir, neutral=True),
                        prompts.dummy_user_system_prompt(probe, data_dir=data_dir)]})

    upstream, own = VitaBench("2025-12"), VitaBench("2025-12", own_prompts=True)
    english = msgspec.structs.replace(HAND, lang="en")
    probe = template_probe(HAND)
    assert prompts.agent_system_prompt(probe, data_dir=upstream_dir).startswith("UP AGENT")
    assert prompts.dummy_user_system_prompt(probe, data_dir=upstream_dir).startswith("UP DUMMY")
    described = upstream.tool_descriptions(HAND, upstream_dir)
    assert described["get_delivery_store_info"]["description"].startswith("UP STORE INFO zh")
    kit = upstream.toolkit(HAND)
    assert specs_hash(kit.specs(described)) != specs_hash(kit.specs(None))
    for task in (HAND, english):
        assert upstream.fingerprint(task, upstream_dir) == expected(upstream, upstream_dir, task)
        assert own.fingerprint(task, upstream_dir) == expected(own, None, task)
        assert upstream.fingerprint(task, None) == expected(upstream, None, task)
    assert upstream.fingerprint(HAND, upstream_dir) != upstream.fingerprint(HAND, None)
    french = msgspec.structs.replace(HAND, lang="fr")  # no greeting of its own: the English one
    assert prompts.GREETING.get("fr") is None
    assert own.fingerprint(french, None) == expected(own, None, french)


def test_the_other_hooks_are_their_modules(monkeypatch):
    seen = []
    monkeypatch.setattr(vb, "unreachable", lambda task: seen.append(task) or "why")
    monkeypatch.setattr(vb, "import_vitabench", lambda store, path, **kw: seen.append((store, path, kw)) or 7)
    monkeypatch.setattr(vb, "scripted_judge", lambda req: seen.append(req) or "verdict")
    monkeypatch.setattr(oracle, "gold_plan", lambda task: seen.append(task) or ["plan"])
    monkeypatch.setattr(oracle, "corrupt", lambda step, rng, task: seen.append((step, rng, task)) or "bad")
    bench, step, rng = VitaBench(), Step(tool="get_user_info"), random.Random(1)
    assert bench.unreachable(HAND) == "why"
    assert bench.import_results("store", Path("p"), run_id="r", model="m", lang="zh") == 7
    assert bench.scripted_judge("req") == "verdict"
    assert (bench.gold_plan(HAND), bench.corrupt(step, rng, HAND)) == (["plan"], "bad")
    assert seen == [HAND, ("store", Path("p"), {"run_id": "r", "model": "m", "lang": "zh"}), "req",
                    HAND, (step, rng, HAND)]
