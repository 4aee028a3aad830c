"""Selecting episodes: ``--trials`` parsed, a Selection's filters and description, one copy per
key across stores, the newest identity per (model, user, task, trial), row names, and what a
view gathers from the stores its rows came from. Stores are small in-memory doubles of the
reads ``load_view`` makes."""

from __future__ import annotations

import pytest

from sweepbench.errors import ReportError
from sweepbench.results.profile import Prices
from sweepbench.results.selection import EpisodeView, Selection, load_view, name_rows, parse_trials


def row(key: str, *, model: str = "m", task: str = "t1", trial: int = 0, status: str = "done",
        started_at: float | None = 1.0, domain: str = "delivery", benchmark: str = "vitabench",
        label: str | None = None, user_model: str | None = "u", user_mode: str | None = "default"
        ) -> dict:
    return {"episode_key": key, "label": label or f"{model}|{benchmark}:{domain}:{task}|{trial}",
            "model": model, "benchmark": benchmark, "domain": domain, "task_id": task,
            "trial": trial, "user_model": user_model, "user_mode": user_mode, "status": status,
            "started_at": started_at}


class Store:
    """The reads of a run store that a view makes, over fixed rows."""

    def __init__(self, path: str, runs: list[dict], rows: list[dict], *,
                 selected: dict[str, list[str]] | None = None,
                 specs: dict[str, set[str]] | None = None) -> None:
        self.path, self._runs, self._rows = path, runs, rows
        self._selected, self._specs = selected or {}, specs or {}

    def runs(self) -> list[dict]:
        return self._runs

    def run(self, run_id: str) -> dict | None:
        return next((r for r in self._runs if r["run_id"] == run_id), None)

    def specs(self) -> dict[str, set[str]]:
        return self._specs

    def episode_rows(self, run_id: str | None = None) -> list[dict]:
        keys = self._selected.get(run_id) if run_id is not None else None
        return [dict(r) for r in self._rows if keys is None or r["episode_key"] in keys]

    def records(self, keys: list[str]) -> dict[str, str]:
        return {k: f"{self.path}:{k}" for k in keys}

    def judgments(self, keys: list[str], *, keep=None) -> list[dict]:  # noqa: ANN001
        return [{"episode_key": k, "store": self.path} for k in keys]

    def model_calls(self, keys: list[str], *, transcripts: bool = False
                    ) -> list[tuple[str, str]]:
        assert transcripts  # a view's calls are the transcripts' (the report's oracle)
        return [(self.path, k) for k in keys]


def run(run_id: str, **fields) -> dict:
    return {"run_id": run_id, **fields}


# ---- parse_trials ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, trials", [
    ("4", (0, 3)), (" 1 ", (0, 0)), ("2-5", (2, 5)), ("1-1", (1, 1)), ("0-0", (0, 0)),
    ("3-", (3, 1 << 30)), ("3 - ", (3, 1 << 30)), (" 3 -", (3, 1073741824)),
])
def test_trials_are_the_first_n_or_an_inclusive_range(text: str, trials: tuple[int, int]) -> None:
    assert parse_trials(text) == trials


