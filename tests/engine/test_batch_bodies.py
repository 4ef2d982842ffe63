"""A batch line carries the very body a live call sends: the fast path's chat body for OpenAI, litellm's own
Messages body for Anthropic (checked against litellm's `return_raw_request`, which runs its whole call path)."""

from __future__ import annotations

from typing import Any

import pytest

import judgewidgets as jw
from judgewidgets.engine import ChatRequest
from judgewidgets.engine._batch import anthropic_body, openai_body
from judgewidgets.engine._litellm import import_litellm
from judgewidgets.engine._openai_http import chat_body, openai_endpoint

MODEL = "anthropic/claude-3-5-haiku-latest"
SCHEMA = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}
SYSTEM = {"role": "system", "content": "You are a judge."}
USER = {"role": "user", "content": "<question>2+2?</question><response>4</response>"}


def _live_body(request: ChatRequest) -> dict[str, Any]:
    import_litellm()
    from litellm.types.utils import CallTypes
    from litellm.utils import return_raw_request

    raw = return_raw_request(
        CallTypes.completion, {"model": request.model, "messages": list(request.messages), **request.params}
    )
    assert raw.get("error") is None, raw
    return dict(raw["raw_request_body"])


@pytest.mark.parametrize(
    ("messages", "params"),
    [
        ((SYSTEM, USER), {"temperature": 0.0, "max_tokens": 1024}),
        (
            (SYSTEM, USER),
            {
                "temperature": 0.0,
                "max_tokens": 1024,
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "v", "schema": SCHEMA, "strict": True},
                },
            },
        ),
        ((SYSTEM, USER, {"role": "assistant", "content": '{"score":'}), {"temperature": 0.0, "max_tokens": 8}),
        ((USER,), {"max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024}}),
        ((SYSTEM, USER), {"temperature": 0.5, "max_tokens": 64, "stop": ["}"], "top_p": 0.9}),
    ],
    ids=["plain", "schema", "prefill", "thinking", "sampling"],
)
def test_the_anthropic_batch_body_is_litellms_live_body(messages, params) -> None:
    model = "anthropic/claude-sonnet-4-5" if "thinking" in params else MODEL  # a model that thinks
    request = ChatRequest(model, tuple(messages), params)
    assert anthropic_body(request) == _live_body(request)


def test_a_judges_anthropic_request_goes_into_the_batch_as_litellm_sends_it() -> None:
    judge = jw.LLMJudge(MODEL, template="likert", cache=False)
    params = judge.request_params(prefilled=judge.uses_prefill())
    _, messages = judge.request(
        jw.Item(prompt="2+2?", response="4"), judge.item_params(jw.Item(prompt="2+2?", response="4"), params)
    )
    request = judge.caller.shaped(ChatRequest(MODEL, messages, params))
    assert anthropic_body(request) == _live_body(request)


def test_the_openai_batch_body_is_the_fast_paths_live_body() -> None:
    params = {"api_base": "http://127.0.0.1:9/v1", "api_key": "sk-x", "temperature": 0.0, "logprobs": True}
    request = ChatRequest("openai/test", (SYSTEM, USER), params)
    endpoint = openai_endpoint(request.model, params)
    assert endpoint is not None
    body = openai_body(request)
    assert body == chat_body(request, endpoint) and "api_key" not in body and body["model"] == "test"
