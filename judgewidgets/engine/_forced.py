"""Reading a model's probability of a given reply instead of asking it for a verdict: the reply's own tokens forced one
by one with a llama.cpp grammar, and the log-probability the model gave each before the grammar applied.

llama.cpp returns no log-probabilities for prompt tokens (its server answers `echo` with "Only no echo is
supported"), so the cheapest exact reading is to generate the reply under a grammar that allows only its tokens,
`root ::= <[id]> <[id]> ...`, asking for `logprobs`: llama.cpp reports each token's probability from the model's
logits before sampling, so the grammar picks the path and never changes the numbers. The tokens are the model's own
tokenization of the reply (llama.cpp's `/tokenize`): a grammar of the reply's *characters* lets the model take any
path of tokens that spells it, and on a reply it finds unlikely it wanders into fragments (135 tokens for a 68-token
reply, its log-likelihood -369 instead of -215). The end of the turn is forced too and counted, so a reply that
should have gone on scores lower. A reply of n tokens costs n generated tokens (about 40-80 ms each on two cores)
after its context, whose shared prefix the server's prompt cache reuses.

Which models can do it: the embedded judge ("local") and an OpenAI-compatible server named by `api_base` that is
llama.cpp's (its `grammar` field; xllamacpp serves one). Any other provider is refused before any call; a server
that ignores the grammar is caught on its answer (the text it wrote is not the reply) and recorded, not raised.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .._errors import ConfigurationError, JudgeCallError
from ._litellm import is_local_model
from ._openai_http import custom_base_url
from ._request import Completion, redact

TOKENIZE_TIMEOUT_S = 60.0
_TOKENIZE_CACHE = 4_096  # tokenizations a tokenizer keeps (a reply is tokenized once however often it is judged)


def can_force(model: str, params: Mapping[str, Any]) -> bool:
    """Whether `model` with `params` is a llama.cpp model whose probabilities of a given reply can be read: the
    embedded judge, or a self-hosted OpenAI-compatible server (`api_base` or its environment variable)."""
    return is_local_model(model) or custom_base_url(model, params) is not None


def check_forcing(model: str, params: Mapping[str, Any], what: str) -> None:
    """ConfigurationError, before any call, when `model` cannot report the probability of a given reply."""
    if can_force(model, params):
        return
    raise ConfigurationError(
        f"{what} reads the probability the model gives each token of a reply, forced with a llama.cpp grammar: it "
        f"needs the embedded judge (model='local') or a llama.cpp server (model='openai/<name>' with api_base=its "
        f"URL). {model!r} is neither: hosted APIs neither force a given reply nor return its probabilities. Use "
        "another method with this model."
    )


def token_grammar(tokens: Sequence[int]) -> str:
    """A GBNF grammar that allows exactly these tokens, in order (and then the end of the turn)."""
    return "root ::= " + " ".join(f"<[{int(t)}]>" for t in tokens)


def forced_params(tokens: Sequence[int], local: bool) -> dict[str, Any]:
    """The request parameters that force `tokens` and return their log-probabilities: temperature 0, room for the
    tokens and the end of the turn, one top logprob (the forced token's own is reported either way), and the
    grammar: a request field of the embedded judge, `extra_body` for a server (as the OpenAI SDK sends it)."""
    grammar = token_grammar(tokens)
    params: dict[str, Any] = {
        "temperature": 0.0,
        "max_tokens": len(tokens) + 1,
        "logprobs": True,
        "top_logprobs": 1,
    }
    return params | ({"grammar": grammar} if local else {"extra_body": {"grammar": grammar}})


@dataclass(frozen=True)
class ForcedReply:
    """A reply's log-probability under one context, token by token (natural log; the end of the turn last, when
    the model reported it)."""

    logprobs: tuple[float, ...]

    @property
    def total(self) -> float:
        return float(math.fsum(self.logprobs))

    @property
    def tokens(self) -> int:
        return len(self.logprobs)

    @property
    def per_token(self) -> float:
        return self.total / max(self.tokens, 1)


def read_forced(completion: Completion, text: str, tokens: Sequence[int]) -> ForcedReply:
    """The forced reply's log-probabilities from a completion; ValueError when the model did not write exactly the
    reply (a server that ignores llama.cpp's `grammar` field) or returned no log-probabilities.

    A character the model spells with two tokens (π, ≈, an accented or non-Latin letter: its first token ends
    mid-character) is reported by llama.cpp as one entry, the probability of its last token: the first token's is
    not sent. So a reply may have fewer entries than tokens; the same reply read in two contexts has the same entries,
    so a difference between contexts ("pmi") stays exact and a reply's own log-likelihood is a little high."""
    logprobs = completion.logprobs or []
    if not logprobs:
        raise ValueError("the model returned no logprobs for the forced reply")
    if completion.content.strip() != text.strip():
        raise ValueError(
            "the model did not write the reply it was given (a llama.cpp server follows the `grammar` field; this "
            "server ignored it)"
        )
    values = [float(t["logprob"]) for t in logprobs if t.get("logprob") is not None]
    if not values or any(math.isnan(v) or v > 0 for v in values):
        raise ValueError(f"the model reported no usable logprobs for a reply of {len(tokens)} tokens")
    return ForcedReply(tuple(values[: len(tokens) + 1]))


@runtime_checkable
class Tokenizer(Protocol):
    """The tokenizer role: a model's own token ids of a text, as it reads it inside a message."""

    async def tokenize(self, text: str) -> list[int]: ...


class LlamaCppTokenizer:
    """The tokens of the model a judge calls, from llama.cpp itself: the embedded judge's, or a llama.cpp server's
    `/tokenize` (its root URL: `api_base` without a trailing `/v1`). Tokenizations are kept (a reply is tokenized
    once); a failure raises JudgeCallError, which the judge records on the item."""

    def __init__(self, model: str, params: Mapping[str, Any], timeout: float = TOKENIZE_TIMEOUT_S) -> None:
        self.model = model
        self.local = is_local_model(model)
        self.base_url = None if self.local else custom_base_url(model, params)
        self.api_key = None if self.local else params.get("api_key")
        self.timeout = timeout
        self._kept: dict[str, list[int]] = {}

    def __repr__(self) -> str:
        return f"LlamaCppTokenizer({self.model!r})"

    async def tokenize(self, text: str) -> list[int]:
        kept = self._kept.get(text)
        if kept is not None:
            return kept
        tokens = await (self._local(text) if self.local else self._server(text))
        if len(self._kept) >= _TOKENIZE_CACHE:
            self._kept.pop(next(iter(self._kept)))
        self._kept[text] = tokens
        return tokens

    async def _local(self, text: str) -> list[int]:
        from ..local import LocalModel

        name = self.model.partition("/")[2] or "default"
        try:
            return await LocalModel(name).atokenize(text)
        except Exception as exc:
            raise JudgeCallError(f"the embedded judge could not tokenize the reply: {exc}") from None

    async def _server(self, text: str) -> list[int]:
        import httpx

        assert self.base_url is not None
        root = self.base_url.rstrip("/").removesuffix("/v1")
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        from ..local._runtime import token_ids, tokenize_body

        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                answer = await client.post(f"{root}/tokenize", json=tokenize_body(text), headers=headers)
            answer.raise_for_status()
            return token_ids(answer.json())
        except Exception as exc:
            secrets = [str(self.api_key)] if self.api_key else []
            raise JudgeCallError(
                redact(
                    f"{root}/tokenize did not tokenize the reply ({type(exc).__name__}: {exc}); the likelihood "
                    "method needs a llama.cpp server, whose /tokenize gives the model's own tokens",
                    secrets,
                )
            ) from None
