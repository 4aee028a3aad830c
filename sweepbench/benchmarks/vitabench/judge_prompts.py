"""Judge prompt templates: VitaBench's upstream templates from the data dir, or the project's own.

The upstream templates are data (``<data_dir>/vitabench/upstream/prompts/*.yaml``, keys
``chinese`` / ``english``), read at run time and never copied into the repository. When the
data dir does not have them, the project's own templates below (sweepbench's words, same
facts and the same reply format) are used. A system template is a ``str.format`` string with
the fields ``env_info``, ``user_instruction``, ``window_idx``, ``total_windows`` (sliding
methods) and, for the project's own, ``window_size`` and ``overlap``.

The judge's *user* message is built here too (:func:`judge_user_prompt`), byte for byte as
upstream's evaluator builds it for each method, whichever system template is used. It
carries the trajectory between ``<window_content>`` (sliding) or ``<trajectory_content>``
(full) tags and the rubric states between ``<current_rubrics>`` tags, as Python's
``json.dumps(states, ensure_ascii=False, indent=2)`` of ``[{"rubric_idx": "rubric_0",
"rubric": ..., "justification": ..., "meetExpectation": false}, ...]`` with the values as the
judge last wrote them. The no-rubric sliding variant has ``<memory>`` and
``<current_evaluation>`` instead. The scripted judge reads these tags (``TAGS``).

``load_upstream_prompts(data_dir)`` is also what the agent and user-simulator prompts use
(``benchmarks/vitabench/prompts.py``); parsed files are cached per prompts directory.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "JUDGE_TEMPLATE_NAMES",
    "OWN_JUDGE_TEMPLATES",
    "TAGS",
    "format_template",
    "judge_system_prompt",
    "judge_user_prompt",
    "load_upstream_prompts",
    "retry_nudge",
    "rubric_states_json",
    "upstream_prompts_dir",
    "upstream_template",
]

log = logging.getLogger(__name__)

_YAML_LANG = {"en": "english", "zh": "chinese"}

JUDGE_TEMPLATE_NAMES = {
    "sliding": "sliding_window_eval_template",
    "full": "full_trajectory_eval_template",
    "sliding_no_rubrics": "sliding_window_eval_no_rubrics_eval_template",
    "full_no_rubrics": "full_trajectory_no_rubrics_eval_template",
}
"""Judge method -> upstream template file (without ``.yaml``)."""

TAGS = {
    "window": "window_content",
    "trajectory": "trajectory_content",
    "rubrics": "current_rubrics",
    "memory": "memory",
    "evaluation": "current_evaluation",
}


# ---- upstream templates from the data dir ---------------------------------------------------


def upstream_prompts_dir(data_dir: str | Path | None) -> Path | None:
    """``<data_dir>/vitabench/upstream/prompts`` (or ``<data_dir>/upstream/prompts`` when
    ``data_dir`` is the vitabench folder itself) if it exists, else None."""
    if data_dir in (None, ""):
        return None
    root = Path(data_dir).expanduser()
    for cand in (root / "vitabench" / "upstream" / "prompts", root / "upstream" / "prompts"):
        if cand.is_dir():
            return cand.resolve()
    return None


@lru_cache(maxsize=8)
def _load_dir(path: Path) -> dict[str, dict[str, str]]:
    import yaml  # deferred: only needed when a data dir supplies templates

    out: dict[str, dict[str, str]] = {}
    for file in sorted(path.glob("*.yaml")):
        try:
            data = yaml.safe_load(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            log.warning("%s: unreadable prompt template, using sweepbench's own: %s", file, exc)
            continue
        if not isinstance(data, dict):
            log.warning("%s: not a mapping, using sweepbench's own template", file)
            continue
        langs = {lang: data[key] for lang, key in _YAML_LANG.items()
                 if isinstance(data.get(key), str) and data[key].strip()}
        if langs:
            out[file.stem] = langs
    return out


def load_upstream_prompts(data_dir: str | Path | None) -> dict[str, dict[str, str]]:
    """Upstream templates by name, each ``{"en": text, "zh": text}``; empty without a data dir."""
    path = upstream_prompts_dir(data_dir)
    return _load_dir(path) if path is not None else {}


def upstream_template(name: str, lang: str, data_dir: str | Path | None) -> str | None:
    """The upstream template ``name`` in ``lang`` (en/zh), or None when the data dir lacks it."""
    return load_upstream_prompts(data_dir).get(name, {}).get(lang)


def format_template(template: str, fields: dict[str, Any], what: str) -> str | None:
    """``template.format(**fields)``, or None (with a warning) when the template does not fit."""
    try:
        return template.format(**fields)
    except (KeyError, IndexError, ValueError) as exc:
        log.warning("%s: upstream template does not format (%s: %s); using sweepbench's own",
                    what, type(exc).__name__, exc)
        return None


# ---- the project's own judge templates ------------------------------------------------------

_EN_COMMON_RULES = """\
# How to judge
- Judge what the assistant did: its replies to the user and the tool calls it made. What the \
user says only steers the assistant; it never changes what a rubric requires.
- Tool results (lines starting with "tool") are seen by the assistant only. Information counts \
as given to the user only when the assistant passes it on; the assistant must not claim results \
a tool did not return.
- A rubric that needs an order (or a booking, a change, a cancellation) is met only if the \
corresponding tool call actually succeeded. An assistant that believes it ordered while the call \
failed, or a user who says they will order themselves, leaves the rubric unmet.
- Quantities, items and times in a rubric are strict: no different quantity, no later delivery \
or booking time, even if the user says they would accept it.
- Addresses and order notes are compared by function: wording may differ or leave out detail as \
long as it serves the same purpose (the courier can find the place, the shop gets the message).
"""

_EN_REPLY_RUBRICS = """\
# Reply format
Reply with a JSON array and nothing else, one object per rubric, in the order given:
```json
[
  {{"rubric_idx": "rubric_0", "rubric": "<the rubric, restated>", "justification": "<short \
reason, citing round numbers like [12]>", "meetExpectation": true}}
]
```
"""

_EN_SLIDING = """\
# Environment
{env_info}

