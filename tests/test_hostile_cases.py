"""Every attack of benchmarks/hostile_cases/ holds: the table benchmarks/hostile.py prints, as tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_RUNNER = Path(__file__).resolve().parents[1] / "benchmarks" / "hostile.py"
_spec = importlib.util.spec_from_file_location("hostile_runner", _RUNNER)
assert _spec is not None and _spec.loader is not None
hostile = importlib.util.module_from_spec(_spec)
sys.modules["hostile_runner"] = hostile
_spec.loader.exec_module(hostile)

ATTACKS = hostile.load_attacks()


@pytest.mark.parametrize(("area", "attack"), ATTACKS,
                         ids=[f"{area}:{attack.name}" for area, attack in ATTACKS])
def test_attack_holds(area: str, attack: object) -> None:
    got, held, _ = hostile.run_attack(attack)  # type: ignore[arg-type]
    assert held, f"{area}: {attack.name}: expected {attack.expected}; got {got}"  # type: ignore[attr-defined]


def test_an_attack_that_escapes_is_reported_as_broken(tmp_path: Path) -> None:
    def boom(_: Path) -> tuple[str, bool]:
        raise RecursionError("maximum recursion depth exceeded")

    got, held, _ = hostile.run_attack(hostile.Attack(0, "boom", "no escape", boom))
    assert not held and got == "escaped: RecursionError: maximum recursion depth exceeded"


def test_cases_are_found_in_every_area_module(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "from _base import Attack\n"
        "ATTACKS = [Attack(1, 'x', 'y', lambda d: ('ok', True))]\n")
    (tmp_path / "_private.py").write_text("raise SystemExit('not loaded')\n")
    found = hostile.load_attacks(tmp_path)
    assert [(area, a.name) for area, a in found] == [("a", "x")]
