"""provider/model names against the provider table and the environment."""

from __future__ import annotations

import pytest

from sweepbench.providers.table import (
    PROVIDERS,
    Provider,
    ProviderModel,
    parse_model_name,
)

HOSTED = {
    "openai": ("https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": ("https://api.anthropic.com/v1/", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "gemini": ("https://generativelanguage.googleapis.com/v1beta/openai/", "GEMINI_API_KEY",
               "GEMINI_BASE_URL"),
    "google": ("https://generativelanguage.googleapis.com/v1beta/openai/", "GOOGLE_API_KEY",
               "GOOGLE_BASE_URL"),
    "deepseek": ("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL"),
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "OPENROUTER_BASE_URL"),
    "together": ("https://api.together.xyz/v1", "TOGETHER_API_KEY", "TOGETHER_BASE_URL"),
    "fireworks": ("https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY",
                  "FIREWORKS_BASE_URL"),
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY", "GROQ_BASE_URL"),
    "mistral": ("https://api.mistral.ai/v1", "MISTRAL_API_KEY", "MISTRAL_BASE_URL"),
    "xai": ("https://api.x.ai/v1", "XAI_API_KEY", "XAI_BASE_URL"),
}
LOCAL = {
    "vllm": ("http://127.0.0.1:8000/v1", "VLLM_API_KEY", "VLLM_BASE_URL"),
    "sglang": ("http://127.0.0.1:30000/v1", "SGLANG_API_KEY", "SGLANG_BASE_URL"),
    "ollama": ("http://127.0.0.1:11434/v1", "OLLAMA_API_KEY", "OLLAMA_BASE_URL"),
    "llamacpp": ("http://127.0.0.1:8080/v1", "LLAMACPP_API_KEY", "LLAMACPP_BASE_URL"),
}


def test_the_table_holds_exactly_these_providers():
    assert set(PROVIDERS) == set(HOSTED) | set(LOCAL)


@pytest.mark.parametrize("name", sorted(HOSTED))
def test_a_hosted_provider_defaults_and_takes_its_variables(name):
    url, key, url_env = HOSTED[name]
    assert parse_model_name(f"{name}/some/model-1", {}) == ProviderModel(
        provider=name, model="some/model-1", base_url=url, base_url_from="default",
        key_env=key, kind="hosted")
    found = parse_model_name(f"{name}/m", {url_env: "http://127.0.0.1:9/x/v1"})
    assert (found.base_url, found.base_url_from) == ("http://127.0.0.1:9/x/v1", url_env)


@pytest.mark.parametrize("name", sorted(LOCAL))
def test_a_self_hosted_provider_sends_a_key_only_when_its_variable_is_set(name):
    url, key, url_env = LOCAL[name]
    found = parse_model_name(f"{name}/Qwen/Qwen3-8B", {})
    assert (found.model, found.base_url, found.key_env, found.kind) == (
        "Qwen/Qwen3-8B", url, None, "self-hosted")
    found = parse_model_name(f"{name}/m", {key: "secret", url_env: "http://10.0.0.2:1/v1"})
    assert (found.base_url, found.key_env) == ("http://10.0.0.2:1/v1", key)


def test_openai_api_names_a_service_whose_variables_inspect_would_read():
    env = {"MY_GATEWAY_BASE_URL": "https://gw.example/v1"}
    assert parse_model_name("openai-api/my-gateway/org/model", env) == ProviderModel(
        provider="openai-api/my-gateway", model="org/model", base_url="https://gw.example/v1",
        base_url_from="MY_GATEWAY_BASE_URL", key_env="MY_GATEWAY_API_KEY", kind="hosted")


@pytest.mark.parametrize("name, message", [
    ("openai-api/gw/m", ("model 'openai-api/gw/m': set GW_BASE_URL to the service's "
                         "OpenAI-compatible base URL (e.g. https://host/v1)")),
    ("openai-api/gw", ("model 'openai-api/gw': write openai-api/<service>/<model>, <service> "
                       "a name such as my-gateway (letters, digits, - and _)")),
    ("openai-api/g w/m", ("model 'openai-api/g w/m': write openai-api/<service>/<model>, "
                          "<service> a name such as my-gateway (letters, digits, - and _)")),
    ("openai-api/gw/", "model 'openai-api/gw/': no model name after openai-api/gw/"),
    ("openai/", "model 'openai/': no model name after openai/"),
])
def test_a_provider_name_that_cannot_work_says_why_in_one_line(name, message):
    with pytest.raises(ValueError) as exc:
        parse_model_name(name, {})
    assert str(exc.value) == message


@pytest.mark.parametrize("name", ["gpt-4.1-mini", "acme/model", "scripted/oracle", "OpenAI/m"])
def test_a_name_without_a_provider_prefix_is_not_a_provider_model(name):
    assert parse_model_name(name, {}) is None


@pytest.mark.parametrize(("name", "want"), [
    ("openai", Provider(name="openai", base_url="https://api.openai.com/v1",
                        key_env="OPENAI_API_KEY", base_url_env="OPENAI_BASE_URL")),
    ("xai", Provider(name="xai", base_url="https://api.x.ai/v1", key_env="XAI_API_KEY",
                     base_url_env="XAI_BASE_URL")),
    ("vllm", Provider(name="vllm", base_url="http://127.0.0.1:8000/v1", key_env="VLLM_API_KEY",
                      base_url_env="VLLM_BASE_URL", kind="self-hosted")),
    ("llamacpp", Provider(name="llamacpp", base_url="http://127.0.0.1:8080/v1",
                          key_env="LLAMACPP_API_KEY", base_url_env="LLAMACPP_BASE_URL",
                          kind="self-hosted")),
])
def test_a_providers_entry_names_its_variables_after_it(name, want):
    assert PROVIDERS[name] == want