# What the user wanted (complete instruction)
{user_instruction}

# Setting
- A user talks with an assistant that can call tools to look things up and to act. The \
conversation is long, so you see it in windows of {window_size} messages; consecutive windows \
share {overlap} messages. This is window {window_idx} of {total_windows}.
- The instruction has been split into rubrics (atomic checks). <current_rubrics> holds each \
rubric's status after the earlier windows: true = satisfied, false = not yet. Every rubric \
starts false.
- <window_content> holds this window's messages, numbered by round.

# Your task
- Update the rubric statuses from this window.
- Set false -> true only when the assistant achieves the rubric in this window.
- Set true -> false only when the assistant, in this window, undoes or contradicts what \
satisfied it. A change the user asked for (for example cancelling an order they no longer \
want) does not undo an earlier rubric.
- A rubric this window does not touch keeps its status and justification. Use the complete \
instruction to see where the conversation stands.
- In each justification, keep the earlier notes and append what this window adds, with round \
numbers, so later windows can build on it.

""" + _EN_COMMON_RULES + "\n" + _EN_REPLY_RUBRICS

_EN_FULL = """\
# Environment
{env_info}

# What the user wanted (complete instruction)
{user_instruction}

# Setting
- A user talks with an assistant that can call tools to look things up and to act. \
<trajectory_content> holds the whole conversation, numbered by round.
- The instruction has been split into rubrics (atomic checks), listed in <current_rubrics>, \
all false to start with.

# Your task
- Decide for every rubric whether the assistant achieved it in the conversation, and set it to \
true if so. Cite round numbers in each justification.

""" + _EN_COMMON_RULES + "\n" + _EN_REPLY_RUBRICS

_EN_REPLY_OVERALL = """\
# Reply format
Reply with one JSON object and nothing else:
```json
{{{memory_field}"justification": "<short reason, citing round numbers like [12]>", \
"meetExpectation": true}}
```
"""

_EN_SLIDING_NO_RUBRICS = """\
# Environment
{env_info}

# What the user wanted (complete instruction)
{user_instruction}

# Setting
- A user talks with an assistant that can call tools to look things up and to act. The \
conversation is long, so you see it in windows of {window_size} messages; consecutive windows \
share {overlap} messages. This is window {window_idx} of {total_windows}.
- <window_content> holds this window's messages, numbered by round. <memory> holds your notes \
from the earlier windows and <current_evaluation> your verdict so far (false at the start).

# Your task
- Decide whether the assistant has, by the end of this window, completed everything the \
instruction asks for. Break the instruction into its requirements yourself and track each.
- Turn the verdict false -> true only when this window and the earlier ones together complete \
the instruction; true -> false only when the assistant undoes what completed it (a change the \
user asked for does not count).
- Write a new memory: the old notes merged with what this window adds (which requirement, \
which round, what is still open), for the next window to use.

