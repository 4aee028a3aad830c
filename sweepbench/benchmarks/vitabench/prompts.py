"""VitaBench's agent and user-simulator prompts, the greeting, and the Figure 8 ablation modes.

When the data dir has the upstream templates (``<data_dir>/vitabench/upstream/prompts``,
read at run time, see ``judge_prompts.load_upstream_prompts``) they are used as upstream fills
them; otherwise the project's own prompts below, which carry the same facts in sweepbench's
words. All functions are pure functions of (task, data dir).

As upstream: the agent's environment is the task's clock with its weekday (``2025-06-21
11:20:00 Saturday`` / ``星期六``); the persona is the Python ``str`` of the task's
``user_profile`` dict (``{'user id': 'U000001', ...}``, keys in file order); the instruction
is verbatim. The conversation opens with :data:`GREETING`, which the user simulator and the
judge see and the agent does not.

Modes (``MODES``), as in the paper's interaction ablation (Figure 8):

- ``default``: the agent talks with a persona-driven user simulator that reveals the
  instruction a piece at a time (progressive disclosure) and answers only from what it knows.
- ``neutral`` (sweepbench's own; upstream has no such mode): the same, but the persona keeps
  only the facts a user needs to answer questions (id, addresses, city, dietary
  restrictions); the persona attributes (``NEUTRAL_DROPPED``) are removed, and a line asks
  for a plain, cooperative manner.
- ``solo``: upstream's ``llm_solo_agent`` with its ``dummy_user``: the greeting goes to a user
  model told to say the whole instruction at once (:func:`dummy_user_system_prompt`), then
  the agent works alone with the solo system prompt and ends with ``###STOP###``. Upstream
  reads the solo template without the run's language, so it is always the Chinese one (the
  weekday follows the run's language); sweepbench reproduces that with upstream templates.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from sweepbench.benchmarks.vitabench.judge_prompts import (
    format_template,
    upstream_template,
)
from sweepbench.datasets.task import Task
from sweepbench.simulator.prompts import STOP

__all__ = [
    "GREETING",
    "MODES",
    "NEUTRAL_DROPPED",
    "STOP",
    "agent_system_prompt",
    "agent_time",
    "dummy_user_system_prompt",
    "persona_profile",
    "persona_text",
    "user_system_prompt",
]

MODES = ("default", "neutral", "solo")

GREETING = {"en": "Hello, how can I help you?", "zh": "你好，请问需要什么服务？"}
"""Upstream's opening line (by run language), shown to the user simulator and the judge."""

NEUTRAL_DROPPED = frozenset({
    "personality", "性格", "occupation", "职业", "gender", "性别", "age group", "年龄段",
    "family status", "家庭情况", "relationship status", "感情状况",
})
"""Persona attributes removed for the neutral user (keys compared case- and ``_``-insensitively)."""

_WEEKDAYS = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "zh": ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日"),
}


def _lang(task: Task) -> str:
    return task.lang if task.lang in _WEEKDAYS else "en"


def agent_time(task: Task) -> str:
    """The task's clock with its weekday, e.g. ``2025-06-21 11:20:00 Saturday``."""
    when = str(task.environment.get("time", "")).strip()
    if not when:
        return "unknown" if _lang(task) == "en" else "未知"
    try:
        return f"{when} {_WEEKDAYS[_lang(task)][_dt.datetime.fromisoformat(when).weekday()]}"
    except ValueError:
        return when


def _norm_key(key: str) -> str:
    return " ".join(str(key).replace("_", " ").split()).casefold()


def persona_profile(task: Task, *, neutral: bool = False) -> dict[str, Any]:
    """The user's profile from the task; without the persona attributes when ``neutral``."""
    persona = task.persona if isinstance(task.persona, dict) else {}
    profile = persona.get("user_profile", persona)
    if not isinstance(profile, dict):
        return {"profile": profile}
    if neutral:
        profile = {k: v for k, v in profile.items() if _norm_key(k) not in NEUTRAL_DROPPED}
    return dict(profile)


def persona_text(task: Task, *, neutral: bool = False) -> str:
    """The persona as upstream writes it: ``str()`` of the profile dict (Python repr)."""
    return str(persona_profile(task, neutral=neutral))


def _upstream(name: str, task: Task, data_dir: str | Path | None, **fields: Any) -> str | None:
    template = upstream_template(name, _lang(task), data_dir)
    return None if template is None else format_template(template, fields, name)


