"""Untrusted text made safe for the terminal: control characters written as their escapes,
never obeyed; rich markup never parsed; JSON text with the characters json.dumps leaves raw
escaped."""

from __future__ import annotations

import json

from rich.console import Console
from rich.text import Text

from sweepbench.results.text import json_text, literal, visible

# every character that must be escaped: C0 but tab and newline, DEL and C1, the bidi marks,
# embeddings, overrides and isolates
CONTROLS = ([chr(c) for c in range(0x00, 0x20) if c not in (0x09, 0x0A)]
            + [chr(c) for c in range(0x7F, 0xA0)]
            + ["\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)),
               *map(chr, range(0x2066, 0x206A))])
# their neighbours, which are printed as they are
KEPT = [" ", "~", "\xa0", "é", "\u200d", "\u2010", "\u2029", "\u2065", "\u206a", "中", "\U0001f600"]


def test_visible_escapes_each_control_character_by_its_code():
    for ch in CONTROLS:
        code = ord(ch)
        want = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
        assert visible(f"a{ch}b") == f"a{want}b", hex(code)
    assert visible("\x1b[2J\x07") == "\\x1b[2J\\x07"
    assert visible("\x00") == "\\x00" and visible("\x9f") == "\\x9f"
    assert visible("\u202e") == "\\u202e" and visible("\u2069") == "\\u2069"


def test_visible_keeps_printable_text_tab_and_newline_unless_one_line():
    for ch in KEPT:
        assert visible(f"a{ch}b") == f"a{ch}b", hex(ord(ch))
        assert visible(f"a{ch}b", one_line=True) == f"a{ch}b", hex(ord(ch))
    assert visible("a\tb\nc") == "a\tb\nc"
    assert visible("a\tb\nc", one_line=True) == "a\\x09b\\x0ac"
    for ch in CONTROLS:  # one line escapes everything the default does
        assert visible(ch, one_line=True) == visible(ch)
    assert visible(12) == "12" and visible(None) == "None"
    assert visible("[red]x[/red]") == "[red]x[/red]"


def test_literal_is_the_visible_text_never_parsed_as_markup():
    text = literal("[bold]a\x1b[0m\nb", "red")
    assert isinstance(text, Text)
    assert text.plain == "[bold]a\\x1b[0m\nb"
    assert str(text.style) == "red" and not text.spans
    assert literal("a\nb", one_line=True).plain == "a\\x0ab"
    assert literal("a\nb").plain == "a\nb"
    assert str(literal("x").style) == ""
    built = Text("already")
    assert literal(built, "red", one_line=True) is built
    console = Console(file=__import__("io").StringIO(), width=80, color_system=None)
    console.print(literal("[link=http://x]y[/link] \x07"))
    assert console.file.getvalue() == "[link=http://x]y[/link] \\x07\n"


def test_json_text_escapes_what_json_dumps_leaves_raw_and_is_the_same_json():
    raw = ["\x7f", "\x85", "\x9f", "\u200e", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069",
           "\u2028", "\u2029"]
    for ch in raw:
        dumped = json.dumps({"k": f"a{ch}b"}, ensure_ascii=False)
        safe = json_text(dumped)
        assert safe == '{"k": "a\\u%04xb"}' % ord(ch)
        assert json.loads(safe) == {"k": f"a{ch}b"}
    for ch in ["\x7e", "\xa0", "\u200d", "\u202f", "\u2065", "\u206a", "é", "中"]:
        dumped = json.dumps(f"a{ch}b", ensure_ascii=False)
        assert json_text(dumped) == dumped
    assert json_text('"\\u001b"') == '"\\u001b"'  # C0 already escaped by json.dumps
