"""`sweepbench run --model provider/model` with no TOML file: every provider's name resolved
against a local server standing in for its base URL (`<PROVIDER>_BASE_URL`), its key sent
from its variable, prices from the shipped table (or `--prices`), unpriced never $0."""

from __future__ import annotations

import json

import pytest

from sweepbench.providers.table import PROVIDERS
from tests.cli.helpers import call
from tests.cli.stand_in import stand_in

RUN = ["run", "--benchmark", "t1:single", "--limit", "1", "--trials", "1", "--no-progress",
       "--json"]


@pytest.fixture
def env(monkeypatch):
    """No provider variable from the machine reaches a test."""
    for p in PROVIDERS.values():
        monkeypatch.delenv(p.key_env, raising=False)
        monkeypatch.delenv(p.base_url_env, raising=False)
    return monkeypatch


def test_every_provider_resolves_against_its_base_url_variable_and_sends_its_key(
        env, tmp_path, capsys):
    expected = set()
    with stand_in() as server:
        for p in PROVIDERS.values():
            env.setenv(p.base_url_env, server.base_url(p.name))
            key = None if p.name in ("vllm", "ollama") else f"key-{p.name}"  # local: optional
            if key:
                env.setenv(p.key_env, key)
            expected.add((p.name, f"m-{p.name}", key and f"Bearer {key}"))
        env.setenv("MY_GW_BASE_URL", server.base_url("gw"))
        env.setenv("MY_GW_API_KEY", "key-gw")
        expected.add(("gw", "org/m", "Bearer key-gw"))
        models = [a for p in PROVIDERS for a in ("--model", f"{p}/m-{p}")]
        code = call([*RUN, *models, "--model", "openai-api/my-gw/org/m",
                     "--out", str(tmp_path / "s.sqlite")])
        captured = capsys.readouterr()
    assert code == 0, captured.err
    assert set(server.seen) == expected  # one agent call per episode, each where it belongs
    assert len(server.seen) == len(expected) == len(PROVIDERS) + 1
    assert sorted(server.probes) == sorted((tag, auth) for tag, _, auth in expected)  # preflight
    assert (f"model vllm/m-vllm: vllm at {server.base_url('vllm')} (from VLLM_BASE_URL), "
            "model 'm-vllm', no key; unpriced") in captured.err


def test_user_and_judge_models_take_provider_names_too(env, tmp_path, capsys):
    with stand_in() as server:
        env.setenv("OPENAI_BASE_URL", server.base_url("openai"))
        env.setenv("OPENAI_API_KEY", "k")
        env.setenv("GROQ_BASE_URL", server.base_url("groq"))
        env.setenv("GROQ_API_KEY", "g")
        call([*RUN, "--model", "scripted/oracle", "--user-model", "openai/the-user",
              "--judge-model", "groq/the-judge", "--out", str(tmp_path / "s.sqlite")])
    capsys.readouterr()
    assert {(tag, model) for tag, model, _ in server.seen} == {("openai", "the-user"),
                                                               ("groq", "the-judge")}


def test_a_name_the_config_defines_keeps_its_toml_meaning(env, tmp_path, capsys):
    with stand_in() as server:
        env.setenv("OPENAI_BASE_URL", server.base_url("openai"))
        config = tmp_path / "sweep.toml"
        config.write_text(f'[[endpoints]]\nname = "openai/gpt-4.1-mini"\n'
                          f'base_url = "{server.base_url("toml")}"\nmodel = "mine"\n')
        code = call([*RUN, "--config", str(config), "--model", "openai/gpt-4.1-mini",
                     "--out", str(tmp_path / "s.sqlite")])
    assert code == 0, capsys.readouterr().err
    assert server.seen == [("toml", "mine", None)]


def test_a_missing_key_is_one_line_naming_the_variable(env, tmp_path, capsys):
    code = call([*RUN, "--model", "anthropic/claude-opus-4-5", "--out", str(tmp_path / "s.sqlite")])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1
    assert errors[0] == (
        "error: preflight failed (--no-preflight skips the request): endpoint "
        "'anthropic/claude-opus-4-5': environment variable ANTHROPIC_API_KEY (its key) is not "
        "set; export it (a config endpoint may name another variable in api_key_env)")


