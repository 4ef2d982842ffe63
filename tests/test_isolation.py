"""The test suite leaves the user's own cache alone: in this process, in module-scoped fixtures set up before any
test's private folder, and in subprocesses such as the browser tests' Jupyter server and its kernels."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import judgewidgets as jw
from judgewidgets._paths import user_cache_dir
from judgewidgets.testing import OpenAITestServer, json_score

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cache_dir_at_module_setup() -> Path:
    """What a module-scoped fixture (like the browser tests' Jupyter server) sees: it runs before the per-test
    folder is set."""
    return user_cache_dir().resolve()


def test_the_cache_folder_is_never_the_users(
    cache_dir_at_module_setup: Path, user_cache_dir_of_the_user: Path, tmp_path: Path
) -> None:
    assert not cache_dir_at_module_setup.is_relative_to(user_cache_dir_of_the_user)
    assert user_cache_dir().resolve() == (tmp_path / "cache").resolve()  # and each test has its own


def test_a_subprocess_inherits_a_private_cache_folder(user_cache_dir_of_the_user: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = "from judgewidgets._paths import user_cache_dir; print(user_cache_dir().resolve())"
    shown = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert not Path(shown.stdout.strip()).is_relative_to(user_cache_dir_of_the_user)
    assert not Path(os.environ["IPYTHONDIR"]).is_relative_to(Path.home())  # kernels keep their history there


def test_a_judge_with_the_default_cache_writes_the_private_one(tmp_path: Path) -> None:
    with OpenAITestServer(json_score(4)) as server:
        judge = jw.LLMJudge("openai/test", api_base=server.base_url, api_key="sk-test")
        judge.score(["What is 2+2?"], ["4"], progress=False)
    assert (tmp_path / "cache" / "calls.sqlite").is_file()


def test_opening_the_users_cache_fails_loudly(user_cache_dir_of_the_user: Path) -> None:
    with pytest.raises(PermissionError, match="tests may not touch the user's cache"):
        sqlite3.connect(user_cache_dir_of_the_user / "calls.sqlite")