@pytest.mark.parametrize("text", ["x", "", "-1", "1-x", "a-"])
def test_trials_that_are_not_numbers_are_refused_saying_what_they_take(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_trials(text)
    assert str(info.value) == (f"--trials takes N (the first N trials) or A-B (trials A..B), "
                               f"got {text.strip()!r}")


@pytest.mark.parametrize("text", ["0", "5-2", "2-1", "2--1"])
def test_an_empty_trial_range_is_refused(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_trials(text)
    assert str(info.value) == f"--trials {text}: empty or negative range"


# ---- Selection ------------------------------------------------------------------------------

def test_an_empty_selection_describes_nothing_and_keeps_everything() -> None:
    assert Selection().describe() == {}
    assert Selection().keeps(row("k"), set())


def test_a_selection_describes_each_of_its_filters() -> None:
    sel = Selection(models=("m",), benchmarks=("b",), splits=("s",), trials=(0, 0), run_id="r")
    assert sel.describe() == {"models": ["m"], "benchmarks": ["b"], "splits": ["s"],
                              "trials": [0, 0], "run": "r"}


def test_selection_keeps_only_its_models_and_benchmarks() -> None:
    sel = Selection(models=("a", "b"), benchmarks=("t1",))
    assert sel.keeps(row("k", model="b", benchmark="t1"), set())
    assert not sel.keeps(row("k", model="c", benchmark="t1"), set())
    assert not sel.keeps(row("k", model="a", benchmark="vitabench"), set())


def test_selection_keeps_trials_in_its_range_ends_included() -> None:
    sel = Selection(trials=(1, 2))
    assert [t for t in range(4) if sel.keeps(row("k", trial=t), set())] == [1, 2]


def test_selection_keeps_a_split_named_by_domain_spec_or_the_specs_split() -> None:
    assert Selection(splits=("delivery",)).keeps(row("k", domain="delivery"), set())
    assert Selection(splits=("vitabench:ota",)).keeps(row("k"), {"vitabench:ota"})
    assert Selection(splits=("ota",)).keeps(row("k"), {"vitabench:ota"})
    assert not Selection(splits=("vitabench",)).keeps(row("k"), {"vitabench:ota"})
    assert not Selection(splits=("ota",)).keeps(row("k", domain="delivery"), {"vitabench:instore"})


# ---- load_view ------------------------------------------------------------------------------

def test_stores_without_runs_are_refused_naming_them() -> None:
    with pytest.raises(ReportError) as info:
        load_view([Store("a.sqlite", [], []), Store("b.sqlite", [], [])])
    assert str(info.value) == "run store a.sqlite, b.sqlite holds no runs"


def test_an_unknown_run_is_refused_naming_the_stores_and_their_runs() -> None:
    stores = [Store("a.sqlite", [run("r1")], []), Store("b.sqlite", [run("r2"), run("r1")], [])]
    with pytest.raises(ReportError) as info:
        load_view(stores, Selection(run_id="x"))
    assert str(info.value) == "no run 'x' in a.sqlite, b.sqlite (runs: r1, r2)"


def test_a_run_known_to_several_stores_is_taken_from_the_first() -> None:
    first, second = run("r1", info={"n": 1}), run("r1", info={"n": 2})
    view = load_view([Store("a", [first], []), Store("b", [second, run("r2")], [])])
    assert view.runs == [first, run("r2")]


@pytest.mark.parametrize("first, second, wins", [
    ("running", "done", 1), ("running", "error", 1), ("error", "done", 1),
    ("done", "running", 0), ("error", "running", 0), ("done", "error", 0),
    ("done", "done", 0), ("error", "error", 0), ("running", "running", 0),
])
def test_a_key_in_several_stores_counts_once_the_most_finished_else_the_first(
        first: str, second: str, wins: int) -> None:
    stores = [Store("a", [run("r")], [row("k", status=first)]),
              Store("b", [run("r")], [row("k", status=second)])]
    view = load_view(stores)
    assert [(r["episode_key"], r["status"], r["store"]) for r in view.rows] == [
        ("k", (first, second)[wins], wins)]
    assert view.superseded == 0


def test_a_run_selects_its_episodes_in_the_stores_that_hold_it() -> None:
    a = Store("a", [run("r1"), run("r2")], [row("k1", task="t1"), row("k2", task="t2")],
              selected={"r1": ["k1"], "r2": ["k2"]})
    b = Store("b", [run("r2")], [row("k3", task="t3")], selected={"r2": []})
    c = Store("c", [run("r1")], [row("k4", task="t4")], selected={"r1": ["k4"]})
    view = load_view([a, b, c], Selection(run_id="r1"))
    assert view.keys == ["k1", "k4"]
    assert [r["store"] for r in view.rows] == [0, 2]


def test_filters_see_each_episodes_specs() -> None:
    store = Store("a", [run("r")], [row("k1", task="t1"), row("k2", task="t2")],
                  specs={"k2": {"vitabench:ota"}})
    assert load_view([store], Selection(splits=("ota",))).keys == ["k2"]


def test_rows_are_sorted_by_name_benchmark_domain_task_and_trial() -> None:
    rows = [row("k1", model="b"), row("k2", model="a", benchmark="vitabench", domain="ota"),
            row("k3", model="a", benchmark="t1", domain="x"),
            row("k4", model="a", benchmark="vitabench", domain="delivery", task="t2"),
            row("k5", model="a", benchmark="vitabench", domain="delivery", task="t1", trial=1),
            row("k6", model="a", benchmark="vitabench", domain="delivery", task="t1", trial=0)]
    view = load_view([Store("a", [run("r")], rows)])
    assert view.keys == ["k3", "k6", "k5", "k4", "k2", "k1"]


def test_the_newest_identity_of_an_episode_counts_and_the_older_are_superseded() -> None:
    rows = [row("k1", started_at=2.0), row("k2", started_at=3.0), row("k3", started_at=1.0),
            row("k4", trial=1, started_at=None), row("k5", trial=1, started_at=0.5),
            row("k6", trial=2, started_at=4.0), row("k7", trial=2, started_at=4.0),
            row("k8", user_model="v", started_at=0.0)]
    view = load_view([Store("a", [run("r")], rows)])
    assert sorted(view.keys) == ["k2", "k5", "k7", "k8"]
    assert view.superseded == 4


def test_a_model_under_one_user_is_named_by_the_model_alone() -> None:
    rows = [row("k1", model="a", user_model="u", user_mode="default"),
            row("k2", model="a", user_model="u", user_mode="default", task="t2"),
            row("k3", model="b", user_model="v", user_mode="tools")]
    name_rows(rows)
    assert [r["name"] for r in rows] == ["a", "a", "b"]


def test_a_model_under_several_users_or_modes_is_named_with_each() -> None:
    rows = [row("k1", model="a", user_model="u", user_mode="default"),
            row("k2", model="a", user_model="v", user_mode="default"),
            row("k3", model="a", user_model="u", user_mode="tools"),
            row("k4", model="b", user_model="u", user_mode="default")]
    name_rows(rows)
    assert [r["name"] for r in rows] == ["a [user u, default]", "a [user v, default]",
                                         "a [user u, tools]", "b"]


def test_a_model_under_two_user_modes_is_named_with_each() -> None:
    rows = [row("k1", model="a", user_mode="default"), row("k2", model="a", user_mode="tools")]
    name_rows(rows)
    assert [r["name"] for r in rows] == ["a [user u, default]", "a [user u, tools]"]


# ---- EpisodeView ----------------------------------------------------------------------------

def test_a_view_reads_records_judgments_and_calls_from_each_rows_store() -> None:
    a = Store("a", [run("r")], [row("k1", task="t1"), row("k2", task="t2", status="running")])
    b = Store("b", [run("r")], [row("k2", task="t2"), row("k3", task="t3")])
    view = load_view([a, b])
    assert view.keys == ["k1", "k2", "k3"]
    assert view.records() == {"k1": "a:k1", "k2": "b:k2", "k3": "b:k3"}
    assert view.judgments() == [{"episode_key": "k1", "store": "a"},
                                {"episode_key": "k2", "store": "b"},
                                {"episode_key": "k3", "store": "b"}]
    assert view.calls() == [("a", "k1"), ("b", "k2"), ("b", "k3")]


def test_a_view_prices_each_run() -> None:
    view = EpisodeView([], [], 0, [run("r1", prices={"m": {"input": 1.0, "output": 2.0}}),
                                   run("r2", prices={})])
    assert view.prices() == {"r1": {"m": Prices(input=1.0, output=2.0)}, "r2": {}}


def test_info_merges_the_runs_tables_later_runs_winning() -> None:
    runs = [run("r1", info={"headlines": {"a": 1, "b": 2}}), run("r2"),
            run("r3", info=None), run("r4", info={"headlines": "not a table"}),
            run("r5", info={"headlines": {"b": 3, "c": 4}, "other": {"x": 0}})]
    view = EpisodeView([], [], 0, runs)
    assert view.info("headlines") == {"a": 1, "b": 3, "c": 4}
    assert view.info("missing") == {}


def test_the_newest_identity_wins_whichever_comes_first_a_start_unknown_counting_as_0() -> None:
    for rows in ([row("k1", started_at=0.5), row("k2", started_at=None)],
                 [row("k2", started_at=None), row("k1", started_at=0.5)]):
        view = load_view([Store("a", [run("r")], rows)])
        assert view.keys == ["k1"] and view.superseded == 1


@pytest.mark.parametrize("selection, kept", [
    (Selection(models=("a",)), ["k1"]), (Selection(benchmarks=("t1",)), ["k2"]),
    (Selection(trials=(1, 1)), ["k3"])])
def test_each_filter_alone_selects(selection: Selection, kept: list[str]) -> None:
    rows = [row("k1", model="a"), row("k2", model="b", benchmark="t1"),
            row("k3", model="b", trial=1)]
    assert load_view([Store("s", [run("r")], rows)], selection).keys == kept


KEPT: list = []  # what FactStore.judgments was asked to keep, call by call


class FactStore(Store):
    """A store double that also reads facts, and records what ``judgments`` was asked to keep."""

    def episode_facts(self, keys: list[str]) -> dict[str, str]:
        return {k: f"{self.path}:facts:{k}" for k in keys}

    def episode_fact_rows(self, keys: list[str]) -> list[tuple]:
        return [(self.path, k) for k in keys]

    def judgments(self, keys: list[str], *, keep=None) -> list[dict]:
        KEPT.append(keep)
        return super().judgments(keys, keep=keep)


def _two_store_view() -> EpisodeView:
    a = FactStore("a", [run("r")], [row("k1", task="t1")])
    b = FactStore("b", [run("r")], [row("k2", task="t2"), row("k3", task="t3")])
    return load_view([a, b])


def test_a_view_reads_facts_and_fact_rows_from_each_rows_store(monkeypatch) -> None:
    from sweepbench.results import selection

    view = _two_store_view()
    assert view.facts() == {"k1": "a:facts:k1", "k2": "b:facts:k2", "k3": "b:facts:k3"}
    monkeypatch.setattr(selection.FactColumns, "of", staticmethod(lambda rows: ("of", rows)))
    assert view.fact_columns() == ("of", [("a", "k1"), ("b", "k2"), ("b", "k3")])


def test_a_view_passes_what_to_keep_of_the_judgments_to_every_store() -> None:
    view = _two_store_view()
    KEPT.clear()
    assert len(view.judgments(keep=len)) == 3
    assert KEPT == [len, len]


def test_a_view_on_other_stores_keeps_its_rows_and_reads_through_them() -> None:
    view = _two_store_view()
    other = view.on([FactStore("a2", [run("r")], []), FactStore("b2", [run("r")], [])])
    assert other.rows is view.rows and other.keys == view.keys == ["k1", "k2", "k3"]
    assert other.records() == {"k1": "a2:k1", "k2": "b2:k2", "k3": "b2:k3"}
    assert view.records() == {"k1": "a:k1", "k2": "b:k2", "k3": "b:k3"}  # its own unchanged
    assert isinstance(other, EpisodeView) and other is not view
