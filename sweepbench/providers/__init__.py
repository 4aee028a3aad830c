"""Provider-prefixed model names (``openai/gpt-4.1-mini``, ``vllm/Qwen/Qwen3-8B``,
``openai-api/<service>/<model>``) as endpoints, with the prices of well-known models."""

from sweepbench.providers.prices import ModelPrice, load_prices
from sweepbench.providers.resolve import Resolved, resolve_models
from sweepbench.providers.table import PROVIDERS, Provider, parse_model_name

__all__ = ["PROVIDERS", "ModelPrice", "Provider", "Resolved", "load_prices", "parse_model_name",
           "resolve_models"]
