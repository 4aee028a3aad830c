"""A work tree's commit, read from its .git files alone."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from sweepbench.benchmarks.vitabench.upstream_data.git_head import (
    head_commit,
    is_bare_repository,
)

A, B = "a" * 40, "b" * 40


def test_a_branch_head_is_read_from_a_loose_ref_then_from_packed_refs(tmp_path):
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{B} refs/heads/main\n^{A}\n")
    assert head_commit(tmp_path) == B
    (git / "refs" / "heads" / "main").write_text(A + "\n")
    assert head_commit(tmp_path) == A


def test_a_linked_work_tree_reads_its_own_head_and_the_shared_refs(tmp_path):
    common = tmp_path / "repo.git"
    (common / "worktrees" / "wt").mkdir(parents=True)
    (common / "refs" / "heads").mkdir(parents=True)
    (common / "refs" / "heads" / "dev").write_text(B)
    wt_git = common / "worktrees" / "wt"
    (wt_git / "commondir").write_text("../..\n")
    (wt_git / "HEAD").write_text(A + "\n")
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {wt_git}\n")
    assert head_commit(tree) == A
    (wt_git / "HEAD").write_text("ref: refs/heads/dev\n")
    assert head_commit(tree) == B


@pytest.mark.parametrize("head", ["ref: refs/heads/gone\n", "ref: ../../etc/passwd\n",
                                  "ref: refs/heads/../../HEAD\n", "not a hash\n", ""])
def test_a_head_that_resolves_to_no_commit_is_unknown(tmp_path, head):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text(head)
    assert head_commit(tmp_path) is None


def test_no_git_or_a_looping_ref_is_unknown(tmp_path):
    assert head_commit(tmp_path) is None
    (tmp_path / ".git").write_text("gitdir: /nowhere\n")
    assert head_commit(tmp_path) is None
    (tmp_path / ".git").unlink()
    (tmp_path / ".git" / "refs").mkdir(parents=True)
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/loop\n")
    (tmp_path / ".git" / "refs" / "loop").write_text("ref: refs/loop\n")
    assert head_commit(tmp_path) is None


def test_a_bare_repository_is_recognised(tmp_path):
    for d in ("objects", "refs"):
        (tmp_path / d).mkdir()
    (tmp_path / "HEAD").write_text("ref: refs/heads/main\n")
    assert is_bare_repository(tmp_path)
    (tmp_path / ".git").mkdir()
    assert not is_bare_repository(tmp_path)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_real_clone_and_its_linked_work_tree_agree_with_git(tmp_path):
    repo = tmp_path / "repo"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "f").write_text("x")
    subprocess.run([*git, "-C", str(repo), "add", "f"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "-m", "one"], check=True)
    subprocess.run([*git, "-C", str(repo), "pack-refs", "--all"], check=True)
    head = subprocess.run([*git, "-C", str(repo), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    assert head_commit(repo) == head
    subprocess.run([*git, "-C", str(repo), "worktree", "add", "-q", "--detach",
                    str(tmp_path / "wt")], check=True)
    assert head_commit(tmp_path / "wt") == head
