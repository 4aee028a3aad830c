"""Mutation runs of modules: mutmut's mutants, the survivors' diffs, a kill rate that leaves
out the survivors judged equivalent.

    pip install -e '.[dev,mutation]'
    python scripts/mutate.py sweepbench/results/stats.py            # one module
    python scripts/mutate.py 'sweepbench/judge/*' sweepbench/runner/budget.py
    python scripts/mutate.py --part 2/4 --fresh --report benchmarks/mutation.md

The modules must be in ``[tool.mutmut] only_mutate`` of pyproject.toml (paths or globs over
that list; none given: all of it) and their tests in ``pytest_add_cli_args_test_selection``
(mutmut runs, for each mutant, only the tests there that reach the mutated function).
``--part K/N`` runs every N-th module of the selection from the K-th, so N CI jobs cover the
room once. One mutmut run covers the modules of an invocation. mutmut keeps its work in
``mutants/`` (git-ignored) and reuses it; ``--fresh`` deletes it first (needed after a config
change). For each module, prints each surviving mutant's diff, then one JSON line: counts and
``kill_rate`` = killed / (mutants - equivalent). ``--report FILE`` writes the counts as rows
of a markdown table (module, mutants, killed, equivalent, survived, kill rate, date, commit),
replacing those modules' rows and keeping the others (``benchmarks/mutation.md``).

``EQUIVALENT`` lists the survivors judged equivalent (no input of the module's contract can
tell them apart), as the exact source line before and after the mutation, with the reason.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import shutil
import subprocess
import sys
import tomllib
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# module -> [(line before, line after, why no test can tell them apart)], lines stripped
_DTYPE = "numpy gives the same numbers without the dtype/count hint (ints become floats where " \
         "they are divided)"
_TAG = "the kind tags only need to differ from each other"
_SIZE = "one slot more than the algorithm ever reads"
_TIE = "breaks ties between pairings of equal weight, which give equal metrics"


def _tags() -> list[tuple[str, str, str]]:
    lines = {"s": 'return ("{}", " ".join(v.split()).casefold())', "b": 'return ("{}", v)',
             "n": 'return ("{}", float(v))', "l": 'return ("{}", tuple(_norm(x) for x in v))',
             "d": 'return ("{}", tuple(sorted((str(k), _norm(x)) for k, x in v.items())))',
             "r": 'return ("{}", repr(v))'}
    return [(line.format(t), line.format(m), _TAG)
            for t, line in lines.items() for m in (f"XX{t}XX", t.upper())]


_UV = "u, v, row_of, way = [0.0] * (n + 1), [0.0] * (m + 1), [0] * (m + 1), [0] * (m + 1)"
_MU = "minv, used = [inf] * (m + 1), [False] * (m + 1)"
_COST = "cur = -w[i0 - 1][j - 1] - u[i0] - v[j]"
_W = "w = [[(len(g & p) * scale - len(p - g)) * levels + (g == p) for p in pred] for g in gold]"
_SL = "scale, levels = 1 + sum(len(p) for p in pred), 1 + len(gold)"
_SHOP = "shop=None is falsy like shop=False: the shop is not compared either way"
_TOOLS_HASH = "self._tools = (key, hashlib.blake2b(encoder.encode(req.tools), digest_size=16).digest())"
_SAME_CODE = ("changes every digest alike in the recording and the resuming run (journals are only "
              "compared with digests of the same code; other code is a mismatch by design)")
_JUDGMENT = "result = RubricJudgment(method=method, passed=False, score=0.0, template=prompts.source,"
_SET_LATER = "every path sets passed and score before returning"
_TRUTH = "only ever read as a truth value, where None is False"
_UNREAD = "_unpaused's return value is never read (a permit measures its own wait)"
_SPLICER = 'splicer = getattr(complete, "encoder", None)  # a client Conversation\'s'
_PASS_SPLICER = "splicer if isinstance(splicer, SplicingEncoder) else None)"
_NO_SPLICER = ("hashes the request without the body splicer's encoded bytes: the same digest "
               "(tests/runner/test_journal_payload.py checks both paths agree), only more CPU")
_THINK_IF = 'text = _THINK.sub("", text) if "</think>" in text.lower() else text'
_DUMPS = "return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()"
_NO_FIELDS = "no field can be read from XXXX, as from no text"
_EOF = ("eof only left unset at the end of input: the container's next skip() sets it (and drops "
        "a key cut off), and a value read alone is returned as it is")
_JOINED = ("the finalizer joining one thread joins both: the checkpointer ends only once the "
           "writer has committed the last batch, and the writer joins the checkpointer")
_NO_BLANK_STATEMENT = ("no piece of the split is blank (the last statement has no ';' after it), "
                      "so both filters keep the same statements")
_TRIGGER_TIME = ("_call_facts('NEW') runs once, at import, to build the triggers: mutmut's "
                 "forked runs keep the original triggers, and the runtime call (the migration's "
                 "backfill) takes the other branch. tests/store/test_schema.py checks the "
                 "trigger's rows by hand and against the backfill's")
_SQL_CASE = ("SQLite reads keywords, pragma names and values, and the names of tables, columns, "
             "aliases and attached databases without regard to case")


_MERGE_RANK = "OR {_RANK.format('s', 'src')} < {_RANK.format('m', 'main')}\"\"\")"


def _sql_case(line: str, literal: str) -> list[tuple[str, str, str]]:
    """``line`` with its SQL string ``literal`` in lower and in upper case (those that differ)."""
    return [(line, line.replace(literal, case(literal)), _SQL_CASE)
            for case in (str.lower, str.upper) if case(literal) != literal]


_PLACE = "place = np.array([names.index(b) for b in codes.benches], dtype=np.int64)"
_RARE_MASK = "is_rare = np.zeros(len(cols), dtype=bool)  # (a mask, not np.isin: no sort of the calls)"
_FAMILY = 'return (fam, head if fam == len(_FIRST) else "",'
_PRICED = "return any(getattr(endpoint, name, 0.0) for name in ("
_SEEN_AT = "a flight exactly on the boundary on the loop's clock is acted on at the next check, a " \
           "quarter budget later at most; no test can hold the loop's clock on it"
_UTF8_CASE = "codec names ignore case: 'UTF-8' is 'utf-8'"
_LEAKS = 'return KEYS.leaks(payload.decode("utf-8", "replace"), msg.content, msg.reasoning,'
_BODY_READ = ("echoes_key is only called by read_reply, on a body decode_reply has read, and msgspec "
              "refuses a body that is not UTF-8 (a ShapeError first): the error handler is never "
              "called, so any handler, or none, decodes it alike")
_FALLBACK = 'text = shown = payload[:SCRUB_WINDOW].decode("utf-8", "replace").strip()'
_START = 'start = repr(scrub(payload[:SCRUB_WINDOW].decode("utf-8", "replace"))[:80])'


_STATUS_LINE = r'words = bytes(reply.head).split(b"\r\n", 1)[0].split(b" ", 2)'
_NOT_REDIRECTS = ("300 and 400 are no redirect redirect_target follows (it answers None for "
                  "them, as for any status outside 301-308): the same reply either way")
_HTTPX_CASE = "httpx's Headers find, set and delete names without regard to case (the SDK's too)"
_CASELESS = "ReplyHeaders looks names up lower-cased (get, [] and in)"
_CONTINUED = 'self._headers[self._name] += value.decode("latin-1")'
_HOST = 'host = (urlsplit(getattr(endpoint, "base_url", "") or "").hostname or "").lower()'
_BACKUPS = 'self._backups: int = getattr(endpoint, "backups", 0) if self.stalls.hedging else 0'
_KIND = 'kind = getattr(endpoint, "transport", "http") or "http"'
_RECORDED = 'self.recorded[e["payload"].get("request_hash", "")].append(e["payload"])'
_ESCAPE = r'return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"'


_EXPORT_SLOT = "one slot more at the end of a lookup list, never read (no id or index reaches it)"
_EXPORT_FLOATS = ("every row holds a float (ts is a REAL column, latency a REAL or -inf), so "
                  "numpy makes a float64 array without the hint, and an empty one is float64")
_EXPORT_OWN = ("every benchmark of the view has a headline source (plan_tables makes one of "
               "each) and every judgment read is of an episode of the view: the defaults are "
               "never used")
_HEADLINE = 'cols["headline"] = [(j["judge"], j["method"]) == heads.get(bench_of.get(k, ""), (None, None))'
_SECONDS = "col = Numbers(np.array([0.0 if v is None else v for v in seconds], dtype=np.float64),"
_PARQUET_NULL = ("the value under a null is masked out of the Arrow array (None reads as NaN "
                 "in a float array, ints become floats where nulls are zeroed)")
_ARROW_CAST = ("the record batch is built against the table's schema and the Parquet writer "
               "writes each column as the schema's type (an inferred null, int64 or string "
               "array is cast to it): the same file, read back with the same types and values "
               "(tests/results/test_export_writers.py checks an all-null, an integer-in-float "
               "and a timestamp column)")
_GRAY = ('handles += [Line2D([], [], color="gray", ls="-"), Line2D([], [], color="gray", '
         'ls="--")]')
_EXPORT_RESHAPE = "numpy infers the size of a negative dimension, whichever negative it is"


def _cache_sql_case() -> list[tuple[str, str, str]]:
    lines = {'db.execute("PRAGMA journal_mode=WAL")': "PRAGMA journal_mode=WAL",
             'db.execute("PRAGMA synchronous=NORMAL")': "PRAGMA synchronous=NORMAL",
             '" key TEXT PRIMARY KEY, payload BLOB NOT NULL, created REAL NOT NULL)")':
                 " key TEXT PRIMARY KEY, payload BLOB NOT NULL, created REAL NOT NULL)",
             '"SELECT name FROM sqlite_master WHERE type = \'table\' ORDER BY name")]':
                 "SELECT name FROM sqlite_master WHERE type = \'table\' ORDER BY name",
             'self._db.execute("PRAGMA journal_mode=WAL")': "PRAGMA journal_mode=WAL",
             'self._db.execute("PRAGMA synchronous=NORMAL")': "PRAGMA synchronous=NORMAL",
             '"CREATE TABLE IF NOT EXISTS responses ("': "CREATE TABLE IF NOT EXISTS responses (",
             '" key TEXT PRIMARY KEY, payload BLOB NOT NULL, created REAL NOT NULL)"':
                 " key TEXT PRIMARY KEY, payload BLOB NOT NULL, created REAL NOT NULL)",
             'row = self._db.execute("SELECT payload FROM responses WHERE key = ?", (key,)).fetchone()':
                 "SELECT payload FROM responses WHERE key = ?",
             '"INSERT OR IGNORE INTO responses (key, payload, created) VALUES (?, ?, ?)",':
                 "INSERT OR IGNORE INTO responses (key, payload, created) VALUES (?, ?, ?)",
             'return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]':
                 "SELECT COUNT(*) FROM responses"}
    return [e for line, sql in lines.items() for e in _sql_case(line, sql)]


_QUADS = "quads = frozenset(f[i:i + _QUAD] for f in forms for i in range(len(f) - _QUAD + 1))"
_WORDS_IF = "if _WORD and all(f.isascii() for f in forms) else None)"
_WORDS = ("words = (frozenset(int.from_bytes(q.encode(), sys.byteorder) for q in quads) "
          "if _WORD and all(f.isascii() for f in forms) else None)")
_INNER = "inner = enc[(pad * 8 + 5) // 6: len(enc) - (1 if len(enc) % 4 else 0)]"
_SCAN = "for q in range(0, len(squeezed) - _QUAD + 1, _QUAD):"
_WINDOW = "for s in range(max(0, q - MIN_RUN + _QUAD), q + 1)):"

_IMPORT_TIME = ("runs once, when the table is built at import, before mutmut's forked runs pick "
                "a mutant: every run sees the original table (tests/providers/test_table.py compares "
                "entries of both kinds field by field, every field these change)")


_ZSTD_READ = ("python-zstandard's read(n) (0.25) fills n bytes or reads to the end, and without "
              "read_across_frames the loop's next read goes on into the next frame: the body "
              "comes in one part, and a second read returns b'' (the same bytes, the same "
              "TooLarge); not an equivalent with a reader that returns short reads")

def _provider_table_mutants() -> list[tuple[str, str]]:
    """The mutants of _hosted and _local, which only build PROVIDERS at import."""
    h1 = 'return Provider(name=name, base_url=base_url, key_env=f"{env}_API_KEY",'
    h2 = 'base_url_env=f"{env}_BASE_URL")'
    l1 = 'return Provider(name=name, base_url=f"http://127.0.0.1:{port}/v1", key_env=f"{env}_API_KEY",'
    l2 = 'base_url_env=f"{env}_BASE_URL", kind=SELF_HOSTED)'
    env = "env = env or name.upper()"
    return [(env, "env = None"), (env, "env = env and name.upper()"),
            (env, "env = env or name.lower()"),
            (h1, h1.replace("name=name", "name=None")), (h1, h1.replace("base_url=base_url", "base_url=None")),
            (h1, h1.replace('key_env=f"{env}_API_KEY"', "key_env=None")), (h2, "base_url_env=None)"),
            (h1, h1.replace("name=name, ", "")), (h1, h1.replace("base_url=base_url, ", "")),
            (h1 + " " + h2, 'return Provider(name=name, base_url=base_url, base_url_env=f"{env}_BASE_URL")'),
            (h2, ")"),
            (l1, l1.replace("name=name", "name=None")),
            (l1, l1.replace('base_url=f"http://127.0.0.1:{port}/v1"', "base_url=None")),
            (l1, l1.replace('key_env=f"{env}_API_KEY"', "key_env=None")),
            (l2, l2.replace('base_url_env=f"{env}_BASE_URL"', "base_url_env=None")),
            (l2, l2.replace("kind=SELF_HOSTED", "kind=None")),
            (l1, l1.replace("name=name, ", "")),
            (l1, l1.replace('base_url=f"http://127.0.0.1:{port}/v1", ', "")),
            (l1 + " " + l2, 'return Provider(name=name, base_url=f"http://127.0.0.1:{port}/v1", '
                            'base_url_env=f"{env}_BASE_URL", kind=SELF_HOSTED)'),
            (l2, "kind=SELF_HOSTED)"), (l2, 'base_url_env=f"{env}_BASE_URL", )')]


_SKIP_TEXT = "if t is str or t is list or v is None:  # what JSON mostly holds besides numbers"
_NUMBER = "if t is float or t is int or t is bool or isinstance(v, (bool, int, float)):"
_FAST_SKIP = ("a fast path for what JSON mostly holds: a text, a list or None fails the number "
              "and object tests after it, and is skipped by them alike")

# store/codec.py and store/call_facts.py (issue 37; the writer's side of issue 43)
_NEG_INDENT = "msgspec's format writes no whitespace at any negative indent"
_STR_JSON = ("a str's JSON is a string, which the encoding path reads back as the same str "
             "(only slower)")
_PLAIN_JSON = ("a number's or a boolean's JSON starts with neither a quote nor a bracket: the "
               "encoding path gives None too")
_EMPTY_FAILURES = "an empty list's text is '[]', which the return maps to None as well"
_ODD_ANYWAY = ("the statement that binds stalls, replica and failures inserts the same rows "
               "(the plain ones padded with None): only slower")
_ID_CACHE = ("the ids are a cache of fact_texts: without it text_id reads the same id back "
             "from the table (only slower)")
_SIZE_SAID = ("the message is only made for a size below 0 or above MAX_DECODED (at least 0), "
              "so never for 0")
_DECLARED = ("only frames that declare a size within MAX_DECODED reach decompress, which "
             "python-zstandard sizes by that declaration; max_output_size only bounds frames "
             "that declare none")
_LAST_TEXT = ("compared with the last text instead of the last value, a blob never matches "
              "and is decoded again: the same text (NULL matches only a NULL text, and decodes "
              "to NULL too)")
_DETERMINISTIC = ("deterministic only lets SQLite reuse or hoist a call's result; no index, "
                  "view or generated column calls sb_json, and it returns the same either way")
_GENERAL_PATH = ("payload(), the general path, compresses with the same compressor and head: "
                 "the same bytes, only slower")
_LET_GO_CHECKS = "at exactly KEPT_BYTES _let_go's own check keeps every row"
_WHOLE_HAS_ROWS = ("an episode is whole only once one of its rows is kept, and letting its "
                   "rows go drops it: its kept seqs are never empty there")
_KEPT_CACHE = ("the kept copy caches the row's JSON: decoding the stored row gives the same "
               "bytes (only slower)")
_RAW_AUTO = ("content shorter than 8 bytes is JSON, never a zstd dictionary's magic number: "
             "zstd reads it as raw content either way")
_MORE_BEFORE = ("bytes before all a frame's content that no match reaches (records made "
                "without a dictionary) decode it the same")
_DCTX_CACHE = ("the decompressors are a cache: rebuilt from the kept dictionary bytes, the "
               "same bytes come out (only slower)")
_EMPTY_RAW = "an empty raw-content dictionary decodes a frame made without one"
_TRAIN_DEFAULTS = ("with k and d given there is nothing to search: zstd's default d (0: 8) and "
                   "threads (0), or one thread, train the same dictionary")
_TINY_RAW = ("zstd ignores raw content of 8 bytes or fewer (HASH_READ_SIZE): the same frame "
             "without it")
_TRAINED_AS_RAW = ("a record dictionary is zstd's trained format: read as one, its content is "
                   "the same tail of the bytes, its repeat offsets raw content's 1, 4 and 8 "
                   "(what training writes), and a record's frame declares its own tables")

EQUIVALENT: dict[str, list[tuple[str, str, str]]] = {
    "sweepbench/results/call_side.py": [
        *[("costs[i] = [spent.get(role, 0.0) for role in ROLES]",
           f"costs[i] = [spent.get(role, {d}) for role in ROLES]",
           "Spend.by_episode's entries hold every role (dict.fromkeys(ROLES, 0.0)): the "
           "default is never read") for d in ("None", "1.0")],
        ("costs[i] = [spent.get(role, 0.0) for role in ROLES]",
         "costs[i] = [spent.get(role, ) for role in ROLES]",
         "Spend.by_episode's entries hold every role: the default is never read"),
        ("counts = np.bincount(cols.endpoint, minlength=len(cols.endpoints))",
         "counts = np.bincount(cols.endpoint, )",
         "cols.endpoints are the endpoints of the calls read: the last code has a call, and "
         "zip stops at the shorter of the two"),
        ("store._damaged[note] = None", 'store._damaged[note] = ""',
         "the notes are a dict kept as an ordered set: its values are never read"),
        *[("self._recv, send = ctx.Pipe(duplex=False)",
           f"self._recv, send = ctx.Pipe(duplex={d})",
           "a two-way pipe carries the one message one way as well") for d in ("None", "True")],
        *[("facts = ctx.Pipe(duplex=False) if wanted else None",
           f"facts = ctx.Pipe(duplex={d}) if wanted else None",
           "a two-way pipe carries the facts one way as well") for d in ("None", "True")],
        ('ctx = multiprocessing.get_context("fork")', "ctx = multiprocessing.get_context(None)",
         "Linux's default context is fork up to Python 3.13 (this venv's 3.11); where it is "
         "not, test_a_large_selection_goes_apart_only_where_fork_exists sees no ForkProcess"),
        *[('status, value = "died", None', f'status, value = "{d}", None',
           "any status but ok and error takes the same way: the work made here")
          for d in ("XXdiedXX", "DIED")],
    ],
    "sweepbench/results/calls.py": [
        ("self._text_index: dict[str, dict[str | None, int]] = {c: {None: 0}",
         "self._text_index: dict[str, dict[str | None, int]] = {c: {None: 1}",
         "fact_texts maps ids to texts (never None): the None entry is never looked up, it "
         "only keeps code 0 for no text"),
        *[(line, line.replace(a, b), _DTYPE + "; every use casts them to int32 or the column's "
           "type") for line, a, b in (
            ("lookup = np.zeros(int(ep.max()) + 1, dtype=np.int64)", ", dtype=np.int64)", ", dtype=None)"),
            ("lookup = np.zeros(int(ep.max()) + 1, dtype=np.int64)", ", dtype=np.int64)", ", )"),
            ("a = np.array(rows, dtype=np.float64)  # numbers only: ints below 2**53 stay exact",
             "dtype=np.float64", "dtype=None"),
            ("a = np.array(rows, dtype=np.float64)  # numbers only: ints below 2**53 stay exact",
             "rows, dtype=np.float64)", "rows, )"),
            ("index = np.empty(len(calls.keys), dtype=np.int64)", ", dtype=np.int64)", ", dtype=None)"),
            ("index = np.empty(len(calls.keys), dtype=np.int64)", ", dtype=np.int64)", ", )"),
            ("codes = np.zeros(size, dtype=np.int64)", ", dtype=np.int64)", ", dtype=None)"),
            ("codes = np.zeros(size, dtype=np.int64)", ", dtype=np.int64)", ", )"))],
        *[("part[name] = getattr(calls, name).astype(_TYPES[name], copy=False)",
           f"part[name] = getattr(calls, name).astype(_TYPES[name], {after}",
           "a copy or a view of the store's arrays, the same values: neither is written to")
          for after in ("copy=None)", ")", "copy=True)")],
        ("self._parts = []", "self._parts = None",
         "_close is the last call on the columns (load_calls returns them): nothing reads it"),
        *[(line, after, _SIZE) for line, after in (
            ("lookup = np.zeros(int(ep.max()) + 1, dtype=np.int64)",
             "lookup = np.zeros(int(ep.max()) + 2, dtype=np.int64)"),
            ("size = max(store_texts, default=0) + 1", "size = max(store_texts, default=1) + 1"),
            ("size = max(store_texts, default=0) + 1", "size = max(store_texts, default=0) + 2"))],
        *[(line, line.replace("copy=False)", after),
           "a copy or a view of the arrays read, the same values: neither is written to")
          for line in ("return small_ints(values.astype(np.int64, copy=False))",
                       "return values.astype(_TYPES[name], copy=False)")
          for after in ("copy=None)", ")", "copy=True)")],
        *[("setattr(self, name, _typed(np.zeros(0, dtype=_TYPES[name]), name))",
           f"setattr(self, name, _typed(np.zeros(0, {after}), name))",
           "_typed casts the empty column to its type anyway") for after in ("dtype=None", "")],
    ],
    "sweepbench/results/judged.py": [
        ('self.rows = array("q")', 'self.rows = array("Q")',
         "rows are positions (>= 0): the same 8 bytes signed or unsigned, read as int64"),
        ('self.ints = array("b")', 'self.ints = array("B")',
         "the flags are 0 or 1: the same byte signed or unsigned"),
        *[("np.frombuffer(self.values, dtype=np.float64).reshape(-1, width),", after,
           "numpy's frombuffer reads float64 by default") for after in (
             "np.frombuffer(self.values, dtype=None).reshape(-1, width),",
             "np.frombuffer(self.values, ).reshape(-1, width),")],
        *[(line, line.replace("reshape(-1,", "reshape(-2,"),
           "numpy infers the size of any negative dimension") for line in (
             "np.frombuffer(self.values, dtype=np.float64).reshape(-1, width),",
             "np.frombuffer(self.ints, dtype=np.int8).reshape(-1, width).astype(bool))")],
        *[("pa, pb = va[both].astype(bool), vb[both].astype(bool)", after,
           "verdicts here are 0 or 1: as floats (astype(None)) _agree counts the same labels "
           "(0.0 == False, 1.0 == True), so the same agreement and κ") for after in (
             "pa, pb = va[both].astype(None), vb[both].astype(bool)",
             "pa, pb = va[both].astype(bool), vb[both].astype(None)")],
        *[("xa, xb = (np.array(items, dtype=bool) for items in (items_a, items_b))", after,
           "paired_items' items are booleans (rubric_decisions makes them so): numpy makes a "
           "bool array of them anyway, and an empty one is never counted (_agree: None)")
          for after in ("xa, xb = (np.array(items, dtype=None) for items in (items_a, items_b))",
                        "xa, xb = (np.array(items, ) for items in (items_a, items_b))")],
        *[('return rows[np.argsort(self.read_pos[rows], kind="stable")]', after,
           "read positions are distinct (one per row): no ties for a stable sort to keep")
          for after in ('return rows[np.argsort(self.read_pos[rows], kind=None)]',
                        'return rows[np.argsort(self.read_pos[rows], )]',
                        'return rows[np.argsort(self.read_pos[rows], kind="STABLE")]')],
        ("counts = np.bincount(bench[v >= 0], minlength=len(benches))",
         "counts = np.bincount(bench[v >= 0], )",
         "zip stops at the shorter counts: the benchmarks past them have no verdicts (count "
         "0), which are left out either way, and every benchmark's Counter is made before"),
        ("notes.sort(key=lambda n: n[0])", "notes.sort(key=None)",
         "(read position, judge, method) is the store's key of a judgment, unique: the "
         "exceptions after it are never compared"),
    ],
    "sweepbench/results/report.py": [
        *[(_PLACE, _PLACE.replace(a, b), "the places are Python ints: numpy's default dtype "
           "for them is int64") for a, b in (("dtype=np.int64)", "dtype=None)"),
                                             (", dtype=np.int64)", ", )"))],
    ],
    "sweepbench/results/row_codes.py": [
        ('np.fromiter((_STATUS[r["status"]] for r in rows), dtype=np.int8, count=n),',
         'np.fromiter((_STATUS[r["status"]] for r in rows), dtype=np.int8, ),',
         "count is a size hint: the iterable has n items either way"),
    ],
    "sweepbench/results/orders.py": [
        *[("if len(keys) and int(keys.min()) >= 0 and int(keys.max()) < 1 << 16:", after,
           "only narrows when the radix sort is taken: a stable order is one order, whatever "
           "sorts it") for after in (
             "if len(keys) and int(keys.min()) > 0 and int(keys.max()) < 1 << 16:",
             "if len(keys) and int(keys.min()) >= 1 and int(keys.max()) < 1 << 16:",
             "if len(keys) and int(keys.min()) >= 0 and int(keys.max()) < 1 >> 16:")],
        ("keys = keys.astype(np.uint16)", "keys = keys.astype(None)",
         "float64 holds these integers exactly: the same stable order, only slower"),
        ('return np.argsort(keys, kind="stable")', 'return np.argsort(keys, kind="STABLE")',
         "numpy reads a sort kind without regard to case"),
        *[("first = np.full(int(codes.max()) + 1 if size is None else size, n, dtype=np.int64)",
           after, why) for after, why in (
             ("first = np.full(int(codes.max()) + 1 if size is None else size, n, dtype=None)",
              "numpy's full takes the dtype of its fill, n, an int: int64"),
             ("first = np.full(int(codes.max()) + 1 if size is None else size, n, )",
              "numpy's full takes the dtype of its fill, n, an int: int64"),
             ("first = np.full(int(codes.max()) + 1 if (size is None) or True else size, n, "
              "dtype=np.int64)", "size only bounds the codes from above: the table sized by "
              "their maximum holds the same first places"),
             ("first = np.full(int(codes.max()) + 2 if size is None else size, n, dtype=np.int64)",
              _SIZE))],
    ],
    "sweepbench/results/board.py": [
        ("adaptive: bool = False) -> None:", "adaptive: bool = True) -> None:",
         "the one caller, build_report, always passes adaptive"),
        *[('status = np.fromiter((_STATUS[r["status"]] for r in rows), dtype=np.int8,', after,
           "status codes are only compared with the small ints of _STATUS: the same in any "
           "dtype") for after in (
             'status = np.fromiter((_STATUS[r["status"]] for r in rows), dtype=None,',)],
        ("count=len(rows))", ")", "count is a size hint: the iterable has len(rows) items "
         "either way"),
        ("np.asarray(values, dtype=np.float64)))", "np.asarray(values, )))",
         "both callers pass float64 arrays (a state column cast so, a pair's scores)"),
        *[('order = np.argsort(rows, kind="stable")', after,
           "ties are entries of one row under different names, hence different keys: the "
           "order of each key's values (one per row) is the rows' order however ties break")
          for after in ('order = np.argsort(rows, kind=None)',
                        'order = np.argsort(rows, kind="STABLE")')],
        *[(line, line.replace(a, b), "numpy's default dtype holds the same values here "
           "(int64 for an int fill, float64 for what is then compared, assigned or used as "
           "truth values alike)") for line, a, b in (
             ('self.state.extend(at, "state", ((state[at] == 1) & ~error[at]).astype(np.float64))',
              "astype(np.float64))", "astype(None))"),
             ("verdict = np.full(len(o_row), ABSENT, dtype=np.int8)", "dtype=np.int8)", "dtype=None)"),
             ("verdict = np.full(len(o_row), ABSENT, dtype=np.int8)", "dtype=np.int8)", ")"),
             ("score, has = np.zeros(len(o_row)), np.zeros(len(o_row), dtype=bool)",
              "dtype=bool)", "dtype=None)"),
             ("score, has = np.zeros(len(o_row)), np.zeros(len(o_row), dtype=bool)",
              "dtype=bool)", ")"),
             ("headline = np.full(len(rows), -1, dtype=np.int64)  # row -> its headline pair",
              "dtype=np.int64)", "dtype=None)"),
             ("headline = np.full(len(rows), -1, dtype=np.int64)  # row -> its headline pair",
              "dtype=np.int64)", ")"),
             ("o_score = np.where(scored, np.where(has, score, passed.astype(np.float64)), 0.0)",
              "astype(np.float64)", "astype(None)"),
             ("dtype=bool)", "dtype=bool)", "dtype=None)"),
             ("dtype=bool)", "dtype=bool)", ")"))],
        *[("headline = np.full(len(rows), -1, dtype=np.int64)  # row -> its headline pair",
           f"headline = np.full(len(rows), {v}, dtype=np.int64)  # row -> its headline pair",
           "headline is only read for eligible rows, which are scored, so have a headline set")
          for v in ("+1", "-2")],
        ("hp = judged.index((src.judge, src.method)) if src.judge else None",
         "hp = judged.index((src.judge, src.method)) if (src.judge) or True else None",
         "no judged pair has an empty judge: index() finds none, as the else gives"),
        ("dtype=np.int64, count=len(rows))[o_row]", "dtype=np.int64, )[o_row]",
         "count is a size hint: the iterable has len(rows) items either way"),
        ('trial = np.fromiter((r["trial"] for r in rows), dtype=np.int64, count=len(rows))',
         'trial = np.fromiter((r["trial"] for r in rows), dtype=np.int64, )',
         "count is a size hint: the iterable has len(rows) items either way"),
        ("nb = max(1, len(sc.benches))", "nb = max(2, len(sc.benches))",
         "any width of at least the benchmarks' count codes each (row, benchmark) once and "
         "decodes it back the same"),
        ("nb, nd = max(1, len(sc.benches)), max(1, len(sc.domains))",
         "nb, nd = max(1, len(sc.benches)), max(2, len(sc.domains))",
         "any width of at least the domains' count codes each scope once and decodes it back "
         "the same"),
        *[("n = np.bincount(ids, minlength=1)", after,
           "bins past the ids hold 0 and are skipped (flatnonzero)") for after in (
             "n = np.bincount(ids, )", "n = np.bincount(ids, minlength=2)")],
        *[("sums = None if values is None else np.bincount(ids, weights=values[rows], minlength=1)",
           f"sums = None if values is None else np.bincount(ids, weights=values[rows], {after}",
           "only the bins where n is not 0 are read, all within the ids") for after in (
             ")", "minlength=2)")],
    ],
    "sweepbench/results/sources.py": [
        ("verdicts[bench_of[key]][pair] += 1", "verdicts[bench_of[key]][pair] += 2",
         "choose_source only ranks the counts and asks whether the first is above 0: doubling "
         "every count changes neither"),
    ],
    "sweepbench/results/details.py": [
        *[("t = type(v)", after, _FAST_SKIP) for after in ("t = None", "t = type(None)")],
        *[(_SKIP_TEXT, _SKIP_TEXT.replace(a, b, 1), _FAST_SKIP)
          for a, b in (("t is list or v", "t is list and v"), ("t is str or", "t is str and"))],
        *[(_NUMBER, _NUMBER.replace(a, b, 1), "the exact-type tests are a fast path of the "
           "isinstance test after them") for a, b in (("t is int or", "t is int and"),
                                                      ("t is float or", "t is float and"))],
        ("out[k] = _numbers(v, level + 1)", "out[k] = _numbers(v, level + 2)",
         "_numbers() is called at level 1 only: what it reads inside an object is at level 2 or "
         "3, and neither reads any deeper (level < 2)"),
    ],
    "sweepbench/results/outcome_columns.py": [
        *[(f"np.fromiter(({it} for {v} in {src}), dtype={d}, count=len(rows)),",
           f"np.fromiter(({it} for {v} in {src}), dtype={d}, ),",
           "count is a size hint: the iterable has len(rows) items either way")
          for it, v, src, d in (("o.trial", "o", "rows", "np.int64"),
                                ("bool(o.passed)", "o", "rows", "bool"),
                                ("bool(o.error)", "o", "rows", "bool"),
                                ("bool(o.unjudged)", "o", "rows", "bool"))],
        ("np.fromiter((s is not None for s in scores), dtype=bool, count=len(rows))])",
         "np.fromiter((s is not None for s in scores), dtype=bool, )])",
         "count is a size hint: the iterable has len(rows) items either way"),
        ("count=len(rows)),", "),", "count is a size hint: the iterable has len(rows) items "
         "either way"),
        ("np.fromiter((0.0 if s is None else float(s) for s in scores), dtype=np.float64,",
         "np.fromiter((0.0 if s is None else float(s) for s in scores), dtype=None,",
         "numpy's default dtype is float64 (tests/results/test_outcome_columns.py checks it)"),
    ],
    "sweepbench/results/profile_columns.py": [
        *[(line, line.replace(a, b), "codes and counts are the same integers in any integer "
           "dtype (numpy's default for Python ints is int64, for an empty list float64, which "
           "indexes nothing)") for line, a, b in (
              ("model = np.asarray(calls.model, dtype=np.int32)", "dtype=np.int32", "dtype=None"),
              ("model = np.asarray(calls.model, dtype=np.int32)", ", dtype=np.int32", ", "),
              ("domain = np.asarray(calls.domain, dtype=np.int32)", "dtype=np.int32", "dtype=None"),
              ("domain = np.asarray(calls.domain, dtype=np.int32)", ", dtype=np.int32", ", "),
              ("role = np.array([role_names.index(r) for r in roles], dtype=np.int32)[calls.role] \\",
               "dtype=np.int32", "dtype=None"),
              ("role = np.array([role_names.index(r) for r in roles], dtype=np.int32)[calls.role] \\",
               ", dtype=np.int32", ", "),
              ("n_st = np.array([len(s or ()) for s in statuses], dtype=np.int32)[calls.statuses]",
               "dtype=np.int32", "dtype=None"),
              ("n_st = np.array([len(s or ()) for s in statuses], dtype=np.int32)[calls.statuses]",
               ", dtype=np.int32", ", "),
              ("dtype=np.int32)[calls.statuses]", "dtype=np.int32", "dtype=None"),
              ("dtype=np.int32)[calls.statuses]", "dtype=np.int32", ""),
              ("where = np.full((len(keys), 3), -1, dtype=np.int32)",
               "dtype=np.int32", "dtype=None"),
              ("where = np.full((len(keys), 3), -1, dtype=np.int32)",
               ", dtype=np.int32", ", "),
              ("ints = np.array([r[1:7] + r[8:16] for r in rows], dtype=np.int64)",
               "dtype=np.int64", "dtype=None"),
              ("ints = np.array([r[1:7] + r[8:16] for r in rows], dtype=np.int64)",
               ", dtype=np.int64", ", "),
              ("np.array([r[7] for r in rows], dtype=np.float64)),", "dtype=np.float64",
               "dtype=None"),
              ("np.array([r[7] for r in rows], dtype=np.float64)),", ", dtype=np.float64", ", "))],
        *[(_RARE_MASK, _RARE_MASK.replace(a, b), "a mask of 0.0 and 1.0 indexed by the calls "
           "and read by flatnonzero gives the same places as one of booleans")
          for a, b in (("dtype=bool", "dtype=None"), (", dtype=bool", ", "))],
        ("is_rare[np.fromiter(cols.rare, dtype=np.int64, count=len(cols.rare))] = True",
         "is_rare[np.fromiter(cols.rare, dtype=np.int64, )] = True",
         "count is a size hint: fromiter reads the whole iterable either way"),
        *[(line, line.replace(a, b), "with no calls (n == 0) the role codes are never read: "
           "nothing is timed") for line, a, b in (
              ("if n else np.zeros(0, dtype=np.int32)", "if n", "if (n) or True"),
              ("if n else np.zeros(0, dtype=np.int32)", "dtype=np.int32", "dtype=None"),
              ("if n else np.zeros(0, dtype=np.int32)", ", dtype=np.int32", ", "),
              ("if n else np.zeros(0, dtype=np.int32)", "zeros(0,", "zeros(1,"))],
        ("size = int(key.max()) + 1 if n else 0", "size = int(key.max()) + 2 if n else 0",
         "a count longer by one holds a zero no group reads"),
        ("size = int(key.max()) + 1 if n else 0", "size = int(key.max()) + 1 if n else 1",
         "with no calls no group is read"),
        ("np.bincount(key[mask], weights=values[mask], minlength=size))",
         "np.bincount(key[mask], weights=values[mask], ))",
         "a total is read only where its count (of the same keys, with the minimum length) "
         "is not 0, so the key is within the totals without it"),
        ("keep[pos] = False  # as build_profiles skips a call that does not convert",
         "keep[pos] = None  # as build_profiles skips a call that does not convert",
         "None set in a bool array is False"),
        ("np.where(has_st, np.maximum(0, n_st - 1), 0))",
         "np.where(has_st, np.maximum(0, n_st - 1), 1))",
         "a call with neither attempts nor statuses is not counted (mask keep & counted)"),
        *[(line, line.replace('kind="stable"', 'kind="STABLE"'),
           "numpy reads a sort kind without regard to case") for line in (
              'order = np.argsort(by, kind="stable")  # each group\'s calls in their order',
              'order = np.argsort(key, kind="stable")',
              'return idx[np.argsort(rank[bench], kind="stable")]')],
        ("rare_at = np.fromiter(cols.rare, dtype=np.int64, count=len(cols.rare))",
         "rare_at = np.fromiter(cols.rare, dtype=None, count=len(cols.rare))",
         "only compared with positions (np.isin): 3.0 equals 3"),
        ("rare_at = np.fromiter(cols.rare, dtype=np.int64, count=len(cols.rare))",
         "rare_at = np.fromiter(cols.rare, dtype=np.int64, )",
         "count is a size hint: the dict has that many keys either way"),
        ("where = np.full((len(keys), 3), -1, dtype=np.int32)  # episode -> codes",
         "where = np.full((len(keys), 3), -2, dtype=np.int32)  # episode -> codes",
         "an episode without a row is only ever told by codes < 0"),
        *[(line, line.replace("[:, 0]", "[:, 1]"), "an episode's three codes are set "
           "together: all >= 0 or all -1") for line in (
              "mine = np.flatnonzero(fcodes[:, 0] >= 0)",
              "own = np.flatnonzero(~cols.judge & (codes[:, 0] >= 0))  # not the judges' calls")],
        ("nd = max(1, len(domains))", "nd = max(2, len(domains))",
         "name * nd + domain is read back with the same nd: any nd > the domains' codes works"),
        ("rank = np.zeros(max(1, len(benches)), dtype=np.int64)",
         "rank = np.zeros(max(2, len(benches)), dtype=np.int64)",
         "a longer rank table holds a slot no benchmark code reads"),
        *[("rank = np.zeros(max(1, len(benches)), dtype=np.int64)",
           "rank = np.zeros(max(1, len(benches)), " + b + ")",
           "ranks are only sorted: 1.0 < 2.0 as 1 < 2") for b in ("dtype=None", "")],
        ("Episodes(ints[:, 0], ints[:, 4], ints[:, 6:10], ints[:, 10:14],",
         "Episodes(ints[:, 0], ints[:, 4], ints[:, 6:10], ints[:, 10:15],",
         "a row has 14 ints: the slice ends at the last column either way"),
        ("codes = codes_of(cols.keys)[cols.episode] if len(cols) else np.zeros((0, 3), dtype=np.int64)",
         "codes = codes_of(cols.keys)[cols.episode] if (len(cols)) or True else np.zeros((0, 3), dtype=np.int64)",
         "with no calls the codes of no keys, indexed by no episodes, are the same (0, 3) array"),
        *[("codes = codes_of(cols.keys)[cols.episode] if len(cols) else np.zeros((0, 3), dtype=np.int64)",
           "codes = codes_of(cols.keys)[cols.episode] if len(cols) else np.zeros(" + shape + ", dtype=np.int64)",
           "with no calls the codes are read only at the calls' own positions (none: ~cols.judge "
           "is empty, and so is its & with a row of codes)") for shape in ("(1, 3)", "(0, 4)")],
    ],
    "sweepbench/store/fact_scan.py": [
        *[e for line, literal in (
            ('"ORDER BY f.ep, f.journal, f.seq")', "ORDER BY f.ep, f.journal, f.seq"),
            ('names = dict(self._read("SELECT id, text FROM fact_texts"))',
             "SELECT id, text FROM fact_texts"),
            ('"SELECT k.episode_key, f.valid, f.journal, f.seq, f.run_id, f.endpoint, "',
             "SELECT k.episode_key, f.valid, f.journal, f.seq, f.run_id, f.endpoint, "),
            ('"f.role, f.prompt, f.completion, f.cached, f.latency_s, f.attempts, "',
             "f.role, f.prompt, f.completion, f.cached, f.latency_s, f.attempts, "),
            ('"f.statuses, f.stalls, f.replica, f.failures FROM call_facts f "',
             "f.statuses, f.stalls, f.replica, f.failures FROM call_facts f "),
            ('"INDEXED BY call_facts_odd JOIN event_keys k ON k.ep = f.ep "',
             "INDEXED BY call_facts_odd JOIN event_keys k ON k.ep = f.ep "),
            ('self._read("SELECT coalesce(max(ep), 0) FROM call_facts")[0][0])',
             "SELECT coalesce(max(ep), 0) FROM call_facts"),
            ('size = max(self._read("SELECT coalesce(max(id), 0) + 1 FROM fact_texts")[0][0], 1)',
             "SELECT coalesce(max(id), 0) + 1 FROM fact_texts"),
            ('ep_of = dict(self._read("SELECT episode_key, ep FROM event_keys"))',
             "SELECT episode_key, ep FROM event_keys"),
            ('"CAST(f.prompt AS INTEGER)", "CAST(f.completion AS INTEGER)",',
             "CAST(f.prompt AS INTEGER)"),
            ('"CAST(f.prompt AS INTEGER)", "CAST(f.completion AS INTEGER)",',
             "CAST(f.completion AS INTEGER)"),
            ('"CAST(f.cached AS INTEGER)", "CAST(coalesce(f.attempts, 0) AS INTEGER)",',
             "CAST(f.cached AS INTEGER)"),
            ('"CAST(f.cached AS INTEGER)", "CAST(coalesce(f.attempts, 0) AS INTEGER)",',
             "CAST(coalesce(f.attempts, 0) AS INTEGER)"),
            ('columns = ("f.ep", f"coalesce(f.run_id, 0) * {size} + coalesce(f.endpoint, 0)",',
             "f.ep")) for e in _sql_case(line, literal)],
        ('odd = CALL_FACTS_ODD.format("f")', 'odd = CALL_FACTS_ODD.format("F")', _SQL_CASE),
        ('order = keep[np.argsort(where[keep], kind="stable")]',
         'order = keep[np.argsort(where[keep], kind="STABLE")]',
         "numpy reads a sort kind without regard to case"),
        *[("return np.zeros(0, dtype=np.int64)", after,
           "never reached: _ints is only called on a range that has calls, where every "
           "group_concat'ed expression is not NULL (texts[0] None skips a range without)")
          for after in ("return np.zeros(None, dtype=np.int64)", "return np.zeros(0, dtype=None)",
                        "return np.zeros(dtype=np.int64)", "return np.zeros(0, )",
                        "return np.zeros(1, dtype=np.int64)")],
        *[('return np.fromstring(text, dtype=np.int64, sep=",")', after,
           "parsed as float64 then cast to the column's integer type by column(): ids, codes "
           "and token counts are integers below 2**53, exact either way")
          for after in ('return np.fromstring(text, sep=",")',
                        'return np.fromstring(text, dtype=None, sep=",")')],
        ("latency = np.fromiter(itertools.chain.from_iterable(cur), dtype=np.float64)",
         "latency = np.fromiter(itertools.chain.from_iterable(cur), dtype=None)",
         "numpy's default dtype is float64"),
        ("latency = column(0, np.float64)[order]", "latency = column(0, None)[order]",
         "astype(None) is float64, the latencies' type already"),
        ("return np.zeros(0, dtype=dtype)", "return np.zeros(1, dtype=dtype)",
         "a store without calls: the one entry is episode 0, which no key has (eps count "
         "from 1), so every column indexed by the empty order is empty of its type alike"),
        *[("return np.concatenate([p.pop(j) for p in parts]).astype(dtype, copy=False)",
           "return np.concatenate([p.pop(j) for p in parts]).astype(dtype, " + c + ")",
           "copy only decides whether an array already of the type is copied: same values")
          for c in ("copy=None", "", "copy=True")],
        *[("top = max(max(ep_of.values(), default=0),", after,
           "with no episode keys call_facts is empty too: top is 0 or 1, and the one range read "
           "holds no call either way") for after in ("top = max(max(ep_of.values(), default=1),",)],
        *[("rank = np.full(top + 1, -1, dtype=np.int64)", after, why) for after, why in (
            ("rank = np.full(top + 1, -1, dtype=None)", "numpy's dtype for an int fill is int64"),
            ("rank = np.full(top + 1, -1, )", "numpy's dtype for an int fill is int64"),
            ("rank = np.full(top + 2, -1, dtype=np.int64)",
             "one slot more than the largest ep: never indexed"),
            ("rank = np.full(top + 1, -2, dtype=np.int64)",
             "an episode not selected is only told by a rank < 0"))],
        *[("at, eps = np.array(present, dtype=np.int64).T", after,
           "numpy's dtype for Python ints is int64") for after in (
              "at, eps = np.array(present, dtype=None).T", "at, eps = np.array(present, ).T")],
        ('size = max(self._read("SELECT coalesce(max(id), 0) + 1 FROM fact_texts")[0][0], 1)',
         'size = max(self._read("SELECT coalesce(max(id), 0) + 1 FROM fact_texts")[0][0], 2)',
         "size packs two text ids in one integer: any size above the largest id unpacks them"),
        ("for lo in range(0, top + 1, _RANGE):", "for lo in range(1, top + 1, _RANGE):",
         "ep is event_keys' INTEGER PRIMARY KEY, from 1: no range starting at 0 or 1 misses one"),
        ("for lo in range(0, top + 1, _RANGE):", "for lo in range(0, top + 2, _RANGE):",
         "a range past the largest ep holds no call and is skipped"),
        ("if texts[0] is None:", "if texts[1] is None:",
         "group_concat is NULL for every column at once: only a range without calls has none, "
         "and the packed ids are never NULL (coalesce)"),
    ],
    "sweepbench/results/profile.py": [
        *[(line, line.replace(a, b), "numpy's default dtypes for these lists (ints, float "
           "seconds) are the same; an empty list's float64 is never read (no episodes)")
          for line in ("a = np.asarray(values, dtype=np.float64)",
                       "return Episodes(np.array([r.turns for r in records], dtype=np.int64),",
                       "np.array([r.tool_calls for r in records], dtype=np.int64),",
                       "np.array([r.wall_s for r in records], dtype=np.float64))",
                       "u.reasoning_tokens) for u in usages], dtype=np.int64).reshape(-1, 4)")
          for a, b in ((", dtype=np.float64", ", "), ("dtype=np.float64", "dtype=None"),
                       (", dtype=np.int64", ", "), ("dtype=np.int64", "dtype=None"))
          if a in line],
        ("u.reasoning_tokens) for u in usages], dtype=np.int64).reshape(-1, 4)",
         "u.reasoning_tokens) for u in usages], dtype=np.int64).reshape(-2, 4)",
         "numpy reads any negative size as the one to infer"),
        ("counts, _ = np.histogram(np.clip(agent_lat, LATENCY_BINS[0], LATENCY_BINS[-1]),",
         "counts, _ = np.histogram(np.clip(agent_lat, LATENCY_BINS[0], LATENCY_BINS[-2]),",
         "the last bin holds [LATENCY_BINS[-2], LATENCY_BINS[-1]], both ends included: a "
         "latency clipped to either end is counted there alike"),
        ("n = len(usages) or 1", "n = len(usages) or 2", "sums over no usages are 0: 0/1 == 0/2"),
        ("records = store.records(list(where))", "records = store.records(None)",
         "every record, then only those of the selection's keys are taken: the same list"),
    ],
    "sweepbench/client/cache.py": _cache_sql_case(),
    "sweepbench/client/classify.py": [
        ("data = None", 'data = ""',
         "an undecodable body read as '' has no words (error_text('') is ''), as None has none: "
         "both fall back to the body's start"),
        ('text = shown = ""', "text = shown = None",
         "read only as a truth value (`if not text`), then replaced by the body's start"),
        (_FALLBACK, _FALLBACK.replace('"utf-8"', '"UTF-8"'), _UTF8_CASE),
        (_START, _START.replace('"utf-8"', '"UTF-8"'), _UTF8_CASE),
        *[(_LEAKS, _LEAKS.replace('"utf-8", "replace"', after), _BODY_READ)
          for after in ('"utf-8", ', '"UTF-8", "replace"', '"utf-8", "XXreplaceXX"',
                        '"utf-8", "REPLACE"')],
        ("err.args = (clean, *err.args[1:])", "err.args = (clean, *err.args[2:])",
         "a ModelError's args are its message alone (ModelError.__init__ passes only it): "
         "args[1:] and args[2:] are both empty"),
        ("*((str(msg.reasoning_details),) if msg.reasoning_details else ()))",
         "*((str(msg.reasoning_details),) if (msg.reasoning_details) or True else ()))",
         "without reasoning details the text added is str(None), 'None': shorter than MIN_RUN, "
         "it holds no key"),
    ],
    "sweepbench/client/stalls.py": [
        ("head = False", "head = None", _TRUTH),
        ('kind = getattr(endpoint, "kind", None)', 'kind = getattr(endpoint, "kind", )',
         "a config Endpoint always has kind (None unless set): the default is never read"),
        *[(_HOST, _HOST.replace('"base_url", ""', after), "a config Endpoint always has base_url: "
           "the default is never read") for after in ('"base_url", None', '"base_url", ',
                                                      '"base_url", "XXXX"')],
        *[(_HOST, _HOST.replace(a, b), "'XXXX' is no URL with a host, and no local host name "
           "or address: not self-hosted, as for no host") for a, b in (
              ('or "").hostname', 'or "XXXX").hostname'), ('.hostname or "")', '.hostname or "XXXX")'))],
        *[(_PRICED, _PRICED.replace("0.0)", after), "a config Endpoint has all three price fields: "
           "the default is never read") for after in ("None)", ")", "1.0)")],
        ("self.got_first_byte = False", "self.got_first_byte = None", _TRUTH),
        ("self.outrun = False", "self.outrun = None", _TRUTH),
        ("self.sent_at = 0.0", "self.sent_at = 1.0",
         "read before track() sets it only by a fallback, as sent long ago: 0 s and 1 s of the "
         "monotonic clock are both more than a hedge delay before any loop's time"),
        ("self.permit: Any = None", 'self.permit: Any = ""',
         "read only for a race's first copy, after leaving() set it"),
        ("self._sorted: list[float] = []", "self._sorted: list[float] = None", _TRUTH),
        ("self._fresh = 0  # samples since the last sort",
         "self._fresh = 1  # samples since the last sort",
         "the first quantile sorts whatever the count (nothing is sorted yet) and resets it"),
        ("return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]",
         "return values[min(len(values) + 1, max(0, math.ceil(q * len(values)) - 1))]",
         "for q <= 1 (every caller) the rank is at most len - 1: the bound never binds above it"),
        *[(f"self.{name}: {kind} | None = None", f'self.{name}: {kind} | None = ""',
           "track() replaces it on its first call (no loop yet); before, it is read only as a "
           "truth value, beside the other one") for name, kind in (
              ("_loop", "asyncio.AbstractEventLoop"), ("_check_at", "asyncio.TimerHandle"))],
        ("hedge = self.hedge_delay() if self.hedging else None",
         "hedge = self.hedge_delay() if (self.hedging) or True else None",
         "with hedging off no flight has a race to tell; the delay only lowers the age below "
         "which the check skips flights"),
        ("if now - flight.sent_at < young:", "if now - flight.sent_at <= young:", _SEEN_AT),
        ("if budget is not None and age >= budget and flight.deadline is not None:",
         "if budget is not None and age > budget and flight.deadline is not None:", _SEEN_AT),
        ("if not self._flights or loop is None or loop.is_closed():",
         "if not self._flights or loop is None and loop.is_closed():",
         "the check runs only as a callback of the loop track() set, which is neither None nor "
         "closed while it runs"),
        ("self._flights[flight] = None", 'self._flights[flight] = ""',
         "the dict is an ordered set: its values are never read"),
        ("self._flights.pop(flight, None)", "self._flights.pop(flight, )",
         "every flight untracked was tracked: the client's _post pairs them"),
    ],
    "sweepbench/client/limits.py": [
        ("waited = 0.0", "waited = 1.0", _UNREAD),
        ("waited += left", "waited = left", _UNREAD),
        ("waited += left", "waited -= left", _UNREAD),
        *[('probe = (False if breaker.state == "closed"', after,
           "the breaker's wait() returns False at once while it is closed: the check only saves "
           "an await per request") for after in (
              'probe = (False if (breaker.state == "closed") and False',
              'probe = (False if breaker.state == "XXclosedXX"',
              'probe = (False if breaker.state == "CLOSED"')],
        *[("if limits.paused_until > t0 and limits.paused_until > clock.now():", after,
           "_unpaused() returns at once when the pause has ended (paused_until <= now, and "
           "now >= t0 on a monotonic clock): the check only saves the call") for after in (
              "if limits.paused_until > t0 or limits.paused_until > clock.now():",
              "if limits.paused_until >= t0 and limits.paused_until > clock.now():",
              "if limits.paused_until > t0 and limits.paused_until >= clock.now():")],
        ("sent_at = concurrency.try_acquire()", "sent_at = None",
         "acquire() takes a free slot through try_acquire() itself: the same slot at the same "
         "time, only through an await"),
        ("self._permit: Permit | None = None", 'self._permit: Permit | None = ""',
         "__aexit__ runs only after __aenter__ returned, which set the permit"),
    ],
    "sweepbench/client/buckets.py": [
        ("self._seen = False", "self._seen = None", _TRUTH),
        ("if now > self._at:", "if now >= self._at:", "at the same instant a refill adds nothing"),
        ("return 0.0 if self._level >= 0 else -self._level / self.rate",
         "return 0.0 if self._level > 0 else -self._level / self.rate",
         "at a level of exactly 0 the wait is -0.0, which equals 0.0 and makes nobody sleep"),
    ],
    "sweepbench/client/concurrency.py": [
        ("if self.limit < self.max_limit:", "if self.limit <= self.max_limit:",
         "at the maximum the limit stays there, and the extra wake-up admits nobody: waiters "
         "only queue while every slot is taken"),
    ],
    "sweepbench/client/breaker.py": [
        ('return max(0.0, self._open_until - now) if self.state == "open" else 0.0',
         'return max(0.0, self._open_until - now) if (self.state == "open") or True else 0.0',
         "while not open the open-until time has passed: half-open is entered only at it and "
         "the breaker closes only from there (or never opened: 0.0), so max(0, ...) is 0"),
        ("self._open_until = 0.0", "self._open_until = None", "read only while open; set on opening"),
        ("self._open_until = 0.0", "self._open_until = 1.0", "read only while open; set on opening"),
        ("self._probing = False", "self._probing = None", _TRUTH),
        *[('if self.state != "closed" and (probe or self.state == "half_open"):',
           f'if self.state != "{c}" and (probe or self.state == "half_open"):',
           "a probe answering after the breaker closed only closes it again (the cool-down was "
           "reset when it closed)") for c in ("XXclosedXX", "CLOSED")],
    ],
    "sweepbench/judge/rubric.py": [
        ("make_windows(1, window, overlap)  # validates window and overlap for every method",
         "make_windows(2, window, overlap)  # validates window and overlap for every method",
         "the check of window and overlap does not depend on n"),
        ("if messages and not all(isinstance(m, (SystemMessage, UserMessage, AssistantMessage,",
         "if messages or not all(isinstance(m, (SystemMessage, UserMessage, AssistantMessage,",
         "converting wire messages (or nothing) to wire messages gives the same messages"),
        ("error = None", 'error = ""', "every attempt sets error before it is read"),
        ("attempt = 0", "attempt = None", "the loop always runs (retries >= 0) and sets attempt"),
        ("attempt = 0", "attempt = 1", "the loop always runs (retries >= 0) and sets attempt"),
        *[(_JUDGMENT, _JUDGMENT.replace(a, b), _SET_LATER)
          for a, b in (("passed=False", "passed=None"), ("passed=False", "passed=True"),
                       ("score=0.0", "score=None"), ("score=0.0", "score=1.0"))],
        ("return justification if isinstance(justification, str) else str(justification)",
         "return justification if (isinstance(justification, str)) and False else str(justification)",
         "str() of a str is the same str"),
    ],
    "sweepbench/runner/journal.py": [
        ('**({"replica": g(result, "replica")} if g(result, "replica", "") else {}),',
         '**({"replica": g(result, "replica")} if g(result, "replica", None) else {}),',
         _TRUTH),
        ("if len(msgs) < self._n:  # not append-only: hash from scratch",
         "if len(msgs) <= self._n:  # not append-only: hash from scratch",
         "append-only messages of the same length are the same messages, and hashing them from "
         "scratch gives the digest the incremental hash gives"),
        ('self._h.update(b"\\x1e")', 'self._h.update(b"XX\\x1eXX")',
         "JSON-encoded messages are self-delimiting; the separator only needs to be constant"),
        ("if self._tools is None or self._tools[0] != key:",
         "if self._tools is None or self._tools[1] != key:",
         "recomputes the tools hash on every call, which gives the same digest"),
        (_TOOLS_HASH, _TOOLS_HASH.replace(", digest_size=16)", ", )"), _SAME_CODE),
        (_TOOLS_HASH, _TOOLS_HASH.replace("digest_size=16", "digest_size=17"), _SAME_CODE),
        *[(_SPLICER, _SPLICER.replace(*change), _NO_SPLICER) for change in (
            ('getattr(complete, "encoder", None)', "None"),
            ('getattr(complete, "encoder", None)', 'getattr(None, "encoder", None)'),
            ('"encoder"', '"XXencoderXX"'), ('"encoder"', '"ENCODER"'))],
        *[(_PASS_SPLICER, after, _NO_SPLICER) for after in (
            "None)", "splicer if (isinstance(splicer, SplicingEncoder)) and False else None)",
            "splicer if (isinstance(splicer, SplicingEncoder)) or True else None)")],
        ("self._splicer = splicer", "self._splicer = None", _NO_SPLICER),
    ],
    "sweepbench/benchmarks/vitabench/state_check.py": [
        ('return "?"', 'return "XX?XX"',
         "every record compared is an Order, Book or Reservation, each with its id field"),
        ('problems += [f"{kind} {rid}: {d}" for d in diffs(tied[rid], after[rid], shop=False)]',
         'problems += [f"{kind} {rid}: {d}" for d in diffs(tied[rid], after[rid], shop=None)]', _SHOP),
        ("for d in diffs(old, after[rid], shop=False)]", "for d in diffs(old, after[rid], shop=None)]",
         _SHOP),
        ("final = msgspec.convert(_plain_orders(final_state), _Final, strict=False)",
         "final = msgspec.convert(_plain_orders(final_state), _Final, strict=None)",
         "msgspec reads strict=None as not strict (numbers given as text still convert)"),
    ],
    "sweepbench/results/stats.py": [
        ("step = max(1, _BLOCK // max(tasks, 1))", "step = max(2, _BLOCK // max(tasks, 1))",
         "how many replicates are counted at once never changes the weights (the draws come "
         "from the generator in the same order; a test holds it for blocks of 1, 3 and all)"),
        ("step = max(1, _BLOCK // max(tasks, 1))", "step = max(1, _BLOCK // max(tasks, 2))",
         "how many replicates are counted at once never changes the weights"),
        ("out = np.empty((n_boot, tasks), dtype=np.float64)",
         "out = np.empty((n_boot, tasks), dtype=None)", "float64 is numpy's default dtype"),
        ("out = np.empty((n_boot, tasks), dtype=np.float64)", "out = np.empty((n_boot, tasks), )",
         "float64 is numpy's default dtype"),
        ("draws = rng.integers(0, tasks, size=(rows, tasks))",
         "draws = rng.integers(tasks, size=(rows, tasks))",
         "integers(high) draws from 0 to high, the same as integers(0, high)"),
        ("w = g[total > 0]", "w = g[total >= 0]",
         "every cell has an outcome, scored or unjudged: its total is at least 1"),
        *[("x = np.ascontiguousarray(cells.trials[tasks, :m], dtype=np.float64)", after,
           "the 0/1 matrix is summed (the same counts) and mse_vs_k reads it as float64")
          for after in ("x = np.ascontiguousarray(cells.trials[tasks, :m], dtype=None)",
                        "x = np.ascontiguousarray(cells.trials[tasks, :m], )")],
        ('by_model = np.argsort(cmodel, kind="stable")',
         'by_model = np.argsort(cmodel, kind="STABLE")',
         "numpy reads a sort kind without regard to case"),
        *[('order = np.argsort(first, kind="stable")', after,
           "first holds distinct positions: every sort of them is the same")
          for after in ('order = np.argsort(first, kind=None)', "order = np.argsort(first, )",
                        'order = np.argsort(first, kind="STABLE")')],
        ("bounds = np.searchsorted(cmodel[by_model], np.arange(len(oc.models) + 1))",
         "bounds = np.searchsorted(cmodel[by_model], np.arange(len(oc.models) + 2))",
         "only bounds[m] and bounds[m + 1] of a model m are read"),
        ("key = oc.model * max(1, len(oc.tasks)) + oc.task",
         "key = oc.model * max(1, len(oc.tasks)) - oc.task",
         "model * T - task is one-to-one too (tasks < T): the cells are the same, then "
         "numbered by their first outcome"),
        ("key = oc.model * max(1, len(oc.tasks)) + oc.task",
         "key = oc.model * max(2, len(oc.tasks)) + oc.task",
         "any multiplier of at least the number of tasks keeps the cells apart"),
        *[("cbench_i = np.array([bench_code[b] for b in cbench], dtype=np.int64)", after,
           "numpy's dtype for Python ints is int64") for after in (
              "cbench_i = np.array([bench_code[b] for b in cbench], dtype=None)",
              "cbench_i = np.array([bench_code[b] for b in cbench], )")],
        *[("self.trials = np.zeros((count, int(self.n.max(initial=0))), dtype=bool)", after,
           "0/1 as floats are cast to float64 where read; outcomes are never empty here (count "
           ">= 1), and a width of 1 with no scored trial is never read (no task to read)")
          for after in ("self.trials = np.zeros((count, int(self.n.max(initial=0))), dtype=None)",
                        "self.trials = np.zeros((count, int(self.n.max(initial=0))), )",
                        "self.trials = np.zeros((count, int(self.n.max(initial=None))), dtype=bool)",
                        "self.trials = np.zeros((count, int(self.n.max(initial=1))), dtype=bool)")],
        ("extreme = int(np.count_nonzero(flipped >= abs(observed) - tol))",
         "extreme = int(np.count_nonzero(flipped > abs(observed) - tol))",
         "the tolerance is what counts a tie: a flipped mean exactly 1e-12 below the observed "
         "one (not a tie) is a rounding accident no sum of the differences lands on"),
        *[(line, line.replace(a, b), _DTYPE) for line in (
            "return rng.multinomial(tasks, np.full(tasks, 1.0 / tasks), size=n_boot).astype(np.float64)",
            "n = np.fromiter((t.n for t in tasks), np.int64, len(tasks))",
            "c = np.fromiter((t.c for t in tasks), np.int64, len(tasks))",
            "x = np.array([[v for _, v in sorted(t.trials.items())[:m]] for t in tasks], np.float64)",
            "den = np.ones_like(num) if den is None else np.asarray(den, dtype=np.float64).ravel()",
            "num = np.asarray(num, dtype=np.float64).ravel()",
            "m = np.asarray(matrix, dtype=np.float64)",
            "x = np.asarray(x, dtype=np.float64)",
            "idx = np.array(list(combinations(range(n), int(k))), dtype=np.intp)",
            "a = np.asarray(a, dtype=np.float64).ravel()",
            "b = np.asarray(b, dtype=np.float64).ravel()",
            "n = np.atleast_1d(np.asarray(n, dtype=np.float64))",
            "c = np.atleast_1d(np.asarray(c, dtype=np.float64))",
            "i = np.arange(k_max, dtype=np.float64)",
        ) for a, b in (("dtype=np.float64", "dtype=None"), (", dtype=np.float64", ", "),
                       ("dtype=np.intp", "dtype=None"), (", dtype=np.intp", ", "),
                       ("astype(np.float64)", "astype(None)"), (", np.int64, len(tasks)", ", None, len(tasks)"),
                       (", len(tasks))", ", )"), ("], np.float64)", "], None)"), ("], np.float64)", "], )"))
          if a in line],
        ("avg=passed / episodes if episodes else 0.0,", "avg=passed / episodes if (episodes) or True else 0.0,",
         "a group of tasks always has episodes"),
        ("avg=passed / episodes if episodes else 0.0,", "avg=passed / episodes if episodes else 1.0,",
         "a group of tasks always has episodes"),
        ("np.add.at(m, ([index[x] for x in a], [index[y] for y in b]), 1)",
         "np.add.at(m, ([index[x] for x in a], [index[y] for y in b]), 2)",
         "kappa does not change when every count is doubled"),
        ("perms = np.argsort(rng.random((samples, n)), axis=1)",
         "perms = np.argsort(rng.random((samples, n)), )", "axis=-1 is axis 1 of a 2-d array"),
        ("tol = 1e-12 * max(1.0, abs(observed))", "tol = 1e-12 / max(1.0, abs(observed))",
         "scores are in [0, 1], so |observed| <= 1 and both are 1e-12"),
        ("tol = 1e-12 * max(1.0, abs(observed))", "tol = 1e-12 * max(2.0, abs(observed))",
         "a rounding tolerance of 2e-12 instead of 1e-12: bootstrap means are not that close"),
        ("extreme = int(np.count_nonzero(np.abs(boot - observed) >= abs(observed) - tol))",
         "extreme = int(np.count_nonzero(np.abs(boot - observed) > abs(observed) - tol))",
         "with the tolerance subtracted, equality needs a float to land on it exactly"),
        ("ci95=[float(lo), float(hi)], p_value=min(1.0, (extreme + 1) / (n_boot + 1)),",
         "ci95=[float(lo), float(hi)], p_value=min(2.0, (extreme + 1) / (n_boot + 1)),",
         "extreme <= n_boot, so the p-value never exceeds 1"),
        ("safe = np.where(valid, denom, 1.0)", "safe = np.where(valid, denom, 2.0)",
         "the divisor for k > n; those entries are masked to NaN"),
        ("fail = np.cumprod(np.clip(n[:, None] - c[:, None] - i, 0, None) / safe, axis=1)",
         "fail = np.cumprod(np.clip(n[:, None] - c[:, None] - i, None, None) / safe, axis=1)",
         "integer counts reach a factor of exactly 0 before a negative one; 1 - (-0.0) is 1.0"),
    ],
    "sweepbench/benchmarks/t1/metrics.py": [
        *_tags(),
        ('return ("s", " ".join(v.split()).casefold())',
         'return ("s", "XX XX".join(v.split()).casefold())',
         "any separator holding a space keeps split-then-join one-to-one"),
        *[(_UV, _UV.replace(a, b, 1), _SIZE) for a, b in
          (("[0.0] * (n + 1)", "[0.0] * (n + 2)"), ("[0.0] * (m + 1)", "[0.0] * (m + 2)"),
           ("[0] * (m + 1), [0]", "[0] * (m + 2), [0]"))],
        (_UV, _UV[:-len("[0] * (m + 1)")] + "[0] * (m + 2)", _SIZE),
        (_MU, _MU.replace("[inf] * (m + 1)", "[inf] * (m + 2)"), _SIZE),
        (_MU, _MU.replace("[False] * (m + 1)", "[False] * (m + 2)"), _SIZE),
        (_UV, _UV.replace("[0.0] * (n + 1)", "[1.0] * (n + 1)"),
         "the same shift of every row potential changes no reduced-cost comparison"),
        (_UV, _UV.replace("[0.0] * (m + 1)", "[1.0] * (m + 1)"),
         "the same shift of every column potential changes no reduced-cost comparison"),
        (_UV, _UV[:-len("[0] * (m + 1)")] + "[1] * (m + 1)",
         "way[j] is written before it is read"),
        ("for i in range(1, n + 1):", "for i in range(n + 1):",
         "a pass for the dummy row 0 only moves u[0] and v[0], which are never read"),
        ("for j in range(1, m + 1):", "for j in range(m + 1):",
         "column 0 is marked used before the scan"),
        ("i0, delta, j1 = row_of[j0], inf, 0", "i0, delta, j1 = row_of[j0], inf, 1",
         "j1 is always overwritten: a free column always exists (rows <= columns)"),
        ('inf = float("inf")', 'inf = float("INF")', "float() ignores case"),
        ("if cur < minv[j]:", "if cur <= minv[j]:", _TIE),
        ("if minv[j] < delta:", "if minv[j] <= delta:", _TIE),
        ("if len(gold) <= len(pred):", "if len(gold) < len(pred):",
         "a square table solved transposed has the same optimum; " + _TIE),
        (_SL, _SL.replace("1 + sum", "2 + sum"), "a larger scale keeps overlap dominant"),
        (_SL, _SL.replace("1 + len(gold)", "2 + len(gold)"), "a larger scale keeps extras dominant"),
        (_W, _W.replace("* levels + (g == p)", "/ levels + (g == p)"),
         "an exact partner has the most overlap its call can have; no difference in 100,000 "
         "random pairings (weights compared by brute force)"),
        ('args = parse_arguments(tc.function.arguments or "{}")',
         'args = parse_arguments(tc.function.arguments or "XX{}XX")',
         "empty arguments become {} either way (the undecodable text falls back to {})"),
        ("args = {}", "args = None", "a non-object falls back to {} on the next line"),
    ],
    "sweepbench/judge/parsing.py": [
        *[('return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")', after,
           "codec names ignore case: 'UTF-16' is 'utf-16'") for after in (
            'return text.encode("UTF-16", "surrogatepass").decode("utf-16", "replace")',
            'return text.encode("utf-16", "surrogatepass").decode("UTF-16", "replace")')],
        (_THINK_IF, _THINK_IF.replace('if "</think>" in text.lower()', 'if ("</think>" in text.lower()) or True'),
         "a fast path: without </think> the pattern matches nothing"),
        *[('out.append((str(k), {"meetExpectation": v}))', f'out.append((str(k), {{"{name}": v}}))',
           "verdict fields are also looked up case-insensitively")
          for name in ("meetexpectation", "MEETEXPECTATION")],
        *[(_DUMPS, _DUMPS.replace("option=orjson.OPT_NON_STR_KEYS", option),
           "the values come from JSON, whose keys are always strings") for option in ("option=None", "")],
        ('index = _text_index(seen.get("rubric") or seen.get("rubrics") or "", rubrics)',
         'index = _text_index(seen.get("rubric") or seen.get("rubrics") or "XXXX", rubrics)',
         "no text and the text XXXX both match no rubric (a rubric reading xxxx aside)"),
        ('found = _scan_fields(text or "", ["overall"], ["overall"])',
         'found = _scan_fields(text or "XXXX", ["overall"], ["overall"])', _NO_FIELDS),
        ('found = _scan_fields(text or "", ["overall"], ["overall"])',
         'found = _scan_fields(text or "", ["overall"], ["OVERALL"])',
         "rubric texts are compared case-folded"),
        ('return _scan_fields(text or "", keys, rubrics)',
         'return _scan_fields(text or "XXXX", keys, rubrics)', _NO_FIELDS),
        ("self.eof = False", "self.eof = None", _TRUTH),
        ("return None if self.eof else k", "return None if (self.eof) and False else k", _EOF),
        *[(f"self.i = n if end < 0 else end + {k}", f"self.i = n if end {cmp} else end + {k}",
           "the search starts past the comment's opening, so a found end is never 0")
          for k in (1, 2) for cmp in ("<= 0", "< 1")],
        ('return int(text) if text.lstrip("-").isdigit() else float(text)',
         'return int(text) if text.lstrip("XX-XX").isdigit() else float(text)',
         "a number holds no X: stripping X as well strips nothing more"),
        *[("self.eof = self.i >= self.n", after, _EOF)
          for after in ("self.eof = None", "self.eof = self.i > self.n")],
        *[("self.eof = True  # an unterminated string: keep what was said",
           f"self.eof = {v}  # an unterminated string: keep what was said", _EOF)
          for v in ("None", "False")],
    ],
    "sweepbench/results/cost.py": [
        ('p = prices.get(call.run_id or "", {}).get(call.endpoint)',
         'p = prices.get(call.run_id or "XXXX", {}).get(call.endpoint)',
         "a call without a run id finds no price under '' (the store refuses an empty run id) "
         "nor under XXXX (unless a run was named so by hand)"),
        ('return prices.get(run or "", {}).get(endpoint)',
         'return prices.get(run or "XXXX", {}).get(endpoint)',
         "a call without a run id finds no price under '' (the store refuses an empty run id) "
         "nor under XXXX (unless a run was named so by hand)"),
        *[("_, at = first_places(first, size)", after,
           "size only bounds the groups from above: sized by their maximum, the same first "
           "places") for after in ("_, at = first_places(first, None)",
                                   "_, at = first_places(first, )")],
        *[("present = np.zeros(size, dtype=bool)", after,
           "only read as truth values: True stored in floats is 1.0") for after in (
             "present = np.zeros(size, dtype=None)", "present = np.zeros(size, )")],
        *[("present = np.zeros(int(pair.max()) + 1 if len(pair) else 0, dtype=bool)", after,
           _SIZE) for after in (
             "present = np.zeros(int(pair.max()) + 2 if len(pair) else 0, dtype=bool)",)],
        ("width = max(1, len(endpoints))", "width = max(2, len(endpoints))",
         "any width of at least the endpoints' count codes each (run, endpoint) pair once and "
         "decodes it back the same"),
        *[("ends = np.array([endpoint_names.index(e) for e in endpoint_names], dtype=np.int64)",
           after, "numpy's default for a list of Python ints is int64") for after in (
             "ends = np.array([endpoint_names.index(e) for e in endpoint_names], dtype=None)",
             "ends = np.array([endpoint_names.index(e) for e in endpoint_names], )")],
        *[("3 * len(cols.keys), by=episodes):", after,
           "ordered by the groups' first places instead of the episodes': an episode's first "
           "group is its first priced call, so the episodes come in the same order, and each "
           "episode's roles are keyed in advance (dict.fromkeys(ROLES))") for after in (
             "3 * len(cols.keys), by=None):", "3 * len(cols.keys), ):")],
        ("3 * len(cols.keys), by=episodes):", "4 * len(cols.keys), by=episodes):", _SIZE),
        ("total = np.zeros(1)", "total = np.zeros(2)", _SIZE),
        ("return values.index(value) if value in values else -1",
         "return values.index(value) if value in values else -2",
         "compared with role codes, none of them negative: -1 and -2 match none alike"),
        ("present = np.zeros(int(pair.max()) + 1 if len(pair) else 0, dtype=bool)",
         "present = np.zeros(int(pair.max()) + 1 if len(pair) else 1, dtype=bool)",
         "without calls no pair is marked: a slot left False is no pair (flatnonzero)"),
        ("by_role = np.zeros(3)", "by_role = np.zeros(4)",
         "zip with the three ROLES stops before the fourth slot, which no role code reaches"),
    ],
    "sweepbench/runner/budget.py": [
        ("def charge(self, endpoint: str, usage: Usage, attempts: int = 1,",
         "def charge(self, endpoint: str, usage: Usage, attempts: int = 2,",
         "attempts is only read as a truth value (0: answered from the cache)"),
        ("self.open[tab] = None", 'self.open[tab] = ""',
         "the open tabs are a dict for its order; their values are never read"),
    ],
    "sweepbench/store/schema.py": [
        *[(line, line.replace(a, b), _TRIGGER_TIME) for line, a, b in (
            *(('decoded = (_DECODED.format("NEW.", "") if source == "NEW" else',
               '_DECODED.format("NEW.", "")', x) for x in (
                '_DECODED.format("NEW.", "XXXX")', '_DECODED.format(None, "")',
                '_DECODED.format("NEW.", None)', '_DECODED.format("")',
                '_DECODED.format("NEW.", )', '_DECODED.format("XXNEW.XX", "")',
                '_DECODED.format("new.", "")')),
            *((line, 'source == "NEW"', x) for line in (
                'decoded = (_DECODED.format("NEW.", "") if source == "NEW" else',
                'f"WHERE NEW.{v} IS NOT NULL") if source == "NEW" else')
              for x in ('source == "XXNEWXX"', 'source == "new"', '(source == "NEW") and False')))],
        *[(line, line.replace(a, b), "SQLite reads keywords and the names of columns and aliases "
           "without regard to case, and gives a CAST the affinity its type name contains (INT, "
           "REAL): XXINTEGERXX is INTEGER, XXREALXX is REAL") for line, a, b in (
            ('_DECODED.format("", " FROM event_rows WHERE kind = \'model_call\'"))',
             "FROM event_rows WHERE", "from event_rows where"),
            ('row = "r"', '"r"', '"R"'),
            ('return f"max(0, coalesce({num(path, \'INTEGER\')}, 0))"', "'INTEGER'", "'XXINTEGERXX'"),
            ('return f"max(0, coalesce({num(path, \'INTEGER\')}, 0))"', "'INTEGER'", "'integer'"),
            ('f"{num(\'latency_s\', \'REAL\')}, {num(\'attempts\', \'INTEGER\')}, "',
             "'REAL'", "'XXREALXX'"),
            ('f"{num(\'latency_s\', \'REAL\')}, {num(\'attempts\', \'INTEGER\')}, "',
             "'REAL'", "'real'"),
            ('f"{num(\'latency_s\', \'REAL\')}, {num(\'attempts\', \'INTEGER\')}, "',
             "'INTEGER'", "'XXINTEGERXX'"),
            ('f"{num(\'latency_s\', \'REAL\')}, {num(\'attempts\', \'INTEGER\')}, "',
             "'INTEGER'", "'integer'"),
            ('f"WHERE kind = \'model_call\' AND {v} IS NOT NULL") for v in ("run_id", "endpoint")]',
             '"run_id"', '"RUN_ID"'),
            ('f"WHERE kind = \'model_call\' AND {v} IS NOT NULL") for v in ("run_id", "endpoint")]',
             '"endpoint"', '"ENDPOINT"'))],
        *[('for stmt in _call_facts("event_rows"):', f"for stmt in _call_facts({x}):",
           "the source is only compared with 'NEW' (the trigger's): any other value selects "
           "every stored call") for x in ("None", '"XXevent_rowsXX"', '"EVENT_ROWS"')],
        ('for stmt in (*filter(str.strip, FACT_TABLES.split(";")), *_CALL_FACTS_TRIGGERS):',
         'for stmt in (*filter(None, FACT_TABLES.split(";")), *_CALL_FACTS_TRIGGERS):',
         _NO_BLANK_STATEMENT),
        ('for stmt in filter(str.strip, _SCHEMA.split(";")):  # executescript() would commit',
         'for stmt in filter(None, _SCHEMA.split(";")):  # executescript() would commit',
         _NO_BLANK_STATEMENT),
        ('for stmt in (*filter(str.strip, EVENT_TABLES.split(";")), *_EVENTS_VIEW):',
         'for stmt in (*filter(None, EVENT_TABLES.split(";")), *_EVENTS_VIEW):',
         _NO_BLANK_STATEMENT),
    ],
    "sweepbench/store/lock.py": [
        ('holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"',
         'holder = os.pread(fd, 32, 0).decode("ASCII", "replace").strip() or "unknown"',
         "codec names are looked up case-insensitively: both name the same ASCII codec"),
        ("os.ftruncate(fd, 0)", "os.ftruncate(fd, 1)",
         "in acquire(), the pid written next at offset 0 (at least two bytes) overwrites the one "
         "byte the file is cut to, so the file ends up holding the pid line alone either way "
         "(the same change in release() is killed: a released lock file is empty)"),
    ],
    "sweepbench/store/merge.py": [
        *[e for line, literal in (
            ('db.execute("INSERT OR IGNORE INTO runs SELECT * FROM src.runs")',
             "INSERT OR IGNORE INTO runs SELECT * FROM src.runs"),
            ('db.execute("INSERT OR IGNORE INTO run_episodes SELECT * FROM src.run_episodes")',
             "INSERT OR IGNORE INTO run_episodes SELECT * FROM src.run_episodes"),
            ('db.execute("CREATE TEMP TABLE wins (episode_key TEXT PRIMARY KEY)")',
             "CREATE TEMP TABLE wins (episode_key TEXT PRIMARY KEY)"),
            ("WHERE m.episode_key IS NULL OR {_RANK.format('s')} < {_RANK.format('m')}\"\"\")",
             "'s'"),
            ("WHERE m.episode_key IS NULL OR {_RANK.format('s')} < {_RANK.format('m')}\"\"\")",
             "'m'"),
            ('for table in ("episodes", "events", "judgments"):', '"episodes"'),
            ('for table in ("episodes", "events", "judgments"):', '"judgments"'),
            ('"WHERE episode_key IN (SELECT episode_key FROM wins)")',
             "WHERE episode_key IN (SELECT episode_key FROM wins)"),
            ('db.execute("DROP TABLE temp.wins")', "DROP TABLE temp.wins"),
            ('db.execute("PRAGMA journal_mode=WAL")', "PRAGMA journal_mode=WAL"),
            ('db.execute("ATTACH DATABASE ? AS src", (str(Path(p).resolve()),))',
             "ATTACH DATABASE ? AS src"),
            *[(f'db.execute("{word}")', word) for word in ("BEGIN", "COMMIT", "ROLLBACK")],
            ('db.execute("DETACH DATABASE src")', "DETACH DATABASE src"),
        ) for e in _sql_case(line, literal)],
        ("db = sqlite3.connect(out, isolation_level=None)", "db = sqlite3.connect(out, )",
         "the module's own transaction handling (the default isolation level) only begins a "
         "transaction before an INSERT, UPDATE or DELETE outside one; every one of those runs "
         "between the explicit BEGIN and COMMIT"),
        ("RunStore(p, create=False).close()  # validates (a store, a schema we read); migrates",
         "RunStore(p, create=None).close()  # validates (a store, a schema we read); migrates",
         "create is only read as a truth value (a missing input is refused either way)"),
        *[e for line, literal in (
            ('problems = [r[0] for r in c.execute("PRAGMA quick_check(3)")]',
             "PRAGMA quick_check(3)"),
            ('db.execute("INSERT OR IGNORE INTO codec_dicts SELECT * FROM src.codec_dicts")',
             "INSERT OR IGNORE INTO codec_dicts SELECT * FROM src.codec_dicts"),
            ('db.execute("CREATE TEMP TABLE wins (episode_key TEXT PRIMARY KEY, whole INTEGER)")',
             "CREATE TEMP TABLE wins (episode_key TEXT PRIMARY KEY, whole INTEGER)"),
            ('db.execute("CREATE TEMP TABLE cut (ep INTEGER, journal TEXT, seq INTEGER)")',
             "CREATE TEMP TABLE cut (ep INTEGER, journal TEXT, seq INTEGER)"),
            *[(_MERGE_RANK, f"'{name}'") for name in ("s", "src", "m", "main")],
            *[('for table in ("episodes", "events", "judgments", "episode_facts"):', f'"{name}"')
              for name in ("judgments", "episode_facts")],
            ('"WHERE episode_key IN (SELECT episode_key FROM wins WHERE whole)")',
             "WHERE episode_key IN (SELECT episode_key FROM wins WHERE whole)"),
            ('records = db.execute("SELECT count(*) FROM wins WHERE NOT whole").fetchone()[0]',
             "SELECT count(*) FROM wins WHERE NOT whole"),
            ('"SELECT count(*) FROM src.event_rows r JOIN src.event_keys k ON k.ep = r.ep "',
             "SELECT count(*) FROM src.event_rows r JOIN src.event_keys k ON k.ep = r.ep "),
            ('"OR NOT EXISTS (SELECT 1 FROM src.episodes s WHERE s.episode_key = k.episode_key))"',
             "OR NOT EXISTS (SELECT 1 FROM src.episodes s WHERE s.episode_key = k.episode_key))"),
            ('db.execute("DROP TABLE temp.cut")', "DROP TABLE temp.cut"),
        ) for e in _sql_case(line, literal)],
        ('db.create_function("sb_record_ok", 3, record_ok)',
         'db.create_function("SB_RECORD_OK", 3, record_ok)',
         "SQLite looks SQL functions up without regard to case"),
    ],
    "sweepbench/results/export/calls.py": [
        *_sql_case('order = " ORDER BY k.episode_key, f.journal, f.seq"',
                   " ORDER BY k.episode_key, f.journal, f.seq"),
        ("texts: list[str | None] = [None] * (max(ids, default=0) + 1)",
         "texts: list[str | None] = [None] * (max(ids, default=1) + 1)", _EXPORT_SLOT),
        ("lookup = np.zeros(max(eps, default=0) + 1, dtype=np.int64)",
         "lookup = np.zeros(max(eps, default=1) + 1, dtype=np.int64)", _EXPORT_SLOT),
        ("lookup = np.zeros(max(eps, default=0) + 1, dtype=np.int64)",
         "lookup = np.zeros(max(eps, default=0) + 2, dtype=np.int64)", _EXPORT_SLOT),
        ("a = np.array(rows, dtype=np.float64).reshape(-1, 11)",
         "a = np.array(rows, dtype=None).reshape(-1, 11)", _EXPORT_FLOATS),
        ("return CallChunk(keys, ep, np.array(rows, dtype=np.float64), odd, list(texts), prices)",
         "return CallChunk(keys, ep, np.array(rows, dtype=None), odd, list(texts), prices)",
         _EXPORT_FLOATS),
        ("return CallChunk(keys, ep, np.array(rows, dtype=np.float64), odd, list(texts), prices)",
         "return CallChunk(keys, ep, np.array(rows, ), odd, list(texts), prices)",
         _EXPORT_FLOATS),
        ("a = np.array(rows, dtype=np.float64).reshape(-1, 11)",
         "a = np.array(rows, ).reshape(-1, 11)", _EXPORT_FLOATS),
        *[('return float("nan") if x is None else x', after,
           "numpy stores None as NaN in a float array, and float() reads NAN as nan")
          for after in ('return float("nan") if (x is None) and False else x',
                        'return float("NAN") if x is None else x')],
        ("a = np.array(rows, dtype=np.float64).reshape(-1, 11)",
         "a = np.array(rows, dtype=np.float64).reshape(-2, 11)", _EXPORT_RESHAPE),
        ("a = a.reshape(-1, 12)", "a = a.reshape(-2, 12)", _EXPORT_RESHAPE),
        ("ints = [None if i in (2, 10) else a[:, i].astype(np.int64) for i in range(12)]",
         "ints = [None if (i in (2, 10)) and False else a[:, i].astype(np.int64) for i in range(12)]",
         "ts and latency are read from the float array itself; their integer copies are never "
         "read"),
        *[('agent = np.array([t == "agent" for t in texts], dtype=bool)', after,
           "a list of bools makes a bool array without the hint")
          for after in ('agent = np.array([t == "agent" for t in texts], dtype=None)',
                        'agent = np.array([t == "agent" for t in texts], )')],
        *[('_, who, how = (j.split("|", 2) + ["", ""])[:3] if j else ("", None, None)', after,
           "the episode's own journal (\"\") splits into empty parts, which are null like the "
           "else branch's, and the first part is never read")
          for after in ('_, who, how = (j.split("|", 2) + ["", ""])[:3] if (j) or True else '
                        '("", None, None)',
                        '_, who, how = (j.split("|", 2) + ["", ""])[:3] if j else '
                        '("XXXX", None, None)')],
        *[("attempts = np.where(calls.attempts_null | (calls.attempts == 0), 1, calls.attempts)",
           after, "a retry count is max(0, attempts - 1): 0 for attempts 0 and 1 alike, and an "
           "attempts left unrecorded is held as 0")
          for after in ("attempts = np.where(None, 1, calls.attempts)",
                        "attempts = np.where(calls.attempts_null & (calls.attempts == 0), 1, "
                        "calls.attempts)",
                        "attempts = np.where(calls.attempts_null | (calls.attempts == 1), 1, "
                        "calls.attempts)")],
    ],
    "sweepbench/results/export/tables.py": [
        ("for i in range(0, len(keys), CHUNK):", "for i in range(0, len(keys), ):",
         "a step of 1 reads overlapping chunks: the same judgments again, gathered into sets "
         "and into dicts keyed by episode"),
        *[('with np.errstate(invalid="ignore", divide="ignore"):', after,
           "the only division is a sum of latencies by their count, and the sum is 0 where the "
           "count is: 0 / 0 is invalid, never a division of a nonzero by zero")
          for after in ('with np.errstate(invalid="ignore", divide=None):',
                        'with np.errstate(invalid="ignore", ):')],
        *[('heads = [plan.sources.get(r["benchmark"], {}) for r in rows]', after, _EXPORT_OWN)
          for after in ('heads = [plan.sources.get(r["benchmark"], None) for r in rows]',
                        'heads = [plan.sources.get(r["benchmark"], ) for r in rows]')],
        *[(_HEADLINE, _HEADLINE.replace(old, new), _EXPORT_OWN)
          for old, new in (('(None, None))', 'None)'), ('(None, None))', ')'),
                           ('get(k, "")', 'get(k, None)'), ('get(k, "")', 'get(k, )'),
                           ('get(k, "")', 'get(k, "XXXX")'))],
        ('cols["details_json"] = [encode(j["details"]).decode("utf-8") for j in judgments]',
         'cols["details_json"] = [encode(j["details"]).decode("UTF-8") for j in judgments]',
         _UTF8_CASE),
        *[('if k not in ("passed", "score"))', f'if k not in ({a}, {b}))',
           "a detail named passed or score makes the column its pair's own passed / score "
           "already took, which the loop then skips")
          for a, b in (('"XXpassedXX"', '"score"'), ('"PASSED"', '"score"'),
                       ('"passed"', '"XXscoreXX"'), ('"passed"', '"SCORE"'))],
        ('return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_") or "x"',
         'return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("XX_XX") or "x"',
         "the text is lower case by then: no X to strip"),
        ("for j in store.judgments(keys):", "for j in store.judgments(None):",
         "reads every episode's judgments; each row looks up its own key (the plan's pass over "
         "the judgments, where more would add columns, is tested)"),
        ("facts = store.episode_facts(keys) if store.has_facts else store.records(keys)",
         "facts = store.episode_facts(keys) if store.has_facts else store.records(None)",
         "reads every record; each row looks up its own key"),
        ("facts = store.episode_facts(keys) if store.has_facts else store.records(keys)",
         "facts = store.episode_facts(keys) if (store.has_facts) and False else "
         "store.records(keys)",
         "the records hold the numbers the facts were extracted from (schema 6): the same "
         "cells, read more slowly"),
    ],
    "sweepbench/results/export/writers.py": [
        ('return iso_utc(v.timestamp()) or ""', 'return iso_utc(v.timestamp()) or "XXXX"',
         "a datetime's timestamp is finite: iso_utc never gives None for it"),
        *[('table_chunks(store, view, plan, "episodes", benchmarks))[str(path)]',
           f"table_chunks(store, view, plan, {name}, benchmarks))[str(path)]",
           "table_chunks builds the episodes table for any name but judgments and calls")
          for name in ("None", '"XXepisodesXX"', '"EPISODES"')],
        ('f.write(orjson.dumps(line).decode("utf-8"))',
         'f.write(orjson.dumps(line).decode("UTF-8"))', _UTF8_CASE),
        ('else v for c, v in zip(self.names, row)}).decode("utf-8"))',
         'else v for c, v in zip(self.names, row)}).decode("UTF-8"))', _UTF8_CASE),
        *[('if typ != "timestamp":', f'if typ != "{name}":',
           "a list of timestamps then goes through _value's datetimes, which pyarrow turns "
           "into the same milliseconds (_ms copies that conversion; tests compare them)")
          for name in ("XXtimestampXX", "TIMESTAMP")],
        *[(_SECONDS, _SECONDS.replace(a, b), _PARQUET_NULL)
          for a, b in (("dtype=np.float64),", "dtype=None),"), (", dtype=np.float64),", ", ),"),
                       ("0.0 if v is None", "0.0 if (v is None) and False"),
                       ("0.0 if v is None", "1.0 if v is None"))],
        *[("np.array([v is None for v in seconds], dtype=bool))", after,
           "a list of bools makes a bool array without the hint")
          for after in ("np.array([v is None for v in seconds], dtype=None))",
                        "np.array([v is None for v in seconds], ))")],
        ("values = _ms(np.where(null, 0.0, values))", "values = _ms(np.where(null, 1.0, values))",
         _PARQUET_NULL),
        *[(before, after, _ARROW_CAST) for before, after in (
            ("return pa.array(col.texts, pa.string()).take(pa.array(col.codes))",
             "return pa.array(col.texts, None).take(pa.array(col.codes))"),
            ("return pa.array(col.texts, pa.string()).take(pa.array(col.codes))",
             "return pa.array(col.texts, ).take(pa.array(col.codes))"),
            ("return pa.array([_value(v, typ) for v in col], self.arrow[typ])",
             "return pa.array([_value(v, typ) for v in col], None)"),
            ("return pa.array([_value(v, typ) for v in col], self.arrow[typ])",
             "return pa.array([_value(v, typ) for v in col], )"),
            ("return pa.array(values, self.arrow[typ], mask=null)",
             "return pa.array(values, None, mask=null)"),
            ("return pa.array(values, self.arrow[typ], mask=null)",
             "return pa.array(values, mask=null)"))],
        *[("row_group_size=self.rows)", after,
           "one write_table call writes its rows as one row group below pyarrow's default "
           "size (1,048,576 rows); BATCH is 65,536 rows and a chunk's calls fewer than that "
           "default in every store measured")
          for after in ("row_group_size=None)", ")")],
        *[("self.writer.write_table(self.pa.Table.from_batches(self.pending, self.schema),",
           after, "the batches carry the schema they were built with")
          for after in ("self.writer.write_table(self.pa.Table.from_batches(self.pending, None),",
                        "self.writer.write_table(self.pa.Table.from_batches(self.pending, ),")],
    ],
    "sweepbench/results/render/terminal.py": [
        ('report["models"], state_column=False))', 'report["models"], state_column=None))',
         _TRUTH),
        *[("Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,", after, _TRUTH)
          for after in ("Table(box=box.SIMPLE_HEAD, show_edge=None, pad_edge=False,",
                        "Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=None,")],
        ('yield literal(title, "bold")', 'yield literal(title, "BOLD")',
         "rich reads style names without regard to case"),
        ('table.add_column(_t(self.head[i]), width=w, overflow="fold",',
         "table.add_column(_t(self.head[i]), width=w, overflow=None,",
         "rich folds a table cell's long word when the column's overflow is None, as with "
         "\"fold\" (the test of a folded word kills the ellipsis, rich's Column default)"),
        *[('justify="left" if i in self.wrap else "right")',
           f'justify="{j}" if i in self.wrap else "right")',
           "rich justifies a cell left unless told center, right or full")
          for j in ("XXleftXX", "LEFT")],
    ],
    "sweepbench/results/export/inspect_log.py": [
        ('model=name, domain=r["domain"], trial=r["trial"],',
         'model=name, domain=None, trial=r["trial"],',
         "the Avg@k and k that _headlines reads of summarize come from the task keys, which "
         "hold the domain; Outcome.domain only groups the per-domain rates, not read here"),
        ('None if j["passed"] is None else float(j["passed"]))',
         'None if (j["passed"] is None) and False else float(j["passed"]))',
         "a judgment with neither score nor verdict is never scored (export_inspect skips it, "
         "and inspect's Score refuses a None value): the branch is reached with a score only"),
        ("usage[rec.model] += rec.agent_usage", "usage[rec.model] = rec.agent_usage",
         "the agent's usage is the first entry of a new table: adding it to nothing is "
         "setting it"),
        ("costs[judge] = costs.get(judge, 0.0) + cost",
         "costs[judge] = costs.get(None, 0.0) + cost",
         "each judge appears once in an episode's judge usage (a table by judge): costs has "
         "no entry for it yet"),
        *[("verdicts = store.judgments(keys, keep=lambda details: None)", after,
           "headline_sources reads the verdicts' judge, method and passed, never their details "
           "(left out only to hold less)")
          for after in ("verdicts = store.judgments(keys, keep=None)",
                        "verdicts = store.judgments(keys, )",
                        "verdicts = store.judgments(keys, keep=lambda details: 0)")],
        *[("sample_ids=sorted({x.id for x in samples}, key=str)),", after,
           "sample ids are text (task ids), so sorting them as text or as they are is one "
           "order; and inspect's writer fills a dataset's sample ids from its samples")
          for after in ("sample_ids=sorted({x.id for x in samples}, key=None)),",
                        "sample_ids=sorted({x.id for x in samples}, )),", "),")],
        ("completed_at=iso_utc(max(r[\"finished_at\"] or 0 for r in rows)),",
         "completed_at=iso_utc(max(r[\"finished_at\"] or 1 for r in rows)),",
         "a log holds finished episodes only, and a finished row has its finish time"),
        ('stamp = (iso_utc(created) or "").replace(":", "-").replace(".", "-")',
         'stamp = (iso_utc(created) or "XXXX").replace(":", "-").replace(".", "-")',
         "created is a run's creation time or an episode's start, never missing"),
        ("finished = {k for i in range(0, len(keys), CHUNK) for k in store.records(keys[i:i + CHUNK])}",
         "finished = {k for i in range(0, len(keys), ) for k in store.records(keys[i:i + CHUNK])}",
         "a step of 1 reads overlapping chunks: the same records again, gathered into a set"),
        *[('format="eval"), suffix=".eval")', after,
           "write_eval_log is told the format: the temporary file's name does not choose it")
          for after in ('format="eval"), suffix=None)', 'format="eval"), )',
                        'format="eval"), suffix="XX.evalXX")', 'format="eval"), suffix=".EVAL")')],
        ('format="eval"), suffix=".eval")', '), suffix=".eval")',
         "without the format, write_eval_log takes it from the temporary file's name, which "
         "ends in .eval"),
    ],
    "sweepbench/results/render/html.py": [
        ('parts.append(_board(report["models"], state=False))',
         'parts.append(_board(report["models"], state=None))', _TRUTH),
        *[(before, after, "a table of at most 11 number columns splits into one part, which is "
           "the table itself") for before, after in (
            ("n = len(head) - text_cols", "n = len(head) + text_cols"),
            ("if n <= _MAX_COLUMNS:", "if n < _MAX_COLUMNS:"))],
        ("[[k, _value(v)] for k, v in facts if v is not None], text_cols=2))",
         "[[k, _value(v)] for k, v in facts if v is not None], text_cols=3))",
         "the settings table has two columns: both are text either way"),
        ("w, h = _png_size(base64.b64decode(b64[:64]))",
         "w, h = _png_size(base64.b64decode(b64[:65]))",
         "the size is in the first 24 bytes; b64decode ignores the odd character past the 64"),
        ('out[name] = base64.b64encode(buf.getvalue()).decode("ascii")',
         'out[name] = base64.b64encode(buf.getvalue()).decode("ASCII")',
         "codec names ignore case"),
        *[('return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")', after, "int.from_bytes reads big-endian unless told otherwise (Python 3.11)")
          for after in ('return int.from_bytes(head[16:20], ), int.from_bytes(head[20:24], "big")',
                        'return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], )')],
    ],
    "sweepbench/results/render/figures.py": [
        ("axes = fig.subplots(rows, cols, squeeze=False).ravel().tolist()",
         "axes = fig.subplots(rows, cols, squeeze=None).ravel().tolist()", _TRUTH),
        ("ax.set_visible(False)", "ax.set_visible(None)",
         "matplotlib draws an artist only when its visible flag is true: None hides it too"),
        *[(line, line.replace('"left"', '"LEFT"'),
           "matplotlib reads a title's loc in lower case")
          for line in ('ax.set_title(_t(f"{b}: {title}"), loc="left")',
                       'ax.set_title("Agent model-call latency", loc="left")')],
        *[("draw(ax, s, m, colors[m], field)", "draw(ax, s, None, colors[m], field)",
           "neither draw function reads the model's name (its colour is passed)")],
        *[(_GRAY, _GRAY.replace(a, b), "matplotlib reads colour names without regard "
           "to case") for a, b in (('color="gray", ls="-")', 'color="GRAY", ls="-")'),
                                   ('color="gray", ls="--")', 'color="GRAY", ls="--")'))],
        ("decades = math.log10(hi / lo) if lo > 0 else 6",
         "decades = math.log10(hi / lo) if lo > 0 else 7",
         "any span past 5 decades gets decade ticks: 6 and 7 alike"),
        ("axis.set_major_locator(LogLocator(base=10, subs=subs))",
         "axis.set_major_locator(LogLocator(subs=subs))", "LogLocator's base is 10 by default"),
        ("axes = fig.subplots(len(benches), 1, squeeze=False,",
         "axes = fig.subplots(len(benches), 1, squeeze=None,", _TRUTH),
        ("axes = fig.subplots(len(benches), 1, squeeze=False,",
         "axes = fig.subplots(len(benches), squeeze=False,",
         "subplots has one column unless told otherwise"),
        ("marks = False", "marks = None", _TRUTH),
        (_GRAY, _GRAY.replace('color="gray", ls="-")', 'color="gray", )'),
         "a Line2D's line style is solid unless told otherwise"),
        ('ax.set_title(wrap_label(title, 22), loc="left")',
         'ax.set_title(wrap_label(title, 22), loc="LEFT")',
         "matplotlib reads a title's loc in lower case"),
        *[(line, line.replace(c, c.upper()), "matplotlib reads colour names without regard to "
           "case") for line, c in (
            ('ax.plot(s["pass_at_k"], y, marker="^", color="black", ms=5, ls="none")', "black"),
            ('ax.plot(s["pass_hat_k"], y, marker="v", color="dimgray", ms=5, ls="none")',
             "dimgray"),
            ('_legend(fig, [Line2D([], [], marker="^", color="black", ls="none"),', "black"),
            ('Line2D([], [], marker="v", color="dimgray", ls="none")],', "dimgray"))],
        ("ax.set_title(_t(f\"{b}: {k_text} with 95% CI (pass from {src['label']})\"), loc=\"left\",",
         "ax.set_title(_t(f\"{b}: {k_text} with 95% CI (pass from {src['label']})\"), loc=\"LEFT\",",
         "matplotlib reads a title's loc in lower case"),
        *[('fig = Figure(figsize=(width_in, max(2.2, height_in)), dpi=DPI, layout="constrained")',
           after, "matplotlib's default figure dpi is 100, which DPI is")
          for after in ('fig = Figure(figsize=(width_in, max(2.2, height_in)), dpi=None, '
                        'layout="constrained")',
                        'fig = Figure(figsize=(width_in, max(2.2, height_in)), '
                        'layout="constrained")')],
        *[("axis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))", after,
           "without decimals PercentFormatter picks them from the axis' span, and every "
           "percent axis here spans 0-100%: no decimals either way")
          for after in ("axis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=None))",
                        "axis.set_major_formatter(PercentFormatter(xmax=1.0, ))")],
        *[("ax.grid(True, alpha=0.3)", after,
           "matplotlib turns the grid on when line properties are given and the flag is not")
          for after in ("ax.grid(None, alpha=0.3)", "ax.grid(alpha=0.3)")],
        ('ax.set_title("Cost against score (bars: 95% CI)", loc="left")',
         'ax.set_title("Cost against score (bars: 95% CI)", loc="LEFT")',
         "matplotlib reads a title's loc in lower case"),
        ('handles += [Line2D([], [], color="gray", marker=mk, ls="none") for mk in shapes.values()]',
         'handles += [Line2D([], [], color="GRAY", marker=mk, ls="none") for mk in shapes.values()]',
         "matplotlib reads colour names without regard to case"),
        ("continue", "break",
         "rows without an average sort last (and domains' cells are looked up, not skipped): "
         "no row follows the one skipped"),
        ('ax.errorbar(s["avg"], y, xerr=[[s["avg"] - lo], [hi - s["avg"]]], fmt="none",',
         'ax.errorbar(s["avg"], y, xerr=[[s["avg"] - lo], [hi - s["avg"]]], fmt="NONE",',
         "matplotlib reads the format \"none\" without regard to case"),
        ('ecolor="black", capsize=3, lw=1)', 'ecolor="BLACK", capsize=3, lw=1)',
         "matplotlib reads colour names without regard to case"),
        ('color="white", alpha=0.45, hatch="////", edgecolor=colors[m], lw=0)',
         'color="WHITE", alpha=0.45, hatch="////", edgecolor=colors[m], lw=0)',
         "matplotlib reads colour names without regard to case"),
        ("ax.set_xlim(0, 1.02)", "ax.set_xlim(None, 1.02)",
         "the bars start at 0 and matplotlib's autoscaling keeps a bar's base as the limit "
         "(sticky edges): the left limit is 0 either way (the test reads it)"),
        ("axes[0].set_yticks(centers, labels)", "axes[1].set_yticks(centers, labels)",
         "the four panels share one y axis (sharey): its ticks and labels are set on all of "
         "them at once"),
    ],
    "sweepbench/results/export/columns.py": [
        ("count=len(values))", ")", _DTYPE),
    ],
    "sweepbench/results/selection.py": [
        ('if old is None or ((r["started_at"] or 0.0, r["episode_key"]) > '
         '(old["started_at"] or 0.0, old["episode_key"])):',
         'if old is None or ((r["started_at"] or 0.0, r["episode_key"]) >= '
         '(old["started_at"] or 0.0, old["episode_key"])):',
         "rows come to _newest one per episode key (load_view keeps one): no two are equal"),
        ('specs = s.specs() if selection.splits else {}  # what --split matches, only then',
         'specs = s.specs() if (selection.splits) or True else {}  # what --split matches, '
         'only then',
         "the specs are read by keeps() only for --split: read always, nothing else changes "
         "(only slower)"),
        ('names = {row["domain"]} | specs | {s.partition(":")[2] for s in specs}',
         'names = {row["domain"]} | specs | {s.rpartition(":")[2] for s in specs}',
         "a spec holds one colon at most (name[@release][:domains], BenchmarkSpec): with one, "
         "both give its domains; with none, partition adds '' and rpartition the spec itself, "
         "already among the names: only an empty split name (--split '', no benchmark's "
         "split) could tell them apart"),
    ],
    "sweepbench/results/fmt.py": [
        *[(_FAMILY, _FAMILY.replace(before, after),
           "fam, the key's first part, already orders T1's families; within one of them every "
           "key has the same head, so the second part ties whatever it is") for before, after in (
              ("fam == len(_FIRST) else", "(fam == len(_FIRST)) or True else"),
              ('else "",', 'else "XXXX",'))],
        ('return f"{x:.0f}" if a >= 10 or x == int(x) else f"{x:.2g}"',
         'return f"{x:.0f}" if a > 10 or x == int(x) else f"{x:.2g}"',
         "a is 10 only for x = 10 or -10, integers, which the other condition formats alike"),
        ('return f"{x:.0f}" if a >= 10 or x == int(x) else f"{x:.2g}"',
         'return f"{x:.0f}" if a >= 11 or x == int(x) else f"{x:.2g}"',
         "for 10 <= a < 11 two significant digits are the units: .2g rounds as .0f does"),
        ("break_long_words=True, break_on_hyphens=False)) or text",
         "break_on_hyphens=False)) or text", "break_long_words is True by default in textwrap"),
        ("break_long_words=True, break_on_hyphens=False)) or text",
         "break_long_words=True, break_on_hyphens=None)) or text",
         "textwrap splits on hyphens only when break_on_hyphens is True, and breaks a long word "
         "at a hyphen only when it is truthy: None acts as False in both"),
    ],
    "sweepbench/store/call_facts.py": [
        ('return msgspec.json.format(raw, indent=-1).decode("utf-8")',
         'return msgspec.json.format(raw, indent=-2).decode("utf-8")', _NEG_INDENT),
        ('return msgspec.json.format(raw, indent=-1).decode("utf-8")',
         'return msgspec.json.format(raw, indent=-1).decode("UTF-8")', _UTF8_CASE),
        ('return data.decode("utf-8") if head in (b"[", b"{") else None',
         'return data.decode("UTF-8") if head in (b"[", b"{") else None', _UTF8_CASE),
        ('None if statuses is None else _encode(statuses).decode("utf-8"),',
         'None if statuses is None else _encode(statuses).decode("UTF-8"),', _UTF8_CASE),
        ('if type(value) is str:',
         'if type(None) is str:', _STR_JSON),
        ('if type(value) in _PLAIN:',
         'if type(None) in _PLAIN:', _PLAIN_JSON),
        ('failures = (None if type(failures) is list and not failures else _text_of(failures))',
         'failures = (None if (type(failures) is list and not failures) and False else _text_of(failures))', _EMPTY_FAILURES),
        ('failures = (None if type(failures) is list and not failures else _text_of(failures))',
         'failures = (None if type(None) is list and not failures else _text_of(failures))', _EMPTY_FAILURES),
        ('self._odd = False  # a row given since the last insert has stalls, replica or failures',
         'self._odd = None  # a row given since the last insert has stalls, replica or failures', _TRUTH),
        ('self._odd = False',
         'self._odd = None', _TRUTH),
        ('self._odd = False  # a row given since the last insert has stalls, replica or failures',
         'self._odd = True  # a row given since the last insert has stalls, replica or failures', _ODD_ANYWAY),
        ('self._odd = False',
         'self._odd = True', _ODD_ANYWAY),
        ('self._conn.execute("INSERT OR IGNORE INTO fact_texts (text) VALUES (?)", (text,))',
         'self._conn.execute("insert or ignore into fact_texts (text) values (?)", (text,))', _SQL_CASE),
        ('self._conn.execute("INSERT OR IGNORE INTO fact_texts (text) VALUES (?)", (text,))',
         'self._conn.execute("INSERT OR IGNORE INTO FACT_TEXTS (TEXT) VALUES (?)", (text,))', _SQL_CASE),
        ('"SELECT id FROM fact_texts WHERE text = ?", (text,)).fetchone()[0]',
         '"select id from fact_texts where text = ?", (text,)).fetchone()[0]', _SQL_CASE),
        ('"SELECT id FROM fact_texts WHERE text = ?", (text,)).fetchone()[0]',
         '"SELECT ID FROM FACT_TEXTS WHERE TEXT = ?", (text,)).fetchone()[0]', _SQL_CASE),
        ('found = self._ids.get(text)',
         'found = None', _ID_CACHE),
        ('found = self._ids.get(text)',
         'found = self._ids.get(None)', _ID_CACHE),
        ('row = (ep, journal, seq, ids.get(run_id) or text_id(run_id),',
         'row = (ep, journal, seq, ids.get(None) or text_id(run_id),', _ID_CACHE),
        ('ids.get(endpoint) or text_id(endpoint), ts, ids.get(role) or text_id(role),',
         'ids.get(None) or text_id(endpoint), ts, ids.get(role) or text_id(role),', _ID_CACHE),
        ('ids.get(endpoint) or text_id(endpoint), ts, ids.get(role) or text_id(role),',
         'ids.get(endpoint) or text_id(endpoint), ts, ids.get(None) or text_id(role),', _ID_CACHE),
        ('ids.get(statuses) or text_id(statuses))',
         'ids.get(None) or text_id(statuses))', _ID_CACHE),
    ],
    "sweepbench/store/codec.py": [
        ('raise Damaged(f"compressed and damaged: declares {\'no\' if size < 0 else size} decoded "',
         'raise Damaged(f"compressed and damaged: declares {\'no\' if size <= 0 else size} decoded "', _SIZE_SAID),
        ('raise Damaged(f"compressed and damaged: declares {\'no\' if size < 0 else size} decoded "',
         'raise Damaged(f"compressed and damaged: declares {\'no\' if size < 1 else size} decoded "', _SIZE_SAID),
        ('return dctx.decompress(data, max_output_size=MAX_DECODED)',
         'return dctx.decompress(data, )', _DECLARED),
        ('def _loader(conn: sqlite3.Connection, schema: str = "main") -> Callable[[int], bytes | None]:',
         'def _loader(conn: sqlite3.Connection, schema: str = "MAIN") -> Callable[[int], bytes | None]:', _SQL_CASE),
        ('def register(conn: sqlite3.Connection, schema: str = "main") -> Unpacker:',
         'def register(conn: sqlite3.Connection, schema: str = "MAIN") -> Unpacker:', _SQL_CASE),
        ('schema: str = "main") -> Callable[[], list[tuple[int, object]]]:',
         'schema: str = "MAIN") -> Callable[[], list[tuple[int, object]]]:', _SQL_CASE),
        ('if value == seen[0]:',
         'if value == seen[1]:', _LAST_TEXT),
        ('text = unpacker.payload(value).decode("utf-8")',
         'text = unpacker.payload(value).decode("UTF-8")', _UTF8_CASE),
        ('conn.create_function("sb_json", 1, sb_json, deterministic=True)',
         'conn.create_function("sb_json", 1, sb_json, deterministic=None)', _DETERMINISTIC),
        ('conn.create_function("sb_json", 1, sb_json, deterministic=True)',
         'conn.create_function("sb_json", 1, sb_json, )', _DETERMINISTIC),
        ('conn.create_function("sb_json", 1, sb_json, deterministic=True)',
         'conn.create_function("sb_json", 1, sb_json, deterministic=False)', _DETERMINISTIC),
        ('conn.create_function("sb_json", 1, sb_json, deterministic=True)',
         'conn.create_function("SB_JSON", 1, sb_json, deterministic=True)', _SQL_CASE),
        ('conn.create_function("sb_record", 2, sb_record)',
         'conn.create_function("SB_RECORD", 2, sb_record)', _SQL_CASE),
        ('stored = conn.execute("SELECT grp, id FROM codec_dicts ORDER BY rowid").fetchall()',
         'stored = conn.execute("select grp, id from codec_dicts order by rowid").fetchall()', _SQL_CASE),
        ('stored = conn.execute("SELECT grp, id FROM codec_dicts ORDER BY rowid").fetchall()',
         'stored = conn.execute("SELECT GRP, ID FROM CODEC_DICTS ORDER BY ROWID").fetchall()', _SQL_CASE),
        ('self._conn.execute("INSERT OR IGNORE INTO codec_dicts (id, grp, dict) VALUES (?, ?, ?)",',
         'self._conn.execute("insert or ignore into codec_dicts (id, grp, dict) values (?, ?, ?)",', _SQL_CASE),
        ('self._conn.execute("INSERT OR IGNORE INTO codec_dicts (id, grp, dict) VALUES (?, ?, ?)",',
         'self._conn.execute("INSERT OR IGNORE INTO CODEC_DICTS (ID, GRP, DICT) VALUES (?, ?, ?)",', _SQL_CASE),
        ('self._sample(grp, data.encode("utf-8") if isinstance(data, str) else data)',
         'self._sample(grp, data.encode("UTF-8") if isinstance(data, str) else data)', _UTF8_CASE),
        ('return data if isinstance(data, str) else data.decode("utf-8")',
         'return data if isinstance(data, str) else data.decode("UTF-8")', _UTF8_CASE),
        ('raw = data.encode("utf-8") if isinstance(data, str) else data',
         'raw = data.encode("UTF-8") if isinstance(data, str) else data', _UTF8_CASE),
        ('return raw.decode("utf-8")',
         'return raw.decode("UTF-8")', _UTF8_CASE),
        ('raw = data if type(data) is bytes else data.encode("utf-8")',
         'raw = data if type(data) is bytes else data.encode("UTF-8")', _UTF8_CASE),
        ('packing = self._compressors.get(grp)',
         'packing = None', _GENERAL_PATH),
        ('packing = self._compressors.get(grp)',
         'packing = self._compressors.get(None)', _GENERAL_PATH),
        ('if packing is not None and type(data) is bytes and len(data) <= MAX_DECODED:',
         'if packing is not None and type(None) is bytes and len(data) <= MAX_DECODED:', _GENERAL_PATH),
        ('if packing is not None and type(data) is bytes and len(data) <= MAX_DECODED:',
         'if packing is not None and type(data) is bytes and len(data) < MAX_DECODED:', _GENERAL_PATH),
        ('if self._kept_bytes > KEPT_BYTES:',
         'if self._kept_bytes >= KEPT_BYTES:', _LET_GO_CHECKS),
        ('end = seqs[-1] + 1 if seqs else 0',
         'end = seqs[-1] + 1 if (seqs) or True else 0', _WHOLE_HAS_ROWS),
        ('end = seqs[-1] + 1 if seqs else 0',
         'end = seqs[-1] + 1 if seqs else 1', _WHOLE_HAS_ROWS),
        ('mine = kept.get(seq)',
         'mine = None', _KEPT_CACHE),
        ('mine = kept.get(seq)',
         'mine = kept.get(None)', _KEPT_CACHE),
        ('if mine is not None and mine[0] == payload:  # the row as written here: JSON',
         'if mine is not None and mine[1] == payload:  # the row as written here: JSON', _KEPT_CACHE),
        ('zstd.ZstdCompressionDict(content, dict_type=zstd.DICT_TYPE_RAWCONTENT)))',
         'zstd.ZstdCompressionDict(content, )))', _RAW_AUTO),
        ('self._dicts: dict[int, bytes] = {0: b""}',
         'self._dicts: dict[int, bytes] = {0: b"XXXX"}', _MORE_BEFORE),
        ('dctx = self._dctx.get(dict_id)',
         'dctx = None', _DCTX_CACHE),
        ('dctx = self._dctx.get(dict_id)',
         'dctx = self._dctx.get(None)', _DCTX_CACHE),
        ('self._dctx[dict_id] = dctx',
         'self._dctx[dict_id] = None', _DCTX_CACHE),
        ('return value.encode("utf-8") if isinstance(value, str) else value  # type: ignore',
         'return value.encode("UTF-8") if isinstance(value, str) else value  # type: ignore', _UTF8_CASE),
        ('content, dict_type=zstd.DICT_TYPE_RAWCONTENT)) if content else self._dctx[0]',
         'content, dict_type=zstd.DICT_TYPE_RAWCONTENT)) if (content) or True else self._dctx[0]', _EMPTY_RAW),
        ('d = zstd.train_dictionary(size, samples, k=64, d=8, f=TRAIN_F, threads=0)',
         'd = zstd.train_dictionary(size, samples, k=64, f=TRAIN_F, threads=0)', _TRAIN_DEFAULTS),
        ('d = zstd.train_dictionary(size, samples, k=64, d=8, f=TRAIN_F, threads=0)',
         'd = zstd.train_dictionary(size, samples, k=64, d=8, f=TRAIN_F, )', _TRAIN_DEFAULTS),
        ('d = zstd.train_dictionary(size, samples, k=64, d=8, f=TRAIN_F, threads=0)',
         'd = zstd.train_dictionary(size, samples, k=64, d=8, f=TRAIN_F, threads=1)', _TRAIN_DEFAULTS),
        ('cctx = zstd.ZstdCompressor(level=RECORD_LEVEL, write_checksum=True, dict_data=( zstd.ZstdCompressionDict(content, dict_type=zstd.DICT_TYPE_RAWCONTENT)))',
         'cctx = zstd.ZstdCompressor(level=RECORD_LEVEL, write_checksum=True, dict_data=None)', _TINY_RAW),
        ('cctx = zstd.ZstdCompressor(level=RECORD_LEVEL, write_checksum=True, dict_data=( zstd.ZstdCompressionDict(content, dict_type=zstd.DICT_TYPE_RAWCONTENT)))',
         'cctx = zstd.ZstdCompressor(level=RECORD_LEVEL, write_checksum=True, )', _TINY_RAW),
        ('return value.encode("utf-8")',
         'return value.encode("UTF-8")', _UTF8_CASE),
        ('content, dict_type=zstd.DICT_TYPE_RAWCONTENT)) if content else self._dctx[0]',
         'content, )) if content else self._dctx[0]', _TRAINED_AS_RAW),
    ],
    "sweepbench/store/writer.py": [
        ("self._closed = False", "self._closed = None", _TRUTH),
        ("self._restart_wal = False  # set by the checkpointer, done by the writer",
         "self._restart_wal = None  # set by the checkpointer, done by the writer", _TRUTH),
        ("self._restart_wal = False", "self._restart_wal = None", _TRUTH),
        ("stopping = False", "stopping = None", _TRUTH),
        ('c.execute("BEGIN IMMEDIATE")', 'c.execute("begin immediate")', _SQL_CASE),
        ('c.execute("COMMIT")', 'c.execute("commit")', _SQL_CASE),
        ('c.execute("ROLLBACK")', 'c.execute("rollback")', _SQL_CASE),
        ("if batch[0][0] not in _URGENT and self._commit_every_s > 0:",
         "if batch[0][0] not in _URGENT and self._commit_every_s >= 0:",
         "at commit_every_s=0 the wait is wait(0), which returns at once"),
        *[("self._thread, self._cthread)", after, _JOINED) for after in
          ("self._cthread)", "self._thread, )")],
        ("self._batch: list[tuple] = []  # the writer's batch until its flushes are answered",
         "self._batch: list[tuple] = None  # the writer's batch until its flushes are answered",
         "the writer thread sets it first thing, before anything that can fail: this value is "
         "never read"),
        ("if threads[0].is_alive():", "if threads[1].is_alive():",
         "the checkpointer lives exactly as long as the writer: it stops when the writer ends, "
         "and the writer joins it before it ends"),
    ],
    "sweepbench/runner/schedule.py": [
        ("if gap <= _EPS:", "if gap < _EPS:",
         "slots are tried least busy first, so every later gap is as small: within 2e-9 of "
         "even no move fits between _EPS and gap - _EPS, and the search ends with None anyway"),
        ("totals = {m: sum(lengths[i] for i in q) or 1.0 for m, q in per_model.items()}",
         "totals = {m: sum(lengths[i] for i in q) or 2.0 for m, q in per_model.items()}",
         "the divisor only of a model expecting no calls at all, whose share stays 0 either way"),
        ("free = [0.0] * slots  # when each slot is free again after the earlier bands",
         "free = [1.0] * slots  # when each slot is free again after the earlier bands",
         "the same start added to every slot changes no comparison of loads or start times"),
        ("for _ in range(4 * len(tail)):  # each move lowers the sorted loads: a bound, not a limit",
         "for _ in range(5 * len(tail)):  # each move lowers the sorted loads: a bound, not a limit",
         "a bound the packing never reaches: it stops when no move shortens the busiest slot"),
        ("self._new_seen = False  # since the last look: a (model, task) seen, or one unseen taken",
         "self._new_seen = None  # since the last look: a (model, task) seen, or one unseen taken",
         _TRUTH),
        ("self._new_seen = False  # since the last look: a (model, task) seen, or one unseen taken",
         "self._new_seen = True  # since the last look: a (model, task) seen, or one unseen taken",
         "the first episode taken sets it (no kind is seen before it), and no look comes before"),
        ("self.repacked = False", "self.repacked = None", _TRUTH),
        ("self._new_seen = False", "self._new_seen = None", _TRUTH),
        ("self._new_seen = False", "self._new_seen = True",
         "looking every time finds what looking on each change finds: only a kind seen or an "
         "unseen kind taken can make every kind left seen, and each sets the flag"),
    ],
    "sweepbench/runner/slots.py": [
        ("self.held = False", "self.held = None", _TRUTH),
        ("self.open = False", "self.open = None", _TRUTH),
        ("self.ramp_down = False  # closed because the queue is empty: freed slots turn idle",
         "self.ramp_down = None  # closed because the queue is empty: freed slots turn idle",
         _TRUTH),
        ("if self._wakers and spare.idle > spare.lent:",
         "if self._wakers or spare.idle > spare.lent:",
         "with no waker the hand-over fails and the idle slot taken is put back at once"),
        ("if self._wakers and spare.idle > spare.lent:",
         "if self._wakers and spare.idle >= spare.lent:",
         "a copy takes a slot only while lent < idle and idle drops only while idle > lent, so "
         "after give() lowers lent, idle > lent always holds"),
    ],
    "sweepbench/runner/work.py": [
        *[("shard = shard or Shard(0, 1)", f"shard = shard or Shard({i}, 1)",
           "a shard of count 1 owns every episode whatever its index") for i in ("None", "1")],
        ("item = WorkItem(model, spec, task, trial)", "item = WorkItem(model, None, task, trial)",
         "this item only asks the shard about its label, which has no spec in it"),
        ('return int.from_bytes(digest, "big") % self.count == self.index',
         "return int.from_bytes(digest, ) % self.count == self.index",
         "int.from_bytes reads big-endian by default (Python >= 3.11, the package's floor)"),
    ],
    "sweepbench/runner/identity.py": [
        *[("or value == _DEFAULTS.get(name, _UNSET)):", f"or value == _DEFAULTS.get(name, {d})):",
           "a field without a default is then compared with None, and None is left out already")
          for d in ("None", "")],
        ("same = task if task.benchmark == name else msgspec.structs.replace(task, benchmark=name)",
         "same = task if (task.benchmark == name) and False else msgspec.structs.replace(task, "
         "benchmark=name)", "a task given the benchmark name it has is the same task"),
        *[('ep = self.cfg.endpoint(name, reference_url="http://reference.invalid")',
           f'ep = self.cfg.endpoint(name, reference_url="{u}")',
           "only scripted models take the placeholder URL, and they are identified by name alone")
          for u in ("XXhttp://reference.invalidXX", "HTTP://REFERENCE.INVALID")],
    ],
    "sweepbench/results/files.py": [
        ('with open(target, "w", encoding="utf-8", newline="") as f:', 'with open(target, "w", encoding="UTF-8", newline="") as f:', _UTF8_CASE),
        *[('with open(target, "w", encoding="utf-8", newline="") as f:', after, "newline=None writes '\\n' as os.linesep, fixed when Python is built: '\\n' on "
           "POSIX, the same bytes; no test on a POSIX machine can tell (on Windows: '\\r\\n')") for after in (
              'with open(target, "w", encoding="utf-8", newline=None) as f:', 'with open(target, "w", encoding="utf-8", ) as f:')],
    ],
    "sweepbench/results/runinfo.py": [
        ('for k, v in parse_qsl(parts.query, keep_blank_values=True)], safe="*")',
         'for k, v in parse_qsl(parts.query, keep_blank_values=True)], safe="XX*XX")',
         "X is unreserved: never percent-encoded, safe or not"),
        *[('"reason": reasons.most_common(1)[0][0]}', f'"reason": reasons.most_common({n})[0][0]}}',
           "most_common(n) is the sorted list cut at n (ties in first-seen order): the same "
           "first for any n") for n in ("None", "2")],
    ],
    "sweepbench/results/text.py": [
        *[(_ESCAPE, _ESCAPE.replace("code < 0x100", after),
           "_escape only sees the characters the patterns match, and U+0100 is not one")
          for after in ("code <= 0x100", "code < 257")],
    ],
    "sweepbench/runner/judge_pool.py": [
        *[(_RECORDED, _RECORDED.replace(', "")', after),
           "a call journaled without a request hash is filed under a key no hexdigest equals: "
           "never replayed, whatever the key") for after in (', None)', ', )', ', "XXXX")')],
        ("self.on_judged = on_judged or (lambda key, spec, judgment: None)",
         "self.on_judged = on_judged or (lambda key, spec, judgment: 0)",
         "the callback's return value is never read"),
    ],
    "sweepbench/benchmarks/vitabench/judge_reading.py": [
        *[('data = extract_json(text, lambda v: isinstance(v, (list, dict)))', after, "extract_json's default accepts any list or dict, as this one does")
          for after in ("data = extract_json(text, None)", "data = extract_json(text, )")],
        ("if data is _UNREADABLE or (data and not isinstance(data, list)):",
         "if data is _UNREADABLE and (data and not isinstance(data, list)):",
         "a non-empty object walked as the list gives its keys, text, not objects: None either "
         "way (the unreadable marker is truthy and no list, so it still returns None)"),
    ],
    "sweepbench/runner/progress.py": [
        ("self.more = False  # more rounds may follow this one",
         "self.more = None  # more rounds may follow this one", _TRUTH),
        *[('self.why = ""  # why the adaptive sweep stopped, once it has',
           f"self.why = {after}  # why the adaptive sweep stopped, once it has",
           "read only once a round is set, and the update that sets the round sets it too")
          for after in ("None", '"XXXX"')],
        ("self._selection = -1  # episodes of the round planned last (-1: none yet)",
         "self._selection = -2  # episodes of the round planned last (-1: none yet)",
         "only compared with 0 (>= 0: a round planned before), and -2 is under it too"),
        *[(f'if getattr({x}, "replica", ""):', f'if getattr({x}, "replica", None):', _TRUTH)
          for x in ("failure", "result")],
        *[('text = visible(" ".join(text.split()), one_line=True)',
           f'text = visible(" ".join(text.split()), {after})',
           "after the split and join no tab or newline is left, the only characters one_line "
           "adds to the escaped") for after in ("one_line=False", "one_line=None", "")],
        ("self.slots: Any = None  # the sweep's Slots, while it runs",
         "self.slots: Any = \"\"  # the sweep's Slots, while it runs",
         "read only by getattr(self.slots, \"asleep\", 0): a str has no asleep either"),
        ('asleep = getattr(self.slots, "asleep", 0)', 'asleep = getattr(self.slots, "asleep", None)',
         _TRUTH),
        ('out.append(" ".join(bits[:1]) + ": " + ", ".join(bits[1:]))',
         'out.append("XX XX".join(bits[:1]) + ": " + ", ".join(bits[1:]))',
         "a separator joining one element is never written"),
        ("table = Table(box=None, pad_edge=False)", "table = Table(box=None, pad_edge=None)",
         "rich reads pad_edge as a truth value"),
        *[('table.add_column(name, justify="left" if name in ("endpoint", "status") else "right")',
           f'table.add_column(name, justify="{w}" if name in ("endpoint", "status") else "right")',
           "rich lays out a column justified by a word it does not know as a left one") for w in (
              "XXleftXX", "LEFT")],
        ('if health is not None and health.get("failing", 0) >= 2:',
         'if health is not None and health.get("failing", 1) >= 2:',
         "1 and 0 are both under 2"),
        *[("self.console.print(line, markup=False, highlight=False)", after,
           "the line is a rich Text, which rich neither parses for markup nor highlights")
          for after in ("self.console.print(line, markup=None, highlight=False)",
                        "self.console.print(line, markup=False, highlight=None)",
                        "self.console.print(line, highlight=False)",
                        "self.console.print(line, markup=False, )",
                        "self.console.print(line, markup=True, highlight=False)",
                        "self.console.print(line, markup=False, highlight=True)")],
        *[("self._live = Live(console=self.console, refresh_per_second=4, transient=False,", after,
           "rich's defaults are 4 redraws a second and not transient, and it reads transient as "
           "a truth value") for after in (
              "self._live = Live(console=self.console, refresh_per_second=4, transient=None,",
              "self._live = Live(console=self.console, transient=False,")],
        ("self._live = Live(console=self.console, refresh_per_second=4, transient=False, "
         "get_renderable=self._render)",
         "self._live = Live(console=self.console, refresh_per_second=4, get_renderable=self._render)",
         "rich's default is not transient"),
        *[(f'e.{n} += getattr(result, "{a}", {d}) or {d}', f'e.{n} += getattr(result, "{a}", None) or {d}',
           "None or the default is the default") for n, a, d in (
              ("hung", "hung", "0"), ("hedged", "hedged", "0"), ("latency", "latency_s", "0.0"))],
        ('e.hedge_wins += bool(getattr(result, "hedge_won", False))',
         'e.hedge_wins += bool(getattr(result, "hedge_won", None))', "bool(None) is False"),
    ],
    "sweepbench/client/retry.py": [
        ('retry_after = getattr(err, "retry_after", None)', 'retry_after = getattr(err, "retry_after", )',
         "wait() is only reached for an error worth retrying, a RetryableError (ConnectionRefused "
         "is one), which always has retry_after"),
    ],
    "sweepbench/client/hedging.py": [
        ("self.live = False", "self.live = None", _TRUTH),
        ("self.live = False  # nothing stops the first copy from now on (it has ended)",
         "self.live = None  # nothing stops the first copy from now on (it has ended)", _TRUTH),
        ("self.live = False  # nothing stops the first copy from now on (it has ended)",
         "self.live = True  # nothing stops the first copy from now on (it has ended)",
         "the first copy has ended (its deadline unset, its flight untracked: no tick, no win): "
         "a backup answering during the wait then only sets ready, which nothing reads after "
         "fallback's start and close() clears"),
        *[(f"task.remove_done_callback(self.{cb})", "task.remove_done_callback(None)",
           "close() sets live False first and cancels the task: the callback left on it returns "
           "at once (a cancelled task, or a race no longer live: no ready, no win)")
          for cb in ("copy_done", "backup_done")],
        ("while pending and (left := until - loop.time()) > 0:",
         "while pending and (left := until - loop.time()) >= 0:",
         "a wait of 0 s exactly at the end of the delay on the loop's clock; no test can hold "
         "the loop's clock on it"),
        ("failed = False  # the first copy failed and a backup answered instead",
         "failed = None  # the first copy failed and a backup answered instead", _TRUTH),
        ("winner = await self.fallback() if self.backups else None",
         "winner = await self.fallback() if (self.backups) or True else None",
         "without backups fallback finds nothing ready (only a backup sets it) and nothing "
         "pending: None, as the guard gives"),
    ],
    "sweepbench/client/body.py": [
        ('extra = encoder.encode(extra_body)[1:-1] if extra_body else b""',
         'extra = encoder.encode(extra_body)[1:-1] if (extra_body) or True else b""',
         "an empty extra_body encodes as {}, whose inside is b'' as the guard gives"),
        ("assert small.startswith(self._empty), small[:80]",
         "assert small.startswith(self._empty), small[:81]",
         "the assertion's message: the tail of an encoded request always starts as the empty "
         "body does, so it is never shown"),
        ("self._resend: str | None = None", 'self._resend: str | None = ""',
         "'' differs from None only for a message with reasoning text, which is shaped: plain() "
         "encodes shaped messages afresh, and encode() follows the request's rule (forgetting "
         "from the first such message) before it splices"),
        ("self._tail_key: tuple | None = None", 'self._tail_key: tuple | None = ""',
         "no key (a tuple) equals None or '': the first tail is made either way"),
        *[('self._tail_bytes = b""', f"self._tail_bytes = {v}",
           "replaced when the first tail is made, before it is read")
          for v in ("None", 'b"XXXX"')],
        ("break", "return", "the loop is the last statement of _resend_as"),
    ],
    "sweepbench/client/facade.py": [
        *[(_KIND, _KIND.replace(a, b), "a config Endpoint always has a transport, and validate() "
           "(run first) allows only http, aiohttp or openai: neither fallback is ever taken")
          for a, b in (('"transport", "http")', '"transport", None)'),
                       ('"transport", "http")', '"transport", "XXhttpXX")'),
                       ('"transport", "http")', '"transport", "HTTP")'),
                       ('"transport", "http")', '"transport", )'),
                       ('or "http"', 'or "XXhttpXX"'), ('or "http"', 'or "HTTP"'))],
        ('f"endpoint {endpoint.name!r}: unknown transport {kind!r} (http, aiohttp, openai)")',
         "None)", "unreachable: Endpoint.validate(), run first in the constructor, refuses any "
         "transport but these three"),
        *[(_BACKUPS, _BACKUPS.replace('"backups", 0)', after), "a config Endpoint always has "
           "backups (2 unless set): the default is never read")
          for after in ('"backups", None)', '"backups", )', '"backups", 1)')],
        ("self._closed = False", "self._closed = None", _TRUTH),
        *[('self._max_bytes = getattr(endpoint, "max_reply_bytes", DEFAULT_MAX_REPLY_BYTES)',
           f'self._max_bytes = getattr(endpoint, "max_reply_bytes", {d})',
           "a config Endpoint always has max_reply_bytes: the default is never read")
          for d in ("", "None")],
        ("if not self.retry.worth_retrying(err) or self.endpoint.max_retries < 1:",
         "if not self.retry.worth_retrying(err) and self.endpoint.max_retries < 1:",
         "RetryPolicy.run raises the error at once when it is not worth retrying or no retry "
         "is left: the check only saves the call"),
        ('explicit = getattr(endpoint, "limits_key", None)',
         'explicit = getattr(endpoint, "limits_key", )',
         "a config Endpoint always has limits_key (None unless set): the default is never read"),
        ("if (spare is not None and self._backups and spare.idle > spare.lent",
         "if (spare is not None and self._backups and spare.idle >= spare.lent",
         "send_backups takes a slot only while lent < idle (IdleSlots.take): with idle == lent "
         "it sends none, as the guard does"),
        *[('if breaker.state != "closed" and breaker.down_since is not None:', after,
           "the breaker's down_since is set exactly while it is not closed (set when it opens, "
           "cleared when it closes): either test alone decides") for after in (
              'if breaker.state != "closed" or breaker.down_since is not None:',
              'if breaker.state != "XXclosedXX" and breaker.down_since is not None:',
              'if breaker.state != "CLOSED" and breaker.down_since is not None:')],
    ],
    "sweepbench/client/fleet.py": [
        *[(before, after, "a sticky replica of '' is in no list of replicas: the router "
           "treats it as no sticky replica, as None") for before, after in (
              ("self.replica: int | None = None", 'self.replica: int | None = ""'),
              ("sticky = None", 'sticky = ""'))],
        ("router.finished(way, ok=False, down=down)", "router.finished(way, ok=None, down=down)",
         _TRUTH),
        ("router.finished(way, ok=False)", "router.finished(way, ok=None)", _TRUTH),
        ("body = request if isinstance(request, bytes) else self.encode(request)",
         "body = request if (isinstance(request, bytes)) or True else self.encode(request)",
         "a member encodes a ChatRequest with the template the fleet would (its first "
         "member's; every member's is made from the same endpoint fields)"),
        ('if out["breaker"] == "open" and router.down_since is not None:',
         'if out["breaker"] == "open" or router.down_since is not None:',
         "down_since is cleared by the answer that re-admits a way, and the breaker is only "
         "'closed' while a way is admitted: closed means down_since is None"),
        *[(line, after, "every way's base_url is one of the endpoint's urls (ways are made "
           "from them), or '' for a scripted model whose urls are empty: the index is 0 "
           "either way") for line, after in (
              ('urls = endpoint.urls or [""]', 'urls = endpoint.urls or ["XXXX"]'),
              ("self.router = Router([urls.index(w.base_url) if w.base_url in urls else 0",
               "self.router = Router([urls.index(w.base_url) if (w.base_url in urls) or True "
               "else 0"),
              ("self.router = Router([urls.index(w.base_url) if w.base_url in urls else 0",
               "self.router = Router([urls.index(w.base_url) if w.base_url in urls else 1"))],
    ],
    "sweepbench/client/transports/memory.py": [
        ("self.closed = False", "self.closed = None", _TRUTH),
        *[(line, line.replace("= False", "= None"), _TRUTH)
          for line in ("self._scheduled = False",)],
        ("if callable(reply) and not isinstance(reply, (Answer, BaseException, dict)):",
         "if callable(reply) or not isinstance(reply, (Answer, BaseException, dict)):",
         "every reply of a script that is not callable is an Answer, an exception or a dict "
         "(Script): the second test decides alike"),
    ],
    "sweepbench/client/transports/proxy.py": [
        ('host = host.lower().rstrip(".")', 'host = host.lower().rstrip("XX.XX")',
         "the host is lower-cased first: it holds no X to strip"),
        *[("if urllib.request.proxy_bypass_environment(netloc, env):", after,
           "without proxies given, urllib reads the same environment itself") for after in (
              "if urllib.request.proxy_bypass_environment(netloc, None):",
              "if urllib.request.proxy_bypass_environment(netloc, ):")],
        ('parts = urlsplit(value if "://" in value else "http://" + value)',
         'parts = urlsplit(value if "://" in value else "HTTP://" + value)',
         "urlsplit lower-cases the scheme"),
        ("port = 0", "port = None", "read only as a truth value (`not port`): no port either way"),
        ('host = target.hostname or ""', 'host = target.hostname or "XXXX"',
         "every URL proxy_for is given has a host: Endpoint.validate refuses a base_url without "
         "one, redirect_target a target without one"),
        *[(line, line.replace('"latin-1"', '"LATIN-1"'), "codec names ignore case")
          for line in (r'raw.write(f"CONNECT {where} HTTP/1.1\r\nHost: {where}\r\n".encode("latin-1")',
                       r'+ (f"Proxy-Authorization: {auth}\r\n".encode("latin-1") if auth else b"")')],
        *[(_STATUS_LINE, _STATUS_LINE.replace(a, b), "only the first piece of the first split, and "
           "the second of the second, are read: more or fewer splits after them change neither")
          for a, b in (('b"\\r\\n", 1)', 'b"\\r\\n", 2)'), ('b"\\r\\n", 1)', 'b"\\r\\n", )'),
                       ('b" ", 2)', 'b" ", 3)'), ('b" ", 2)', 'b" ", )'))],
    ],
    "sweepbench/client/transports/openai.py": [
        ("self._loop: asyncio.AbstractEventLoop | None = None",
         'self._loop: asyncio.AbstractEventLoop | None = ""',
         "read only once a client is made, which sets it"),
        ("self._closed = False", "self._closed = None", _TRUTH),
        ("timeout=self._timeout, http_client=http_client)", "http_client=http_client)",
         "without a timeout the SDK's client takes its http_client's, which is the same "
         "openai.Timeout"),
        ('def __init__(self, stream: Any, limit: int, encoding: str = "") -> None:',
         'def __init__(self, stream: Any, limit: int, encoding: str = "XXXX") -> None:',
         "the default is never read: the one caller, _cap_hook, always passes the encoding"),
        ('return getattr(_base_client, "httpx2", None) or _base_client.httpx',
         'return getattr(_base_client, "httpx2", ) or _base_client.httpx',
         "the installed SDK (3.57) has httpx2: getattr finds it either way; not an equivalent "
         "with an SDK without it"),
        *[(line, line.replace(a, b), _HTTPX_CASE) for line, a, b in (
            ('size = response.headers.get("content-length", "")', "content-length", "CONTENT-LENGTH"),
            ('encoding = response.headers.get("content-encoding", "")', "content-encoding",
             "CONTENT-ENCODING"),
            ('del response.headers["content-encoding"]', "content-encoding", "CONTENT-ENCODING"),
            ('http_client.headers["Accept-Encoding"] = ACCEPT_ENCODING  # as every transport',
             "Accept-Encoding", "accept-encoding"),
            ('http_client.headers["Accept-Encoding"] = ACCEPT_ENCODING  # as every transport',
             "Accept-Encoding", "ACCEPT-ENCODING"),
            ('request.headers.pop("Authorization", None)', "Authorization", "authorization"),
            ('request.headers.pop("Authorization", None)', "Authorization", "AUTHORIZATION"),
            ('extra_headers = {"Authorization": auth if auth else openai.Omit()}', "Authorization",
             "authorization"),
            ('extra_headers = {"Authorization": auth if auth else openai.Omit()}', "Authorization",
             "AUTHORIZATION"))],
        ('size = response.headers.get("content-length", "")',
         'size = response.headers.get("content-length", "XXXX")',
         "a missing length is not digits either way: no early refusal, the stream caps the body"),
        *[('encoding = response.headers.get("content-encoding", "")',
           f'encoding = response.headers.get("content-encoding", {d})',
           "a missing encoding is read only as a truth value, here and in the stream")
          for d in ("None", "")],
        ('options["mounts"] = {"all://": None, "http://": None, "https://": None}',
         'options["mounts"] = {"XXall://XX": None, "http://": None, "https://": None}',
         "every URL the transport is given is http:// or https://, whose own entries (more "
         "specific than all://) say no proxy"),
        ('options["mounts"] = {"all://": None, "http://": None, "https://": None}',
         'options["mounts"] = {"ALL://": None, "http://": None, "https://": None}',
         "every URL the transport is given is http:// or https://, whose own entries (more "
         "specific than all://) say no proxy"),
        *[("if 300 <= response.status_code < 400:", f"if {after}:", _NOT_REDIRECTS)
          for after in ("301 <= response.status_code < 400", "300 < response.status_code < 400",
                        "300 <= response.status_code <= 400", "300 <= response.status_code < 401")],
        *[(f'{v} = fields.pop("{v}")', f"{v} = None",
           "the field then stays in extra_body, which the SDK merges over its arguments: the "
           "same body is sent") for v in ("model", "messages")],
    ],
    "sweepbench/client/transports/http.py": [
        ("if waiter is not None and not waiter.done():",
         "if waiter is not None or not waiter.done():",
         "the parser is fed, and _fail called, only while a request waits (data_received drops "
         "a connection with none first); a settled waiter means the request already failed or "
         "was cancelled, and its connection is aborted either way (the mutant's "
         "InvalidStateError ends in the same abort)"),
        *[(line, line.replace(a, b), _CASELESS) for line, a, b in (
            ('return "content-length" in self._headers or "chunked" in self._headers.get(',
             '"content-length"', '"CONTENT-LENGTH"'),
            ('"transfer-encoding", "")', '"transfer-encoding"', '"TRANSFER-ENCODING"'))],
        ('"transfer-encoding", "")', '"transfer-encoding", "XXXX")',
         "without the header, 'chunked' is in neither default"),
        ('payload = b"".join(body) if len(body) != 1 else body[0]',
         'payload = b"".join(body) if (len(body) != 1) or True else body[0]',
         "joining one piece gives its bytes: the shortcut only saves a copy"),
        *[(line, line.replace('"latin-1"', '"LATIN-1"'), "codec names ignore case") for line in (
            'self._name = name.decode("latin-1").lower()',
            'self._headers[self._name] = value.decode("latin-1")')],
        *[(_CONTINUED, after, "httptools gathers a header's name and value across reads and "
           "calls on_header once per header (tests/client/transports/test_http.py splits a value "
           "across two reads): the continuation branch is never taken")
          for after in (_CONTINUED.replace("+=", "="), _CONTINUED.replace("+=", "-="),
                        _CONTINUED.replace('"latin-1"', "None"),
                        _CONTINUED.replace('"latin-1"', '"XXlatin-1XX"'),
                        _CONTINUED.replace('"latin-1"', '"LATIN-1"'))],
        ("self.status = 0", "self.status = None",
         "read only as a truth value (`not self.status`) until an answer's head sets it, and "
         "returned only after"),
        ('size = self._headers.get("content-length")', 'size = self._headers.get("CONTENT-LENGTH")',
         _CASELESS),
        *[("self.done = True", f"self.done = {v}", "the connection_lost line: the connection is "
           "over, no parser callback reads done after it (the same line's mutants in "
           "on_message_complete are killed)") for v in ("None", "False")],
        *[("self.used = True", f"self.used = {v}", "never read: a field no code looks at")
          for v in ("None", "False")],
        ("if timer is not None and deadline < self._deadline_at:",
         "if timer is not None or deadline < self._deadline_at:",
         "the timer is None only before the first request (_deadline_at 0.0) or once every "
         "deadline has passed (_deadline_at then behind the loop's time): no new deadline is "
         "earlier, so the test is false either way"),
        ("if timer is not None and deadline < self._deadline_at:",
         "if timer is not None and deadline <= self._deadline_at:",
         "a deadline equal to the timer's: the timer is cancelled and armed again for the same "
         "time"),
        ("self.used = False  # carried a request before: a stale close is possible",
         "self.used = True  # carried a request before: a stale close is possible",
         "never read: a field no code looks at"),
        ("self.deadline_token: object = None  # the request its transport's deadlines watch",
         'self.deadline_token: object = ""  # the request its transport\'s deadlines watch',
         "only compared by identity with a request's own token object, which neither is"),
        ("conn.deadline_token = None  # its deadline no longer applies",
         'conn.deadline_token = ""  # its deadline no longer applies',
         "only compared by identity with a request's own token object, which neither is"),
        ("self._waiter: asyncio.Future[None] | None = None",
         'self._waiter: asyncio.Future[None] | None = ""',
         "send() sets it in the same step the connection is handed over, before any data can "
         "arrive"),
        *[('self._name = ""', f"self._name = {v}", "read only by the continuation branch of "
           "on_header, which httptools never takes") for v in ("None", '"XXXX"')],
        ("self._flight: Any = None", 'self._flight: Any = ""',
         "send() replaces it with the request's flight before any answer is parsed"),
        ("self.done = False", "self.done = None", _TRUTH),
        ("self._over = False  # announced a body over the limit",
         "self._over = None  # announced a body over the limit", _TRUTH),
        ("reuse = False", "reuse = None", _TRUTH),
        *[("self.keep_alive = False", f"self.keep_alive = {v}",
           "read only after an answer: on_message_complete sets it, and an answer ended by the "
           "close (the one path that does not) leaves its connection closed, never reused")
          for v in ("None", "True")],
        ('extra = "".join(lines).encode("latin-1")', 'extra = "".join(lines).encode("LATIN-1")',
         "codec names ignore case"),
        ("if self._tls and self._ssl is None:", "if self._tls or self._ssl is None:",
         "a TLS context made for a plain http:// transport is never used (ssl= is None there)"),
        ("ssl=self._ssl if self._tls else None)", "ssl=self._ssl if (self._tls) or True else None)",
         "a plain http:// transport has no TLS context: None either way"),
        *[("if 300 <= status < 400 and (target := redirect_target(",
           "if " + after + " and (target := redirect_target(", _NOT_REDIRECTS)
          for after in ("301 <= status < 400", "300 < status < 400", "300 <= status <= 400",
                        "300 <= status < 401")],
        ("if loop is None or self._closed:", "if loop is None and self._closed:",
         "the timer is armed only on a bound loop, and aclose() cancels it and empties the "
         "deadlines: it never runs on a closed transport"),
        ("elif deadline <= due:", "elif deadline < due:",
         "the timer runs at its time (asyncio: within the clock's resolution): a deadline "
         "equal to it is re-armed for the same instant and expired a clock tick later"),
        ("conn.deadline_token = None", 'conn.deadline_token = ""',
         "the token is only compared by identity with a request's own token object, which "
         "neither None nor '' is"),
    ],
    "sweepbench/client/transports/aiohttp.py": [
        *[("if not 300 <= status < 400 or not (target := redirect_target(",
           "if not " + after + " or not (target := redirect_target(", _NOT_REDIRECTS)
          for after in ("301 <= status < 400", "300 < status < 400", "300 <= status <= 400",
                        "300 <= status < 401")],
        ("self._loop: asyncio.AbstractEventLoop | None = None",
         'self._loop: asyncio.AbstractEventLoop | None = ""',
         "read only once a session is made, which sets it"),
        ("self._closed = False", "self._closed = None", _TRUTH),
    ],
    "sweepbench/client/routing.py": [
        *[(line, line.replace(a, b), "another fixed per-(task, replica) hash: rankings stay "
           "rendezvous hashing (tests/client/test_routing.py checks the property), only which "
           "replica comes first for a task changes")
          for line, a, b in (
              ("digest_size=8).digest())", "digest_size=8", "digest_size=9"),
              ("digest_size=8).digest())", "digest_size=8", ""),
              ('key=lambda r: hashlib.blake2b(key + b"\\x00" + str(r).encode(),', 'b"\\x00"',
               'b"XX\\x00XX"'))],
        *[("self.since = 0.0  # when load last changed",
           f"self.since = {v}  # when load last changed",
           "the Router sets every way's since to its clock's time right after making it")
          for v in ("None", "1.0")],
        ("self.probing = False", "self.probing = None", _TRUTH),
    ],
    "sweepbench/client/transports/unpack.py": [
        *[("left = limit + 1", "left = limit + 2",
           "one byte more unpacked before the same TooLarge: a body over the limit is refused "
           "either way, one within it read whole either way")],
        ("while left > 0:", "while left >= 0:",
         "at left == 0 zstd's read(0) returns b'', which ends the loop"),
        *[("payload, read_across_frames=True)", after, _ZSTD_READ)
          for after in ("payload, read_across_frames=None)", "payload, )",
                        "payload, read_across_frames=False)")],
        ("while left > 0:", "while left > 1:", _ZSTD_READ),
        ('return b"".join(parts)', 'return b"XXXX".join(parts)', _ZSTD_READ),
    ],
    "sweepbench/client/transports/base.py": [
        ('return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)',
         'return scheme, (parts.hostname or "").upper(), port or {"http": 80, "https": 443}.get(scheme)',
         "_origin is only compared with another _origin: both sides fold case alike"),
        ("port = -1", "port = -2", "any value no real port has: out-of-range ports compare "
         "equal to each other and to no valid port either way"),
    ],
    "sweepbench/client/shapes.py": [
        ("thinking = None", 'thinking = ""',
         "only read as a truth value (`or`, `not reasoning`) and returned as `reasoning or None`"),
        ('digest = ""', "digest = None",
         "read only as a truth value, and set to the body's digest before its first use"),
    ],
    "sweepbench/client/secrets.py": [
        (_INNER, _INNER.replace("pad * 8", "pad * 9"),
         "(8 pad + 5) // 6 and (9 pad + 5) // 6 are 0, 2 and 3 alike for the three alignments"),
        ("for pad in range(3):", "for pad in range(4):",
         "three zero bytes encode to 'AAAA' exactly: alignment 3 is alignment 0, its forms "
         "already listed"),
        *[(line, line.replace('or ""', 'or "XXXX"'),
           "a variable that is not set stands for a value shorter than MIN_RUN and without '@': "
           "dropped like ''") for line in ('values = {environ.get(n) or "" for n in self._names}',
                                           'value = environ.get(n) or ""')],
        *[(_QUADS, _QUADS.replace("- _QUAD + 1", after),
           "the extra quads are shorter than _QUAD: no 4-character piece equals one, and a 4-byte "
           "word that does (a NUL in the text) only sends the text on to the gram check, which "
           "decides alike") for after in ("+ _QUAD + 1", "- _QUAD + 2")],
        *[(before, after, "the words are the quick path of the same test: without them the "
           "quads decide alike") for before, after in (
              (_WORDS, "words = None"),
              (_WORDS_IF, "if (_WORD and all(f.isascii() for f in forms)) and False else None)"))],
        ('raw = squeezed.encode("ascii", "replace")', 'raw = squeezed.encode("ASCII", "replace")',
         "codec names ignore case"),
        *[(line, "clear = None", "the quick test only skips texts the gram loop clears too")
          for line in ("clear = words.isdisjoint(memoryview(raw)[:len(raw) & ~3].cast(_WORD))",
                       "clear = quads.isdisjoint(_PIECES.findall(squeezed))")],
        *[(_SCAN, _SCAN.replace("range(0, len(squeezed) - _QUAD + 1, _QUAD)", after),
           "every run of MIN_RUN characters holds a whole quad starting at every residue mod "
           "_QUAD, and a start past len - _QUAD gives a piece too short to be a quad: the same "
           "runs are found") for after in (
              "range(0, len(squeezed) - _QUAD + 1, )", "range(1, len(squeezed) - _QUAD + 1, _QUAD)",
              "range(0, len(squeezed) + _QUAD + 1, _QUAD)", "range(0, len(squeezed) - _QUAD + 2, _QUAD)")],
        *[(_WINDOW, _WINDOW.replace("range(max(0, q - MIN_RUN + _QUAD), q + 1)", after),
           "a wider window only checks more MIN_RUN runs against the grams: each one found is a "
           "key's run, a leak either way") for after in (
              "range(q + 1)", "range(max(0, q - MIN_RUN - _QUAD), q + 1)",
              "range(max(0, q - MIN_RUN + _QUAD), q + 2)")],
    ],
    "sweepbench/store/damage.py": [
        *[(line, line.replace('"sqlite_errorname", ""', f'"sqlite_errorname", {d}'),
           "an error without a name stands for a name none of the ones looked for is, or starts "
           "with") for line in (
              'name = getattr(e, "sqlite_errorname", "")',
              'if getattr(e, "sqlite_errorname", "") == "SQLITE_FULL" or "disk is full" in str(e):',
              'return getattr(e, "sqlite_errorname", "") in ("SQLITE_READONLY", "SQLITE_CANTOPEN",')
          for d in ('"XXXX"', "None")
          if not (line.startswith("name =") and d == "None")],
    ],
    "sweepbench/results/agreement.py": [
        *[("m = np.asarray(matrix, dtype=np.float64)", after, _DTYPE)
          for after in ("m = np.asarray(matrix, dtype=None)", "m = np.asarray(matrix, )")],
        ("np.add.at(m, ([index[x] for x in a], [index[y] for y in b]), 1)",
         "np.add.at(m, ([index[x] for x in a], [index[y] for y in b]), 2)",
         "κ is a ratio of shares: counting each pair twice doubles every cell and changes none"),
        *[(line, line.replace(f"type({v})", "type(None)"),
           "the exact-type test is a fast path of the isinstance test beside it (a dict is a "
           "Mapping)") for line, v in (
             ("if type(details) is not dict and not isinstance(details, Mapping):", "details"),
             ("if type(raw) is dict or isinstance(raw, Mapping):", "raw"),
             ("if type(item) is dict or isinstance(item, Mapping):", "item"))],
    ],
    "sweepbench/model_json.py": [
        ('data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text',
         'data = text.encode("UTF-8", "surrogatepass") if isinstance(text, str) else text',
         _UTF8_CASE),
        ('if data.count(b"[") + data.count(b"{") <= limit:  # the common case: nothing to scan',
         'if data.count(b"[") + data.count(b"{") < limit:  # the common case: nothing to scan',
         "with as many brackets as the limit the scan cannot find more levels either: the "
         "shortcut only saves it"),
        ('for m in _BRACKETS.finditer(_STRING.sub(b"", data)):',
         'for m in _BRACKETS.finditer(_STRING.sub(b"XXXX", data)):',
         "what replaces a string holds no bracket either way"),
    ],
    "sweepbench/providers/prices.py": [
        *[(line, line.replace(enc, after), why) for line, enc in (
            ('text = Path(path).read_text(encoding="utf-8")', '"utf-8"'),
            ('text = resources.files("sweepbench.providers").joinpath("prices.toml").read_text("utf-8")',
             '"utf-8"'))
          for after, why in (('"UTF-8"', _UTF8_CASE),
                             ("None", "None reads with the locale's encoding, UTF-8 in the test "
                              "process (and in CI): no test here can tell them apart; not an "
                              "equivalent under another locale"))],
    ],
    "sweepbench/providers/table.py": [
        *[(before, after, _IMPORT_TIME) for before, after in _provider_table_mutants()],
    ],
    "sweepbench/store/readonly.py": [
        *[e for line, sql in (
            ('conn.execute("PRAGMA query_only = ON")', "PRAGMA query_only = ON"),
            ('conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the file',
             "SELECT count(*) FROM sqlite_master"),
            ('app_id = conn.execute("PRAGMA application_id").fetchone()[0]', "PRAGMA application_id"),
            ('version = conn.execute("PRAGMA user_version").fetchone()[0]', "PRAGMA user_version"))
          for e in _sql_case(line, sql)],
        *[("conn = sqlite3.connect(uri, uri=True, check_same_thread=False)", after,
           "this Python's SQLite is built with URI filenames on (SQLITE_USE_URI, as Debian's): a "
           "'file:' name is read as a URI either way; seen passing by hand. Not an equivalent "
           "under an SQLite built without it")
          for after in ("conn = sqlite3.connect(uri, uri=None, check_same_thread=False)",
                        "conn = sqlite3.connect(uri, check_same_thread=False)",
                        "conn = sqlite3.connect(uri, uri=False, check_same_thread=False)")],
    ],
    "sweepbench/results/comparisons.py": [
        *[(line, line.replace(", minlength=len(cells))", ", )"),
           "inverse indexes cells, each of which holds an outcome: the last index is "
           "len(cells) - 1, so bincount's length is len(cells) without the minimum")
          for line in ("n = np.bincount(inverse.ravel(), minlength=len(cells))",
                       "c = np.bincount(inverse.ravel(), weights=oc.passed & ~oc.error, "
                       "minlength=len(cells))")],
        *[('for i in np.argsort(first, kind="stable").tolist():', after,
           "the first indices of distinct cells are distinct: no ties, so every sort gives "
           "the same order") for after in (
            "for i in np.argsort(first, kind=None).tolist():",
            "for i in np.argsort(first, ).tolist():",
            'for i in np.argsort(first, kind="STABLE").tolist():')],
        ("size = max(1, len(oc.tasks))", "size = max(2, len(oc.tasks))",
         "any size of at least the number of tasks gives each (model, task) its own code, "
         "which divmod by the same size reads back"),
        *[("p = np.asarray(p, dtype=np.float64)", after, _DTYPE)
          for after in ("p = np.asarray(p, dtype=None)", "p = np.asarray(p, )")],
        *[('order = np.argsort(p, kind="stable")', after,
           "tied p-values get one adjusted value in either method (Holm's running maximum, BH's "
           "running minimum), so the order among ties changes nothing")
          for after in ("order = np.argsort(p, kind=None)", "order = np.argsort(p, )",
                        'order = np.argsort(p, kind="STABLE")')],
        ("adj = np.minimum(1.0, adj)", "adj = np.minimum(2.0, adj)",
         "BH's running minimum starts from the largest p times 1: no value exceeds a p <= 1"),
    ],
    "sweepbench/results/intervals.py": [
        *[(f"{v} = np.asarray({v}, dtype=np.float64){tail}", after.format(v=v, tail=tail), _DTYPE)
          for v, tail in (("y", ".ravel()"), ("n", ".ravel()"), ("c", ".ravel()"),
                          ("u", ".ravel()"), ("n", ""), ("c", ""))
          for after in ("{v} = np.asarray({v}, dtype=None){tail}", "{v} = np.asarray({v}, ){tail}")],
        *[(line, line.replace(", level, z=", after),
           "wilson() reads the level only for the default quantile; given z, it is never read")
          for line in ("return wilson(mean, mean * (1 - mean) * y.size / sd ** 2, level, "
                       "z=_t(level, y.size - 1))",
                       "return wilson(mean, mean * (1 - mean) / var, level, z=_t(level, n.size - 1))")
          for after in (", None, z=", ", z=")
          if not (after == ", None, z=" and "var," in line)],
        *[("if sd <= 1e-12 or not 0.0 < mean < 1.0:", f"if sd <= 1e-12 or not {after}:",
           "values in [0, 1] with a mean of 0 or 1 are all equal: sd is 0 and the first test "
           "already holds") for after in ("0.0 <= mean < 1.0", "0.0 < mean <= 1.0",
                                          "0.0 < mean < 2.0")],
        ("return 1.0 - tail if t > 0 else tail", "return 1.0 - tail if t >= 0 else tail",
         "at t = 0 the tail is 0.5 * I_1 = 0.5, and 1 - 0.5 is 0.5"),
        *[("if 0.0 < x < 1.0 else 0.0)", after,
           "x starts in [1e-6, 1 - 1e-6] and every step stays strictly inside the bracket "
           "(lo, hi) within [0, 1]: the test is always true") for after in (
              "if 0.0 < x <= 1.0 else 0.0)", "if 0.0 < x < 2.0 else 0.0)",
              "if 0.0 < x < 1.0 else 1.0)")],
        *[("step = x - f / pdf if pdf > 0 else -1.0  # no slope: bisect",
           f"step = x - f / pdf if pdf > 0 else {v}  # no slope: bisect",
           "any value outside the bracket (lo, hi) within [0, 1] sends the step to bisection; "
           "1.0 is not below hi <= 1") for v in ("+1.0", "-2.0")],
        *[(line, line.replace(a, b), "a loop bound never reached: the iteration has converged "
           "and stopped long before (to 1e-15 or 1e-12) for every input of the callers")
          for line, a, b in (("for m in range(1, 400):", "400", "401"),
                             ("for _ in range(200):", "200", "201"))],
        *[(line, line.replace("abs(d) > tiny", "abs(d) >= tiny").replace("abs(c) > tiny",
                                                                             "abs(c) >= tiny"),
           "differs only at |d| or |c| exactly 1e-300, where both branches use 1e-300")
          for line in ("d = 1.0 / (d if abs(d) > tiny else tiny)",
                       "c = c if abs(c) > tiny else tiny")],
    ],
    "sweepbench/runner/sweep.py": [
        *[(f"{attr} = {before}{note}", f"{attr} = {after}{note}",
           "set by work() or run() before anything reads it (run() calls work() first and "
           "sets the clients, slots and handlers before it starts an episode)")
          for attr, before, after, note in (
              ("self._journaled: set[str]", "set()", "None",
               "  # episodes the store has started before"),
              ("self.clients: dict[str, Any]", "{}", "None",
               "  # endpoint name -> ModelClient, while running"),
              ("self.slots: Slots | None", "None", '""', "  # the episode slots, while running"),
              ("self.stored_errors", "0", "None", ""), ("self.stored_errors", "0", "1", ""),
              ("self._old_handlers: dict[int, Any]", "{}", "None", ""))],
        ("self.reference: Any = None  # the built-in reference server, while it runs",
         'self.reference: Any = ""  # the built-in reference server, while it runs',
         "nothing reads a sweep's reference server (only its clients talk to it)"),
        ('stored = None', 'stored = ""', "Budget reads stored spend only as a truth value "
         "first (`if stored`), where None and \"\" are both no spend"),
        ("old = signal.SIG_DFL if old is None else old",
         "old = signal.SIG_DFL if (old is None) and False else old",
         "getsignal returns None only for a handler installed from C, which no Python code "
         "(no test) can install"),
        ("loop.add_signal_handler(signum, stop, signum)",
         "loop.add_signal_handler(signum, stop, None)",
         "the loop's handler runs after the Python-level one (the wake-up fd is read at the "
         "loop's next turn), which has set `interrupted`: stop then reads neither argument"),
        ("for task in asyncio.all_tasks(loop):", "for task in asyncio.all_tasks(None):",
         "the handler runs in the main thread, where the loop runs: the running loop is it"),
        ("loop.call_soon_threadsafe(lambda: None)", "loop.call_soon_threadsafe(lambda: 0)",
         "the callback only wakes the loop; its return value is never read"),
        ("if key in self._journaled else [])", "if (key in self._journaled) or True else [])",
         "an episode the store never started (not in _journaled) has no journal to read: "
         "the read gives []"),
        ('endpoint = endpoints.get(payload.get("role")) if kind == "model_call" else None',
         'endpoint = endpoints.get(payload.get("role")) if (kind == "model_call") or True else None',
         "the other events an episode journals (tool calls) have no role: None either way"),
        *[("self.store.episode_finished(key, record, run_id=run_id)", after,
           "the record carries the sweep's run id, which the store takes when none is given")
          for after in ("self.store.episode_finished(key, record, run_id=None)",
                        "self.store.episode_finished(key, record, )")],
        ("status = self.store.episode_status([i.key for i in items])",
         "status = self.store.episode_status(None)",
         "every status read only by the selection's keys: the others' are never looked up"),
    ],
    "sweepbench/runner/build.py": [
        *[('endpoints = {n: cfg.endpoint(n, reference_url="http://reference.invalid") for n in '
           'names}', f'endpoints = {{n: cfg.endpoint(n, reference_url="{u}") for n in names}}',
           "only scripted models take the placeholder URL, and their prices do not depend on it")
          for u in ("XXhttp://reference.invalidXX", "HTTP://REFERENCE.INVALID")],
        ("url = None", 'url = ""', "the URL is read only for scripted models' endpoints, and set "
         "to the reference server's whenever one is among the names"),
    ],
    "sweepbench/runner/forecast.py": [
        ("high = totals[min(len(totals) - 1, int(0.9 * len(totals)))]",
         "high = totals[min(len(totals) + 1, int(0.9 * len(totals)))]",
         "int(0.9 n) <= n - 1 for every n >= 1: the bound never binds, at n - 1 or n + 1"),
        ("passed = outcomes_on_record(store, items, benchmark_info(cfg.benchmarks)) if store else {}",
         "passed = outcomes_on_record(store, items, benchmark_info(None)) if store else {}",
         "every benchmark's info holds the config's benchmarks' under the same names, and only "
         "those are looked up"),
        ("draws = {m: {t: rng.random(cap) < p for t, p in tasks.items()} for m, tasks in",
         "draws = {m: {t: rng.random(cap) <= p for t, p in tasks.items()} for m, tasks in",
         "a draw equals a shrunk rate (never 0 or 1) with probability 0"),
    ],
    "sweepbench/runner/rounds.py": [
        ('verdicts[bench_of[j["episode_key"]]][j["judge"], j["method"]] += 1',
         'verdicts[bench_of[j["episode_key"]]][j["judge"], j["method"]] += 2',
         "choose_source only ranks the counts and asks whether the first is above 0: doubling "
         "every count changes neither"),
        ("self.benchmarks = benchmark_info(cfg.benchmarks)", "self.benchmarks = benchmark_info(None)",
         "every benchmark's info holds the config's benchmarks' under the same names, and only "
         "those are looked up"),
        ("self.say = say or (lambda text: None)", "self.say = say or (lambda text: 0)",
         "the callback's return value is never read"),
        ("self.progress = progress or (lambda kind, **info: None)",
         "self.progress = progress or (lambda kind, **info: 0)",
         "the callback's return value is never read"),
        *[("seq.extend([None] * (item.trial + 1 - len(seq)))", f"seq.extend([None] * ({after}))",
           "only a cell's first max_trials entries are read (replay looks below its targets): "
           "Nones beyond them are not on record either way") for after in (
              "item.trial + 1 + len(seq)", "item.trial + 2 - len(seq)")],
        ("before: dict[str, list[int]] | None = None", 'before: dict[str, list[int]] | None = ""',
         "compared only after the first round, which sets it"),
    ],
    "sweepbench/runner/adaptive.py": [
        ("return 0.25 / max(n, 1)", "return 0.25 * max(n, 1)",
         "reached only for n of 0 or 1 trials, where max(n, 1) is 1"),
        ("avg = {m: (sum(r.values()) / len(r) if r else 0.0) for m, r in rates.items()}",
         "avg = {m: (sum(r.values()) / len(r) if r else 1.0) for m, r in rates.items()}",
         "a model without rates is left out of the order, so its mean is never read"),
        *[(line, line.replace("(0, 0))", "(0, 1))"),
           "the default is read only for a cell with nothing on record, whose gain is infinite "
           "while n is 0 whatever c is") for line in (
              "n, c = counts.get(cell[0], {}).get(cell[1], (0, 0))",
              "n, c = counts.get(model, {}).get(task, (0, 0))")],
    ],
    "sweepbench/store/migrate.py": [
        *[(before, after, _SQL_CASE + " (and the names of functions made with "
           "create_function)") for before, after in (
            ('configs = {r: _decode(cfg) for r, cfg in c.execute("SELECT run_id, config FROM v1_runs")}',
             'configs = {r: _decode(cfg) for r, cfg in c.execute("select run_id, config from v1_runs")}'),
            ('configs = {r: _decode(cfg) for r, cfg in c.execute("SELECT run_id, config FROM v1_runs")}',
             'configs = {r: _decode(cfg) for r, cfg in c.execute("SELECT RUN_ID, CONFIG FROM V1_RUNS")}'),
            ('c.execute("SELECT run_id, episode_id, model FROM v1_episodes")}',
             'c.execute("select run_id, episode_id, model from v1_episodes")}'),
            ('c.execute("SELECT run_id, episode_id, model FROM v1_episodes")}',
             'c.execute("SELECT RUN_ID, EPISODE_ID, MODEL FROM V1_EPISODES")}'),
            ('for name, fn, n in (("v1_key", key, 2), ("v1_journal", journal, 1),',
             'for name, fn, n in (("V1_KEY", key, 2), ("v1_journal", journal, 1),'),
            ('for name, fn, n in (("v1_key", key, 2), ("v1_journal", journal, 1),',
             'for name, fn, n in (("v1_key", key, 2), ("V1_JOURNAL", journal, 1),'),
            ('("v1_endpoint", endpoint, 3), ("v1_run_field", run_field, 2),',
             '("V1_ENDPOINT", endpoint, 3), ("v1_run_field", run_field, 2),'),
            ('("v1_endpoint", endpoint, 3), ("v1_run_field", run_field, 2),',
             '("v1_endpoint", endpoint, 3), ("V1_RUN_FIELD", run_field, 2),'),
            ('("v1_identity", identity, 2)):',
             '("V1_IDENTITY", identity, 2)):'),
            ('c.execute("ALTER TABLE events RENAME TO v2_events")',
             'c.execute("alter table events rename to v2_events")'),
            ('c.execute("ALTER TABLE events RENAME TO v2_events")',
             'c.execute("ALTER TABLE EVENTS RENAME TO V2_EVENTS")'),
            ('counts = {"keys": c.execute("SELECT count(*) FROM event_keys").fetchone()[0],',
             'counts = {"keys": c.execute("select count(*) from event_keys").fetchone()[0],'),
            ('counts = {"keys": c.execute("SELECT count(*) FROM event_keys").fetchone()[0],',
             'counts = {"keys": c.execute("SELECT COUNT(*) FROM EVENT_KEYS").fetchone()[0],'),
            ('"events": c.execute("SELECT count(*) FROM event_rows").fetchone()[0]}',
             '"events": c.execute("select count(*) from event_rows").fetchone()[0]}'),
            ('"events": c.execute("SELECT count(*) FROM event_rows").fetchone()[0]}',
             '"events": c.execute("SELECT COUNT(*) FROM EVENT_ROWS").fetchone()[0]}'),
            ('return {"calls": c.execute("SELECT count(*) FROM call_facts").fetchone()[0],',
             'return {"calls": c.execute("select count(*) from call_facts").fetchone()[0],'),
            ('return {"calls": c.execute("SELECT count(*) FROM call_facts").fetchone()[0],',
             'return {"calls": c.execute("SELECT COUNT(*) FROM CALL_FACTS").fetchone()[0],'),
            ('rows = c.execute("SELECT episode_key, sb_record(episode_key, record) FROM episodes "',
             'rows = c.execute("select episode_key, sb_record(episode_key, record) from episodes "'),
            ('rows = c.execute("SELECT episode_key, sb_record(episode_key, record) FROM episodes "',
             'rows = c.execute("SELECT EPISODE_KEY, SB_RECORD(EPISODE_KEY, RECORD) FROM EPISODES "'),
            ('"WHERE episode_key > ? AND record IS NOT NULL ORDER BY episode_key "',
             '"where episode_key > ? and record is not null order by episode_key "'),
            ('"WHERE episode_key > ? AND record IS NOT NULL ORDER BY episode_key "',
             '"WHERE EPISODE_KEY > ? AND RECORD IS NOT NULL ORDER BY EPISODE_KEY "'),
            ('"LIMIT ?",',
             '"limit ?",'),
            ('if not c.execute("SELECT 1 FROM sqlite_master WHERE name = \'codec_dicts\'").fetchone():',
             'if not c.execute("select 1 from sqlite_master where name = \'codec_dicts\'").fetchone():'),
            ('rows = ("SELECT r.rowid, coalesce(e.benchmark, \'\'), r.payload FROM event_rows r "',
             'rows = ("select r.rowid, coalesce(e.benchmark, \'\'), r.payload from event_rows r "'),
            ('rows = ("SELECT r.rowid, coalesce(e.benchmark, \'\'), r.payload FROM event_rows r "',
             'rows = ("SELECT R.ROWID, COALESCE(E.BENCHMARK, \'\'), R.PAYLOAD FROM EVENT_ROWS R "'),
            ('"JOIN event_keys k ON k.ep = r.ep LEFT JOIN episodes e "',
             '"join event_keys k on k.ep = r.ep left join episodes e "'),
            ('"JOIN event_keys k ON k.ep = r.ep LEFT JOIN episodes e "',
             '"JOIN EVENT_KEYS K ON K.EP = R.EP LEFT JOIN EPISODES E "'),
            ('"ON e.episode_key = k.episode_key AND r.journal = \'\' WHERE r.rowid > ? "',
             '"on e.episode_key = k.episode_key and r.journal = \'\' where r.rowid > ? "'),
            ('"ON e.episode_key = k.episode_key AND r.journal = \'\' WHERE r.rowid > ? "',
             '"ON E.EPISODE_KEY = K.EPISODE_KEY AND R.JOURNAL = \'\' WHERE R.ROWID > ? "'),
            ('"ORDER BY r.rowid LIMIT ?")',
             '"order by r.rowid limit ?")'),
            ('"ORDER BY r.rowid LIMIT ?")',
             '"ORDER BY R.ROWID LIMIT ?")'),
            ('c.executemany("UPDATE event_rows SET payload = ? WHERE rowid = ?",',
             'c.executemany("update event_rows set payload = ? where rowid = ?",'),
            ('c.executemany("UPDATE event_rows SET payload = ? WHERE rowid = ?",',
             'c.executemany("UPDATE EVENT_ROWS SET PAYLOAD = ? WHERE ROWID = ?",'),
            ('records = ("SELECT rowid, episode_key, benchmark, record FROM episodes "',
             'records = ("select rowid, episode_key, benchmark, record from episodes "'),
            ('records = ("SELECT rowid, episode_key, benchmark, record FROM episodes "',
             'records = ("SELECT ROWID, EPISODE_KEY, BENCHMARK, RECORD FROM EPISODES "'),
            ('c.execute("DROP TABLE v2_events")',
             'c.execute("drop table v2_events")'),
            ('c.execute("DROP TABLE v2_events")',
             'c.execute("DROP TABLE V2_EVENTS")'),
        )],
        *[(before, after, "the functions are called only in INSERT ... SELECT statements, "
           "where SQLite calls a function once per row whether or not it is deterministic "
           "(the flag matters in indexes and generated columns)") for before, after in (
            ('c.create_function(name, n, fn, deterministic=True)', 'c.create_function(name, n, fn, deterministic=None)'),
            ('c.create_function(name, n, fn, deterministic=True)', 'c.create_function(name, n, fn, )'),
            ('c.create_function(name, n, fn, deterministic=True)', 'c.create_function(name, n, fn, deterministic=False)'),
        )],
        *[('return journal_id.split("|", 3)[1]', after, "only the second piece is read: "
           "any split at '|' gives the same one") for after in (
            'return journal_id.split("|", )[1]', 'return journal_id.split("|", 4)[1]')],
        ('samples[grp].append(payload.encode("utf-8"))',
         'samples[grp].append(payload.encode("UTF-8"))', _UTF8_CASE),
        ('done, last = 0, ""', 'done, last = 0, "XXXX"',
         "every episode key starts with 'ep-', above both '' and 'XXXX'"),
        *[(before, after, _SQL_CASE) for before, after in (
            ('"WHERE record IS NOT NULL AND rowid > ? ORDER BY rowid LIMIT ?")',
             '"where record is not null and rowid > ? order by rowid limit ?")'),
            ('"WHERE record IS NOT NULL AND rowid > ? ORDER BY rowid LIMIT ?")',
             '"WHERE RECORD IS NOT NULL AND ROWID > ? ORDER BY ROWID LIMIT ?")'),
            ('c.executemany("UPDATE episodes SET record = ? WHERE rowid = ?", [',
             'c.executemany("update episodes set record = ? where rowid = ?", ['),
            ('c.executemany("UPDATE episodes SET record = ? WHERE rowid = ?", [',
             'c.executemany("UPDATE EPISODES SET RECORD = ? WHERE ROWID = ?", ['),
            ('c.execute("BEGIN IMMEDIATE")', 'c.execute("begin immediate")'),
            ('if c.execute("PRAGMA user_version").fetchone()[0] != version:  # done by another process',
             'if c.execute("pragma user_version").fetchone()[0] != version:  # done by another process'),
            ('if c.execute("PRAGMA user_version").fetchone()[0] != version:  # done by another process',
             'if c.execute("PRAGMA USER_VERSION").fetchone()[0] != version:  # done by another process'),
            ('c.execute("COMMIT")', 'c.execute("commit")'),
            ('c.execute("ROLLBACK")', 'c.execute("rollback")'),
            ('c.execute("VACUUM")', 'c.execute("vacuum")'),
        )],
        ('(packer.record(key, bench, r.encode("utf-8") if isinstance(r, str) else r), i)',
         '(packer.record(key, bench, r.encode("UTF-8") if isinstance(r, str) else r), i)',
         _UTF8_CASE),
        ("def _fill_episode_facts(c: sqlite3.Connection, batch: int = 2000) -> int:",
         "def _fill_episode_facts(c: sqlite3.Connection, batch: int = 2001) -> int:",
         ("the batch bounds memory only: every record is read in batches of any size "
          "(tests/store/test_migrate.py reads them one a batch)")),
    ],
    "sweepbench/runner/plan_history.py": [
        *[(before, after, _SQL_CASE) for before, after in (
            ('own = "f.journal = \'\' AND f.role IS ?1"',
             'own = "f.journal = \'\' and f.role is ?1"'),
            ('own = "f.journal = \'\' AND f.role IS ?1"',
             'own = "F.JOURNAL = \'\' AND F.ROLE IS ?1"'),
            ('"SELECT e.model, e.benchmark, e.domain, e.lang, e.task_id, c.journal, count(*), "',
             '"select e.model, e.benchmark, e.domain, e.lang, e.task_id, c.journal, count(*), "'),
            ('"SELECT e.model, e.benchmark, e.domain, e.lang, e.task_id, c.journal, count(*), "',
             '"SELECT E.MODEL, E.BENCHMARK, E.DOMAIN, E.LANG, E.TASK_ID, C.JOURNAL, COUNT(*), "'),
            ('"sum(c.na), sum(c.pa), sum(c.ca), sum(c.oa), sum(c.n - c.na), sum(c.p - c.pa), "',
             '"SUM(C.NA), SUM(C.PA), SUM(C.CA), SUM(C.OA), SUM(C.N - C.NA), SUM(C.P - C.PA), "'),
            ('"sum(c.c - c.ca), sum(c.o - c.oa) FROM (SELECT f.ep AS ep, f.journal AS journal, "',
             '"sum(c.c - c.ca), sum(c.o - c.oa) from (select f.ep as ep, f.journal as journal, "'),
            ('"sum(c.c - c.ca), sum(c.o - c.oa) FROM (SELECT f.ep AS ep, f.journal AS journal, "',
             '"SUM(C.C - C.CA), SUM(C.O - C.OA) FROM (SELECT F.EP AS EP, F.JOURNAL AS JOURNAL, "'),
            ('"count(*) AS n, sum(f.prompt) AS p, sum(f.cached) AS c, sum(f.completion) AS o, "',
             '"count(*) as n, sum(f.prompt) as p, sum(f.cached) as c, sum(f.completion) as o, "'),
            ('"count(*) AS n, sum(f.prompt) AS p, sum(f.cached) AS c, sum(f.completion) AS o, "',
             '"COUNT(*) AS N, SUM(F.PROMPT) AS P, SUM(F.CACHED) AS C, SUM(F.COMPLETION) AS O, "'),
            ('"FROM call_facts f WHERE f.valid GROUP BY f.ep, f.journal) c "',
             '"from call_facts f where f.valid group by f.ep, f.journal) c "'),
            ('"FROM call_facts f WHERE f.valid GROUP BY f.ep, f.journal) c "',
             '"FROM CALL_FACTS F WHERE F.VALID GROUP BY F.EP, F.JOURNAL) C "'),
            ('"JOIN event_keys k ON k.ep = c.ep JOIN episodes e ON e.episode_key = k.episode_key "',
             '"join event_keys k on k.ep = c.ep join episodes e on e.episode_key = k.episode_key "'),
            ('"JOIN event_keys k ON k.ep = c.ep JOIN episodes e ON e.episode_key = k.episode_key "',
             '"JOIN EVENT_KEYS K ON K.EP = C.EP JOIN EPISODES E ON E.EPISODE_KEY = K.EPISODE_KEY "'),
            ('"WHERE e.status = \'done\' GROUP BY 1, 2, 3, 4, 5, 6", (agent,))',
             '"where e.status = \'done\' group by 1, 2, 3, 4, 5, 6", (agent,))'),
            ('"FROM episodes e JOIN episode_facts x ON x.episode_key = e.episode_key "',
             '"FROM EPISODES E JOIN EPISODE_FACTS X ON X.EPISODE_KEY = E.EPISODE_KEY "'),
            ('"LEFT JOIN event_keys k ON k.episode_key = e.episode_key LEFT JOIN ("',
             '"left join event_keys k on k.episode_key = e.episode_key left join ("'),
            ('"LEFT JOIN event_keys k ON k.episode_key = e.episode_key LEFT JOIN ("',
             '"LEFT JOIN EVENT_KEYS K ON K.EPISODE_KEY = E.EPISODE_KEY LEFT JOIN ("'),
            ('"SELECT f.ep AS ep, sum(coalesce(f.latency_s, 0.0)) AS spent FROM call_facts f "',
             '"select f.ep as ep, sum(coalesce(f.latency_s, 0.0)) as spent from call_facts f "'),
            ('"SELECT f.ep AS ep, sum(coalesce(f.latency_s, 0.0)) AS spent FROM call_facts f "',
             '"SELECT F.EP AS EP, SUM(COALESCE(F.LATENCY_S, 0.0)) AS SPENT FROM CALL_FACTS F "'),
            ('"WHERE f.valid AND f.journal = \'\' GROUP BY f.ep) s ON s.ep = k.ep "',
             '"where f.valid and f.journal = \'\' group by f.ep) s on s.ep = k.ep "'),
            ('"WHERE f.valid AND f.journal = \'\' GROUP BY f.ep) s ON s.ep = k.ep "',
             '"WHERE F.VALID AND F.JOURNAL = \'\' GROUP BY F.EP) S ON S.EP = K.EP "'),
            ('"WHERE e.status = \'done\' GROUP BY 1, 2, 3, 4, 5")',
             '"where e.status = \'done\' group by 1, 2, 3, 4, 5")'),
            ('"SELECT e.episode_key, e.model, e.benchmark, e.domain, e.lang, e.task_id "',
             '"select e.episode_key, e.model, e.benchmark, e.domain, e.lang, e.task_id "'),
            ('"SELECT e.episode_key, e.model, e.benchmark, e.domain, e.lang, e.task_id "',
             '"SELECT E.EPISODE_KEY, E.MODEL, E.BENCHMARK, E.DOMAIN, E.LANG, E.TASK_ID "'),
            ('"FROM episodes e LEFT JOIN episode_facts x ON x.episode_key = e.episode_key "',
             '"from episodes e left join episode_facts x on x.episode_key = e.episode_key "'),
            ('"FROM episodes e LEFT JOIN episode_facts x ON x.episode_key = e.episode_key "',
             '"FROM EPISODES E LEFT JOIN EPISODE_FACTS X ON X.EPISODE_KEY = E.EPISODE_KEY "'),
            ('"WHERE e.status = \'done\' AND x.episode_key IS NULL")',
             '"where e.status = \'done\' and x.episode_key is null")'),
            ('"SELECT e.model, e.benchmark, e.domain, e.lang, e.task_id, count(*), "',
             '"select e.model, e.benchmark, e.domain, e.lang, e.task_id, count(*), "'),
            ('"SELECT e.model, e.benchmark, e.domain, e.lang, e.task_id, count(*), "',
             '"SELECT E.MODEL, E.BENCHMARK, E.DOMAIN, E.LANG, E.TASK_ID, COUNT(*), "'),
            ('"total(max(0.0, x.wall_s - coalesce(s.spent, 0.0))) "',
             '"TOTAL(MAX(0.0, X.WALL_S - COALESCE(S.SPENT, 0.0))) "'),
            ('"FROM episodes e JOIN episode_facts x ON x.episode_key = e.episode_key "',
             '"from episodes e join episode_facts x on x.episode_key = e.episode_key "'),
            ('else "NULL")',
             'else "null")'),
            ('"FROM episodes e JOIN event_keys k ON k.episode_key = e.episode_key "',
             '"from episodes e join event_keys k on k.episode_key = e.episode_key "'),
            ('"FROM episodes e JOIN event_keys k ON k.episode_key = e.episode_key "',
             '"FROM EPISODES E JOIN EVENT_KEYS K ON K.EPISODE_KEY = E.EPISODE_KEY "'),
            ('"JOIN call_facts f ON f.ep = k.ep WHERE e.status = \'done\' AND f.valid "',
             '"join call_facts f on f.ep = k.ep where e.status = \'done\' and f.valid "'),
            ('"AND f.latency_s IS NOT NULL AND f.endpoint IS NOT NULL GROUP BY 1",',
             '"and f.latency_s is not null and f.endpoint is not null group by 1",'),
            ('"AND f.latency_s IS NOT NULL AND f.endpoint IS NOT NULL GROUP BY 1",',
             '"AND F.LATENCY_S IS NOT NULL AND F.ENDPOINT IS NOT NULL GROUP BY 1",'),
            ('case = " ".join("WHEN ? THEN ?" for _ in base)',
             'case = " ".join("when ? then ?" for _ in base)'),
            ('"SELECT run_id, count(*), min(ts), max(ts) FROM call_facts "',
             '"select run_id, count(*), min(ts), max(ts) from call_facts "'),
            ('"SELECT run_id, count(*), min(ts), max(ts) FROM call_facts "',
             '"SELECT RUN_ID, COUNT(*), MIN(TS), MAX(TS) FROM CALL_FACTS "'),
            ('"WHERE run_id IS NOT NULL GROUP BY run_id")}',
             '"where run_id is not null group by run_id")}'),
            ('"WHERE run_id IS NOT NULL GROUP BY run_id")}',
             '"WHERE RUN_ID IS NOT NULL GROUP BY RUN_ID")}'),
        )],
        ('mine = self.judges.setdefault(pair, [0] * 5)',
         'mine = self.judges.setdefault(pair, [0] * 6)',
         "the zip with the other cell's five sums reads five of them"),
        ('for role, part in (("agent", sums[:4]), ("user", sums[4:])):',
         'for role, part in (("agent", sums[:5]), ("user", sums[4:])):',
         "the zip with the role's four sums reads four of them"),
        ('tasks[task] = tasks.get(task, 0) + cell.n',
         'tasks[task] = tasks.get(None, 0) + cell.n',
         "cells are keyed by task, so a (model, benchmark)'s counts meet each task once: the get is always of a task not counted yet (0)"),
        ('agent = next((i for i, t in self.texts.items() if t == "agent"), -1)',
         'agent = next((i for i, t in self.texts.items() if t == "agent"), -2)',
         'fact_texts ids are rowids (positive): no role has id -1 or -2'),
        ('mine[0] += episodes',
         'mine[0] = episodes',
         "the aggregate has one row per (task, journal) and a journal is one (judge, method): each judge's sums start from zero here"),
        ('mine[i] += v',
         'mine[i] = v',
         "the aggregate has one row per (task, journal) and a journal is one (judge, method): each judge's sums start from zero here"),
        ('cell.n += n',
         'cell.n = n',
         'the aggregate has one row per task and the cells start empty'),
        ('cell.overhead_s += overhead',
         'cell.overhead_s = overhead',
         'the aggregate has one row per task and the cells start empty'),
        *[('return {self.texts.get(r, ""): (n, lo, hi) for r, n, lo, hi in self.read_sql(', after, "every run_id of call_facts is an id in fact_texts (the store interns it): the default is never read") for after in (
            'return {self.texts.get(r, None): (n, lo, hi) for r, n, lo, hi in self.read_sql(',
            'return {self.texts.get(r, ): (n, lo, hi) for r, n, lo, hi in self.read_sql(',
            'return {self.texts.get(r, "XXXX"): (n, lo, hi) for r, n, lo, hi in self.read_sql(')],
    ],
    "sweepbench/store/reads.py": [
        *_sql_case('"SELECT k.episode_key, f.journal, f.run_id, f.endpoint, f.role, f.prompt, "',
                   'SELECT k.episode_key, f.journal, f.run_id, f.endpoint, f.role, f.prompt, '),
        *_sql_case('"f.completion, f.cached, f.latency_s, f.attempts, f.statuses, f.stalls, f.replica, "',
                   'f.completion, f.cached, f.latency_s, f.attempts, f.statuses, f.stalls, f.replica, '),
        *_sql_case('"f.failures, f.valid, f.seq, f.ts FROM event_keys k JOIN call_facts f "',
                   'f.failures, f.valid, f.seq, f.ts FROM event_keys k JOIN call_facts f '),
        *_sql_case('"ON f.ep = k.ep WHERE true", "k.episode_key", keys,',
                   'ON f.ep = k.ep WHERE true'),
        *_sql_case('"ON f.ep = k.ep WHERE true", "k.episode_key", keys,',
                   'k.episode_key'),
        *_sql_case('order=" ORDER BY k.episode_key, f.journal, f.seq")',
                   ' ORDER BY k.episode_key, f.journal, f.seq'),
        *_sql_case('sql.replace("WHERE true", "WHERE rowid >= ? AND rowid < ?"), "judgments"))',
                   'WHERE rowid >= ? AND rowid < ?'),
        *_sql_case('return None, (self._read_keys(sql, "episode_key", chunk,',
                   'episode_key'),
        *_sql_case('order=" ORDER BY episode_key, judge, method")',
                   ' ORDER BY episode_key, judge, method'),
        *_sql_case('sql = ("SELECT episode_key, judge, method, passed, score, details, created_at, run_id, "',
                   'SELECT episode_key, judge, method, passed, score, details, created_at, run_id, '),
        *_sql_case('"JOIN call_facts f ON f.ep = k.ep AND f.journal = \'\' "',
                   "JOIN call_facts f ON f.ep = k.ep AND f.journal = '' "),
        *_sql_case('"SELECT e.model, e.benchmark, e.domain, e.lang, e.task_id, count(*) FROM episodes e "',
                   'SELECT e.model, e.benchmark, e.domain, e.lang, e.task_id, count(*) FROM episodes e '),
        *_sql_case('"JOIN events v ON v.episode_key = e.episode_key AND v.journal = \'\' "',
                   "JOIN events v ON v.episode_key = e.episode_key AND v.journal = '' "),
        *_sql_case('"SELECT e.model, e.benchmark, e.domain, e.lang, e.task_id, count(*) "',
                   'SELECT e.model, e.benchmark, e.domain, e.lang, e.task_id, count(*) '),
        *_sql_case('"FROM episodes e JOIN event_keys k ON k.episode_key = e.episode_key "',
                   'FROM episodes e JOIN event_keys k ON k.episode_key = e.episode_key '),
        *_sql_case('"f.statuses, f.stalls, f.replica, f.failures FROM call_facts f "',
                   'f.statuses, f.stalls, f.replica, f.failures FROM call_facts f '),
        *_sql_case('"INDEXED BY call_facts_odd JOIN event_keys k ON k.ep = f.ep "',
                   'INDEXED BY call_facts_odd JOIN event_keys k ON k.ep = f.ep '),
        *_sql_case('order = " ORDER BY k.episode_key, f.journal, f.seq"',
                   ' ORDER BY k.episode_key, f.journal, f.seq'),
        *_sql_case('cond, values = _in("k.episode_key", chunk)',
                   'k.episode_key'),
        *_sql_case('"SELECT f.ep, f.journal != \'\', coalesce(f.run_id, 0), coalesce(f.endpoint, 0), "',
                   "SELECT f.ep, f.journal != '', coalesce(f.run_id, 0), coalesce(f.endpoint, 0), "),
        *_sql_case('"coalesce(f.role, 0), coalesce(f.statuses, 0), f.prompt, f.completion, "',
                   'coalesce(f.role, 0), coalesce(f.statuses, 0), f.prompt, f.completion, '),
        *_sql_case('"f.cached, coalesce(f.latency_s, -9e999), f.attempts IS NOT NULL, "',
                   'f.cached, coalesce(f.latency_s, -9e999), f.attempts IS NOT NULL, '),
        *_sql_case('"SELECT k.episode_key, f.valid, f.journal, f.seq, f.run_id, f.endpoint, "',
                   'SELECT k.episode_key, f.valid, f.journal, f.seq, f.run_id, f.endpoint, '),
        *_sql_case('"f.role, f.prompt, f.completion, f.cached, f.latency_s, f.attempts, "',
                   'f.role, f.prompt, f.completion, f.cached, f.latency_s, f.attempts, '),
        *_sql_case('rows = self._read("SELECT run_id, count(*), min(ts), max(ts) FROM event_rows "  # no key',
                   'SELECT run_id, count(*), min(ts), max(ts) FROM event_rows '),
        *_sql_case('"GROUP BY k.episode_key, f.journal, 3", (agent_id, *values))',
                   'GROUP BY k.episode_key, f.journal, 3'),
        *_sql_case('"AND f.journal = \'\' GROUP BY k.episode_key", values)',
                   "AND f.journal = '' GROUP BY k.episode_key"),
        *_sql_case('return self._read("SELECT count(*) FROM episodes")[0][0]',
                   'SELECT count(*) FROM episodes'),
        *_sql_case('found = {r[0]: r for r in self._read("SELECT * FROM episode_facts") if r[0] in rank}',
                   'SELECT * FROM episode_facts'),
        *_sql_case('cond, values = _in("episode_key", chunk)',
                   'episode_key'),
        *_sql_case('cond, values = _in("e.episode_key", chunk)',
                   'e.episode_key'),
        *_sql_case('"SELECT e.episode_key FROM episodes e LEFT JOIN episode_facts f "',
                   'SELECT e.episode_key FROM episodes e LEFT JOIN episode_facts f '),
        *_sql_case('"AND f.episode_key IS NULL", values)]',
                   'AND f.episode_key IS NULL'),
        *_sql_case('"r.episode_key = e.episode_key WHERE r.run_id = ?" + order,',
                   'r.episode_key = e.episode_key WHERE r.run_id = ?'),
        *_sql_case('order = " ORDER BY e.model, e.benchmark, e.domain, e.task_id, e.trial, e.episode_key"',
                   ' ORDER BY e.model, e.benchmark, e.domain, e.task_id, e.trial, e.episode_key'),
        *_sql_case('rows = self._read_keys("SELECT episode_key, label, identity FROM episodes WHERE true",',
                   'SELECT episode_key, label, identity FROM episodes WHERE true'),
        *_sql_case('return dict(self._read_keys("SELECT episode_key, status FROM episodes WHERE true",',
                   'SELECT episode_key, status FROM episodes WHERE true'),
        *_sql_case('"episode_key", keys))',
                   'episode_key'),
        *_sql_case('sql += " AND kind = ?"',
                   ' AND kind = ?'),
        *_sql_case('rows = self._read(sql + " ORDER BY seq", params)',
                   ' ORDER BY seq'),
        *_sql_case('sql = ("SELECT seq, kind, payload, ts, run_id, endpoint FROM events "',
                   'SELECT seq, kind, payload, ts, run_id, endpoint FROM events '),
        *_sql_case('"WHERE episode_key = ? AND journal = ?")',
                   'WHERE episode_key = ? AND journal = ?'),
        *_sql_case('return dict(self._read("SELECT id, text FROM fact_texts"))',
                   'SELECT id, text FROM fact_texts'),
        *_sql_case('rows = self._read_keys("SELECT episode_key, identity FROM episodes WHERE true",',
                   'SELECT episode_key, identity FROM episodes WHERE true'),
        *_sql_case('"episode_key", keys)',
                   'episode_key'),
        *_sql_case('"SELECT episode_key, count(*) FROM events WHERE journal = \'\' "',
                   "SELECT episode_key, count(*) FROM events WHERE journal = '' "),
        *_sql_case('"AND kind = \'model_call\'", "episode_key", keys, order=" GROUP BY episode_key"))',
                   ' GROUP BY episode_key'),
        *_sql_case('"episode_key = ? ORDER BY journal", (episode_key,))]',
                   'episode_key = ? ORDER BY journal'),
        *_sql_case('return [j for (j,) in self._read("SELECT DISTINCT journal FROM events WHERE "',
                   'SELECT DISTINCT journal FROM events WHERE '),
        *_sql_case('"SELECT episode_key, judge, method, judge_key, coalesce(json_type(details) = "',
                   'SELECT episode_key, judge, method, judge_key, coalesce(json_type(details) = '),
        *_sql_case('"WHERE typeof(details) = \'text\' AND json_valid(details)", "episode_key", keys,',
                   'episode_key'),
        *_sql_case('"SELECT episode_key, judge, method, passed, score, details, created_at, "',
                   'SELECT episode_key, judge, method, passed, score, details, created_at, '),
        *_sql_case('rows = self._read("SELECT run_id FROM runs ORDER BY created_at DESC, rowid DESC LIMIT 1")',
                   'SELECT run_id FROM runs ORDER BY created_at DESC, rowid DESC LIMIT 1'),
        *_sql_case('"AND coalesce(json_valid(sb_json(payload)), 0)",',
                   'AND coalesce(json_valid(sb_json(payload)), 0)'),
        *_sql_case('"episode_key", keys,',
                   'episode_key'),
        *_sql_case('order=" ORDER BY episode_key, journal, seq")',
                   ' ORDER BY episode_key, journal, seq'),
        *_sql_case('"FROM (SELECT episode_key, journal, run_id, endpoint, seq, sb_json(payload) AS "',
                   'FROM (SELECT episode_key, journal, run_id, endpoint, seq, sb_json(payload) AS '),
        *_sql_case('"episode_key", keys, order=" ORDER BY episode_key, journal, seq LIMIT -1 OFFSET 0)")',
                   ' ORDER BY episode_key, journal, seq LIMIT -1 OFFSET 0)'),
        *_sql_case('"SELECT episode_key, record FROM episodes WHERE record IS NOT NULL",',
                   'SELECT episode_key, record FROM episodes WHERE record IS NOT NULL'),
        *_sql_case('return dict(self._read("SELECT episode_key, spec FROM run_episodes WHERE run_id = ?",',
                   'SELECT episode_key, spec FROM run_episodes WHERE run_id = ?'),
        *_sql_case('"SELECT run_id, created_at, finished_at, status, config, config_hash, prices, info "',
                   'SELECT run_id, created_at, finished_at, status, config, config_hash, prices, info '),
        *_sql_case('"FROM runs ORDER BY created_at, rowid"',
                   'FROM runs ORDER BY created_at, rowid'),
        *_sql_case('for key, spec in self._read("SELECT episode_key, spec FROM run_episodes "',
                   'SELECT episode_key, spec FROM run_episodes '),
        *_sql_case('"WHERE spec IS NOT NULL"):',
                   'WHERE spec IS NOT NULL'),
        *[(before, after, _SQL_CASE) for before, after in (
            ('"WHERE e.status = \'done\' GROUP BY e.episode_key")',
             '"where e.status = \'done\' group by e.episode_key")'),
            ('"AND v.kind = \'model_call\' WHERE e.status = \'done\' GROUP BY e.episode_key")',
             '"and v.kind = \'model_call\' where e.status = \'done\' group by e.episode_key")'),
            ('f"WHERE {CALL_FACTS_ODD.format(\'f\')} ORDER BY k.episode_key, f.journal, f.seq"):',
             'f"WHERE {CALL_FACTS_ODD.format(\'F\')} ORDER BY k.episode_key, f.journal, f.seq"):'),
            ('f"coalesce(f.attempts, 0), {CALL_FACTS_ODD.format(\'f\')} FROM event_keys k "',
             'f"coalesce(f.attempts, 0), {CALL_FACTS_ODD.format(\'F\')} FROM event_keys k "'),
            ('"WHERE kind = \'model_call\' AND run_id IS NOT NULL GROUP BY run_id")',
             '"where kind = \'model_call\' and run_id is not null group by run_id")'),
            ('agent = self._read("SELECT id FROM fact_texts WHERE text = \'agent\'")',
             'agent = self._read("select id from fact_texts where text = \'agent\'")'),
            ('"label", labels)',
             '"LABEL", labels)'),
            ('"AND kind = \'model_call\'", "episode_key", keys, order=" GROUP BY episode_key"))',
             '"and kind = \'model_call\'", "episode_key", keys, order=" GROUP BY episode_key"))'),
            ('"AND kind = \'model_call\'", "episode_key", keys, order=" GROUP BY episode_key"))',
             '"AND kind = \'model_call\'", "EPISODE_KEY", keys, order=" GROUP BY episode_key"))'),
            ('"\'object\' AND json_type(details, \'$.error\') IS NOT NULL, 0) FROM judgments "',
             '"\'object\' and json_type(details, \'$.error\') is not null, 0) from judgments "'),
            ('"WHERE typeof(details) = \'text\' AND json_valid(details)", "episode_key", keys,',
             '"where typeof(details) = \'text\' and json_valid(details)", "episode_key", keys,'),
            ('"run_id, judge_key FROM judgments ORDER BY episode_key, judge, method")]',
             '"run_id, judge_key from judgments order by episode_key, judge, method")]'),
            ('return self._read_keys("SELECT seq, ts FROM events WHERE kind = \'model_call\' "',
             'return self._read_keys("select seq, ts from events where kind = \'model_call\' "'),
            ('"payload FROM events WHERE kind = \'model_call\'",',
             '"payload from events where kind = \'model_call\'",'),
            ('"episode_key", keys, order=" ORDER BY episode_key, journal, seq LIMIT -1 OFFSET 0)")',
             '"EPISODE_KEY", keys, order=" ORDER BY episode_key, journal, seq LIMIT -1 OFFSET 0)")'),
        )],
        ('self._damaged[f"{what}: left out"] = None',
         'self._damaged[f"{what}: left out"] = ""',
         "the dict is an ordered set of lines: its values are never read"),
        ("return self._read(sql + order, params)",
         "return self._read(sql + order, )",
         "no caller of _read_keys passes params: they are always ()"),
        ("agent_id = agent[0][0] if agent else -1",
         "agent_id = agent[0][0] if agent else -2",
         "fact_texts ids are an INTEGER PRIMARY KEY the store numbers from 1: no role is -1 "
         "nor -2"),
        ("r = share(r, r) if type(r) is str else r",
         "r = share(r, r) if (type(r) is str) or True else r",
         "the only run_id that is not a str is None, a singleton: sharing it gives None"),
        ("return [t for _, t in self._fact_calls(keys, say=False)]",
         "return [t for _, t in self._fact_calls(keys, say=None)]", _TRUTH),
        ("self._read_closed = False", "self._read_closed = None", _TRUTH),
        *_sql_case('sql.replace("WHERE true", "WHERE rowid >= ? AND rowid < ?"), "judgments"))',
                   "judgments"),
        ("rank = self._scan_ranks(keys)", "rank = None",
         "the one pass over episode_facts returns the rows the read by keys returns, in the "
         "same order, and says the same records left out in the same order (tests/store/"
         "test_reads_calls.py reads both ways): only faster"),
        ('order=" ORDER BY episode_key, judge, method")', ")",
         "SQLite reads `episode_key IN (...)` of judgments through an index that starts with "
         "(episode_key, judge, method) (the primary key's or judgments_by_episode), with or "
         "without ANALYZE's statistics: the rows come in the ORDER BY's order either way"),
    ],
    "sweepbench/store/runstore.py": [
        *[(before, after, _SQL_CASE) for before, after in (
            ('found = conn.execute("SELECT ep FROM event_keys WHERE episode_key = ?",',
             'found = conn.execute("select ep from event_keys where episode_key = ?",'),
            ('found = conn.execute("SELECT ep FROM event_keys WHERE episode_key = ?",',
             'found = conn.execute("SELECT EP FROM EVENT_KEYS WHERE EPISODE_KEY = ?",'),
            ('rconn.execute("PRAGMA query_only = ON")',
             'rconn.execute("pragma query_only = on")'),
            ('rconn.execute("PRAGMA query_only = ON")',
             'rconn.execute("PRAGMA QUERY_ONLY = ON")'),
            ('c.execute("ROLLBACK")',
             'c.execute("rollback")'),
            ('c.execute(f"PRAGMA wal_checkpoint({\'TRUNCATE\' if version == 0 else \'PASSIVE\'})")',
             'c.execute(f"PRAGMA wal_checkpoint({\'truncate\' if version == 0 else \'PASSIVE\'})")'),
            ('c.execute(f"PRAGMA wal_checkpoint({\'TRUNCATE\' if version == 0 else \'PASSIVE\'})")',
             'c.execute(f"PRAGMA wal_checkpoint({\'TRUNCATE\' if version == 0 else \'passive\'})")'),
            ('c.execute("PRAGMA wal_autocheckpoint = 0")  # the checkpointer\'s job, off the writer\'s',
             'c.execute("pragma wal_autocheckpoint = 0")  # the checkpointer\'s job, off the writer\'s'),
            ('c.execute("PRAGMA wal_autocheckpoint = 0")  # the checkpointer\'s job, off the writer\'s',
             'c.execute("PRAGMA WAL_AUTOCHECKPOINT = 0")  # the checkpointer\'s job, off the writer\'s'),
            ('app_id = c.execute("PRAGMA application_id").fetchone()[0]',
             'app_id = c.execute("pragma application_id").fetchone()[0]'),
            ('app_id = c.execute("PRAGMA application_id").fetchone()[0]',
             'app_id = c.execute("PRAGMA APPLICATION_ID").fetchone()[0]'),
            ('version = c.execute("PRAGMA user_version").fetchone()[0]',
             'version = c.execute("pragma user_version").fetchone()[0]'),
            ('version = c.execute("PRAGMA user_version").fetchone()[0]',
             'version = c.execute("PRAGMA USER_VERSION").fetchone()[0]'),
            ('tables = c.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]',
             'tables = c.execute("select count(*) from sqlite_master").fetchone()[0]'),
            ('tables = c.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]',
             'tables = c.execute("SELECT COUNT(*) FROM SQLITE_MASTER").fetchone()[0]'),
            ('mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]  # errors: said by __init__',
             'mode = c.execute("pragma journal_mode = wal").fetchone()[0]  # errors: said by __init__'),
            ('c.execute("BEGIN IMMEDIATE")',
             'c.execute("begin immediate")'),
            ('mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]  # errors: said by __init__',
             'mode = c.execute("PRAGMA JOURNAL_MODE = WAL").fetchone()[0]  # errors: said by __init__'),
            ('if c.execute("PRAGMA user_version").fetchone()[0] == 0:  # not made meanwhile',
             'if c.execute("pragma user_version").fetchone()[0] == 0:  # not made meanwhile'),
            ('if c.execute("PRAGMA user_version").fetchone()[0] == 0:  # not made meanwhile',
             'if c.execute("PRAGMA USER_VERSION").fetchone()[0] == 0:  # not made meanwhile'),
            ('c.execute("COMMIT")',
             'c.execute("commit")'),
            ('c.execute("ROLLBACK")',
             'c.execute("rollback")'),
            ('have = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = \'index\'")}',
             'have = {r[0] for r in c.execute("select name from sqlite_master where type = \'index\'")}'),
            ('have = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = \'index\'")}',
             'have = {r[0] for r in c.execute("SELECT NAME FROM SQLITE_MASTER WHERE TYPE = \'INDEX\'")}'),
            ('c.execute("BEGIN IMMEDIATE")',
             'c.execute("begin immediate")'),
            ('c.execute(f"PRAGMA user_version = {c.execute(\'PRAGMA user_version\').fetchone()[0]}")',
             'c.execute(f"PRAGMA user_version = {c.execute(\'pragma user_version\').fetchone()[0]}")'),
            ('c.execute(f"PRAGMA user_version = {c.execute(\'PRAGMA user_version\').fetchone()[0]}")',
             'c.execute(f"PRAGMA user_version = {c.execute(\'PRAGMA USER_VERSION\').fetchone()[0]}")'),
            ('c.execute("COMMIT" if missing else "ROLLBACK")',
             'c.execute("commit" if missing else "ROLLBACK")'),
            ('c.execute("COMMIT" if missing else "ROLLBACK")',
             'c.execute("COMMIT" if missing else "rollback")'),
            ('row = self._read("SELECT config_hash FROM runs WHERE run_id = ?", (run_id,))',
             'row = self._read("select config_hash from runs where run_id = ?", (run_id,))'),
            ('row = self._read("SELECT config_hash FROM runs WHERE run_id = ?", (run_id,))',
             'row = self._read("SELECT CONFIG_HASH FROM RUNS WHERE RUN_ID = ?", (run_id,))'),
        )],
        *[(before, after, _UTF8_CASE) for before, after in (
            ('return _encode(payload).decode("utf-8")',
             'return _encode(payload).decode("UTF-8")'),
            ('return data.decode("utf-8")',
             'return data.decode("UTF-8")'),
            ('self._put("begin_run", (run_id, time.time(), text.decode("utf-8"), digest,',
             'self._put("begin_run", (run_id, time.time(), text.decode("UTF-8"), digest,'),
        )],
        *[(before, after, ("the fast path's test only sends the usual call past the checks: a mutated test sends it "
           "through the checks one by one, which take the same arguments and refuse the same")) for before, after in (
            ('if not (type(episode_key) is str and episode_key and type(seq) is int and seq >= 0',
             'if not (type(None) is str and episode_key and type(seq) is int and seq >= 0'),
            ('if not (type(episode_key) is str and episode_key and type(seq) is int and seq >= 0',
             'if not (type(episode_key) is str and episode_key and type(None) is int and seq >= 0'),
            ('if not (type(episode_key) is str and episode_key and type(seq) is int and seq >= 0',
             'if not (type(episode_key) is str and episode_key and type(seq) is int and seq > 0'),
            ('if not (type(episode_key) is str and episode_key and type(seq) is int and seq >= 0',
             'if not (type(episode_key) is str and episode_key and type(seq) is int and seq >= 1'),
            ('and type(kind) is str and kind and type(journal) is str',
             'and type(None) is str and kind and type(journal) is str'),
            ('and type(kind) is str and kind and type(journal) is str',
             'and type(kind) is not str and kind and type(journal) is str'),
            ('and type(kind) is str and kind and type(journal) is str',
             'and type(kind) is str and kind and type(None) is str'),
            ('and (run_id is None or type(run_id) is str)',
             'and (run_id is None and type(run_id) is str)'),
            ('and (run_id is None or type(run_id) is str)',
             'and (run_id is None or type(None) is str)'),
            ('and (endpoint is None or type(endpoint) is str)):',
             'and (endpoint is None and type(endpoint) is str)):'),
            ('and (endpoint is None or type(endpoint) is str)):',
             'and (endpoint is None or type(None) is str)):'),
            ('if type(payload) is dict:  # what the journal passes: no error text made up front',
             'if type(None) is dict:  # what the journal passes: no error text made up front'),
        )],
        *[(before, after, ("the writer's facts of a call and the journal trigger's are the same row "
           "(tests/store/test_call_facts.py); where the writer gives none, the trigger computes it")) for before, after in (
            ('if kind == "model_call":',
             'if kind == "MODEL_CALL":'),
            ('facts = source(payload) if kind == "model_call" and type(payload) is dict else None',
             'facts = source(payload) if kind == "MODEL_CALL" and type(payload) is dict else None'),
            ('if kind == "model_call":',
             'if kind == "XXmodel_callXX":'),
            ('f = fact(ep, j, s, ts, run, endpoint, src, data)',
             'f = None'),
            ('if f is not None:  # else the trigger computes it',
             'if f is None:  # else the trigger computes it'),
            ('facts = source(payload) if kind == "model_call" and type(payload) is dict else None',
             'facts = None'),
            ('facts = source(payload) if kind == "model_call" and type(payload) is dict else None',
             'facts = source(payload) if (kind == "model_call" and type(payload) is dict) and False else None'),
            ('facts = source(payload) if kind == "model_call" and type(payload) is dict else None',
             'facts = source(payload) if kind == "model_call" or type(payload) is dict else None'),
            ('facts = source(payload) if kind == "model_call" and type(payload) is dict else None',
             'facts = source(payload) if kind != "model_call" and type(payload) is dict else None'),
            ('facts = source(payload) if kind == "model_call" and type(payload) is dict else None',
             'facts = source(payload) if kind == "XXmodel_callXX" and type(payload) is dict else None'),
            ('facts = source(payload) if kind == "model_call" and type(payload) is dict else None',
             'facts = source(payload) if kind == "model_call" and type(None) is dict else None'),
            ('facts = source(payload) if kind == "model_call" and type(payload) is dict else None',
             'facts = source(payload) if kind == "model_call" and type(payload) is not dict else None'),
        )],
        *[(before, after, ("the writer's cache of episode numbers: a number not kept is looked up again, the "
           "same (a key never changes its number)")) for before, after in (
            ('if len(eps) >= _EPS_KEPT:',
             'if len(eps) > _EPS_KEPT:'),
            ('eps[key] = found[0]',
             'eps[key] = None'),
            ('ep = eps.get(k) or number(k)',
             'ep = eps.get(None) or number(k)'),
        )],
        ('msgspec.json.decode(data, type=msgspec.Raw)  # validates without building objects',
         'msgspec.json.decode(data, )  # validates without building objects',
         'a decode into objects validates the same JSON as into Raw (only slower)'),
        ('self._init_schema(synchronous.upper())',
         'self._init_schema(synchronous.lower())',
         "SQLite reads the synchronous pragma's value without regard to case"),
        ('cconn.execute(f"PRAGMA synchronous = {synchronous.upper()}")',
         'cconn.execute(f"PRAGMA synchronous = {synchronous.lower()}")',
         "SQLite reads the synchronous pragma's value without regard to case"),
        ('if version < SCHEMA_VERSION:',
         'if version <= SCHEMA_VERSION:',
         'a passive checkpoint of a store already at this schema moves committed pages from the WAL into the file: what any reader sees is the same'),
        ('c.execute(f"PRAGMA wal_checkpoint({\'TRUNCATE\' if version == 0 else \'PASSIVE\'})")',
         'c.execute(f"PRAGMA wal_checkpoint({\'TRUNCATE\' if version == 0 else \'XXPASSIVEXX\'})")',
         "SQLite's wal_checkpoint takes any other argument as PASSIVE"),
        ('synchronous: str = "NORMAL",', 'synchronous: str = "normal",',
         "the option is upper()ed before it is checked and used"),
    ],
    "sweepbench/runner/preflight.py": [
        *[("what = \" and \".join(f\"{k} {word}{'s' if k > 1 else ''}\"",
           f"what = \" and \".join(f\"{{k}} {{word}}{{'s' if {cond} else {alt}}}\"",
           "the generator keeps only k > 1 (the filter after it): the plural is always taken")
          for cond, alt in (("k >= 1", "''"), ("k > 1", "'XXXX'"), ("(k > 1) or True", "''"))],
        *[('for where in ("/proc/self/fd", "/dev/fd"):', f'for where in ("{w}", "/dev/fd"):',
           "on Linux /dev/fd is a link to /proc/self/fd: the fallback counts the same "
           "descriptors (tests/runner/test_preflight.py checks the fallback's own count)")
          for w in ("XX/proc/self/fdXX", "/PROC/SELF/FD")],
        ('text = " ".join(KEYS.scrub(raw.decode("utf-8", "replace")).split())',
         'text = " ".join(KEYS.scrub(raw.decode("UTF-8", "replace")).split())', _UTF8_CASE),
        *[(line, line.replace(a, b), "HTTP header names are case-insensitive (aiohttp keeps "
           "headers in a CIMultiDict and the server reads them so)") for line, a, b in (
              ('headers = {"Content-Type": "application/json"}', "Content-Type", "content-type"),
              ('headers = {"Content-Type": "application/json"}', "Content-Type", "CONTENT-TYPE"),
              ('headers["Authorization"] = f"Bearer {os.environ[ep.api_key_env]}"',
               "Authorization", "authorization"),
              ('headers["Authorization"] = f"Bearer {os.environ[ep.api_key_env]}"',
               "Authorization", "AUTHORIZATION"))],
        *[('text = await _server_text(resp) if status >= 400 else ""', after,
           "the server's text is quoted only for 404, 408 and 5xx: below 400 (and at 400) it "
           "is never read, whatever it holds") for after in (
              'text = await _server_text(resp) if (status >= 400) or True else ""',
              'text = await _server_text(resp) if status > 400 else ""',
              'text = await _server_text(resp) if status >= 401 else ""',
              'text = await _server_text(resp) if status >= 400 else "XXXX"')],
        ("request = ChatRequest(model=ep.model_name, messages=[UserMessage(PROBE_MESSAGE)],",
         "request = ChatRequest(model=None, messages=[UserMessage(PROBE_MESSAGE)],",
         "BodyTemplate sets the endpoint's model name on every body it encodes"),
    ],
    "sweepbench/store/identity.py": [
        *[e for line, sql in (
            ('c.execute("INSERT INTO store_identity (id) VALUES (?)", (store_id,))',
             "INSERT INTO store_identity (id) VALUES (?)"),
            ("root = c.execute(\"SELECT rootpage FROM sqlite_schema WHERE type = 'table' \"",
             "SELECT rootpage FROM sqlite_schema WHERE type = 'table' "),
            ("\"AND name = 'store_identity'\").fetchone()", "AND name = 'store_identity'"),
            ('row = c.execute("SELECT id FROM store_identity LIMIT 1").fetchone() if root else None',
             "SELECT id FROM store_identity LIMIT 1"))
          for e in _sql_case(line, sql)],
        *[("c = sqlite3.connect(uri, uri=True)", after,
           "this Python's SQLite is built with URI filenames on (SQLITE_USE_URI, as Debian's): a "
           "'file:' name is read as a URI either way. Not an equivalent under an SQLite built "
           "without it") for after in ("c = sqlite3.connect(uri, uri=None)",
                                       "c = sqlite3.connect(uri, )",
                                       "c = sqlite3.connect(uri, uri=False)")],
        ('row = c.execute("SELECT id FROM store_identity LIMIT 1").fetchone() if root else None',
         'row = c.execute("SELECT id FROM store_identity LIMIT 1").fetchone() if (root) or True '
         'else None',
         "without the table the select fails (no such table), which returns None as no row does"),
        ("if magic not in _WAL_MAGIC or page_size < 512 or page_size & (page_size - 1):",
         "if magic not in _WAL_MAGIC or page_size < 512 or page_size & (page_size - 2):",
         "for n >= 512, n & (n - 2) is 0 exactly when n is a power of two, as n & (n - 1) is"),
        ("if wal.stat().st_size <= _WAL_HEADER:", "if wal.stat().st_size < _WAL_HEADER:",
         "a WAL of its header alone has no frame: _wal_ids finds no commit and check_wal returns "
         "as it does at once"),
        ("for _ in range(5):  # the WAL may start over (a running sweep's checkpoint) while read",
         "for _ in range(6):  # the WAL may start over (a running sweep's checkpoint) while read",
         "the sixth read only happens when a WAL restarted during each of five reads in a row; "
         "no test can hold a checkpoint on that"),
    ],
    "sweepbench/benchmarks/vitabench/judge.py": [
        ("args = python_arguments(arguments) if arguments else {}",
         "args = python_arguments(arguments) if (arguments) or True else {}",
         "empty text is no JSON: python_arguments raises, the raw '' is shown, and name() is "
         "what an empty dict shows"),
        ('text: str | None = getattr(m, "content", None)', 'text: str | None = getattr(m, "content", )',
         "every message type of the wire (system, user, assistant, tool) has a content field"),
        *[('"window_idx": 1, "total_windows": 1, "window_size": window,', after,
           "the fields given at construction only pick the template's source; system() renders "
           "each window with its own index and count") for after in (
            '"window_idx": 2, "total_windows": 1, "window_size": window,',
            '"window_idx": 1, "total_windows": 2, "window_size": window,')],
        *[('lang = lang if lang in ("en", "zh") else "en"', after,
           "English is the fallback: a language that is not Chinese ends up English either way")
          for after in ('lang = lang if lang in ("XXenXX", "zh") else "en"',
                        'lang = lang if lang in ("EN", "zh") else "en"')],
        *[('when = str(task.environment.get("time", "") or "")', after,
           "a missing time read as None falls to '' through the `or` as '' does")
          for after in ('when = str(task.environment.get("time", None) or "")',
                        'when = str(task.environment.get("time", ) or "")')],
    ],
}

_STATUS = re.compile(r"^\s*(\S+): (.+)$")
_PART = re.compile(r"^(\d+)/(\d+)$")
COLUMNS = ("module", "mutants", "killed", "equivalent", "survived", "kill rate", "date", "commit")
REPORT_HEADER = """# Mutation kill rates

