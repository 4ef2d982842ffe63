"""The embedded judge as a litellm custom provider, so `litellm.acompletion(model="local/default", ...)` works.

litellm (checked on 1.106) routes a model `"local/<name>"` to the handler registered under provider `"local"`
in `litellm.custom_provider_map`, with `model="<name>"` and every OpenAI parameter of the call, supported or
not, in `optional_params` (temperature, max_tokens, seed, stop, response_format, logprobs, top_logprobs, ...;
`drop_params` does not filter them for a custom provider). `mock_response` never reaches a provider.

Errors are raised as `CustomLLMError` with an HTTP status, which litellm maps onto its own exceptions: 400 for
bad requests, missing or corrupt weights (not worth retrying), 408 for a timeout, 500 for a runtime failure.
The judgewidgets exception is kept as the `__cause__` of that `CustomLLMError`, which litellm's exception holds
as its `__context__`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from litellm import CustomLLM, ModelResponse
from litellm.llms.custom_llm import CustomLLMError

from .._errors import ConfigurationError, InputError, LocalModelError
from ._runtime import LocalModel

__all__ = ["LocalProvider"]


def _timeout_seconds(timeout: Any) -> float | None:
    """A number of seconds from litellm's `timeout` (a float, or an httpx.Timeout whose read limit counts)."""
    if timeout is None:
        return None
    if isinstance(timeout, (int, float)):
        return float(timeout) if timeout > 0 else None
    read = getattr(timeout, "read", None)
    return float(read) if isinstance(read, (int, float)) and read > 0 else None


def _fill(model_response: ModelResponse, raw: dict[str, Any]) -> ModelResponse:
    """Copy an OpenAI chat.completion dict into litellm's response object (choices, logprobs, usage)."""
    from litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response import (
        convert_to_model_response_object,
    )

    response = convert_to_model_response_object(response_object=raw, model_response_object=model_response)
    response.model = raw.get("model")
    return response


class LocalProvider(CustomLLM):
    """Forwards litellm chat calls for provider `local` to `LocalModel`s, one per model name.

    `model_factory` builds the model for a name after `local/` (`default` or a GGUF path); tests pass a fake.
    """

    def __init__(self, model_factory: Callable[[str], LocalModel] = LocalModel) -> None:
        super().__init__()
        self._model_factory = model_factory
        self._models: dict[str, LocalModel] = {}

    def model(self, name: str) -> LocalModel:
        """The model for a name after `local/`, created on first use."""
        model = self._models.get(name)
        if model is None:
            model = self._models.setdefault(name, self._model_factory(name))
        return model

    @property
    def models(self) -> dict[str, LocalModel]:
        """The models this provider has created so far, by name (a copy)."""
        return dict(self._models)

    @staticmethod
    def _request(messages: list, optional_params: dict[str, Any]) -> dict[str, Any]:
        return {**optional_params, "messages": messages}

    def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:
        request = self._request(messages, kwargs.get("optional_params") or {})
        try:
            local = self.model(model)
            local.load()
        except (ConfigurationError, InputError, LocalModelError) as exc:
            raise CustomLLMError(status_code=400, message=str(exc)) from exc
        try:
            raw = local.chat(request)
        except (ConfigurationError, InputError) as exc:
            raise CustomLLMError(status_code=400, message=str(exc)) from exc
        except LocalModelError as exc:
            raise CustomLLMError(status_code=500, message=str(exc)) from exc
        return _fill(kwargs["model_response"], raw)

    async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:
        request = self._request(messages, kwargs.get("optional_params") or {})
        try:
            local = self.model(model)
            await local.aload()  # once per process; not counted against the call's timeout
        except (ConfigurationError, InputError, LocalModelError) as exc:
            raise CustomLLMError(status_code=400, message=str(exc)) from exc
        timeout = _timeout_seconds(kwargs.get("timeout"))
        try:
            raw = await asyncio.wait_for(local.achat(request), timeout)
        except asyncio.TimeoutError as exc:
            raise CustomLLMError(
                status_code=408,
                message=f"the local model did not answer within {timeout:g} s (waiting for it included)",
            ) from exc
        except (ConfigurationError, InputError) as exc:
            raise CustomLLMError(status_code=400, message=str(exc)) from exc
        except LocalModelError as exc:
            raise CustomLLMError(status_code=500, message=str(exc)) from exc
        return _fill(kwargs["model_response"], raw)

    # Plain functions, not generators: litellm calls them synchronously, so the error surfaces at once as a 400.
    def streaming(self, *args: Any, **kwargs: Any) -> Any:
        raise CustomLLMError(status_code=400, message="the local model does not stream; use stream=False")

    def astreaming(self, *args: Any, **kwargs: Any) -> Any:
        raise CustomLLMError(status_code=400, message="the local model does not stream; use stream=False")
