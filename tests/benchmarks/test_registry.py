"""The registry's benchmark info: headlines and judge methods under every name a store's
episodes may carry."""

from sweepbench.benchmarks import registry


def test_benchmark_info_of_named_benchmarks_and_of_every_one():
    t1 = registry.get("t1")
    got = registry.benchmark_info(["t1:single", " T1 :flight", "vitabench:delivery", "t1"])
    vita = registry.get("vitabench")
    assert sorted(got) == sorted({t1.name, vita.name})
    assert got[t1.name] == {"headline": str(t1.headline), "headline_label": t1.headline_label,
                            "judge_methods": [str(m) for m in t1.judge_methods]}
    every = registry.benchmark_info()
    for family in registry.names():
        b = registry.get(family)
        assert every[b.name] == registry._info(b)
        if b.releases:
            assert every[family]["headline_label"] == (
                f"{b.headline_label}; recorded as plain {family}, i.e. release {b.releases[0]}")
            for release in b.releases:
                for suffix in ("", *(f"+{v}" for v in b.variants)):
                    other = b.with_release(release + suffix)
                    assert every[other.name] == registry._info(other)
        else:
            assert every[family] == registry._info(b)
    assert any(registry.get(f).releases for f in registry.names())  # the branch is exercised