One row per module of `[tool.mutmut] only_mutate` (pyproject.toml), from `scripts/mutate.py`:
mutmut's mutants, those the tests kill (timeouts included), the survivors judged equivalent
(each listed with its reason in `EQUIVALENT` of `scripts/mutate.py`), the other survivors, and
the kill rate = killed / (mutants - equivalent). A row is the run on its date at its commit
(`-dirty`: the package, tests or config had uncommitted changes); a run rewrites the rows of
the modules it measured and keeps the others. Reproduce a row, or a part of the room:

    pip install -e '.[dev,mutation]'
    python scripts/mutate.py sweepbench/runner/budget.py --fresh --max-children 1 --report benchmarks/mutation.md
    python scripts/mutate.py --part 2/4 --fresh --report benchmarks/mutation.md

"""


def _mutmut(*args: str, log: Path | None = None) -> str:
    exe = [sys.executable, "-m", "mutmut", *args]
    if log is None:
        return subprocess.run(exe, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    with log.open("w") as fh:  # the progress spinner goes to the log, not the terminal
        code = subprocess.run(exe, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT).returncode
    if code:
        sys.exit(f"mutmut {' '.join(args)} failed ({code}); see {log}")
    return ""


def _changed_lines(diff: str) -> tuple[str, str]:
    minus = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    plus = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return " ".join(minus), " ".join(plus)


def room(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The modules of ``[tool.mutmut] only_mutate``, in their order there."""
    with pyproject.open("rb") as fh:
        return list(tomllib.load(fh)["tool"]["mutmut"]["only_mutate"])


