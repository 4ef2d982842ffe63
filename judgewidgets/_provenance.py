"""What made a result, kept with it: the settings of its judge, panel, grader or rater, without secrets."""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel

from .engine import Caller
from .engine._request import _SECRET_NAME, HEADER_KWARGS, SECRET_KWARGS, argument_secrets, redact

# Values shaped like credentials (OpenAI / Anthropic style keys, bearer tokens, AWS key ids, GitHub and Slack
# tokens): masked wherever they turn up in a description, whatever their key is called.
_KEY_SHAPED = re.compile(
    r"\b(?:sk|pk|rk|ak)-[A-Za-z0-9_\-]{6,}|Bearer\s+\S+|\bAKIA[0-9A-Z]{12,}|\bgh[pousr]_[A-Za-z0-9]{16,}|"
    r"\bxox[abpr]-[A-Za-z0-9\-]{8,}"
)
_MAX_DEPTH = 5  # objects within objects described (containers and records do not count)
_MAX_LIST = 50
# Attributes a description names by type only (fitted state, nested reports), and those it leaves out (copies of
# what is described elsewhere: the caller's settings, a pairwise judge's pointwise twin).
_BY_TYPE = frozenset({"alignment_report", "calibration"})
_LEFT_OUT = frozenset({"pointwise_judge", "session", "settings"})


def provenance(maker: object) -> dict[str, Any]:
    """What made a result (a judge, panel, grader, rater, ...), to keep with it: its settings without secrets."""
    return describe(maker)


def describe(obj: object, depth: int = 0) -> Any:
    """`obj`'s configuration as JSON values, secrets left out: a judge's model, template and call settings, a
    panel's judges, any object's public settings (recursively, a few levels deep). Keys named like credentials
    are dropped, header values and passwords in URLs too, and key-shaped strings are masked."""
    if obj is None or isinstance(obj, (bool, int, float)):
        return obj
    if isinstance(obj, str):
        return _KEY_SHAPED.sub("***", obj)
    if isinstance(obj, enum.Enum):
        return describe(obj.value, depth)
    if isinstance(obj, np.generic):
        return describe(obj.item(), depth)
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, Caller):
        return _caller(obj)
    if isinstance(obj, Mapping):
        return {str(k): describe(v, depth) for k, v in obj.items() if not _secret_name(k)}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [describe(v, depth) for v in list(obj)[:_MAX_LIST]]
    if isinstance(obj, BaseModel):  # a record of settings (a template, a criterion): its fields
        return describe(obj.model_dump(), depth)
    if depth >= _MAX_DEPTH:  # objects nest (a pipeline's stage's panel's judge): only so deep
        return _type_name(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if not f.name.startswith("_")}
        return {"type": _type_name(obj), **_public(fields, depth)}
    if isinstance(obj, (np.ndarray, pd.DataFrame, pd.Series)) or (callable(obj) and not hasattr(obj, "__dict__")):
        return _type_name(obj)
    attributes = getattr(obj, "__dict__", None)
    if not isinstance(attributes, dict):
        return _type_name(obj)
    out: dict[str, Any] = {"type": _type_name(obj)}
    caller = attributes.get("caller")
    if isinstance(caller, Caller):
        out.update(_caller(caller))
    out.update(_public(attributes, depth))
    return out


def _public(attributes: Mapping[str, Any], depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if key.startswith("_") or key in _LEFT_OUT or key == "caller" or _secret_name(key):
            continue
        if key in _BY_TYPE:
            out[key] = None if value is None else _type_name(value)
            continue
        if isinstance(value, (np.ndarray, pd.DataFrame, pd.Series)) or (
            callable(value) and not hasattr(value, "__dict__")
        ):
            continue
        out[key] = describe(value, depth + 1)
    return out


def _caller(caller: Caller) -> dict[str, Any]:
    """A caller's request parameters and call settings; keys, headers and URL passwords left out."""
    settings = caller.settings
    kwargs = {k: v for k, v in caller.litellm_kwargs.items() if k not in SECRET_KWARGS and k not in HEADER_KWARGS}
    for name in ("api_base", "base_url"):
        if kwargs.get(name) and "@" in str(kwargs[name]):
            kwargs[name] = redact(str(kwargs[name]), argument_secrets({name: kwargs[name]}))
    retry = settings.retry
    return {
        "model": caller.model,
        "temperature": caller.temperature,
        "structured_output": caller.structured_output,
        "probability_weighted": caller.probability_weighted,
        "prefill": caller.prefill,
        "reasks": caller.reasks,
        "timeout": settings.timeout,
        "max_concurrency": settings.max_concurrency,
        "retry": describe(dataclasses.asdict(retry) if dataclasses.is_dataclass(retry) else retry, 1),
        "cache": str(settings.cache.path) if settings.cache is not None else None,
        "transport": getattr(settings.transport, "name", None) or _type_name(settings.transport),
        **{k: describe(v, 1) for k, v in kwargs.items() if not _secret_name(k)},
    }


def _secret_name(key: object) -> bool:
    name = str(key)
    return name in SECRET_KWARGS or name in HEADER_KWARGS or bool(_SECRET_NAME.search(name))


def _type_name(obj: object) -> str:
    return type(obj).__name__


def models_in(settings: Any) -> list[str]:
    """Every model string named in a description (a panel's judges', a pipeline's stages'), once each."""
    found: list[str] = []
    if isinstance(settings, Mapping):
        model = settings.get("model")
        if isinstance(model, str) and model not in found:
            found.append(model)
        for value in settings.values():
            found += [m for m in models_in(value) if m not in found]
    elif isinstance(settings, list):
        for value in settings:
            found += [m for m in models_in(value) if m not in found]
    return found
