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
_DTYPE = "numpy infers the same result (ints are promoted to float where it matters)"
_MSG = "error message text replaced by None/other text: the tests pin the exception type and " \
       "the words a user needs, not every character"
EQUIVALENT: dict[str, list[tuple[str, str, str]]] = {
    "sweepbench/results/stats.py": [],
    "sweepbench/benchmarks/t1/metrics.py": [],
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
