"""Every numeric setting of a sweep config is finite and in range, or one ConfigError naming
it: prices, limits, timeouts, sampling settings, extra_body's numbers, budgets, seeds, task ids
given to select (an infinite latency once hung a run)."""

from __future__ import annotations

import math

import pytest

from sweepbench.config import load_config
from sweepbench.errors import ConfigError


def _endpoint(**fields) -> dict:
    return {"models": ["m"], "endpoints": [{"name": "m", "base_url": "http://h/v1", **fields}]}


REFUSED = [
    (_endpoint(price_input_per_mtok=math.inf),
     "endpoint 'm': price_input_per_mtok must be a finite number, got inf"),
    (_endpoint(price_output_per_mtok=math.nan),
     "endpoint 'm': price_output_per_mtok must be >= 0, got nan"),
    (_endpoint(price_cached_input_per_mtok=-1.0),
     "endpoint 'm': price_cached_input_per_mtok must be >= 0, got -1.0"),
    (_endpoint(temperature=math.nan), "endpoint 'm': temperature must be >= 0, got nan"),
    (_endpoint(temperature=2.5), "endpoint 'm': temperature must be <= 2, got 2.5"),
    (_endpoint(extra_body={"top_p": 1.5}), "endpoint 'm': extra_body.top_p must be <= 1, got 1.5"),
    (_endpoint(extra_body={"temperature": -0.1}),
     "endpoint 'm': extra_body.temperature must be >= 0, got -0.1"),
    (_endpoint(extra_body={"top_p": math.nan}),
     "endpoint 'm': extra_body.top_p must be >= 0, got nan"),
    (_endpoint(extra_body={"chat_template_kwargs": {"budget": [1, math.inf]}}),
     "endpoint 'm': extra_body.chat_template_kwargs.budget[1] must be a finite number, got inf"),
    (_endpoint(tool_choice={"n": -math.inf}),
     "endpoint 'm': tool_choice.n must be a finite number, got -inf"),
    (_endpoint(rpm=1 << 64),
     f"endpoint 'm': rpm must be a 64-bit integer, got {1 << 64}"),
    (_endpoint(tpm=0), "endpoint 'm': tpm must be >= 1, got 0"),
    (_endpoint(max_concurrency=(1 << 20) + 1),
     "endpoint 'm': max_concurrency must be <= 1048576, got 1048577"),
    (_endpoint(max_retries=101), "endpoint 'm': max_retries must be <= 100, got 101"),
    (_endpoint(max_tokens=100_000_001),
     "endpoint 'm': max_tokens must be <= 100000000, got 100000001"),
    (_endpoint(max_reply_bytes=(1 << 30) + 1),
     "endpoint 'm': max_reply_bytes must be <= 1073741824, got 1073741825"),
    (_endpoint(breaker_max_wait_s=math.inf),
     "endpoint 'm': breaker_max_wait_s must be <= 604800, got inf"),
    (_endpoint(breaker_cooldown_s=math.inf),
     "endpoint 'm': breaker_cooldown_s must be > 0 and <= 604800, got inf"),
    (_endpoint(ttfb_k=math.inf), "endpoint 'm': ttfb_k must be > 0, got inf"),
    (_endpoint(hedge_min_s=math.nan), "endpoint 'm': hedge_min_s must be > 0, got nan"),
    (_endpoint(max_cost_usd=math.inf),
     "endpoint 'm': max_cost_usd must be a finite number, got inf"),
    ({"max_cost_usd": math.inf}, "max_cost_usd must be a finite number, got inf"),
    ({"reference_latency_s": math.inf}, "reference_latency_s must be <= 604800, got inf"),
    ({"reference_latency_s": math.nan}, "reference_latency_s must be >= 0, got nan"),
    ({"reference_outage": [0.0, math.inf]},
     "reference_outage[1] must be a finite number, got inf"),
    ({"max_concurrency": 1 << 40}, f"max_concurrency must be <= 1048576, got {1 << 40}"),
    ({"judge_concurrency": 0}, "judge_concurrency must be >= 1, got 0"),
    ({"seed": -1}, "seed must be >= 0, got -1"),
    ({"reference_seed": 1 << 63}, f"reference_seed must be a 64-bit integer, got {1 << 63}"),
    ({"error_streak": 1 << 70}, f"error_streak must be a 64-bit integer, got {1 << 70}"),
    ({"max_steps": 1 << 63}, f"max_steps must be a 64-bit integer, got {1 << 63}"),
    ({"trials": 1001}, "trials must be <= 1000, got 1001"),
]


@pytest.mark.parametrize(("data", "message"), REFUSED, ids=[m for _, m in REFUSED])
def test_a_number_out_of_range_is_one_config_error_naming_it(data, message) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, data)
    assert str(info.value) == message


def test_the_largest_values_in_range_are_taken() -> None:
    cfg = load_config(None, _endpoint(
        temperature=2.0, extra_body={"top_p": 1.0, "n": [1, 2.5]}, max_retries=100,
        max_concurrency=1 << 20, max_tokens=100_000_000, breaker_max_wait_s=604800.0,
        price_output_per_mtok=600.0, rpm=(1 << 63) - 1, max_cost_usd=1e9))
    ep = cfg.endpoints[0]
    assert (ep.temperature, ep.max_retries, ep.rpm) == (2.0, 100, (1 << 63) - 1)
    assert load_config(None, {"seed": (1 << 63) - 1, "reference_latency_s": 604800.0}).seed \
        == (1 << 63) - 1


def test_an_inf_in_a_toml_file_is_refused_naming_the_key(tmp_path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text('models = ["m"]\n[[endpoints]]\nname = "m"\nbase_url = "http://h/v1"\n'
                    'price_input_per_mtok = inf\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == "endpoint 'm': price_input_per_mtok must be a finite number, got inf"


@pytest.mark.parametrize("task_id", ["", " ", " R1", "R1\n", "a/b"])
def test_a_blank_padded_or_path_task_id_to_select_is_refused(task_id) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, {"task_ids": [task_id]})
    assert str(info.value).startswith(f"task id {task_id!r}: a task id is an id from")
