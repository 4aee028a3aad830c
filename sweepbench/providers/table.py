"""The provider table: which OpenAI-compatible service a ``provider/model`` name means.

``openai/gpt-4.1-mini``, ``vllm/Qwen/Qwen3-8B``, ``openai-api/<service>/<model>``: the
names inspect_ai takes, so a model needs no hand-written TOML endpoint. Each provider has a
default base URL, the environment variable holding its key and one that overrides its base
URL (so every provider can be pointed at a gateway, a proxy, or a local stand-in in tests).
Self-hosted servers (vLLM, SGLang, Ollama, llama.cpp) need no key: one is sent only when
its variable is set. Everything sweepbench learns from the table is an endpoint a TOML file
could have written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from msgspec import Struct

__all__ = ["OPENAI_API", "PROVIDERS", "Provider", "ProviderModel", "parse_model_name"]

HOSTED, SELF_HOSTED = "hosted", "self-hosted"


class Provider(Struct, frozen=True, kw_only=True):
    """One OpenAI-compatible service."""

    name: str
    base_url: str
    """Default base URL (its OpenAI-compatible root, ending in /v1 or the like)."""
    key_env: str
    """The variable holding the API key; required for hosted providers."""
    base_url_env: str
    """The variable that, when set, replaces ``base_url``."""
    kind: str = HOSTED
    """hosted (a key is required, copies of requests cost money) or self-hosted."""


def _hosted(name: str, base_url: str, env: str | None = None) -> Provider:
    env = env or name.upper()
    return Provider(name=name, base_url=base_url, key_env=f"{env}_API_KEY",
                    base_url_env=f"{env}_BASE_URL")


def _local(name: str, port: int, env: str) -> Provider:
    return Provider(name=name, base_url=f"http://127.0.0.1:{port}/v1", key_env=f"{env}_API_KEY",
                    base_url_env=f"{env}_BASE_URL", kind=SELF_HOSTED)


PROVIDERS: dict[str, Provider] = {p.name: p for p in (
    _hosted("openai", "https://api.openai.com/v1"),
    _hosted("anthropic", "https://api.anthropic.com/v1/"),  # its OpenAI SDK compatibility
    _hosted("gemini", "https://generativelanguage.googleapis.com/v1beta/openai/"),
    _hosted("google", "https://generativelanguage.googleapis.com/v1beta/openai/"),
    _hosted("deepseek", "https://api.deepseek.com/v1"),
    _hosted("openrouter", "https://openrouter.ai/api/v1"),
    _hosted("together", "https://api.together.xyz/v1"),
    _hosted("fireworks", "https://api.fireworks.ai/inference/v1"),
    _hosted("groq", "https://api.groq.com/openai/v1"),
    _hosted("mistral", "https://api.mistral.ai/v1"),
    _hosted("xai", "https://api.x.ai/v1"),
    _local("vllm", 8000, "VLLM"),
    _local("sglang", 30000, "SGLANG"),
    _local("ollama", 11434, "OLLAMA"),
    _local("llamacpp", 8080, "LLAMACPP"),
)}
"""Provider name -> Provider. Local servers default to their own default ports on
127.0.0.1 (vLLM 8000, SGLang 30000, Ollama 11434, llama.cpp's llama-server 8080)."""

OPENAI_API = "openai-api"
"""``openai-api/<service>/<model>``: any other OpenAI-compatible service, its base URL from
``<SERVICE>_BASE_URL`` (required) and its key from ``<SERVICE>_API_KEY``."""

_SERVICE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


class ProviderModel(Struct, frozen=True, kw_only=True):
    """A ``provider/model`` name resolved against the environment."""

    provider: str
    """The provider's name (``openai-api/<service>`` for a generic service)."""
    model: str
    """The model name sent in requests (everything after the provider)."""
    base_url: str
    base_url_from: str
    """Where base_url came from: the variable's name, or "default"."""
    key_env: str | None
    """The variable the key is read from at request time; None: no key sent."""
    kind: str


def parse_model_name(name: str, env: Mapping[str, str]) -> ProviderModel | None:
    """The provider model ``name`` means, or None when its prefix is not a provider.

    Raises ValueError (its message one line, naming the variable) for a provider name that
    cannot work: no model after the prefix, an ``openai-api`` service without its base URL
    variable."""
    head, slash, model = name.partition("/")
    if not slash:
        return None
    if head == OPENAI_API:
        service, slash, model = model.partition("/")
        if not slash or not _SERVICE.fullmatch(service):
            raise ValueError(f"model {name!r}: write openai-api/<service>/<model>, <service> "
                             "a name such as my-gateway (letters, digits, - and _)")
        prefix = service.upper().replace("-", "_")
        url_env, key_env = f"{prefix}_BASE_URL", f"{prefix}_API_KEY"
        if not model:
            raise ValueError(f"model {name!r}: no model name after openai-api/{service}/")
        if not env.get(url_env):
            raise ValueError(f"model {name!r}: set {url_env} to the service's "
                             "OpenAI-compatible base URL (e.g. https://host/v1)")
        return ProviderModel(provider=f"{OPENAI_API}/{service}", model=model,
                             base_url=env[url_env], base_url_from=url_env, key_env=key_env,
                             kind=HOSTED)
    provider = PROVIDERS.get(head)
    if provider is None:
        return None
    if not model:
        raise ValueError(f"model {name!r}: no model name after {head}/")
    url = env.get(provider.base_url_env)
    key_env: str | None = provider.key_env
    if provider.kind == SELF_HOSTED and not env.get(provider.key_env):
        key_env = None  # a local server without --api-key: nothing to send
    return ProviderModel(provider=provider.name, model=model,
                         base_url=url or provider.base_url,
                         base_url_from=provider.base_url_env if url else "default",
                         key_env=key_env, kind=provider.kind)
