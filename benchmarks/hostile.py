"""Hostile inputs, replayed: every attack of the reliability rounds, and what each one got.

An attack is a small scenario a hostile endpoint, model, file or disk could produce (a gzip bomb,
a foreign WAL file beside a store, tool arguments nested 10,000 deep, a read-only mount, ...).
Each lives in ``benchmarks/hostile_cases/<area>.py`` as an entry of that module's ``ATTACKS``
list; this script runs them all, each in a fresh temporary directory, and prints a table
(class, attack, expected, got, held) and then one JSON object:
``{"attacks": N, "held": M, "broke": [names]}``. Exit status 1 when any attack broke something.

``--only SUBSTRING`` runs the attacks whose name or area contains it. The test suite runs
the same cases (tests/test_hostile_cases.py), so a regression fails CI, not only this table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path

CASES_DIR = Path(__file__).resolve().parent / "hostile_cases"
sys.path.insert(0, str(CASES_DIR))
from _base import Attack  # the case modules import it the same way


def load_attacks(cases_dir: Path = CASES_DIR) -> list[tuple[str, Attack]]:
    """Every ``ATTACKS`` entry of every case module, as (area, attack), in file order."""
    found: list[tuple[str, Attack]] = []
    for path in sorted(cases_dir.glob("*.py")):
        if path.name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"hostile_cases.{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        found.extend((path.stem, attack) for attack in getattr(module, "ATTACKS", []))
    return found


def run_attack(attack: Attack) -> tuple[str, bool, float]:
    """(got, held, seconds); an exception escaping the attack is what it got, and broke."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sb-hostile-") as tmp:
        try:
            got, held = attack.run(Path(tmp))
        except Exception as exc:  # noqa: BLE001 - the escape is the finding
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            got, held = f"escaped: {last}", False
    return got, held, time.perf_counter() - started


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run attacks whose area or name contains this")
    args = parser.parse_args(argv)
    attacks = [(area, a) for area, a in load_attacks() if args.only in f"{area}:{a.name}"]
    broke: list[str] = []
    print(f"{'#':>2}  {'attack':<44} {'expected':<40} {'got':<40} held")
    for area, attack in attacks:
        got, held, _seconds = run_attack(attack)
        if not held:
            broke.append(f"{area}:{attack.name}")
        print(f"{attack.point:>2}  {_cut(attack.name, 44):<44} {_cut(attack.expected, 40):<40} "
              f"{_cut(got, 40):<40} {'yes' if held else 'NO'}")
    print(json.dumps({"attacks": len(attacks), "held": len(attacks) - len(broke), "broke": broke}))
    return 1 if broke else 0


if __name__ == "__main__":
    raise SystemExit(main())
