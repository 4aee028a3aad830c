"""VitaBench agent and user prompts: upstream from the data dir, own otherwise; solo and neutral."""

from __future__ import annotations

import ast
import re

import pytest

from sweepbench.benchmarks.catalog import load_tasks
from sweepbench.benchmarks.vitabench.prompts import (
    NEUTRAL_DROPPED,
    STOP,
    agent_system_prompt,
    agent_time,
    dummy_user_system_prompt,
    persona_profile,
    persona_text,
    user_system_prompt,
)
from sweepbench.datasets.task import Task

PROFILE = {
    "user id": "U000001", "occupation": "Doctor", "gender": "male", "age group": "35~40",
    "residence": "Kunming", "home address": "28 Fengning Road", "work address": "City Hospital",
    "dietary restrictions": "no fried food", "family_status": "Has children",
    "personality": "Impatient, rushes things",
}
DROPPED_VALUES = ["Doctor", "male", "35~40", "Has children", "Impatient, rushes things"]
KEPT_VALUES = ["U000001", "Kunming", "28 Fengning Road", "City Hospital", "no fried food"]


def task(lang="en", profile=PROFILE, time="2025-06-21 11:20:00"):
    return Task(id="t", benchmark="vitabench", domain="delivery", lang=lang,
                instructions="Order mild rice noodles. Deliver them to the hospital.",
                persona={"user_profile": profile}, environment={"time": time})


def persona_block(prompt: str) -> str:
    m = re.search(r"<persona>\n(.*?)\n</persona>", prompt, re.DOTALL)
    assert m, "no <persona> block"
    return m.group(1)


@pytest.fixture(params=["own", "upstream"])
def data_dir(request, shared_data_or_none):
    if request.param == "upstream":
        if shared_data_or_none is None:
            pytest.skip("upstream prompts need the shared data dir")
        return shared_data_or_none
    return None


@pytest.fixture(scope="session")
def shared_data_or_none(request):
    try:
        return request.getfixturevalue("shared_data")
    except pytest.skip.Exception:
        return None


def test_agent_time_has_the_weekday():
    assert agent_time(task()) == "2025-06-21 11:20:00 Saturday"
    assert agent_time(task("zh")) == "2025-06-21 11:20:00 星期六"
    assert agent_time(task(time="soon")) == "soon"
    assert agent_time(Task(id="x", benchmark="vitabench", domain="d", instructions="")) == "unknown"


def test_agent_prompt(data_dir):
    for lang in ("en", "zh"):
        text = agent_system_prompt(task(lang), data_dir=data_dir)
        assert agent_time(task(lang)) in text and STOP in text
        assert "{" not in text
    assert agent_system_prompt(task(), data_dir=data_dir, mode="neutral") == \
        agent_system_prompt(task(), data_dir=data_dir)
    with pytest.raises(ValueError, match="mode"):
        agent_system_prompt(task(), data_dir=data_dir, mode="chatty")


def test_upstream_prompts_are_used_when_present(shared_data):
    assert "Tool Usage Guidelines" in agent_system_prompt(task(), data_dir=shared_data)
    assert "工具使用规范" in agent_system_prompt(task("zh"), data_dir=shared_data)
    assert "Information Disclosure Rules" in user_system_prompt(task(), data_dir=shared_data)
    assert "工具使用规范" in agent_system_prompt(task(), data_dir=shared_data, mode="solo")
    assert "in one go" in dummy_user_system_prompt(task(), data_dir=shared_data)
    # without a data dir: the project's own words
    assert "Tool Usage Guidelines" not in agent_system_prompt(task(), data_dir=None)
    assert "Information Disclosure Rules" not in user_system_prompt(task(), data_dir=None)


def test_user_prompt_has_persona_instructions_and_disclosure_rules(data_dir):
    text = user_system_prompt(task(), data_dir=data_dir)
    assert "Order mild rice noodles. Deliver them to the hospital." in text
    block = persona_block(text)
    for value in DROPPED_VALUES + KEPT_VALUES:
        assert value in block
    low = text.lower()
    assert "first round" in low or "at once" in low  # progressive disclosure
    assert "don't know" in low or "don't remember" in low


