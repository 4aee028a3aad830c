"""``main``'s endings: a Ctrl-C is one line and exit status 130, whether it lands before a
command handles it or while the console script imports the CLI."""

from __future__ import annotations

import pytest

from sweepbench.cli import results, run, serve

from .helpers import call

COMMAND_MODULES = {"run": run, "judge": run, "serve": serve, "view": serve, "report": results}
"""Where each command's function lives (the parser looks it up there)."""


@pytest.mark.parametrize(("command", "continues"), [
    ("run", True), ("judge", True), ("serve", False), ("view", False), ("report", False)])
def test_a_ctrl_c_before_a_commands_own_handler_says_whether_a_rerun_continues(
        monkeypatch, capsys, command, continues):
    """A Ctrl-C that lands before the command handles it itself (during imports, say) ends
    with one line; only a sweep or a judging is told that running it again continues."""
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(COMMAND_MODULES[command], f"cmd_{command}", interrupted)
    argv = {c: [c, "store.sqlite"] for c in ("judge", "report", "view")}
    assert call(argv.get(command, [command])) == 130
    err = capsys.readouterr().err
    assert err.startswith("interrupted"), err
    assert ("re-run the same command" in err) is continues, err
    assert len(err.strip().splitlines()) == 1


def test_a_ctrl_c_while_the_cli_imports_ends_with_one_line(monkeypatch, capsys):
    """The console script imports the CLI inside its own handler: a Ctrl-C in those first
    tenths of a second is one line and 130, not a traceback from the import machinery."""
    import importlib.abc
    import sys

    from sweepbench import launch

    class Interrupting(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "sweepbench.cli":
                raise KeyboardInterrupt
            return None

    monkeypatch.delitem(sys.modules, "sweepbench.cli")
    monkeypatch.setattr(sys, "meta_path", [Interrupting(), *sys.meta_path])
    assert launch.main() == 130
    assert capsys.readouterr().err == "interrupted\n"
