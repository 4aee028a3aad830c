"""Reading a judge model's verdicts out of whatever text it sent back.

Judge output is untrusted model output. Real judges wrap their JSON in code fences, think out
loud before it, leave trailing commas, use single quotes or Python literals, and get cut off at
``max_tokens`` mid-object. This module turns such text into verdicts, or says it cannot:

- :func:`extract_json` finds the JSON value in a reply: fenced blocks first, then every ``[`` or
  ``{`` in turn, each read strictly and then leniently (:func:`loads_lenient`).
- :func:`loads_lenient` is a forgiving JSON reader: single-quoted strings, bare keys, trailing
  or missing commas, comments, ``True``/``False``/``None``, and truncated input (open strings,
  arrays and objects are closed at the end; a key left without a value is dropped).
- :func:`parse_rubric_verdicts` maps a reply to verdicts per rubric. Entries are matched to
  rubrics by key (``rubric_idx`` as in the upstream evaluator, ``rubric_key`` as in the paper's
  appendix, or a bare index), else by rubric text (fuzzy), else by position when the reply has
  one entry per rubric. The upstream field names ``rubrics``/``reasoning``/``meetExpectation``
  (VitaBench's ``extract_json_fields``) are read too. When no structure can be read at all, a
  last-resort scan pairs each ``"meetExpectation": true|false`` with the nearest preceding key.
- :func:`parse_overall_verdict` reads the single verdict of the no-rubric variants.

Nothing here raises on bad model output: a reply that cannot be read gives an empty result.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson
from msgspec import Struct
from rapidfuzz import fuzz

from sweepbench.model_json import deeper_than

__all__ = [
    "OverallVerdict",
    "Verdict",
    "extract_json",
    "loads_lenient",
    "parse_overall_verdict",
    "parse_rubric_verdicts",
]

_MAX_STARTS = 64  # candidate start positions tried per reply
_FUZZY_MIN = 90  # rapidfuzz ratio for matching a restated rubric to its text


class Verdict(Struct):
    """One rubric's verdict from one judge reply; ``met`` None when the reply gave no boolean."""

    met: bool | None
    reasoning: str = ""


class OverallVerdict(Struct):
    """The single verdict of a no-rubric judge reply, with its carried memory (sliding)."""

    met: bool
    reasoning: str = ""
    memory: str | None = None


# ---- lenient JSON ---------------------------------------------------------------------------


class LenientJSONError(ValueError):
    """No JSON value could be read where one was expected."""


_LITERALS = {"true": True, "false": False, "null": None, "True": True, "False": False,
             "None": None}
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_BARE = re.compile(r"[A-Za-z_$][\w$\-]*")
_ESCAPES = {'"': '"', "'": "'", "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n",
            "r": "\r", "t": "\t"}
_QUOTES = {'"': '"', "'": "'", "\u201c": "\u201d"}
_MAX_DEPTH = 64