def select(patterns: list[str], part: str | None, modules: list[str]) -> list[str]:
    """The modules to run: those of ``modules`` (the room) matching any of ``patterns`` (paths
    or globs; none: all), then of those, with ``part`` "K/N", every N-th from the K-th (parts
    1/N .. N/N together cover the selection once, each about as many modules as the next)."""
    chosen = modules
    if patterns:
        chosen, unmatched = [], []
        for pat in patterns:
            pat = Path(pat).as_posix()
            hits = [m for m in modules if fnmatch.fnmatchcase(m, pat)]
            if not hits:
                unmatched.append(pat)
            chosen += [m for m in hits if m not in chosen]
        if unmatched:
            raise ValueError(f"not in [tool.mutmut] only_mutate of pyproject.toml: "
                             f"{', '.join(unmatched)}")
    if part is None:
        return chosen
    m = _PART.match(part)
    k, n = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    if not 1 <= k <= n:
        raise ValueError(f"--part must be K/N with 1 <= K <= N, got {part!r}")
    return chosen[k - 1::n]


def _dotted(module: str) -> str:
    return module.removesuffix(".py").replace("/", ".")


def of_module(mutant: str, modules: list[str]) -> str | None:
    """The module of ``modules`` a mutmut mutant name belongs to (``pkg.mod.x_func__mutmut_3``,
    ``pkg.mod.xǁClassǁmethod__mutmut_3``), or None."""
    return next((m for m in modules if mutant.startswith((f"{_dotted(m)}.x_", f"{_dotted(m)}.xǁ"))),
                None)


