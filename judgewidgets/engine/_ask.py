"""Asking a judge once: call, read the answer, re-ask on an unreadable one, and keep the accounting.

Every judge kind (scores, rubric criteria, pairwise verdicts) asks through here, by way of its `Caller`, so
re-asking and error categories (`infrastructure:` for calls that failed after retries, `input:` for requests the
provider refuses as given, `parse:` for unreadable answers) are the same everywhere.

A request whose last message is the assistant's is a prefill: the model continues that text, and the answer
read is the prefill followed by the continuation (llama.cpp already returns them joined; other servers return
the continuation alone).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .._constants import PREFILLED_MAX_TOKENS
from .._errors import JudgeCallError
from ._client import CallSession, CallSettings
from ._request import ChatRequest, Completion
from ._usage import Usage, known_sum, said_sum

T = TypeVar("T")

REASK_MESSAGE = "Your answer could not be read ({problem}). Reply again with only the JSON object the schema asks for."
# For an answer that hit its token limit: naming the reading error instead, a small judge was seen to copy it into
# its new explanation ("The response could not be read, so no score ...").
REASK_CUT_MESSAGE = (
    "Your answer was cut off after {limit} tokens, before it was complete. Reply again with only the JSON object "
    "the schema asks for, with any explanation in one or two sentences."
)


@dataclass
class Answer(Generic[T]):
    """What one question to a judge produced: a value, or an error with its category prefix."""

    value: T | None
    content: str = ""
    error: str | None = None
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    cached: bool = True
    attempts: int = 0
    waited_s: float = 0.0
    completion: Completion | None = None
    prefill: str = ""
    spent: list[Completion] = field(default_factory=list)  # every completion of this question, re-asks included

    def usage(self) -> Usage:
        """What this question cost, every attempt and re-ask included (no answer: unknown tokens and cost; no
        call sent, e.g. not run for the budget: nothing)."""
        answered = self.completion is not None
        if not answered and self.attempts == 0:
            return Usage(prompt_tokens=0, completion_tokens=0, cost_usd=0.0, attempts=0)
        return Usage(
            latency_s=self.latency_s,
            prompt_tokens=self.prompt_tokens or None,
            completion_tokens=self.completion_tokens or None,
            cost_usd=self.cost_usd if answered else None,
            cached=self.cached and answered,
            attempts=max(self.attempts, 1),
            waited_s=self.waited_s,
            prompt_cache_read_tokens=said_sum(c.prompt_cache_read_tokens for c in self.spent),
            prompt_cache_write_tokens=said_sum(c.prompt_cache_write_tokens for c in self.spent),
            reasoning_tokens=said_sum(c.reasoning_tokens for c in self.spent),
            list_cost_usd=known_sum(c.list_cost_usd for c in self.spent) if answered else None,
            batch_id=next((c.batch_id for c in reversed(self.spent) if c.batch_id), None),
        )

    @property
    def logprobs(self) -> list[dict[str, Any]] | None:
        """The token logprobs of the last completion (None when it has none or no call answered)."""
        return self.completion.logprobs if self.completion is not None else None

    def _add(self, completion: Completion, prefill: str) -> None:
        self.completion = completion
        self.spent.append(completion)
        self.prefill = prefill
        content = completion.content
        # litellm strips the trailing space of a final assistant message for Anthropic's API: a server that
        # returns the prefill joined to its continuation may so begin with the prefill less that space.
        joined = not prefill or content.startswith(prefill) or content.startswith(prefill.rstrip())
        self.content = content if joined else prefill + content
        self.latency_s += completion.latency_s
        self.prompt_tokens += completion.prompt_tokens or 0
        self.completion_tokens += completion.completion_tokens or 0
        self.cost_usd = (
            None if self.cost_usd is None or completion.cost_usd is None else self.cost_usd + completion.cost_usd
        )
        self.cached = self.cached and completion.cached
        self.attempts += completion.attempts
        self.waited_s += completion.waited_s


async def ask(
    session: CallSession,
    request: ChatRequest,
    settings: CallSettings,
    secrets: list[str],
    read: Callable[[str], T],
    reasks: int = 1,
    resume_cut: bool = False,
) -> Answer[T]:
    """Call the judge and read its answer with `read` (which raises ValueError when it cannot).

    `resume_cut` (for models that continue an assistant message): an answer cut off inside its leading
    explanation is re-asked as that answer's first two sentences, closed, for the model to finish with the
    verdict; otherwise an unreadable answer is re-asked in conversation.
    """
    answer: Answer[T] = Answer(value=None)
    for attempt in range(reasks + 1):
        prefill = prefill_of(request.messages)
        try:
            completion = await session.complete(request, settings, secrets)
        except JudgeCallError as exc:
            answer.error = exc.recorded
            answer.attempts += exc.attempts
            answer.waited_s += exc.waited_s
            answer.cached = False
            return answer
        answer._add(completion, prefill)
        cut = cut_off_error(request, completion)
        if cut is not None:  # the same budget would run out again: not re-asked, and never read as a verdict
            answer.error = cut
            return answer
        try:
            answer.value = read(answer.content)
            return answer
        except ValueError as exc:
            limit = cut_off_at(request, completion)
            problem = str(exc) if answer.content.strip() else "the judge returned an empty answer"
            if limit is not None:
                problem = f"the answer was cut off at its limit of {limit} tokens ({problem})"
            if attempt == reasks:
                answer.error = f"parse: {problem}"
                return answer
            asked = request.messages[:-1] if prefill else request.messages
            start = resumed_explanation(answer.content) if resume_cut and limit is not None else None
            if start is not None:
                request = request.prefilled(asked, start, RESUMED_MAX_TOKENS)
                continue
            reask = (
                REASK_CUT_MESSAGE.format(limit=limit) if limit is not None else REASK_MESSAGE.format(problem=problem)
            )
            request = request.with_messages(
                (*asked, {"role": "assistant", "content": answer.content}, {"role": "user", "content": reask})
            )
    return answer  # pragma: no cover


_EXPLANATION_START = re.compile(r'\s*\{\s*"explanation"\s*:\s*"')
_SENTENCE_END = re.compile(r"[.!?](?=\s)")
# A resumed answer only has the verdict left to write: `, "score": 4}` and the like.
RESUMED_MAX_TOKENS = 2 * PREFILLED_MAX_TOKENS


def resumed_explanation(content: str) -> str | None:
    """The start of a cut-off JSON answer kept to its explanation's first two sentences, the string closed and the
    next key opened, for the model to continue with the verdict; None unless it opens with whole sentences of an
    explanation."""
    opening = _EXPLANATION_START.match(content)
    if opening is None:
        return None
    text = content[opening.end() :]
    ends = [m.end() for m in _SENTENCE_END.finditer(text)][:2]
    if not ends or re.search(r'(?<!\\)"', text[: ends[-1]]):  # no whole sentence, or the string had closed
        return None
    return content[: opening.end()] + text[: ends[-1]] + '", "'  # the next key's quote: the object goes on


CUT_OFF_FINISH = frozenset({"length", "max_tokens"})  # OpenAI's finish_reason and Anthropic's stop_reason


def cut_off_error(request: ChatRequest, completion: Completion) -> str | None:
    """The error of an answer its token budget cut off before the verdict: a reasoning model's (reasoning tokens
    reported, thinking text, or reasoning asked for) or an empty one; None for any other answer (a cut-off
    answer of a model that does not reason is re-asked, see `ask`)."""
    if completion.finish_reason not in CUT_OFF_FINISH:
        return None
    reasoned = bool(completion.reasoning_tokens or completion.reasoning) or any(
        key in request.params for key in ("reasoning_effort", "thinking")
    )
    if not reasoned and completion.content.strip():
        return None
    limit = request.params.get("max_completion_tokens") or request.params.get("max_tokens")
    budget = f"budget of {limit} tokens" if limit else "token budget"
    spent = f"{completion.completion_tokens} spent" if completion.completion_tokens else ""
    if completion.reasoning_tokens:
        spent += f", {completion.reasoning_tokens} of them reasoning"
    return (
        f"cut off: the model's {budget} ran out before its verdict{f' ({spent})' if spent else ''}; give it more "
        "room (max_completion_tokens / max_tokens) or less reasoning (reasoning_effort, thinking budget_tokens)"
    )


def cut_off_at(request: ChatRequest, completion: Completion) -> int | None:
    """The request's token limit when the completion used all of it (the answer was cut off there), else None."""
    limit = request.params.get("max_tokens")
    used = completion.completion_tokens
    return int(limit) if isinstance(limit, int) and used is not None and used >= limit else None


def prefill_of(messages: tuple[dict[str, str], ...]) -> str:
    """The text a request asks the model to continue: its last message when that is the assistant's."""
    if messages and messages[-1].get("role") == "assistant":
        return str(messages[-1].get("content") or "")
    return ""
