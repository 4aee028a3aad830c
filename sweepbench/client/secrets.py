"""Every configured API key (and proxy password), found and removed from text in any form a
server may echo it in.

Servers echo keys back: whole, cut short by their own truncation (or ours), split across
lines, upper- or lower-cased, base64-encoded (a Basic auth header, a debug dump). One
:class:`KeyRing` knows the environment variables of every endpoint a client was made for in
this process (:data:`KEYS`), reads their values from the environment on each use (the
pieces it matches are kept in this process's memory only, rebuilt when a value changes, never
written anywhere), and matches each key as any run of at least ``MIN_RUN`` of its
characters, case-insensitive, with whitespace (or escaped newlines) between them, and the same
for its base64 and urlsafe-base64 encodings at each of the three byte alignments.

:meth:`KeyRing.scrub` replaces every match with ``[redacted]``; it must run *before* text is
cut, so that no cut leaves a recognisable piece behind. :meth:`KeyRing.leaks` tells whether
text holds a key at all (a 200 reply that does is refused by the client).
"""

from __future__ import annotations

import base64
import os
import re
import struct
import sys
import threading
from urllib.parse import unquote

__all__ = ["KEYS", "MIN_RUN", "REDACTED", "KeyRing"]

MIN_RUN = 8
"""Shortest run of a key's characters that counts as the key (shorter runs are too common)."""
REDACTED = "[redacted]"
_QUAD = MIN_RUN // 2  # see KeyRing.leaks
# a character, after any whitespace or escaped line break (which may split a key)
_CHAR = re.compile(r"(?:\s|\\[nrt])*(.)", re.S)
# the text cut into consecutive _QUAD-character pieces, in C (see KeyRing.leaks)
_PIECES = re.compile("." * _QUAD, re.S)
# ... or, for ASCII keys, read as 4-byte words of the ASCII text (non-ASCII as "?")
_WORD = "I" if _QUAD == 4 and struct.calcsize("I") == 4 else None


def _squeeze(text: str) -> str:
    """``text`` lower-cased without whitespace and escaped line breaks (as :data:`_CHAR`)."""
    text = "".join(text.split()).lower()
    if "\\" in text:
        text = text.replace("\\n", "").replace("\\r", "").replace("\\t", "")
    return text


