"""`%%judge` and `%judge_config` in a real IPython shell, against the loopback server."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pytest
from IPython.core.error import UsageError

import judgewidgets as jw
from judgewidgets._constants import DEFAULT_MAX_CONCURRENCY, LOCAL_MAX_CONCURRENCY
from judgewidgets.jupyter._magics import _parse
from judgewidgets.testing import OpenAITestServer, json_score
from tests.jupyter.shell import magic_shell


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(json_score(4)) as running:
        yield running


@pytest.fixture
def ip(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    yield from magic_shell(server, monkeypatch, judges="openai/a,openai/b")


CELL = """prompt: What is the capital of Australia?
response: Canberra.

prompt: How many bones does an adult have?
response: About 350. [[reply:{"score": 1}]]
"""


def test_inline_items_with_default_judges(ip) -> None:  # type: ignore[no-untyped-def]
    ip.run_cell_magic("judge", "--out scored --no-chart", CELL)
    result = ip.user_ns["scored"]
    df = result.to_df()
    # The loopback server's logprobs put 0.9 on the answered digit: probability-weighted scores sit near it.
    assert df["judge_1"].tolist() == pytest.approx([0.75, 0.0], abs=0.03)
    assert df["judge_2"].tolist() == pytest.approx([0.75, 0.0], abs=0.03)


def test_data_frame_and_columns_and_chart(ip) -> None:  # type: ignore[no-untyped-def]
    ip.user_ns["answers"] = pd.DataFrame({"q": ["2+2?", "3+3?"], "a": ["4", "6"]})
    chart = ip.run_line_magic(
        "judge",
        "--judges openai/x,openai/y,openai/z --data answers --prompt-col q --response-col a --out r "
        "--aggregation median",
    )
    assert chart.to_dict()["hconcat"]
    assert ip.user_ns["r"].to_df()["median"].tolist() == pytest.approx([0.75, 0.75], abs=0.03)


def test_variable_expansion_in_the_cell(ip) -> None:  # type: ignore[no-untyped-def]
    ip.user_ns["answer"] = "Canberra"
    ip.run_cell_magic("judge", "--out r --no-chart", "prompt: Capital of Australia?\nresponse: {answer}\n")
    assert ip.user_ns["r"].items[0].response == "Canberra"


def test_rubric_from_a_variable(ip) -> None:  # type: ignore[no-untyped-def]
    ip.user_ns["rub"] = jw.Rubric([jw.Criterion("Names the capital", name="capital")])
    ip.user_ns["answers"] = pd.DataFrame(
        {"prompt": ["Capital?"], "response": ['Canberra [[reply:{"verdict": "MET", "explanation": "ok"}]]']}
    )
    ip.run_line_magic("judge", "--rubric rub --data answers --out g --no-chart --seed 1")
    assert ip.user_ns["g"].to_df()["capital"].tolist() == ["MET"]


@pytest.mark.parametrize(
    ("line", "cell", "message"),
    [
        ("--template nope", CELL, "unknown template 'nope'"),
        ("--data missing_df", "", "no such variable"),
        ("--mode dance", CELL, "invalid choice"),
        ("", "", "the cell holds no items"),
        ("--judges", "", "expected one argument"),
        ("", "colour: red\n", "every item starts with `prompt:`"),
        ("--aggregation weighted_avg", CELL, "weighted_avg needs --weights"),
        ("--weights 1", CELL, "1 weights given for 2 judges"),
        ("--mode rubric", CELL, "needs --rubric"),
        ("--max-cost-usd -1", CELL, "--max-cost-usd: max_cost_usd must be a number of dollars >= 0"),
        ("--max-cost-usd nan", CELL, "--max-cost-usd: max_cost_usd must be a number of dollars >= 0"),
        ("--max-cost-usd lots", CELL, "invalid float value"),
        ("--max-cost-usd 1", CELL, "litellm has no price for model 'openai/a'"),
    ],
)
def test_bad_options_raise_usage_error(ip, line: str, cell: str, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match=message):
        if cell:
            ip.run_cell_magic("judge", line, cell)
        else:
            ip.run_line_magic("judge", line)


@pytest.mark.filterwarnings("ignore:rows .* have no score:RuntimeWarning")
def test_a_budget_shows_the_items_not_run_and_a_rerun_pays_only_for_them(  # type: ignore[no-untyped-def]
    ip, server: OpenAITestServer
) -> None:
    cell = "".join(f"prompt: What is {i} + {i}?\nresponse: {2 * i}.\n\n" for i in range(6))
    before = server.stats.total
    ip.run_cell_magic("judge", "--judges openai/gpt-4o-mini --max-cost-usd 0 --out r --no-chart", cell)
    assert server.stats.total == before and ip.user_ns["r"].not_run == 6
    assert "6 of 6 votes not run" in ip.user_ns["r"]._repr_html_()
    ip.run_cell_magic("judge", "--judges openai/gpt-4o-mini --max-cost-usd 1 --out r --no-chart", cell)
    assert server.stats.total == before + 6 and ip.user_ns["r"].not_run == 0


def test_config_traitlets(ip) -> None:  # type: ignore[no-untyped-def]
    ip.run_line_magic("config", "JudgeMagics.default_template = 'true_false'")
    magics = ip.magics_manager.registry["JudgeMagics"]
    assert magics.default_template == "true_false"
    shown = ip.run_line_magic("judge_config", "--concurrency 7")
    assert shown["max_concurrency"] == 7 and shown["default_template"] == "true_false"
    ip.run_line_magic("judge_config", "--template likert")
    shown = ip.run_line_magic("judge_config", "--concurrency own")  # back to each judge's own
    assert str(shown["max_concurrency"]).startswith("(each judge's own")
    for bad in ("0", "many"):
        with pytest.raises(UsageError, match="--concurrency"):
            ip.run_line_magic("judge_config", f"--concurrency {bad}")


def test_a_local_judge_built_by_the_magic_takes_one_call_at_a_time(ip) -> None:  # type: ignore[no-untyped-def]
    """The embedded judge has one slot: the magic leaves it its own concurrency (1) and a provider model its own
    (32), so calls queue in the engine, not inside the model's timeout. An explicit --concurrency applies to every
    judge. Only the judge objects are inspected: nothing is called, no model loaded."""
    magics = ip.magics_manager.registry["JudgeMagics"]
    assert magics.max_concurrency is None  # the session default: each judge's own
    local, remote = magics._panel(_parse(magics.judge, "--judges local,openai/a")).judges
    assert local.model == "local" and local.settings.max_concurrency == LOCAL_MAX_CONCURRENCY == 1
    assert remote.settings.max_concurrency == DEFAULT_MAX_CONCURRENCY
    assert "max_concurrency" not in magics._judge_kwargs(_parse(magics.judge, ""))  # every mode's judges
    shown = ip.run_line_magic("judge_config", "--concurrency 4")
    assert shown["max_concurrency"] == 4
    try:
        local, remote = magics._panel(_parse(magics.judge, "--judges local,openai/a")).judges
        assert local.settings.max_concurrency == remote.settings.max_concurrency == 4
    finally:
        ip.run_line_magic("config", "JudgeMagics.max_concurrency = None")
    assert "each judge's own" in ip.run_line_magic("judge_config", "")["max_concurrency"]


def test_help_documents_every_option(ip) -> None:  # type: ignore[no-untyped-def]
    doc = ip.magics_manager.registry["JudgeMagics"].judge.__doc__
    for option in ("--judges", "--template", "--rubric", "--mode", "--data", "--prompt-col", "--out", "Examples"):
        assert option in doc


def test_in_terminal_ipython_a_chart_is_a_saved_file_not_a_widget_repr(
    ip, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """InteractiveShell is terminal IPython: no frontend draws charts, so the chart saves itself as a file, and
    `%load_ext` (run by the fixture) left altair's renderer as it was."""
    import altair as alt

    from judgewidgets.jupyter._magics import load_ipython_extension

    monkeypatch.setattr("judgewidgets._charts.chart_folder", lambda: tmp_path)
    with alt.renderers.enable("default"):
        load_ipython_extension(ip)  # what %load_ext does the first time in a session
        assert alt.renderers.active == "default"
        ip.user_ns["answers"] = pd.DataFrame({"q": ["2+2?", "3+3?"], "a": ["4", "6"]})
        chart = ip.run_line_magic("judge", "--judges openai/x,openai/y --data answers --prompt-col q --response-col a")
        shown = chart._repr_mimebundle_()
        bundle = shown[0] if isinstance(shown, tuple) else shown
        (saved,) = tmp_path.glob("chart-*.html")
        assert bundle == {"text/plain": f"<chart of 2 views saved to {saved}: open it in a browser>"}
        assert "JupyterChart" not in str(bundle)
        html = saved.read_text()
        assert "vegaEmbed" in html and "https://cdn" not in html  # draws offline
        chart._repr_mimebundle_()
        assert len(list(tmp_path.glob("chart-*.html"))) == 1  # the same chart is saved once
        assert alt.renderers.active == "default"


