"""Trajectories as JSONL, results as CSV."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import subprocess
import sys

import pytest

from sweepbench.errors import StoreError
from sweepbench.results.export.writers import (
    export_results_csv,
    export_trajectories,
    read_trajectories,
)
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import (
    AssistantMessage,
    EpisodeRecord,
    FunctionCall,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)


def record(task: str, trial: int, termination: str = "user_stop") -> EpisodeRecord:
    return EpisodeRecord(
        run_id="r", model="m", benchmark="t1", domain="hotel", task_id=task, trial=trial,
        termination=termination,
        messages=[UserMessage("book a room, 你好"),
                  AssistantMessage(tool_calls=[ToolCall("c1", FunctionCall("search", '{"q":1}'))]),
                  ToolMessage("c1", '{"hits": 1}', name="search"), AssistantMessage("done")],
        agent_usage=Usage(100, 20, 80, 12), user_usage=Usage(50, 5), agent_calls=2, user_calls=1,
        tool_calls=1, turns=1, wall_s=2.5, error="boom" if termination == "error" else None)


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        s.begin_run("r", {}, prices={"m": {"input": 1.0, "output": 10.0}, "j": {"output": 1.0}})
        for task, trial, term in (("a", 0, "user_stop"), ("a", 1, "error"), ("b", 0, None)):
            label = f"m|t1:hotel:en:{task}|{trial}"
            meta = EpisodeMeta(key=f"ep-{task}{trial}", label=label, model="m", benchmark="t1",
                               domain="hotel", task_id=task, lang="en", trial=trial,
                               unreachable="no such hotel" if task == "b" else None)
            s.select("r", [meta])
            s.episode_started(meta, run_id="r")
            if term:
                s.episode_finished(meta.key, record(task, trial, term))
        s.event("ep-a0", 0, "model_call", {"role": "agent", "usage": {
            "prompt_tokens": 1000, "completion_tokens": 100}}, run_id="r", endpoint="m")
        s.event("ep-a0", 0, "model_call", {"role": "judge", "usage": {"completion_tokens": 1000}},
                journal="judge|j|likert", run_id="r", endpoint="j")
        s.judgment("ep-a0", judge="t1", method="metrics", passed=True,
                   score=0.75, details={"tool": {"f1": 0.5}, "output_em": True, "why": "x",
                                       "calls": 3})
        s.judgment("ep-a0", judge="llm", method="likert", passed=None,
                   score=0.5, details={})
        s.flush_sync()
        yield s


def test_trajectories_round_trip(store, tmp_path):
    path = tmp_path / "out" / "traj.jsonl"
    assert export_trajectories(store, "r", path) == 2  # the running episode has no record
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and all(line.startswith("{") for line in lines)
    first = json.loads(lines[0])
    assert first["episode_key"] == "ep-a0" and first["episode_label"] == "m|t1:hotel:en:a|0"
    assert {(j["judge"], j["method"], j["passed"], j["score"]) for j in first["judgments"]} == {
        ("t1", "metrics", True, 0.75), ("llm", "likert", None, 0.5)}
    assert first["finished_at"].endswith("Z")
    assert list(read_trajectories(path)) == store.episodes("r")
    assert not list(path.parent.glob(".*tmp"))  # no temp file left behind
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\n{\"run_id\": 1}\n")
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        list(read_trajectories(bad))


def test_results_csv_one_row_per_episode(store, tmp_path):
    path = tmp_path / "results.csv"
    assert export_results_csv(store, "r", path) == 3
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    by_id = {r["episode_label"]: r for r in rows}
    done = by_id["m|t1:hotel:en:a|0"]
    assert done["episode_key"] == "ep-a0" and done["run_id"] == "r"
    assert float(done["cost_agent_usd"]) == pytest.approx((1000 * 1.0 + 100 * 10.0) / 1e6)
    assert float(done["cost_judge_usd"]) == pytest.approx(1000 * 1.0 / 1e6)
    assert float(done["cost_total_usd"]) == pytest.approx(0.003)
    assert done["cost_user_usd"] == "0.0"
    assert done["status"] == "done" and done["turns"] == "1" and done["wall_s"] == "2.5"
    assert done["agent_prompt_tokens"] == "100" and done["agent_cached_prompt_tokens"] == "80"
    assert done["judge_completion_tokens"] == "1000"
    assert done["judge_t1_metrics_passed"] == "true" and done["judge_t1_metrics_score"] == "0.75"
    assert done["judge_t1_metrics_tool_f1"] == "0.5"
    assert done["judge_t1_metrics_output_em"] == "1.0" and done["judge_t1_metrics_calls"] == "3.0"
    assert done["judge_llm_likert_passed"] == "" and done["judge_llm_likert_score"] == "0.5"
    assert "judge_t1_metrics_why" not in done  # text details are not columns
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", done["finished_at"])
    err = by_id["m|t1:hotel:en:a|1"]
    assert err["status"] == "error" and err["error"] == "boom"
    assert err["judge_t1_metrics_passed"] == "" and err["passed"] == "false"
    running = by_id["m|t1:hotel:en:b|0"]
    assert running["status"] == "running" and running["turns"] == ""
    assert running["unreachable"] == "no such hotel" and running["cost_total_usd"] == ""
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", c) for c in rows[0])  # no quoting in SQL
    assert export_results_csv(store, None, path) == 3  # no run: every episode


def test_unknown_run(store, tmp_path):
    with pytest.raises(StoreError, match="runs: r"):
        export_results_csv(store, "nope", tmp_path / "x.csv")
    assert not (tmp_path / "x.csv").exists()


# ---- the three tables of a full T1 run, in pandas and DuckDB ---------------------------------

pd = pytest.importorskip("pandas", reason="the dev extra installs pandas")
if importlib.util.find_spec("duckdb") is None:
    pytest.skip("the dev extra installs duckdb", allow_module_level=True)
pytest.importorskip("pyarrow", reason="the parquet extra installs pyarrow")

from sweepbench.results.export.writers import COLUMNS, export_tables  # noqa: E402
from sweepbench.runner.build import benchmark_info  # noqa: E402


@pytest.fixture(scope="module")
def tables(t1_store, tmp_path_factory):
    out = tmp_path_factory.mktemp("tables")
    with RunStore(t1_store) as s:
        written = export_tables(s, None, out, ("parquet", "csv", "jsonl"),
                                benchmarks=benchmark_info())
        episodes = len(s.episode_rows())
        judgments = len(s.judgments())
        calls = len(s.model_calls())
    assert written == {str(out / f"{t}.{f}"): n for f in ("parquet", "csv", "jsonl")
                       for t, n in (("episodes", episodes), ("calls", calls),
                                    ("judgments", judgments))}
    return out


def _load(out, table, fmt):
    path = out / f"{table}.{fmt}"
    if fmt == "parquet":
        return pd.read_parquet(path)
    if fmt == "csv":
        return pd.read_csv(path)
    return pd.read_json(path, lines=True)


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_tables_load_in_pandas_with_the_documented_columns(tables, fmt):
    for table, cols in COLUMNS.items():
        df = _load(tables, table, fmt)
        names = [c for c, _, _ in cols]
        assert list(df.columns[:len(names)]) == names, table
        assert all(re.fullmatch(r"[a-z][a-z0-9_]*", c) for c in df.columns), table
    episodes = _load(tables, "episodes", fmt)
    assert len(episodes) == 625 and episodes["episode_key"].is_unique
    noisy = episodes[episodes["model"] == "scripted/noisy:0.3"]
    assert len(noisy) == 525 and (noisy["status"] == "error").sum() > 0
    assert noisy["error"].dropna().str.contains("HTTP 500").all()
    assert episodes["cost_total_usd"].gt(0).all()
    assert {"judge_state_state_passed", "judge_state_state_tool_f1",
            "judge_scripted_judge_likert_score"} <= set(episodes.columns)
    started = pd.to_datetime(episodes["started_at"], utc=True)
    assert started.notna().all() and (started.dt.year >= 2020).all()


class _DuckDB:
    """DuckDB in a child process (its extension reports spurious leaks at this process's
    exit): ``execute(sql).fetchall() / fetchone()``."""

    def execute(self, sql: str) -> "_DuckDB":
        code = ("import duckdb, json, sys\ncon = duckdb.connect()\n"
                "print(json.dumps(con.execute(sys.argv[1]).fetchall(), default=str))\n"
                "con.close()")
        proc = subprocess.run([sys.executable, "-c", code, sql], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        self.rows = [tuple(r) for r in json.loads(proc.stdout.strip().splitlines()[-1])]
        return self

    def fetchall(self) -> list[tuple]:
        return self.rows

    def fetchone(self) -> tuple:
        return self.rows[0]


def test_duckdb_joins_episodes_to_judgments_by_episode_id(tables, t1_store):
    con = _DuckDB()
    ep, ju = tables / "episodes.parquet", tables / "judgments.parquet"
    rows = con.execute(f"""
        SELECT e.model, j.judge, j.method, count(*) AS n,
               avg(CASE WHEN j.passed THEN 1.0 ELSE 0.0 END) AS pass_rate, avg(j.score) AS score
        FROM '{ep}' e JOIN '{ju}' j ON e.episode_key = j.episode_key
        GROUP BY ALL ORDER BY ALL""").fetchall()
    with RunStore(t1_store) as s:
        model = {r["episode_key"]: r["model"] for r in s.episode_rows()}
        expect: dict = {}
        for j in s.judgments():
            e = expect.setdefault((model[j["episode_key"]], j["judge"], j["method"]), [])
            e.append(j)
    assert {(m, jd, me): n for m, jd, me, n, _, _ in rows} == {k: len(v) for k, v in expect.items()}
    for m, jd, me, _, rate, score in rows:
        js = expect[m, jd, me]
        assert rate == pytest.approx(sum(bool(j["passed"]) for j in js) / len(js))
        assert score == pytest.approx(sum(j["score"] for j in js) / len(js))
    # the headline verdict on episodes equals the state check's for T1 (errors: failed)
    mismatch = con.execute(f"""
        SELECT count(*) FROM '{ep}' e JOIN '{ju}' j USING (episode_key)
        WHERE j.headline AND e.status <> 'error' AND e.passed IS DISTINCT FROM j.passed
        """).fetchone()[0]
    assert mismatch == 0
    # CSV and JSONL read by DuckDB's own readers give the same episodes and costs
    for path in (tables / "episodes.csv", tables / "episodes.jsonl"):
        got = con.execute(f"SELECT count(*), round(sum(cost_total_usd), 6), "
                          f"count(*) FILTER (WHERE passed) FROM '{path}'").fetchone()
        want = con.execute(f"SELECT count(*), round(sum(cost_total_usd), 6), "
                           f"count(*) FILTER (WHERE passed) FROM '{ep}'").fetchone()
        assert got == want, path
    calls = con.execute(f"SELECT source, sum(cost_usd) FROM '{tables / 'calls.parquet'}' "
                        "GROUP BY 1 ORDER BY 1").fetchall()
    per_role = con.execute(f"SELECT sum(cost_agent_usd), sum(cost_judge_usd), "
                           f"sum(cost_user_usd) FROM '{ep}'").fetchone()
    assert [c for _, c in calls] == pytest.approx(list(per_role))


def test_the_docs_document_every_fixed_column():
    page = __import__("pathlib").Path(__file__).resolve().parents[2] / "docs/results/exports.md"
    text = page.read_text(encoding="utf-8")
    for table, cols in COLUMNS.items():
        for name, _, _ in cols:
            assert f"`{name}`" in text, f"docs/results/exports.md does not document {table}.{name}"


def test_reasoning_tokens_reach_the_export_and_the_profile(store, tmp_path):
    """A thinking model's reasoning tokens: exported per episode, shown in the profile, and
    priced once, inside the completion tokens."""
    from sweepbench.results.report import build_report

    export_tables(store, "r", tmp_path, ("jsonl",), benchmarks=benchmark_info())
    rows = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    finished = [r for r in rows if r["status"] != "running"]
    assert finished and {r["agent_reasoning_tokens"] for r in finished} == {12}
    assert {r["user_reasoning_tokens"] for r in finished} == {0}
    report = build_report(store, "r")
    profile = report["benchmarks"]["t1"]["models"]["m"]["profile"]
    assert profile["agent_tokens"]["reasoning"] == 12
    assert profile["agent_tokens"]["completion"] == 20  # the 12 are inside, not added
