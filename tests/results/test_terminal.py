"""Terminal tables at 80 columns: a title is a line of its own (not centred over a narrow
table and wrapped to its width), and a table a little too wide for its borders drops them
before it is split."""

from __future__ import annotations

import io

from rich.console import Console

from sweepbench.results.render.terminal import FitTable

TITLE = ("vitabench@2025-12: pass from the sliding-window rubric judge (scripted/judge)")
HEAD = ["Model", "Tasks", "k", "Avg@4", "95% CI", "Pass@4", "Pass^4", "State"]
ROWS = [["scripted/oracle", "17", "4", "100.0%", "100.0–100.0", "100.0%", "100.0%", "100.0%"],
        ["scripted/noisy:0.3", "17", "4", "35.3%", "22.1–48.5", "76.5%", "5.9%", "35.3%"]]


def _lines(table: FitTable, width: int) -> list[str]:
    console = Console(record=True, width=width, file=io.StringIO())
    console.print(table)
    return console.export_text().splitlines()


def test_the_quick_start_leaderboard_is_one_table_with_a_one_line_title_at_80_columns():
    lines = _lines(FitTable(TITLE, HEAD, ROWS), 80)
    assert lines == [
        TITLE,
        "Model               Tasks  k   Avg@4       95% CI  Pass@4  Pass^4   State",
        "─" * 73,
        "scripted/oracle        17  4  100.0%  100.0–100.0  100.0%  100.0%  100.0%",
        "scripted/noisy:0.3     17  4   35.3%    22.1–48.5   76.5%    5.9%   35.3%"]


def test_a_table_that_fits_its_borders_keeps_them_and_its_title_above():
    lines = _lines(FitTable(TITLE, HEAD, ROWS), 120)
    assert lines[0] == TITLE
    assert lines[1].startswith("┏━━━━") and lines[2].startswith("┃ Model")
    assert max(map(len, lines)) == 84


def test_a_table_too_wide_even_without_borders_is_split_with_each_title_on_one_line():
    head = HEAD + [f"Extra {i}" for i in range(6)]
    rows = [r + ["12.5%"] * 6 for r in ROWS]
    lines = _lines(FitTable("metrics", head, rows), 80)
    assert [line for line in lines if line.startswith("metrics")] == [
        "metrics (1/2)", "metrics (2/2)"]
    assert max(map(len, lines)) <= 80


def test_a_table_one_column_too_wide_without_borders_closes_up_before_it_splits():
    """Two intervals per row make the leaderboard 81 columns wide with two spaces between
    columns: at 80 it is drawn with one space, whole, rather than in two parts."""
    head = ["Model", "Tasks", "Avg@4", "95% CI task population", "95% CI these tasks",
            "Pass@4", "Pass^4", "State"]
    rows = [["scripted/oracle", "17", "100.0%", "81.6–100.0", "94.7–100.0", "100.0%",
             "100.0%", "100.0%"],
            ["scripted/noisy:0.3", "17", "35.3%", "22.2–51.1", "25.0–47.2", "76.5%", "5.9%",
             "35.3%"]]
    lines = _lines(FitTable("vitabench", head, rows), 80)
    assert lines[0] == "vitabench" and not any("(1/2)" in line for line in lines)
    assert lines[-2:] == [
        "scripted/oracle       17 100.0%       81.6–100.0 94.7–100.0 100.0% 100.0% 100.0%",
        "scripted/noisy:0.3    17  35.3%        22.2–51.1  25.0–47.2  76.5%   5.9%  35.3%"]
    assert len(_lines(FitTable("vitabench", head, rows), 81)[-1]) == 81  # two spaces at 81