def test_judge_help_is_the_cells_output_in_a_kernel(ip, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """A kernel sends `?` help as a pager payload, which nbconvert drops: `%%judge?` becomes displayed output there.
    Other help, and help in terminal IPython, still goes to the pager."""
    from IPython.core import page

    from judgewidgets.jupyter._magics import load_ipython_extension

    load_ipython_extension(ip)  # a second time: the hook is registered once
    ours = [c for _, c in ip.hooks.show_in_pager if getattr(c, "__func__", None) is not None]
    assert sum(c.__func__.__name__ == "show_magic_help_as_output" for c in ours) == 1
    paged: list[object] = []
    monkeypatch.setattr(page, "pager_page", lambda data, *args, **kwargs: paged.append(data))
    shown: list[object] = []
    monkeypatch.setattr("judgewidgets.jupyter._magics.display", lambda data, raw: shown.append(data))
    ip.run_cell("%%judge?")
    assert shown == [] and len(paged) == 1  # terminal IPython: the pager
    monkeypatch.setattr("judgewidgets.jupyter._magics.notebook_frontend", lambda: True)
    ip.run_cell("%%judge?")
    ip.run_cell("%judge_config?")
    assert len(shown) == 2 and len(paged) == 1
    assert "--judges" in shown[0]["text/plain"] and "Examples" in shown[0]["text/plain"]
    ip.run_cell("len?")  # not ours: the pager
    assert len(shown) == 2 and len(paged) == 2