""" + _EN_COMMON_RULES + "\n" + _EN_REPLY_OVERALL.replace(
    "{memory_field}", '"memory": "<your updated notes>", ')

_EN_FULL_NO_RUBRICS = """\
# Environment
{env_info}

# What the user wanted (complete instruction)
{user_instruction}

# Setting
- A user talks with an assistant that can call tools to look things up and to act. \
<trajectory_content> holds the whole conversation, numbered by round.

# Your task
- Decide whether the assistant completed every requirement of the instruction. Break the \
instruction into its requirements yourself and check each; note the deciding rounds.

""" + _EN_COMMON_RULES + "\n" + _EN_REPLY_OVERALL.replace("{memory_field}", "")

_ZH_COMMON_RULES = """\
# 评判方法
- 评判对象是助手的行为：它对用户的回复和它发起的工具调用。用户的话只是对助手的引导，不改变得分点的要求。
- 工具结果（以 "tool" 开头的行）只有助手能看到；只有助手把信息告诉了用户才算告知。助手不得声称工具没有返回过的结果。
- 需要下单（或预订、修改、取消）的得分点，只有对应的工具调用真正成功才算满足。助手以为下单了但调用失败，或用户说自己下单，都算未满足。
- 得分点中的数量、商品和时间要严格满足：数量不能不同，送达或预订时间不能更晚，即使用户表示可以接受。
- 地址和订单备注按功能判断：表述可以不同或略去细节，只要起到同样作用（骑手能找到地点，商家能收到要求）。
"""

_ZH_REPLY_RUBRICS = """\
# 回复格式
只回复一个 JSON 数组，每个得分点一个对象，顺序与给出的相同：
```json
[
  {{"rubric_idx": "rubric_0", "rubric": "<复述得分点>", "justification": "<简要理由，引用轮次如 [12]>", \
"meetExpectation": true}}
]
```
"""

_ZH_SLIDING = """\
# 环境
{env_info}

# 用户的完整需求
{user_instruction}

# 场景
- 用户与一个可以调用工具查询和办事的助手对话。对话很长，因此分窗口给你看：每个窗口 {window_size} 条消息，相邻窗口重叠 {overlap} 条。这是第 {window_idx} 个窗口，共 {total_windows} 个。
- 用户需求已拆成若干得分点（原子检查项）。<current_rubrics> 给出之前窗口评完后每个得分点的状态：true 表示已满足，false 表示尚未满足；初始都为 false。
- <window_content> 是本窗口的消息，按轮次编号。

# 你的任务
- 根据本窗口更新得分点状态。
- 只有助手在本窗口中达成了某得分点，才把它从 false 改为 true。
- 只有助手在本窗口中推翻或撤销了之前使其满足的结果，才把 true 改回 false。用户自己提出的变更（例如取消不再需要的订单）不推翻之前的得分点。
- 本窗口未涉及的得分点保持原状态和理由。可参考完整需求判断对话进度。
- 每条理由保留之前的记录，并追加本窗口的新信息和轮次，供后续窗口使用。

""" + _ZH_COMMON_RULES + "\n" + _ZH_REPLY_RUBRICS

_ZH_FULL = """\
# 环境
{env_info}

# 用户的完整需求
{user_instruction}

# 场景
- 用户与一个可以调用工具查询和办事的助手对话。<trajectory_content> 是完整对话，按轮次编号。
- 用户需求已拆成若干得分点（原子检查项），列在 <current_rubrics> 中，初始都为 false。

# 你的任务
- 对每个得分点判断助手是否在对话中达成；达成则设为 true。理由中引用轮次。

""" + _ZH_COMMON_RULES + "\n" + _ZH_REPLY_RUBRICS

_ZH_REPLY_OVERALL = """\
# 回复格式
只回复一个 JSON 对象：
```json
{{{memory_field}"justification": "<简要理由，引用轮次如 [12]>", "meetExpectation": true}}
```
"""

_ZH_SLIDING_NO_RUBRICS = """\
# 环境
{env_info}

# 用户的完整需求
{user_instruction}

# 场景
- 用户与一个可以调用工具查询和办事的助手对话。对话很长，因此分窗口给你看：每个窗口 {window_size} 条消息，相邻窗口重叠 {overlap} 条。这是第 {window_idx} 个窗口，共 {total_windows} 个。
- <window_content> 是本窗口的消息，按轮次编号。<memory> 是你对之前窗口的记录，<current_evaluation> 是目前的结论（初始为 false）。