# ---- the project's own prompts --------------------------------------------------------------

_AGENT = {
    "en": """\
You are the assistant of a life-services platform (food delivery, in-store dining and travel). \
You help the user by calling the tools you are given.

# Environment
- Current time: {time}

# Using tools
- Before calling a tool, make sure you know every required parameter. Take it from the \
conversation, look it up with another tool, or ask the user; never guess.
- Tool descriptions state preconditions (what must be done first) and postconditions (what the \
call changes); follow them.

# Talking with the user
- State only what the conversation or the tools told you; never invent ids, prices, times, \
addresses or availability.
- Work on what the user asked for; do not push them towards other needs.
- When the user's requests are done, ask whether there is anything else. If there is not, \
reply with {stop} to end the conversation.""",
    "zh": """\
你是生活服务平台（外卖、到店、旅行）的助手，通过调用提供给你的工具帮用户办事。

# 环境
- 当前时间：{time}

# 工具使用
- 调用工具前先确认每个必填参数都已知：从对话中获取、用其他工具查询，或询问用户；不要猜测。
- 工具描述写明了前置条件（需要先做什么）和后置条件（调用会改变什么），请遵循。

# 与用户对话
- 只陈述对话或工具告诉你的信息，不要编造 id、价格、时间、地址或库存。
- 专注于用户提出的需求，不要引导用户提出新需求。
- 用户的需求都完成后，询问是否还有其他需要；如果没有，回复 {stop} 结束对话。""",
}

_SOLO_AGENT = {
    "en": """\
You are the assistant of a life-services platform (food delivery, in-store dining and travel). \
You carry out the user's request by calling the tools you are given.

# Environment
- Current time: {time}

# How this works
- The user's first message holds their complete request. Everything you need is there: \
preferences, constraints, and the order in which things must happen.
- The user is not available: do not ask questions. Treat anything that would need the user's \
confirmation as confirmed.
- Work out which tools to call and with what arguments, then call them in a sensible order, \
respecting each tool's preconditions and postconditions. When the request says to do one thing \
and then another (order, then cancel or change), do them in that order.
- Never invent ids, prices, times or addresses; look them up.
- When every part of the request is done, reply with {stop}.""",
    "zh": """\
你是生活服务平台（外卖、到店、旅行）的助手，通过调用提供给你的工具完成用户的请求。

# 环境
- 当前时间：{time}

# 工作方式
- 用户的第一条消息包含其完整请求，所需信息都在其中：偏好、约束，以及各项操作的先后顺序。
- 用户无法回应：不要提问。凡是需要用户确认的，都视为已确认。
- 自行确定要调用的工具和参数，按合理顺序调用，遵循每个工具的前置和后置条件。请求要求先做一件事再做另一件（例如先下单再取消或修改）时，按该顺序执行。
- 不要编造 id、价格、时间或地址，请查询获得。
- 请求的每一部分都完成后，回复 {stop}。""",
}