class _Reader:
    """Recursive descent over ``text``; at the end of input every open value is closed
    (``eof`` set) and the containers above it return what they hold."""

    def __init__(self, text: str, pos: int) -> None:
        self.s = text
        self.i = pos
        self.n = len(text)
        self.eof = False
        self.depth = 0

    def skip(self) -> None:
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c.isspace():
                self.i += 1
            elif s.startswith("//", self.i):
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end + 1
            elif s.startswith("/*", self.i):
                end = s.find("*/", self.i + 2)
                self.i = n if end < 0 else end + 2
            else:
                return
        self.eof = True

    def value(self) -> Any:
        self.skip()
        if self.eof:
            raise LenientJSONError("input ended where a value belongs")
        c = self.s[self.i]
        if c in "{[":
            if self.depth >= _MAX_DEPTH:
                raise LenientJSONError("nested too deeply")
            self.depth += 1
            try:
                return self.obj() if c == "{" else self.arr()
            finally:
                self.depth -= 1
        if c in _QUOTES:
            return self.string()
        m = _NUMBER.match(self.s, self.i)
        if m:
            self.i = m.end()
            text = m.group()
            return int(text) if text.lstrip("-").isdigit() else float(text)
        m = _BARE.match(self.s, self.i)
        if m:  # a literal, or a bare word where a value belongs (kept as text)
            self.i = m.end()
            self.eof = self.i >= self.n
            return _LITERALS.get(m.group(), m.group())
        raise LenientJSONError(f"unexpected {c!r} at offset {self.i}")

    def string(self) -> str:
        close = _QUOTES[self.s[self.i]]
        self.i += 1
        out: list[str] = []
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c == close:
                self.i += 1
                return _whole("".join(out))
            if c == "\\" and self.i + 1 < n:
                e = s[self.i + 1]
                hex4 = s[self.i + 2:self.i + 6]
                if e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", hex4):
                    out.append(chr(int(hex4, 16)))
                    self.i += 6
                    continue
                out.append(_ESCAPES.get(e, e))
                self.i += 2
                continue
            out.append(c)
            self.i += 1
        self.eof = True  # an unterminated string: keep what was said
        return _whole("".join(out))

    def key(self) -> str | None:
        c = self.s[self.i]
        if c in _QUOTES:
            k = self.string()
            return None if self.eof else k
        m = _BARE.match(self.s, self.i) or _NUMBER.match(self.s, self.i)
        if not m:
            raise LenientJSONError(f"expected a key at offset {self.i}, got {c!r}")
        self.i = m.end()
        return m.group()

    def obj(self) -> dict[str, Any]:
        self.i += 1
        out: dict[str, Any] = {}
        while True:
            self.skip()
            if self.eof:
                return out
            c = self.s[self.i]
            if c == "}":
                self.i += 1
                return out
            if c in ",;":
                self.i += 1
                continue
            k = self.key()
            self.skip()
            if k is None or self.eof:
                return out  # a key cut off, or one without a value: dropped
            if self.s[self.i] not in ":=":
                raise LenientJSONError(f"expected ':' after key {k!r} at offset {self.i}")
            self.i += 1
            self.skip()
            if self.eof:
                return out
            out[k] = self.value()
            if self.eof:
                return out

    def arr(self) -> list[Any]:
        self.i += 1
        out: list[Any] = []
        while True:
            self.skip()
            if self.eof:
                return out
            c = self.s[self.i]
            if c == "]":
                self.i += 1
                return out
            if c == ",":
                self.i += 1
                continue
            out.append(self.value())
            if self.eof:
                return out


_SURROGATE = re.compile("[\ud800-\udfff]")


