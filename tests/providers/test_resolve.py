"""provider/model names in a sweep config made endpoints: the config wins, prices from the
table, hedging off where copies are paid for, and clear errors."""

from __future__ import annotations

import pytest

from sweepbench.config import Endpoint, SweepConfig
from sweepbench.errors import ConfigError
from sweepbench.providers.resolve import resolve_models

ENV = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}


def test_agent_user_and_judge_names_become_endpoints_as_a_toml_file_would_write_them():
    cfg = SweepConfig(models=["openai/gpt-4.1-mini", "scripted/oracle"],
                      user_model="vllm/Qwen/Qwen3-8B", judge_models=["anthropic/claude-opus-4-5"])
    out, resolved = resolve_models(cfg, ENV)
    assert [r.endpoint.name for r in resolved] == [
        "openai/gpt-4.1-mini", "vllm/Qwen/Qwen3-8B", "anthropic/claude-opus-4-5"]
    assert out.endpoints == [r.endpoint for r in resolved]
    assert out.endpoint("openai/gpt-4.1-mini") == Endpoint(
        name="openai/gpt-4.1-mini", base_url="http://127.0.0.1:9/v1", model="gpt-4.1-mini",
        api_key_env="OPENAI_API_KEY", kind="hosted", hedge=False, price_input_per_mtok=0.40,
        price_cached_input_per_mtok=0.10, price_output_per_mtok=1.60)
    assert out.endpoint("vllm/Qwen/Qwen3-8B") == Endpoint(
        name="vllm/Qwen/Qwen3-8B", base_url="http://127.0.0.1:8000/v1", model="Qwen/Qwen3-8B",
        kind="self-hosted", unpriced=True)
    assert out.endpoint("anthropic/claude-opus-4-5").base_url == "https://api.anthropic.com/v1/"


def test_a_name_the_config_defines_keeps_its_toml_meaning():
    mine = Endpoint(name="openai/gpt-4.1-mini", base_url="http://127.0.0.1:7/v1")
    cfg = SweepConfig(models=["openai/gpt-4.1-mini"], endpoints=[mine])
    assert resolve_models(cfg, ENV) == (cfg, [])


def test_the_resolved_endpoint_is_described_in_one_line():
    _, (priced, local) = resolve_models(SweepConfig(models=["openai/gpt-4.1-mini", "ollama/qwen3"]),
                                        ENV)
    assert priced.describe() == (
        "model openai/gpt-4.1-mini: openai at http://127.0.0.1:9/v1 (from OPENAI_BASE_URL), "
        "model 'gpt-4.1-mini', key from OPENAI_API_KEY; $0.4 input, $0.1 cached, $1.6 output "
        "per million tokens (https://vercel.com/ai-gateway/models/gpt-4.1-mini (OpenAI as "
        "provider: input, output, cache read), read 2026-11-28)")
    assert local.describe() == (
        "model ollama/qwen3: ollama at http://127.0.0.1:11434/v1 (default), model 'qwen3', "
        "no key; unpriced (not in the prices table; give prices with --prices FILE)")


def test_the_configs_prices_file_prices_a_model_the_table_lacks(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('[models."vllm/m"]\ninput = 0.5\noutput = 1.5\n')
    out, _ = resolve_models(SweepConfig(models=["vllm/m"], prices=str(f)), {})
    ep = out.endpoint("vllm/m")
    assert (ep.price_input_per_mtok, ep.price_cached_input_per_mtok, ep.price_output_per_mtok,
            ep.unpriced) == (0.5, 0.5, 1.5, False)


def test_an_unknown_name_lists_what_it_could_have_been():
    with pytest.raises(ConfigError) as exc:
        resolve_models(SweepConfig(models=["gpt-4.1-mini"]), {})
    assert str(exc.value) == (
        "unknown model 'gpt-4.1-mini': not an endpoint in the config (endpoints: none "
        "configured), not scripted/..., and not provider/model with a provider of openai, "
        "anthropic, gemini, google, deepseek, openrouter, together, fireworks, groq, mistral, "
        "xai, vllm, sglang, ollama, llamacpp or openai-api/<service>/<model>")


def test_a_spending_cap_refuses_a_model_it_cannot_price():
    with pytest.raises(ConfigError) as exc:
        resolve_models(SweepConfig(models=["openai/gpt-4.1-mini", "vllm/m"], max_cost_usd=1.0), {})
    assert str(exc.value) == ("--max-cost cannot bound vllm/m: no prices known (give them "
                              "with --prices FILE, or an endpoint in the config)")


def test_max_connections_caps_every_endpoint_the_config_hands_out():
    cfg, _ = resolve_models(SweepConfig(models=["openai/m", "scripted/oracle"],
                                        max_connections=3,
                                        endpoints=[Endpoint(name="x", base_url="http://h/v1",
                                                            min_concurrency=8)]), {})
    assert [(cfg.endpoint(n, "http://ref/v1").max_concurrency,
             cfg.endpoint(n, "http://ref/v1").min_concurrency)
            for n in ("openai/m", "scripted/oracle", "x")] == [(3, 1), (3, 1), (3, 3)]


def test_a_prices_file_given_is_checked_even_when_no_name_needs_it(tmp_path):
    with pytest.raises(ConfigError, match=r"^prices file .*gone.toml: cannot read it"):
        resolve_models(SweepConfig(models=["scripted/oracle"], prices=str(tmp_path / "gone.toml")))


def test_the_error_lists_every_endpoint_of_the_config_and_every_model_a_cap_cannot_bound():
    cfg = SweepConfig(models=["nope"], endpoints=[Endpoint(name="a", base_url="http://h/v1"),
                                                  Endpoint(name="b", base_url="http://h/v1")])
    with pytest.raises(ConfigError, match=r"\(endpoints: a, b\)"):
        resolve_models(cfg, {})
    with pytest.raises(ConfigError) as exc:
        resolve_models(SweepConfig(models=["vllm/m", "ollama/n"], max_cost_usd=1.0), {})
    assert str(exc.value).startswith("--max-cost cannot bound vllm/m, ollama/n: no prices known")


def test_a_provider_name_that_cannot_work_is_its_own_error_in_words():
    with pytest.raises(ConfigError) as exc:
        resolve_models(SweepConfig(models=["openai/"]), {})
    assert str(exc.value) == "model 'openai/': no model name after openai/"


def test_without_an_env_given_the_process_environment_is_read(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:5/v1")
    out, _ = resolve_models(SweepConfig(models=["openai/gpt-4.1-mini"]))
    assert out.endpoint("openai/gpt-4.1-mini").base_url == "http://127.0.0.1:5/v1"


def test_a_price_without_its_source_or_date_is_described_as_from_the_prices_file(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('[models."vllm/m"]\ninput = 0.5\noutput = 1.5\n')
    _, (r,) = resolve_models(SweepConfig(models=["vllm/m"], prices=str(f)), {})
    assert r.describe().endswith("; $0.5 input, $0.5 cached, $1.5 output per million tokens "
                                 "(prices file)")
