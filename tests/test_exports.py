"""The public surface: a sorted __all__ of exactly the public names, covering the API contract."""

import judgewidgets as jw


def test_all_is_sorted_and_complete() -> None:
    public = {name for name in dir(jw) if not name.startswith("_")}
    exported = set(jw.__all__) - {"__version__"}
    assert list(jw.__all__) == sorted(jw.__all__)
    assert public - exported <= {"charts", "engine", "jupyter", "local", "rubrics", "testing"}, public - exported


def test_contract_names_exist() -> None:
    for name in ["LLMJudge", "LLMPanel", "Template", "templates"]:
        assert hasattr(jw, name)
    assert callable(jw.templates.parse)


def test_exception_tree() -> None:
    tree = (jw.ConfigurationError, jw.InputError, jw.JudgeCallError, jw.ParseError, jw.LocalModelError)
    for error in (*tree, jw.ShardFailedError, jw.CallFailure):
        assert issubclass(error, jw.JudgeWidgetsError)
        assert error.__name__ in jw._errors.__doc__, f"{error.__name__} is missing from the documented tree"
    assert issubclass(jw.ConfigurationError, ValueError) and issubclass(jw.InputError, ValueError)
    assert jw.distributed.ShardFailedError is jw.ShardFailedError


def test_bad_settings_are_configuration_errors_everywhere() -> None:
    import pytest

    for build in (
        lambda: jw.RetryPolicy(max_retries=-1),
        lambda: jw.RetryPolicy(jitter=2.0),
        lambda: jw.ReviewPolicy(min_score=2),
        lambda: jw.distributed.RayRunner(workers=0),
        lambda: jw.LLMJudge("openai/x", weight=0),
        lambda: jw.PairwiseJudge("openai/x", weight=-1),
    ):
        with pytest.raises(jw.ConfigurationError):
            build()


def test_the_answer_readers_raise_parse_error() -> None:
    import pytest

    with pytest.raises(jw.ParseError, match="no score") as caught:
        jw.templates.get_template("likert").read("I cannot decide.")
    assert caught.value.raw == "I cannot decide."
    with pytest.raises(jw.ParseError, match="no verdict"):
        jw.PairwiseJudge("openai/x", method="verdict").read("Both are fine.")
    assert jw.templates.parse("likert", "I cannot decide.") != jw.templates.parse("likert", "I cannot decide.")  # NaN


def test_import_is_light() -> None:
    import subprocess
    import sys

    code = "import sys, judgewidgets; print(int('litellm' in sys.modules), int('altair' in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "0"], "importing judgewidgets must not import litellm or altair"


def test_every_exported_name_exists() -> None:
    missing = [name for name in jw.__all__ if not hasattr(jw, name)]
    assert missing == []


def test_every_dotted_name_the_docs_use_resolves() -> None:
    """Each `jw.<module>.<Name>` the docs write (`jw.testing.ScriptedTransport`, ...), and the contract's
    `jw.jupyter.PanelBuilderModel`, works after `import judgewidgets as jw` alone (the heavy subpackages are
    imported on first use)."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    docs = Path(__file__).resolve().parents[1] / "docs"
    dotted = sorted(
        {m for page in docs.rglob("*.md") for m in re.findall(r"\bjw\.[a-z_]+\.[A-Za-z]\w*", page.read_text())}
    )
    assert "jw.testing.ScriptedTransport" in dotted
    dotted.append("jw.jupyter.PanelBuilderModel")  # the API contract's name for the builder's plain model
    code = (
        "import judgewidgets as jw\n"
        f"names = {[d for d in dotted if '._' not in d]!r}\n"
        "missing = [n for n in names if not hasattr(getattr(jw, n.split('.')[1], None), n.split('.')[2])]\n"
        "print(missing)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def test_litellm_reads_its_bundled_tables_never_the_network() -> None:
    """After `import judgewidgets`, litellm's import (its model cost map) and its first Anthropic call (the
    beta-header table, a blocking fetch of up to 5 s where the network is cut) use the copies it ships."""
    import subprocess
    import sys

    code = (
        "import os\n"
        "for name in ('LITELLM_LOCAL_MODEL_COST_MAP', 'LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS'):\n"
        "    os.environ.pop(name, None)\n"
        "import httpx, judgewidgets\n"
        "def refuse(*args, **kwargs):\n"
        "    raise SystemExit(f'litellm went to the network: {args[:1]}')\n"
        "httpx.get = refuse\n"
        "httpx.Client.get = refuse\n"
        "import litellm\n"
        "from litellm.anthropic_beta_headers_manager import get_beta_headers_config\n"
        "assert get_beta_headers_config('https://example.invalid/beta_headers.json')\n"
        "print(litellm.model_cost['gpt-4o-mini']['input_cost_per_token'] > 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["True"], done.stderr[-2000:]
