"""Text from users, task files and servers, made safe for the terminal.

Names (endpoints, models, task ids), task instructions and error messages are untrusted:
rich would read ``[/red]`` as markup (and crash on it), ``[link=...]`` as a hyperlink and
``[redacted]`` as an unknown style printed as nothing; an escape sequence (``\\x1b[2J``
clears the screen) or another control character would reach the terminal raw. Everything
that prints such a string goes through :func:`literal` (a ``rich.text.Text``, never parsed
as markup) or :func:`visible`, which writes control characters as their Python escape
(``\\x1b``, ``\\x07``, ``\\x9b``) so they are seen, not obeyed.
"""

from __future__ import annotations

import re
from typing import Any

from rich.text import Text

__all__ = ["CONTROL", "json_text", "literal", "visible"]

INVISIBLE = "\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
"""The bidirectional marks, overrides and isolates that reorder what a line seems to say
("Trojan Source"), and the zero-width characters that hide in it (joiners that shape
scripts and emoji, U+200C and U+200D, stay)."""
CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f" + INVISIBLE
"""What is shown as an escape: C0 controls but tab and newline, DEL, C1 controls and the
invisible characters above; the viewer's page shows the same (``view/static/dom.js``)."""
_CONTROL = re.compile(f"[{CONTROL}]")
_CONTROL_ONE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{INVISIBLE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: Any, *, one_line: bool = False) -> str:
    """``text`` with every control character written as its escape (``\\x1b``); tab and
    newline stay unless ``one_line`` (then they are escaped too)."""
    pattern = _CONTROL_ONE_LINE if one_line else _CONTROL
    return pattern.sub(_escape, str(text))


def literal(text: Any, style: str = "", *, one_line: bool = False) -> Text:
    """``text`` as a rich ``Text``: printed exactly as written, control characters visible."""
    if isinstance(text, Text):
        return text  # built by a caller from literal parts
    return Text(visible(text, one_line=one_line), style=style)


# what json.dumps(..., ensure_ascii=False) leaves raw (it escapes C0 controls itself)
_JSON_RAW = re.compile(f"[\x7f-\x9f{INVISIBLE}\u2028\u2029]")


def json_text(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with the control characters
    it leaves raw written as ``\\uXXXX`` escapes: the same JSON value, safe on a terminal."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
