"""The local provider's wiring into litellm, with a fake model: routing, parameter forwarding, errors."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from judgewidgets._errors import ConfigurationError, InputError, LocalModelError
from judgewidgets.local import LOCAL_MODEL, LocalModel, ensure_registered, is_local, to_litellm_model

LIKERT_SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}},
    "required": ["score"],
}
LIKERT_FORMAT = {"type": "json_schema", "json_schema": {"name": "likert", "schema": LIKERT_SCHEMA, "strict": True}}
MESSAGES = [{"role": "user", "content": "Question: 2+2?\nResponse: 4"}]


class FakeModel:
    """Stands in for LocalModel: records requests, answers like llama.cpp's OpenAI endpoint."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.requests: list[dict[str, Any]] = []
        self.fail_with: Exception | None = None

    def load(self) -> None:
        pass

    async def aload(self) -> None:
        pass

    def chat(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        if self.fail_with is not None:
            raise self.fail_with
        digit = {"token": "4", "logprob": -0.2, "top_logprobs": [{"token": "4", "logprob": -0.2}]}
        digit["top_logprobs"].append({"token": "5", "logprob": -1.8})
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": f"local/{self.name}",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": '{"score": 4}'},
                    "logprobs": {"content": [{"token": '{"score": ', "logprob": -0.01, "top_logprobs": []}, digit]},
                }
            ],
            "usage": {"prompt_tokens": 21, "completion_tokens": 6, "total_tokens": 27},
        }

    async def achat(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.chat(request)


@pytest.fixture
def litellm_with_fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, dict[str, FakeModel]]]:
    """litellm with a fresh provider map holding a LocalProvider over fake models."""
    import litellm

    from judgewidgets.local._provider import LocalProvider

    fakes: dict[str, FakeModel] = {}

    def factory(name: str) -> FakeModel:
        return fakes.setdefault(name, FakeModel(name))

    monkeypatch.setattr(litellm, "custom_provider_map", [])
    ensure_registered()
    litellm.custom_provider_map[0]["custom_handler"] = LocalProvider(model_factory=factory)  # type: ignore[arg-type]
    yield litellm, fakes


def test_model_names() -> None:
    assert LOCAL_MODEL == "local"
    assert to_litellm_model("local") == "local/default"
    assert to_litellm_model("local/default") == "local/default"
    assert to_litellm_model("local//models/x.gguf") == "local//models/x.gguf"
    assert to_litellm_model("openai/gpt-4o-mini") == "openai/gpt-4o-mini"
    assert is_local("local") and is_local("local/default") and is_local("local/./x.gguf")
    assert not is_local("localai/x") and not is_local("openai/gpt-4o-mini") and not is_local("")


def test_importing_the_package_loads_neither_litellm_nor_llama_cpp() -> None:
    code = "import sys, judgewidgets.local; print('litellm' in sys.modules, 'xllamacpp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_registering_twice_adds_one_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    import litellm

    monkeypatch.setattr(litellm, "custom_provider_map", [])
    ensure_registered()
    handler = litellm.custom_provider_map[0]["custom_handler"]
    ensure_registered()
    assert [entry["provider"] for entry in litellm.custom_provider_map] == ["local"]
    assert litellm.custom_provider_map[0]["custom_handler"] is handler
    assert "local" in litellm.provider_list


async def test_every_judge_parameter_reaches_the_model(litellm_with_fake: tuple[Any, dict[str, FakeModel]]) -> None:
    litellm, fakes = litellm_with_fake
    response = await litellm.acompletion(
        model=to_litellm_model("local"),
        messages=MESSAGES,
        response_format=LIKERT_FORMAT,
        logprobs=True,
        top_logprobs=5,
        temperature=0.0,
        max_tokens=12,
        seed=7,
        stop=["\n\n"],
    )
    (request,) = fakes["default"].requests
    assert request["messages"] == MESSAGES
    assert request["response_format"] == LIKERT_FORMAT
    assert (request["logprobs"], request["top_logprobs"]) == (True, 5)
    assert (request["temperature"], request["max_tokens"], request["seed"], request["stop"]) == (0.0, 12, 7, ["\n\n"])
    assert response.model == "local/default"
    assert response.choices[0].message.content == '{"score": 4}'
    digit = response.choices[0].logprobs.content[1]
    assert digit.token == "4" and [alt.token for alt in digit.top_logprobs] == ["4", "5"]
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (21, 6)


