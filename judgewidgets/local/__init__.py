"""The embedded local judge: `model="local"` runs Qwen2.5-Coder-1.5B-Instruct in-process with llama.cpp.

`ensure_registered()` makes litellm route `"local/<name>"` to it (`"local/default"` is the pinned model,
`"local/<path-to.gguf>"` any GGUF file). Nothing heavy is imported here: litellm and xllamacpp load on first use.
"""

from __future__ import annotations

import threading

from ._runtime import LocalModel
from ._weights import ensure_weights

__all__ = ["LOCAL_MODEL", "LocalModel", "ensure_registered", "ensure_weights", "is_local", "to_litellm_model"]

LOCAL_MODEL = "local"

_register_lock = threading.Lock()


def is_local(model: str) -> bool:
    """Whether a model string names the embedded judge: `"local"` or `"local/<name-or-path>"`."""
    return model == LOCAL_MODEL or model.startswith(f"{LOCAL_MODEL}/")


def to_litellm_model(model: str) -> str:
    """The model string litellm routes: `"local"` becomes `"local/default"`; anything else is unchanged."""
    return f"{LOCAL_MODEL}/default" if model == LOCAL_MODEL else model


def ensure_registered() -> None:
    """Register the local provider in `litellm.custom_provider_map` (idempotent, thread-safe).

    An entry for provider `"local"` that is already there is kept, ours or not, so registering twice never
    duplicates it. Imports litellm, so call it when a local call is about to be made.
    """
    import litellm
    import litellm.utils

    with _register_lock:
        if not any(entry.get("provider") == LOCAL_MODEL for entry in litellm.custom_provider_map):
            from ._provider import LocalProvider

            litellm.custom_provider_map.append({"provider": LOCAL_MODEL, "custom_handler": LocalProvider()})
        litellm.utils.custom_llm_setup()