def test_neutral_user_really_drops_persona_attributes(data_dir):
    for lang in ("en", "zh"):
        text = user_system_prompt(task(lang), data_dir=data_dir, neutral=True)
        block = persona_block(text)
        profile = ast.literal_eval(block)
        assert set(profile) == {"user id", "residence", "home address", "work address",
                                "dietary restrictions"}
        for value in DROPPED_VALUES:
            assert value not in text, value
        for value in KEPT_VALUES:
            assert value in block
        assert text != user_system_prompt(task(lang), data_dir=data_dir)


def test_neutral_on_real_tasks_in_both_languages(shared_data):
    for lang, key in (("en", "personality"), ("zh", "性格")):
        tasks = load_tasks("vitabench@2025-11:delivery", data_dir=shared_data, lang=lang)
        assert tasks
        for t in tasks:
            full = persona_profile(t)
            neutral = persona_profile(t, neutral=True)
            assert key in full or key.replace(" ", "_") in full
            assert not {k for k in neutral if k.replace("_", " ").casefold() in NEUTRAL_DROPPED}
            assert neutral and set(neutral) < set(full)
            text = user_system_prompt(t, data_dir=shared_data, neutral=True)
            assert str(full.get(key)) not in persona_block(text)


def test_solo_mode_prompts(data_dir):
    system = agent_system_prompt(task(), data_dir=data_dir, mode="solo")
    assert system != agent_system_prompt(task(), data_dir=data_dir)
    assert agent_time(task()) in system and STOP in system
    relay = dummy_user_system_prompt(task(), data_dir=data_dir)
    assert "Order mild rice noodles. Deliver them to the hospital." in relay
    for value in DROPPED_VALUES + KEPT_VALUES:  # the whole profile
        assert value in relay


def test_persona_is_the_python_repr_of_the_profile():
    assert persona_text(task()) == str(PROFILE)
    assert persona_text(task()).startswith("{'user id': 'U000001', 'occupation': 'Doctor'")
    zh = task("zh", profile={"用户id": "U1", "职业": "医生"})
    assert persona_text(zh) == "{'用户id': 'U1', '职业': '医生'}"
    assert persona_block(user_system_prompt(task())) == str(PROFILE)


def test_upstream_solo_prompt_is_always_the_chinese_template(shared_data):
    """Upstream reads the solo template without the run's language; the weekday follows it."""
    en = agent_system_prompt(task(), data_dir=shared_data, mode="solo")
    assert en.startswith("# 环境\n- 当前时间：2025-06-21 11:20:00 Saturday\n")
    zh = agent_system_prompt(task("zh"), data_dir=shared_data, mode="solo")
    assert zh.startswith("# 环境\n- 当前时间：2025-06-21 11:20:00 星期六\n")
    # the relay user follows the run's language
    assert dummy_user_system_prompt(task(), data_dir=shared_data) != \
        dummy_user_system_prompt(task("zh"), data_dir=shared_data)


def test_odd_personas_do_not_break_prompts():
    for persona in ({}, {"user_profile": "a string"}, {"name": "flat persona", "personality": "x"}):
        t = Task(id="t", benchmark="vitabench", domain="d", instructions="do it", persona=persona)
        assert "do it" in user_system_prompt(t, neutral=True)
        assert "do it" in dummy_user_system_prompt(t)
    flat = Task(id="t", benchmark="vitabench", domain="d", instructions="i",
                persona={"name": "flat persona", "personality": "grumpy"})
    assert "grumpy" not in user_system_prompt(flat, neutral=True)


def test_sample_tasks_render_every_prompt():
    for t in load_tasks("vitabench:delivery"):
        for text in (agent_system_prompt(t), agent_system_prompt(t, mode="solo"),
                     user_system_prompt(t), user_system_prompt(t, neutral=True),
                     dummy_user_system_prompt(t)):
            assert t.instructions in text or agent_time(t) in text