def _encodings(key: str) -> list[str]:
    """The key, and the part of its base64 (and urlsafe base64) that depends on the key alone,
    for the key starting at each byte alignment of an encoded text."""
    raw = key.encode()
    out = [key]
    for pad in range(3):
        enc = base64.b64encode(b"\0" * pad + raw).decode().rstrip("=")
        # characters mixing pad bytes in (first) or missing trailing bytes (last) are dropped
        inner = enc[(pad * 8 + 5) // 6: len(enc) - (1 if len(enc) % 4 else 0)]
        for variant in (inner, inner.replace("+", "-").replace("/", "_")):
            if len(variant) >= MIN_RUN and variant not in out:
                out.append(variant)
    return out


class KeyRing:
    """The API keys of every registered environment variable (see the module docstring)."""

    def __init__(self) -> None:
        self._names: tuple[str, ...] = ()  # replaced whole, so readers need no lock
        self._url_names: tuple[str, ...] = ()  # variables holding a URL with a password
        self._lock = threading.Lock()
        self._cached: tuple[tuple[str, ...], frozenset[str], frozenset[str],
                            frozenset[int] | None] = ((), frozenset(), frozenset(), None)

    def register(self, env_name: str | None) -> None:
        """Know the key held by ``env_name`` (an endpoint's ``api_key_env``) from now on."""
        if env_name:
            with self._lock:
                if env_name not in self._names:
                    self._names = tuple(sorted((*self._names, env_name)))

    def register_url_password(self, env_name: str) -> None:
        """Know the password in the URL ``env_name`` holds (a proxy's ``user:password@``) from
        now on: the password is the secret, not the rest of the URL."""
        with self._lock:
            if env_name not in self._url_names:
                self._url_names = tuple(sorted((*self._url_names, env_name)))

    def _values(self) -> set[str]:
        environ = os.environ
        values = {environ.get(n) or "" for n in self._names}
        for n in self._url_names:
            value = environ.get(n) or ""
            if "@" in value:  # [scheme://]user:password@host
                userinfo = value.split("://", 1)[-1].rpartition("@")[0]
                values.add(unquote(userinfo.partition(":")[2]))
        return values

    def _grams(self) -> tuple[frozenset[str], frozenset[str], frozenset[int] | None]:
        """Every MIN_RUN-character piece of every form of every key, lower-cased, every
        quarter-length piece (the quick first test), and those as 4-byte words when every
        form is ASCII (else None)."""
        keys = tuple(sorted(v for v in self._values() if len(v) >= MIN_RUN))
        cached_keys, grams, quads, words = self._cached
        if keys != cached_keys:
            forms = [form.lower() for key in keys for form in _encodings(key)]
            grams = frozenset(f[i:i + MIN_RUN] for f in forms
                              for i in range(len(f) - MIN_RUN + 1))
            quads = frozenset(f[i:i + _QUAD] for f in forms for i in range(len(f) - _QUAD + 1))
            words = (frozenset(int.from_bytes(q.encode(), sys.byteorder) for q in quads)
                     if _WORD and all(f.isascii() for f in forms) else None)
            self._cached = (keys, grams, quads, words)
        return grams, quads, words

    @property
    def active(self) -> bool:
        """Whether any registered variable holds a key now."""
        return bool(self._grams()[0])

    def leaks(self, *texts: str | None) -> bool:
        """Whether any of ``texts`` holds any form of any key.

        Any run of MIN_RUN characters covers a ``_QUAD``-piece starting at a multiple of
        ``_QUAD``: only those are looked up (all at once: a text none of whose pieces is in
        the set holds no key), and a hit is confirmed by the MIN_RUN pieces around it."""
        grams, quads, words = self._grams()
        if not grams:
            return False
        for text in texts:
            if not text or len(text) < MIN_RUN:
                continue
            squeezed = _squeeze(text)
            if words is not None:  # an ASCII key's piece is the same 4 bytes in the text
                raw = squeezed.encode("ascii", "replace")
                clear = words.isdisjoint(memoryview(raw)[:len(raw) & ~3].cast(_WORD))
            else:
                clear = quads.isdisjoint(_PIECES.findall(squeezed))
            if clear:  # the usual answer, found in C
                continue
            for q in range(0, len(squeezed) - _QUAD + 1, _QUAD):
                if squeezed[q:q + _QUAD] in quads and any(
                        squeezed[s:s + MIN_RUN] in grams
                        for s in range(max(0, q - MIN_RUN + _QUAD), q + 1)):
                    return True
        return False

    def scrub(self, text: str) -> str:
        """``text`` with every form of every key replaced by ``[redacted]`` (the whitespace
        inside a split key goes with it)."""
        if not self.leaks(text):
            return text
        # the text without separators, and where each of its characters came from
        kept = [m.start(1) for m in _CHAR.finditer(text)]
        squeezed = "".join(text[i] for i in kept).lower()
        covered = bytearray(len(squeezed))
        for g in self._grams()[0]:
            at = squeezed.find(g)
            while at >= 0:
                covered[at:at + MIN_RUN] = b"\1" * MIN_RUN
                at = squeezed.find(g, at + 1)
        out, last, i = [], 0, 0
        while i < len(covered):
            if not covered[i]:
                i += 1
                continue
            j = i
            while j < len(covered) and covered[j]:
                j += 1
            start, end = kept[i], kept[j - 1] + 1
            out += [text[last:start], REDACTED]
            last, i = end, j
        out.append(text[last:])
        return "".join(out)


KEYS = KeyRing()
"""The process's key ring: every ModelClient registers its endpoint's key variable."""