def _whole(text: str) -> str:
    """``text`` with escaped surrogate pairs joined (``\\ud83d\\ude00`` is one emoji) and a
    lone surrogate, which no UTF-8 output can hold, replaced by U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def loads_lenient(text: str, start: int = 0) -> Any:
    """The JSON value starting at ``text[start]``, read forgivingly; ValueError if none."""
    return _Reader(text, start).value()


# ---- finding the JSON in a reply -----------------------------------------------------------

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*(?:json5?|JSON|javascript|js)?[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)


def _candidates(text: str) -> list[str]:
    text = _THINK.sub("", text) if "</think>" in text.lower() else text
    fenced = [m.group(1) for m in _FENCE.finditer(text) if m.group(1).strip()]
    return fenced + [text]


def extract_json(text: str | None, accept: Callable[[Any], bool] | None = None) -> Any:
    """The first JSON value in ``text`` that ``accept`` likes (default: any list or dict)."""
    if not text:
        return None
    ok = accept or (lambda v: isinstance(v, (list, dict)))
    for cand in _candidates(text):
        stripped = cand.strip()
        try:  # orjson reads 1,024 levels and writes 255: deeper is left to the lenient reader
            value = None if deeper_than(stripped, _MAX_DEPTH) else orjson.loads(stripped)
        except orjson.JSONDecodeError:
            pass
        else:
            if value is not None and ok(value):
                return value
        starts = [m.start() for m in re.finditer(r"[\[{]", cand)][:_MAX_STARTS]
        for start in starts:
            try:
                value = loads_lenient(cand, start)
            except ValueError:
                continue
            if ok(value):
                return value
    return None


# ---- field access -------------------------------------------------------------------------

_KEY_FIELDS = ("rubric_idx", "rubric_key", "rubric_id", "rubricIdx", "rubricKey", "key", "id",
               "idx", "index")
_TEXT_FIELDS = ("rubric", "rubrics", "criterion", "criteria", "description", "name")
_REASON_FIELDS = ("justification", "reasoning", "reason", "explanation", "rationale", "analysis")
_MET_FIELDS = ("meetExpectation", "meet_expectation", "meetsExpectation", "met", "satisfied",
               "passed", "pass", "status", "result", "value")
_LIST_FIELDS = ("rubrics", "results", "evaluations", "rubric_states", "current_rubrics", "items",
                "verdicts", "scores")

_TRUE = {"true", "yes", "y", "1", "met", "pass", "passed", "satisfied", "满足", "是", "已满足"}
_FALSE = {"false", "no", "n", "0", "not met", "unmet", "fail", "failed", "not satisfied",
          "unsatisfied", "不满足", "否", "未满足"}


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        v = value.strip().strip(".").casefold()
        if v in _TRUE:
            return True
        if v in _FALSE:
            return False
    return None


def _first(entry: dict[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        if name in entry:
            return entry[name]
    lowered = {k.casefold(): v for k, v in entry.items() if isinstance(k, str)}
    for name in names:
        if name.casefold() in lowered:
            return lowered[name.casefold()]
    return None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


# ---- rubric verdicts -----------------------------------------------------------------------


def _entries(data: Any) -> list[tuple[str | None, dict[str, Any]]]:
    """(key from a mapping, entry) pairs from the shapes judges produce."""
    if isinstance(data, list):
        return [(None, e) for e in data if isinstance(e, dict)]
    if not isinstance(data, dict):
        return []
    for name in _LIST_FIELDS:
        inner = data.get(name)
        if isinstance(inner, list) and any(isinstance(e, dict) for e in inner):
            return _entries(inner)
    if _first(data, _MET_FIELDS) is not None and not any(isinstance(v, dict) for v in data.values()):
        return [(None, data)]  # a single entry
    out: list[tuple[str | None, dict[str, Any]]] = []
    for k, v in data.items():  # {"rubric_0": {...}} or {"rubric_0": true}
        if isinstance(v, dict):
            out.append((str(k), v))
        elif _bool(v) is not None:
            out.append((str(k), {"meetExpectation": v}))
    return out


def _looks_like_verdicts(data: Any) -> bool:
    return any(_first(e, _MET_FIELDS) is not None for _, e in _entries(data))


def _key_index(key: Any, keys: list[str]) -> int | None:
    if key is None or isinstance(key, bool):
        return None
    if isinstance(key, (int, float)):
        i = int(key)
        return i if 0 <= i < len(keys) else None
    text = str(key).strip()
    if text in keys:
        return keys.index(text)
    m = re.fullmatch(r"(?:[A-Za-z_ ]*?[_ ])?(\d+)", text)
    if m:
        i = int(m.group(1))
        return i if 0 <= i < len(keys) else None
    return None


def _text_index(text: str, rubrics: list[str]) -> int | None:
    if not text.strip():
        return None
    folded = _fold(text)
    exact = [i for i, r in enumerate(rubrics) if _fold(r) == folded]
    if exact:
        return exact[0]
    scores = [fuzz.ratio(folded, _fold(r)) for r in rubrics]
    best = max(range(len(rubrics)), key=scores.__getitem__, default=None)
    if best is not None and scores[best] >= _FUZZY_MIN and scores.count(scores[best]) == 1:
        return best
    return None


def parse_rubric_verdicts(text: str | None, keys: list[str],
                          rubrics: list[str]) -> dict[int, Verdict]:
    """Verdicts by rubric position from a judge reply; empty when nothing could be read.

    ``keys`` are the identifiers the prompt showed (``rubric_0`` ...), ``rubrics`` the texts,
    in the same order. A rubric the reply does not mention is absent from the result.
    """
    if len(keys) != len(rubrics):
        raise ValueError("keys and rubrics must have the same length")
    data = extract_json(text, _looks_like_verdicts)
    if data is None:
        return _scan_fields(text or "", keys, rubrics)
    entries = _entries(data)
    out: dict[int, Verdict] = {}
    unplaced: list[tuple[int, Verdict]] = []
    for pos, (outer_key, entry) in enumerate(entries):
        verdict = Verdict(_bool(_first(entry, _MET_FIELDS)), _text(_first(entry, _REASON_FIELDS)))
        index = _key_index(_first(entry, _KEY_FIELDS), keys)
        if index is None and outer_key is not None:
            index = _key_index(outer_key, keys)
            if index is None:
                index = _text_index(outer_key, rubrics)
        if index is None:
            index = _text_index(_text(_first(entry, _TEXT_FIELDS)), rubrics)
        if index is None:
            unplaced.append((pos, verdict))
        elif index not in out:
            out[index] = verdict
    if unplaced and len(entries) == len(rubrics):
        for pos, verdict in unplaced:
            out.setdefault(pos, verdict)
    return out


_FIELD_SCAN = re.compile(
    r"""["']?(?P<name>rubric_idx|rubric_key|rubrics|rubric|justification|reasoning|meetExpectation)"""
    r"""["']?\s*:\s*(?:"(?P<dq>(?:[^"\\]|\\.)*)"|'(?P<sq>(?:[^'\\]|\\.)*)'|(?P<bare>[\w.\-]+))""",
    re.DOTALL,
)