_USER = {
    "en": """\
You are playing a user who is talking with a service assistant. Who you are is in <persona>; \
what you want is in <instructions>. Stay in character throughout.

<persona>
{persona}
</persona>
<instructions>
{instructions}
</instructions>

# How you talk
- Write one short message per turn, like a real person typing into a chat.
- Set the scene briefly, then say what you need. When a choice is needed, give your conditions \
and preferences and ask the assistant which option it recommends.
- Let your personality from <persona> show in your tone and wording.

# What you reveal, and when
- Do not say everything at once. Split the instructions into separate points and bring them up \
over several turns, starting with the main need.
- By the end, every detail of the instructions must have been said, background included: it \
may matter for the assistant's choices.
- Keep the facts exactly as written; only the wording is yours.

# Answering the assistant
- Answer its questions from <persona> and <instructions> only. If the answer is not there, say \
you don't know or don't remember; never make up ids, dates or other facts. If asked who you \
are, give your user id.
- Ask for exactly what the instructions say; do not add, drop, broaden or swap requirements, and \
hold to them if the assistant suggests something else.
- If the assistant offers to place an order for you, accept; you rely on it to do the work.
- If the assistant keeps asking something you have already answered, say so impatiently.

# Ending
- Do not end while a need is still unsaid, a task is unfinished, or a result is wrong.
- When everything is done correctly, or the assistant has clearly said it cannot be done, \
reply with exactly {stop}.""",
    "zh": """\
你在扮演一位正在和服务助手对话的用户。你是谁写在 <persona> 中，你想要什么写在 <instructions> 中。请始终保持角色。

<persona>
{persona}
</persona>
<instructions>
{instructions}
</instructions>

# 说话方式
- 每轮只写一条简短消息，像真人在聊天框里打字。
- 先简单交代情况，再说需求。需要做选择时，给出你的条件和偏好，请助手推荐。
- 语气和用词要体现 <persona> 中的性格。

# 透露信息的节奏
- 不要一次说完。把需求拆成几个独立的点，分几轮提出，先说主要需求。
- 到对话结束时，需求中的每个细节（包括背景信息）都必须说到，因为它们可能影响助手的选择。
- 事实保持原样，只有措辞是你自己的。

# 回答助手
- 只根据 <persona> 和 <instructions> 回答；没有的信息就说不知道或不记得，不要编造 id、日期等。被问到身份时，给出你的用户 id。
- 严格按需求提出要求，不增加、不删减、不泛化、不替换；助手劝你改变时要坚持。
- 助手提出帮你下单时，请接受；你依赖助手完成这些事。
- 助手反复问你已经回答过的问题时，不耐烦地指出来。

# 结束
- 还有需求没说、任务没完成或结果不对时，不要结束。
- 所有事都正确完成，或助手明确表示无法完成时，只回复 {stop}。""",
}

_NEUTRAL_NOTE = {
    "en": "\n\n# Manner\n- You have no particular temperament: write plainly, politely and "
          "cooperatively.",
    "zh": "\n\n# 语气\n- 你没有特别的性格：说话平实、礼貌、配合。",
}

_DUMMY_USER = {
    "en": """\
You are playing a user who is talking with a service assistant. Who you are is in <persona>; \
what you want is in <instructions>.

<persona>
{persona}
</persona>
<instructions>
{instructions}
</instructions>

# What to say
- In your first message, tell the assistant everything in the instructions at once, in the \
first person, keeping the original wording and every detail, background included.
- Do not add anything the instructions do not say.
- When the assistant has finished, reply with exactly {stop}.""",
    "zh": """\
你在扮演一位正在和服务助手对话的用户。你是谁写在 <persona> 中，你想要什么写在 <instructions> 中。

<persona>
{persona}
</persona>
<instructions>
{instructions}
</instructions>

# 说什么
- 在第一条消息中用第一人称一次性把需求全部告诉助手，保持原有措辞和每个细节（包括背景信息）。
- 不要添加需求中没有的内容。
- 助手完成后，只回复 {stop}。""",
}


# ---- the public functions -------------------------------------------------------------------


def agent_system_prompt(task: Task, *, data_dir: str | Path | None = None,
                        mode: str = "default") -> str:
    """The agent's system prompt: interactive (``default``/``neutral``) or ``solo``."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    name = "solo_agent_system_prompt" if mode == "solo" else "agent_system_prompt"
    fields = {"time": agent_time(task)}
    if mode == "solo":  # upstream reads this template without the language: always Chinese
        template = upstream_template(name, "zh", data_dir)
        text = None if template is None else format_template(template, fields, name)
    else:
        text = _upstream(name, task, data_dir, **fields)
    if text is not None:
        return text
    own = _SOLO_AGENT if mode == "solo" else _AGENT
    return own[_lang(task)].format(stop=STOP, **fields)


def user_system_prompt(task: Task, *, data_dir: str | Path | None = None,
                       neutral: bool = False) -> str:
    """The user simulator's system prompt: persona, instructions, disclosure rules."""
    fields = {"persona": persona_text(task, neutral=neutral), "instructions": task.instructions}
    text = _upstream("user_system_prompt", task, data_dir, **fields)
    if text is None:
        text = _USER[_lang(task)].format(stop=STOP, **fields)
    return text + _NEUTRAL_NOTE[_lang(task)] if neutral else text


def dummy_user_system_prompt(task: Task, *, data_dir: str | Path | None = None) -> str:
    """Upstream's solo-mode relay: a user model told to say the whole instruction at once."""
    fields = {"persona": persona_text(task), "instructions": task.instructions}
    text = _upstream("dummy_user_system_prompt", task, data_dir, **fields)
    return text if text is not None else _DUMMY_USER[_lang(task)].format(stop=STOP, **fields)
