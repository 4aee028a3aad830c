"""Mutation run for one module: mutmut's mutants, the survivors' diffs, a kill rate that leaves
out the survivors judged equivalent.

    pip install -e '.[dev,mutation]'
    python scripts/mutate.py sweepbench/results/stats.py

The module must be in ``[tool.mutmut] only_mutate`` of pyproject.toml and its tests in
``pytest_add_cli_args_test_selection`` (mutmut runs, for each mutant, only the tests there that
reach the mutated function). mutmut keeps its work in ``mutants/`` (git-ignored) and reuses it;
``--fresh`` deletes it first (needed after a config change). Prints each surviving mutant's
diff, then one JSON object last: counts and ``kill_rate`` = killed / (mutants - equivalent).

``EQUIVALENT`` lists the survivors judged equivalent (no input of the module's contract can
tell them apart), as the exact source line before and after the mutation, with the reason.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
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
_SQL_CASE = "SQLite reads its keywords in any case"
_JOINED = ("the finalizer joining one thread joins both: the checkpointer ends only once the "
           "writer has committed the last batch, and the writer joins the checkpointer")
_NO_BLANK_STATEMENT = ("no piece of the split is blank (the last statement has no ';' after it), "
                      "so both filters keep the same statements")
EQUIVALENT: dict[str, list[tuple[str, str, str]]] = {
    "sweepbench/client/limits.py": [
        ("if self.limit < self.max_limit:", "if self.limit <= self.max_limit:",
         "at the maximum the limit stays there, and the extra wake-up admits nobody: waiters "
         "only queue while every slot is taken"),
        ("self._open_until = 0.0", "self._open_until = None", "read only while open; set on opening"),
        ("self._open_until = 0.0", "self._open_until = 1.0", "read only while open; set on opening"),
        ("self._probing = False", "self._probing = None", _TRUTH),
        ("self._seen = False", "self._seen = None", _TRUTH),
        *[('if self.state != "closed" and (probe or self.state == "half_open"):',
           f'if self.state != "{c}" and (probe or self.state == "half_open"):',
           "a probe answering after the breaker closed only closes it again (the cool-down was "
           "reset when it closed)") for c in ("XXclosedXX", "CLOSED")],
        ("waited = 0.0", "waited = 1.0", _UNREAD),
        ("waited += left", "waited = left", _UNREAD),
        ("waited += left", "waited -= left", _UNREAD),
        ("if now > self._at:", "if now >= self._at:", "at the same instant a refill adds nothing"),
        ("return 0.0 if self._level >= 0 else -self._level / self.rate",
         "return 0.0 if self._level > 0 else -self._level / self.rate",
         "at a level of exactly 0 the wait is -0.0, which equals 0.0 and makes nobody sleep"),
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
        ('args = msgspec.json.decode(tc.function.arguments or "{}")',
         'args = msgspec.json.decode(tc.function.arguments or "XX{}XX")',
         "empty arguments become {} either way (the undecodable text falls back to {})"),
        ("args = {}", "args = None", "a non-object falls back to {} on the next line"),
    ],
    "sweepbench/store/schema.py": [
        ('for stmt in filter(str.strip, _SCHEMA.split(";")):  # executescript() would commit',
         'for stmt in filter(None, _SCHEMA.split(";")):  # executescript() would commit',
         _NO_BLANK_STATEMENT),
        ('for stmt in (*filter(str.strip, EVENT_TABLES.split(";")), *_EVENTS_VIEW):',
         'for stmt in (*filter(None, EVENT_TABLES.split(";")), *_EVENTS_VIEW):',
         _NO_BLANK_STATEMENT),
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
    ],
}

_STATUS = re.compile(r"^\s*(\S+): (.+)$")


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("module", help="path of the module, e.g. sweepbench/results/stats.py")
    ap.add_argument("--fresh", action="store_true", help="delete mutants/ first")
    ap.add_argument("--max-children", type=int, default=None, help="parallel mutant runs")
    ap.add_argument("--fail-under", type=float, default=None,
                    help="exit 1 when the kill rate is below this (0-1)")
    args = ap.parse_args(argv)
    module = Path(args.module).as_posix()
    dotted = module.removesuffix(".py").replace("/", ".")
    if args.fresh:
        shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    (ROOT / "mutants").mkdir(exist_ok=True)
    run = ["run", f"{dotted}.*"]
    if args.max_children:
        run += ["--max-children", str(args.max_children)]
    _mutmut(*run, log=ROOT / "mutants" / f"run-{dotted}.log")

    statuses = {}
    for line in _mutmut("results", "--all", "true").splitlines():
        m = _STATUS.match(line)
        if m and m.group(1).startswith(f"{dotted}.x"):
            statuses[m.group(1)] = m.group(2).strip()
    if not statuses:
        sys.exit(f"no mutants of {dotted}: is {module} in [tool.mutmut] only_mutate?")
    equivalent = {(b, a): why for b, a, why in EQUIVALENT.get(module, [])}
    killed = sum(s in ("killed", "timeout") for s in statuses.values())
    survivors, equivalents = [], []
    for name, status in sorted(statuses.items()):
        if status in ("killed", "timeout"):
            continue
        diff = _mutmut("show", name)
        if status == "survived" and _changed_lines(diff) in equivalent:
            equivalents.append(name)
            continue
        survivors.append(name)
        print(f"=== {name}: {status}\n{diff.strip()}\n")
    counted = len(statuses) - len(equivalents)
    rate = killed / counted if counted else 1.0
    print(json.dumps({"module": module, "mutants": len(statuses), "killed": killed,
                      "equivalent": len(equivalents), "survived": len(survivors),
                      "kill_rate": round(rate, 4)}))
    return 1 if args.fail_under is not None and rate < args.fail_under else 0


if __name__ == "__main__":
    sys.exit(main())
