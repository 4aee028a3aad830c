"""The shipped prices table and a user's prices file over it."""

from __future__ import annotations

import re

import pytest

from sweepbench.errors import ConfigError
from sweepbench.providers.prices import ModelPrice, load_prices, shipped_prices
from sweepbench.providers.table import PROVIDERS


def test_every_shipped_price_names_its_source_and_the_day_it_was_read():
    table = shipped_prices()
    assert len(table) >= 5
    for name, p in table.items():
        assert name.partition("/")[0] in PROVIDERS, name
        assert p.source.startswith("https://"), name
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", p.read), name
        assert p.cached_input is not None and p.cached_input <= p.input <= p.output, name


def test_the_shipped_price_of_gpt_4_1_mini():
    p = shipped_prices()["openai/gpt-4.1-mini"]
    assert (p.input, p.cached, p.output) == (0.40, 0.10, 1.60)


def test_a_prices_file_replaces_shipped_entries_and_adds_new_ones(tmp_path):
    f = tmp_path / "prices.toml"
    f.write_text('[models."openai/gpt-4.1-mini"]\ninput = 1.0\noutput = 2.0\n'
                 '[models."vllm/Qwen/Qwen3-8B"]\ninput = 0.05\ncached_input = 0.01\n'
                 'output = 0.1\n')
    table = load_prices(f)
    assert table["openai/gpt-4.1-mini"] == ModelPrice(input=1.0, output=2.0)
    assert table["openai/gpt-4.1-mini"].cached == 1.0  # no cached price: priced as input
    assert table["vllm/Qwen/Qwen3-8B"].cached == 0.01
    assert table["openai/gpt-4o"] == shipped_prices()["openai/gpt-4o"]


@pytest.mark.parametrize("text, needle", [
    ('[models."a/b"]\ninput = -1.0\noutput = 1.0\n', "a/b: input must be a number >= 0, got -1.0"),
    ('[models."a/b"]\ninput = 1.0\n', "Object missing required field `output`"),
    ('[models."a/b"]\ninput = 1.0\noutput = 1.0\ncost = 3\n', "unknown field `cost`"),
    ('models = 3\n', "Expected `object`, got `int`"),
    ("[models\n", "Expected ']'"),
])
def test_a_bad_prices_file_is_one_clear_error_naming_it(tmp_path, text, needle):
    f = tmp_path / "p.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_prices(f)
    assert str(exc.value).startswith(f"prices file {f}: ") and needle in str(exc.value)
    assert "\n" not in str(exc.value)


def test_a_missing_prices_file_says_so(tmp_path):
    with pytest.raises(ConfigError, match=r"prices file .*nope.toml: cannot read it \(No such "
                                          r"file or directory\)"):
        load_prices(tmp_path / "nope.toml")


def test_a_free_model_is_priced_at_zero_and_an_infinite_price_is_refused(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('[models."vllm/m"]\ninput = 0.0\noutput = 0.0\n')
    assert load_prices(f)["vllm/m"] == ModelPrice(input=0.0, output=0.0)
    f.write_text('[models."vllm/m"]\ninput = 1.0\noutput = inf\n')
    with pytest.raises(ConfigError) as exc:
        load_prices(f)
    assert str(exc.value) == f"prices file {f}: vllm/m: output must be a number >= 0, got inf"


def test_a_file_of_another_shape_says_what_shape_is_expected(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text("models = 3\n")
    with pytest.raises(ConfigError) as exc:
        load_prices(f)
    assert str(exc.value).endswith('(expected [models."provider/model"] tables with input, '
                                   "output and optionally cached_input)")


def test_a_broken_shipped_table_is_named_as_the_shipped_one(monkeypatch):
    from sweepbench.providers import prices

    class Shipped:
        """A test double of importlib.resources: a shipped prices.toml that is broken."""

        def files(self, package):
            return self

        def joinpath(self, name):
            return self

        def read_text(self, encoding):
            return "[models\n"

    monkeypatch.setattr(prices, "resources", Shipped())
    with pytest.raises(ConfigError, match=r"^prices file prices\.toml \(shipped\): "):
        shipped_prices()