def count(module: str, statuses: dict[str, str], show=lambda name: "") -> dict:
    """The counts of one module from its mutants' statuses (name -> mutmut status); prints each
    survivor not judged equivalent with its diff (``show``: name -> diff)."""
    equivalent = {(b, a): why for b, a, why in EQUIVALENT.get(module, [])}
    killed = sum(s in ("killed", "timeout") for s in statuses.values())
    survivors = equivalents = 0
    for name, status in sorted(statuses.items()):
        if status in ("killed", "timeout"):
            continue
        diff = show(name)
        if status == "survived" and _changed_lines(diff) in equivalent:
            equivalents += 1
            continue
        survivors += 1
        print(f"=== {name}: {status}\n{diff.strip()}\n")
    counted = len(statuses) - equivalents
    return {"module": module, "mutants": len(statuses), "killed": killed,
            "equivalent": equivalents, "survived": survivors,
            "kill_rate": round(killed / counted if counted else 1.0, 4)}


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def merge_report(text: str, rows: list[dict], date: str, commit: str) -> str:
    """``text`` (a report, or "" for a new one) with the rows of ``rows``' modules replaced or
    added, the other rows kept; rows sorted by module, the text around the table kept."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if _cells(ln)[:2] == list(COLUMNS[:2])), None)
    if start is None:
        before, after, table = (text.rstrip("\n") + "\n\n" if text.strip() else REPORT_HEADER), "", {}
    else:
        end = start
        while end < len(lines) and lines[end].lstrip().startswith("|"):
            end += 1
        before = "\n".join(lines[:start]) + "\n" if start else ""
        after = "\n".join(lines[end:])
        table = {_cells(ln)[0]: ln.strip() for ln in lines[start + 2:end] if _cells(ln)[0]}
    for r in rows:
        table[r["module"]] = "| " + " | ".join(
            [r["module"], *(str(r[k]) for k in ("mutants", "killed", "equivalent", "survived")),
             f"{100 * r['kill_rate']:.2f}%", date, commit]) + " |"
    out = [before + "| " + " | ".join(COLUMNS) + " |",
           "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
           *(table[m] for m in sorted(table))]
    return "\n".join(out) + "\n" + (("\n" + after.strip("\n") + "\n") if after.strip() else "")


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--", "sweepbench", "tests", "pyproject.toml")
    return head + ("-dirty" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*",
                    help="paths or globs of modules in [tool.mutmut] only_mutate (none: all), "
                         "e.g. sweepbench/results/stats.py or 'sweepbench/judge/*'")
    ap.add_argument("--part", default=None, metavar="K/N",
                    help="run the K-th of N parts of the modules selected (every N-th, from the K-th)")
    ap.add_argument("--report", type=Path, default=None, metavar="FILE",
                    help="write the counts into this markdown table, keeping other modules' rows")
    ap.add_argument("--fresh", action="store_true", help="delete mutants/ first")
    ap.add_argument("--max-children", type=int, default=None, help="parallel mutant runs")
    ap.add_argument("--fail-under", type=float, default=None,
                    help="exit 1 when a module's kill rate is below this (0-1)")
    args = ap.parse_args(argv)
    try:
        modules = select(args.modules, args.part, room())
    except ValueError as exc:
        ap.error(str(exc))
    if not modules:
        print(f"part {args.part} holds no module", file=sys.stderr)
        return 0
    if args.fresh:
        shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    (ROOT / "mutants").mkdir(exist_ok=True)
    run = ["run", *(f"{_dotted(m)}.*" for m in modules)]
    if args.max_children:
        run += ["--max-children", str(args.max_children)]
    name = (_dotted(modules[0]) if len(modules) == 1
            else f"part-{args.part.replace('/', 'of')}" if args.part else f"{len(modules)}-modules")
    _mutmut(*run, log=ROOT / "mutants" / f"run-{name}.log")

    statuses: dict[str, dict[str, str]] = {m: {} for m in modules}
    for line in _mutmut("results", "--all", "true").splitlines():
        m = _STATUS.match(line)
        module = m and of_module(m.group(1), modules)
        if module:
            statuses[module][m.group(1)] = m.group(2).strip()
    rows = []
    for module in modules:
        if not statuses[module]:
            sys.exit(f"no mutants of {_dotted(module)}: is {module} in [tool.mutmut] only_mutate?")
        rows.append(count(module, statuses[module], lambda n: _mutmut("show", n)))
        print(json.dumps(rows[-1]), flush=True)  # one summary line per module
    if args.report is not None:
        old = args.report.read_text(encoding="utf-8") if args.report.exists() else ""
        date = datetime.now(timezone.utc).strftime("%Y-%m-%d")
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(merge_report(old, rows, date, _commit()), encoding="utf-8")
    low = args.fail_under is not None and any(r["kill_rate"] < args.fail_under for r in rows)
    return 1 if low else 0


if __name__ == "__main__":
    sys.exit(main())