# 你的任务
- 判断到本窗口结束时，助手是否完成了需求中的全部内容。请自行把需求拆成子需求并逐一跟踪。
- 只有本窗口与之前窗口合起来完成了全部需求，才把结论从 false 改为 true；只有助手撤销了完成需求的结果，才从 true 改回 false（用户自己提出的变更不算）。
- 写出新的记忆：旧记录加上本窗口的新信息（哪个子需求、哪一轮、还缺什么），供下一窗口使用。

""" + _ZH_COMMON_RULES + "\n" + _ZH_REPLY_OVERALL.replace(
    "{memory_field}", '"memory": "<更新后的记录>", ')

_ZH_FULL_NO_RUBRICS = """\
# 环境
{env_info}

# 用户的完整需求
{user_instruction}

# 场景
- 用户与一个可以调用工具查询和办事的助手对话。<trajectory_content> 是完整对话，按轮次编号。

# 你的任务
- 判断助手是否完成了需求中的每一项。请自行把需求拆成子需求逐一检查，并注明关键轮次。

""" + _ZH_COMMON_RULES + "\n" + _ZH_REPLY_OVERALL.replace("{memory_field}", "")

OWN_JUDGE_TEMPLATES: dict[str, dict[str, str]] = {
    "sliding": {"en": _EN_SLIDING, "zh": _ZH_SLIDING},
    "full": {"en": _EN_FULL, "zh": _ZH_FULL},
    "sliding_no_rubrics": {"en": _EN_SLIDING_NO_RUBRICS, "zh": _ZH_SLIDING_NO_RUBRICS},
    "full_no_rubrics": {"en": _EN_FULL_NO_RUBRICS, "zh": _ZH_FULL_NO_RUBRICS},
}


def judge_system_prompt(method: str, lang: str, *, data_dir: str | Path | None,
                        fields: dict[str, Any]) -> tuple[str, str]:
    """(system prompt, source) for ``method``; source is ``"upstream"`` or ``"sweepbench"``."""
    if method not in OWN_JUDGE_TEMPLATES:
        raise ValueError(f"unknown judge method {method!r}; known: {', '.join(OWN_JUDGE_TEMPLATES)}")
    lang = lang if lang in _YAML_LANG else "en"
    upstream = upstream_template(JUDGE_TEMPLATE_NAMES[method], lang, data_dir)
    if upstream is not None:
        text = format_template(upstream, fields, JUDGE_TEMPLATE_NAMES[method])
        if text is not None:
            return text, "upstream"
    return OWN_JUDGE_TEMPLATES[method][lang].format(**fields), "sweepbench"


# ---- the judge's user message ---------------------------------------------------------------

_NUDGE = {
    "en": "Your reply could not be read as the JSON asked for. Reply again with only the JSON, "
          "in the format the instructions give.",
    "zh": "无法把你的回复解析为要求的 JSON。请重新回复，只输出指令要求格式的 JSON。",
}


def _json(value: Any) -> str:
    """Python's ``json.dumps(value, ensure_ascii=False, indent=2)``: upstream's exact bytes."""
    return json.dumps(value, ensure_ascii=False, indent=2)


def rubric_states_json(states: list[dict[str, Any]]) -> str:
    return _json(states)


def judge_user_prompt(method: str, *, content: str, rubrics: list[dict[str, Any]] | None = None,
                      memory: Any = "", evaluation: dict[str, Any] | None = None) -> str:
    """The judge's input for ``method``, as upstream's evaluator writes it (the full-trajectory
    methods keep the 4-space indentation of upstream's source on their own lines)."""
    if method == "sliding":
        return (f"\n# Input\n<window_content>\n{content}\n</window_content>\n\n"
                f"<current_rubrics>\n{_json(rubrics or [])}\n</current_rubrics>\n")
    if method == "full":
        return (f"\n    # Input\n    <trajectory_content>\n    {content}\n    "
                f"</trajectory_content>\n\n    <current_rubrics>\n    {_json(rubrics or [])}\n"
                f"    </current_rubrics>\n    ")
    if method == "sliding_no_rubrics":
        return (f"\n# Input\n<window_content>\n{content}\n</window_content>\n"
                f"<memory>\n{memory}\n</memory>\n"
                f"<current_evaluation>\n{_json(evaluation or {})}\n</current_evaluation>\n")
    if method == "full_no_rubrics":
        return f"\n    # Input\n    <trajectory_content>\n    {content}\n    </trajectory_content>\n    "
    raise ValueError(f"unknown judge method {method!r}; known: {', '.join(OWN_JUDGE_TEMPLATES)}")


def retry_nudge(lang: str) -> str:
    """The message appended after an unreadable reply before asking again."""
    return _NUDGE.get(lang, _NUDGE["en"])
