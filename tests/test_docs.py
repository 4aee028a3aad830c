"""The documentation: the site builds with warnings as errors (broken links and anchors
included), every page is in the nav, the README's links and commands hold, and the reference
pages name every config key and command."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import yaml

from sweepbench.cli.parser import build_parser
from sweepbench.config import Endpoint, SweepConfig

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e '.[docs]'")
    pytest.importorskip("material", reason="mkdocs-material is not installed: "
                                           "pip install -e '.[docs]'")
    # not --quiet: it also stops --strict from counting the warnings it hides
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict",
         "-f", str(config), "-d", str(site)],
        capture_output=True, text=True, timeout=180, env=env, cwd=config.parent)


def _nav_files(nav: list) -> list[str]:
    out: list[str] = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            out += _nav_files(value)
        else:
            out.append(value)
    return out


def test_the_site_builds_with_warnings_as_errors(tmp_path):
    done = _mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "performance" / "index.html").is_file()


def test_a_broken_anchor_or_link_fails_the_build(tmp_path):
    """The validation settings in mkdocs.yml are what make a dead anchor an error."""
    for broken, said in (("[x](performance.md#no-such-heading)", "no-such-heading"),
                         ("[x](no-such-page.md)", "no-such-page.md")):
        copy = tmp_path / broken.split("(")[1][:6]
        shutil.copytree(DOCS, copy / "docs")
        shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
        page = copy / "docs" / "index.md"
        page.write_text(page.read_text(encoding="utf-8") + f"\n{broken}\n", encoding="utf-8")
        done = _mkdocs_build(copy / "mkdocs.yml", copy / "site")
        assert done.returncode != 0, broken
        assert said in done.stdout + done.stderr


def test_every_docs_page_is_in_the_nav_and_every_nav_entry_exists():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_files(config["nav"])
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(nav) == pages
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


def test_the_readme_links_point_at_files_that_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", readme)
    local = [link.split("#")[0] for link in links if "://" not in link]
    assert any(link.startswith("docs/") for link in local)
    for link in local:
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"


def test_the_readme_gives_the_install_and_test_commands_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    install = next(line for line in ci if line.startswith("pip install"))
    test = next(line for line in ci if line.startswith("python -m pytest"))
    assert install in readme and test in readme


def test_the_readme_stays_a_day_one_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200
    assert not any("µs" in line for line in lines), "figures belong in docs/performance.md"


def test_the_config_reference_names_every_key():
    text = (DOCS / "reference" / "config.md").read_text(encoding="utf-8")
    for struct in (SweepConfig, Endpoint):
        for f in msgspec.structs.fields(struct):
            assert f"| `{f.name}` |" in text, f"docs/reference/config.md lacks {f.name}"


def test_the_commands_reference_names_every_command():
    text = (DOCS / "reference" / "commands.md").read_text(encoding="utf-8")
    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and hasattr(a, "_name_parser_map"))
    for name in sub.choices:
        assert f"`sweepbench {name}" in text, f"docs/reference/commands.md lacks {name}"
