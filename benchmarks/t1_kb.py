"""T1 knowledge base: first build, cached load, determinism.

Builds the knowledge base from scratch into a fresh cache directory (what a first run pays),
loads it back from the cache file (what every later run pays), and builds it a second time
to check that the same seed gives the same bytes. Prints one JSON object as its last line:
build_s, load_s, rows, and the supporting numbers (bytes, digest, deterministic, ratios to the
targets of 30 s and 3 s).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from sweepbench.benchmarks.t1.data import kb
from sweepbench.benchmarks.t1.data.store import digest

BUILD_TARGET_S, LOAD_TARGET_S = 30.0, 3.0


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        t0 = time.perf_counter()
        built = kb.load_or_build(kb.DEFAULT_SEED, directory)
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        loaded = kb.load_or_build(kb.DEFAULT_SEED, directory)
        load_s = time.perf_counter() - t0
        again = kb.build_bytes(kb.DEFAULT_SEED)
    result = {
        "build_s": round(build_s, 3), "load_s": round(load_s, 4), "rows": loaded.rows(),
        "bytes": loaded.nbytes, "digest": loaded.digest,
        "deterministic": built.digest == loaded.digest == digest(again),
        "build_vs_target": round(build_s / BUILD_TARGET_S, 4), "load_vs_target": round(load_s / LOAD_TARGET_S, 5),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