def test_an_unknown_name_is_a_usage_error_listing_the_providers(env, tmp_path, capsys):
    code = call([*RUN, "--model", "gpt-4.1-mini", "--out", str(tmp_path / "s.sqlite")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: unknown model 'gpt-4.1-mini': not an endpoint "
                                        "in the config (endpoints: none configured), not "
                                        "scripted/..., and not provider/model with a provider "
                                        "of openai, anthropic,")


def report_cost(capsys, code: int) -> dict:
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)["cost"]


def test_a_priced_model_costs_its_table_price_and_an_unpriced_one_is_never_zero(
        env, tmp_path, capsys):
    with stand_in() as server:  # every answer: 100 prompt + 10 completion tokens
        env.setenv("OPENAI_BASE_URL", server.base_url("openai"))
        env.setenv("OPENAI_API_KEY", "k")
        env.setenv("VLLM_BASE_URL", server.base_url("vllm"))
        cost = report_cost(capsys, call([*RUN, "--model", "openai/gpt-4.1-mini", "--model",
                                         "vllm/x", "--out", str(tmp_path / "s.sqlite")]))
    # one agent call each: (100 x $0.40 + 10 x $1.60) / 1e6
    assert cost["by_endpoint"] == {"openai/gpt-4.1-mini": 5.6e-05, "scripted/user": 0.0,
                                   "vllm/x": None}
    assert cost["by_model"] == {"openai/gpt-4.1-mini": 5.6e-05, "vllm/x": None}
    assert (cost["total"], cost["unpriced_calls"]) == (5.6e-05, 1)


def test_a_prices_file_prices_what_the_table_lacks_and_replaces_what_it_has(
        env, tmp_path, capsys):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."openai/gpt-4.1-mini"]\ninput = 1.0\noutput = 2.0\n'
                      '[models."vllm/x"]\ninput = 0.1\noutput = 0.2\n')
    with stand_in() as server:
        env.setenv("OPENAI_BASE_URL", server.base_url("openai"))
        env.setenv("OPENAI_API_KEY", "k")
        env.setenv("VLLM_BASE_URL", server.base_url("vllm"))
        cost = report_cost(capsys, call([*RUN, "--model", "openai/gpt-4.1-mini", "--model",
                                         "vllm/x", "--prices", str(prices),
                                         "--out", str(tmp_path / "s.sqlite")]))
    assert cost["by_model"] == {"openai/gpt-4.1-mini": pytest.approx(1.2e-04, abs=1e-15),
                                "vllm/x": pytest.approx(1.2e-05, abs=1e-15)}
    assert cost["unpriced_calls"] == 0


def test_plan_needs_no_key_and_shows_an_unpriced_endpoint_as_unpriced(env, capsys):
    code = call(["plan", "--benchmark", "t1:single", "--limit", "1", "--trials", "1", "--json",
                 "--model", "openai/gpt-4.1-mini", "--model", "sglang/m"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    plan = json.loads(captured.out)
    assert plan["unpriced"] == ["scripted/user", "sglang/m"]  # the user double has no prices either
    assert plan["endpoints"]["sglang/m"]["dollars"] is None
    assert plan["endpoints"]["openai/gpt-4.1-mini"]["dollars"] > 0
    assert "model sglang/m: sglang at http://127.0.0.1:30000/v1 (default)" in captured.err


def test_a_providers_key_reaches_the_server_and_nothing_written(env, tmp_path, capsys):
    canary = "sk-canary-provider-3e8b1f0c7a9d2e4b6c8a0f1e3d5b7c9a"
    with stand_in() as server:
        env.setenv("OPENAI_BASE_URL", server.base_url("openai"))
        env.setenv("OPENAI_API_KEY", canary)
        code = call([*RUN, "--model", "openai/gpt-4.1-mini", "--judge-model", "openai/judge",
                     "--out", str(tmp_path / "s.sqlite")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert {auth for _, _, auth in server.seen} == {f"Bearer {canary}"}
    written = [p.read_bytes() for p in tmp_path.iterdir()]
    assert not any(canary.encode() in b or canary[8:24].encode() in b for b in written)
    assert canary not in captured.out + captured.err
    assert any(b"OPENAI_API_KEY" in b for b in written)  # the variable's name may be stored