async def test_drop_params_does_not_drop_them(
    litellm_with_fake: tuple[Any, dict[str, FakeModel]], monkeypatch: pytest.MonkeyPatch
) -> None:
    litellm, fakes = litellm_with_fake
    monkeypatch.setattr(litellm, "drop_params", True)
    await litellm.acompletion(
        model="local/default", messages=MESSAGES, response_format={"type": "json_object"}, logprobs=True
    )
    assert fakes["default"].requests[0]["response_format"] == {"type": "json_object"}


def test_the_sync_path_forwards_too(litellm_with_fake: tuple[Any, dict[str, FakeModel]]) -> None:
    litellm, fakes = litellm_with_fake
    response = litellm.completion(model="local//tmp/any.gguf", messages=MESSAGES, response_format=LIKERT_FORMAT)
    assert fakes["/tmp/any.gguf"].requests[0]["response_format"] == LIKERT_FORMAT
    assert response.usage.total_tokens == 27


async def test_mock_response_never_reaches_the_model(litellm_with_fake: tuple[Any, dict[str, FakeModel]]) -> None:
    litellm, fakes = litellm_with_fake
    local = await litellm.acompletion(model="local/default", messages=MESSAGES, mock_response="mocked")
    other = await litellm.acompletion(model="openai/gpt-4o-mini", messages=MESSAGES, mock_response="other")
    assert (local.choices[0].message.content, other.choices[0].message.content) == ("mocked", "other")
    assert fakes == {}


@pytest.mark.parametrize(
    ("error", "status", "litellm_error"),
    [
        (ConfigurationError("bad schema"), 400, "BadRequestError"),
        (InputError("prompt too long"), 400, "BadRequestError"),
        (LocalModelError("llama.cpp failed"), 500, "InternalServerError"),
    ],
)
async def test_errors_carry_a_status_and_the_original(
    litellm_with_fake: tuple[Any, dict[str, FakeModel]], error: Exception, status: int, litellm_error: str
) -> None:
    litellm, fakes = litellm_with_fake
    fakes["default"] = FakeModel("default")
    fakes["default"].fail_with = error
    with pytest.raises(Exception) as caught:
        await litellm.acompletion(model="local/default", messages=MESSAGES)
    assert caught.value.status_code == status
    assert type(caught.value).__name__ == litellm_error
    assert str(error) in str(caught.value)
    assert caught.value.__context__.__cause__ is error  # litellm's error <- CustomLLMError <- ours


async def test_streaming_is_refused_as_a_bad_request(litellm_with_fake: tuple[Any, dict[str, FakeModel]]) -> None:
    litellm, _ = litellm_with_fake
    with pytest.raises(Exception, match="does not stream") as caught:
        await litellm.acompletion(model="local/default", messages=MESSAGES, stream=True)
    assert caught.value.status_code == 400


async def test_a_missing_gguf_path_is_a_bad_request(monkeypatch: pytest.MonkeyPatch) -> None:
    import litellm

    monkeypatch.setattr(litellm, "custom_provider_map", [])
    ensure_registered()
    with pytest.raises(Exception, match=r"nowhere\.gguf does not exist") as caught:
        await litellm.acompletion(model="local//nowhere/nowhere.gguf", messages=MESSAGES)
    assert caught.value.status_code == 400


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ({"stream": True}, "does not stream"),
        ({"n": 2}, "one choice"),
        ({"tools": [{"type": "function", "function": {"name": "f"}}]}, "tool calls"),
        ({"messages": []}, "non-empty list of messages"),
    ],
)
def test_unsupported_requests_fail_before_any_load(extra: dict[str, Any], match: str) -> None:
    model = LocalModel("/no/such/model.gguf")  # would fail to load: the request is refused first
    with pytest.raises((ConfigurationError, InputError), match=match):
        model.chat({"messages": MESSAGES, **extra})


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ConfigurationError):
        LocalModel(n_ctx=16)
    with pytest.raises(ConfigurationError):
        LocalModel(n_threads=0)