def _scan_fields(text: str, keys: list[str], rubrics: list[str]) -> dict[int, Verdict]:
    """Last resort: pair each meetExpectation with the key/text/reasoning seen since the last."""
    out: dict[int, Verdict] = {}
    seen: dict[str, str] = {}
    order = 0
    for m in _FIELD_SCAN.finditer(text):
        value = next(v for v in (m.group("dq"), m.group("sq"), m.group("bare")) if v is not None)
        name = m.group("name")
        if name != "meetExpectation":
            seen[name] = value
            continue
        met = _bool(value)
        index = _key_index(seen.get("rubric_idx") or seen.get("rubric_key"), keys)
        if index is None:
            index = _text_index(seen.get("rubric") or seen.get("rubrics") or "", rubrics)
        if index is None and order < len(keys):
            index = order
        reasoning = seen.get("justification") or seen.get("reasoning") or ""
        if index is not None and met is not None and index not in out:
            out[index] = Verdict(met, reasoning)
        seen = {}
        order += 1
    return out


# ---- overall verdict ------------------------------------------------------------------------


def _overall_entry(data: Any) -> dict[str, Any] | None:
    if isinstance(data, list):
        data = next((e for e in data if isinstance(e, dict)), None)
    if isinstance(data, dict) and _bool(_first(data, _MET_FIELDS)) is not None:
        return data
    return None


def parse_overall_verdict(text: str | None) -> OverallVerdict | None:
    """The one verdict of a no-rubric reply (``meetExpectation``, ``justification``, ``memory``)."""
    data = extract_json(text, lambda v: _overall_entry(v) is not None)
    entry = _overall_entry(data)
    if entry is None:
        found = _scan_fields(text or "", ["overall"], ["overall"])
        if 0 not in found or found[0].met is None:
            return None
        return OverallVerdict(bool(found[0].met), found[0].reasoning)
    memory = entry.get("memory")
    return OverallVerdict(
        bool(_bool(_first(entry, _MET_FIELDS))),
        _text(_first(entry, _REASON_FIELDS)),
        None if memory is None else _text(memory),
    )
