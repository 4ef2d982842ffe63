"""LikelihoodJudge: a reply judged by how likely the judge model itself finds it, read from its probabilities
instead of asked for.

A small judge asked whether a reply keeps what the user said earlier answers at chance (the twin conversations:
45-52 % in every asked setting), yet the same model, made to write each reply, gives the good one more probability
when the history supports it. This judge reads that: each reply is forced token by token after its conversation
(`engine._forced`: a llama.cpp grammar of the reply's own tokens, the model's logprobs before the grammar), and
again without the conversation's history, and compares the two.

`measure` says what is compared (natural logs, the end of the turn counted with the reply's tokens):

- ``"pmi"`` (the default): log P(reply | conversation) − log P(reply | without its history), the pointwise mutual
  information of the reply and the history: how much the earlier turns make the reply more (or less) likely. A
  reply that drops a constraint, contradicts an earlier turn or uses what the user corrected loses support; the
  reply's own prior (its length, its wording) cancels out. It is summed token by token, each token's share held
  within ±`TOKEN_CLIP` nats (a factor of about 20 either way), so that one token the shorter context did not see
  coming (a name, a number, the opening word) cannot outweigh the rest of the reply: on the 45 twin conversations
  the clipped sum ordered 36 pairs right, the plain sum 33 (36 for any clip from 2 to 4 nats). "Without the
  history" keeps the system message and the last user turn; a reply to a conversation's first user turn has no
  history, so there the last user turn is left out too (the mutual information of the reply and everything it
  answers). Score: σ(pmi), 0.5 when the history says nothing either way (unclipped, it would be
  P(r | conversation) / (P(r | conversation) + P(r | without))).
- ``"loglik_per_token"``: the mean log-probability of the reply's tokens after the conversation; score: its
  exponential, the geometric mean of the token probabilities. One forced call a reply, half the cost of "pmi".
- ``"loglik"``: the reply's total log-probability after the conversation; score: exp of it, the probability of the
  whole reply (tiny for a long one: meaningful to compare replies of similar length, like twins).

Cost: every forced token is one generated token (about 40-80 ms on two cores), so a reply of n tokens costs about
n × 60 ms per context, twice that for "pmi", on top of reading the context (a prompt cache reuses a shared one).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .._errors import ConfigurationError, InputError, JudgeCallError
from .._progress import Progress, counted
from .._records import Item, Vote, judged_items
from .._run import run_scope
from .._runner import run_sync
from .._saved import provenance, reported
from ..conversations import Target, check_target, fit_to_context
from ..conversations._render import JudgedConversation, chat_turns
from ..engine import CallCache, Caller, CallSession, CallSettings, RetryPolicy, Transport, TransportChoice, Usage
from ..engine._caller import CONTEXT_MARGIN
from ..engine._forced import ForcedReply, LlamaCppTokenizer, Tokenizer, check_forcing, forced_params, read_forced
from ..engine._litellm import context_window, is_local_model
from ..engine._request import masked, request_text
from ._aggregate import check_judge_weight
from ._cost import CostEstimate, JudgeCostEstimate, estimate_calls
from ._results import JudgeResult

if TYPE_CHECKING:
    import pandas as pd

Measure = Literal["pmi", "loglik_per_token", "loglik"]
MEASURES: tuple[Measure, ...] = ("pmi", "loglik_per_token", "loglik")
Messages = tuple[dict[str, str], ...]
_END_MARGIN = 8  # tokens kept free beyond the reply and its end of turn, for the chat template's own
TOKEN_CLIP = 3.0  # nats: the most one token's change of log-probability adds to "pmi", either way


@dataclass(frozen=True)
class Reading:
    """One reply read under its contexts: with its conversation and, for "pmi", without the history."""

    with_history: ForcedReply
    without_history: ForcedReply | None = None

    def value(self, measure: Measure) -> float:
        """The measure in natural-log units (a log-odds for "pmi", a log-probability for the others)."""
        if measure == "pmi":
            assert self.without_history is not None
            # the same tokens forced in both contexts (an end of turn one context did not report is left out)
            shares = zip(self.with_history.logprobs, self.without_history.logprobs, strict=False)
            return math.fsum(max(-TOKEN_CLIP, min(TOKEN_CLIP, a - b)) for a, b in shares)
        return self.with_history.per_token if measure == "loglik_per_token" else self.with_history.total

    def score(self, measure: Measure) -> float:
        """The measure as a score in [0, 1]: σ(pmi), or the (per-token) probability."""
        value = self.value(measure)
        return _sigmoid(value) if measure == "pmi" else math.exp(value)

    def raw(self, measure: Measure) -> str:
        """What was read, as JSON text for a vote's `raw`."""
        out: dict[str, Any] = {
            "measure": measure,
            "value": round(self.value(measure), 4),
            "loglik": round(self.with_history.total, 4),
            "tokens": self.with_history.tokens,
        }
        if self.without_history is not None:
            out["loglik_without_history"] = round(self.without_history.total, 4)
        return json.dumps(out)


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def pair_probability(a: Reading, b: Reading, measure: Measure) -> float:
    """P(a better): the logistic of the difference of the two readings, in log-odds of whole replies (a per-token
    difference times the replies' mean length), so it is the judge model's own choice between the two replies."""
    difference = a.value(measure) - b.value(measure)
    if measure == "loglik_per_token":
        difference *= (a.with_history.tokens + b.with_history.tokens) / 2
    return _sigmoid(difference)


@dataclass(frozen=True)
class Contexts:
    """What reading one item forces: the reply's text, the messages before it, and those without the history
    (None when the measure needs none), with what was left out of a long conversation to fit the context."""

    reply: str
    with_history: Messages
    without_history: Messages | None
    shortened: str | None = None

    @property
    def requests(self) -> list[Messages]:
        """The messages of each forced request: with the history, then without it (for "pmi")."""
        return [m for m in (self.with_history, self.without_history) if m is not None]


def _without_history(messages: Messages) -> Messages:
    """The system messages and the last user turn (the run of user messages before the reply); for a reply with no
    earlier turns, the system messages and an empty user turn."""
    system = tuple(m for m in messages if m["role"] == "system")
    rest = [m for m in messages if m["role"] != "system"]
    start = len(rest)
    while start > 0 and rest[start - 1]["role"] == "user":
        start -= 1
    last = tuple(rest[start:])
    if len(last) == len(rest):  # nothing before the last user turn: the question is all the context there is
        return (*system, {"role": "user", "content": ""})
    return (*system, *last)


class LikelihoodJudge:
    """Scores replies by reading the judge model's own probability of writing them (see the module's docstring):
    the embedded judge or a llama.cpp server only, refused before any call for another model.

    `measure` is "pmi" (default: the reply's support from the conversation's history), "loglik_per_token" or
    "loglik". Votes carry the score in [0, 1], `raw` the numbers read as JSON (measure, value, loglik, tokens,
    loglik_without_history), `score_source="probabilities"`. Conversations are judged one reply at a time
    (`target` "last_turn", the default, or "each_turn"); a plain question and response is read as a one-turn
    conversation. `tokenizer` gives the model's token ids of a text (default: llama.cpp's own, from the model).
    Other arguments are LLMJudge's (the embedded judge gets its own call defaults; `rpm` / `tpm` pace a server).
    """

    def __init__(
        self,
        model: str = "local",
        name: str | None = None,
        weight: float = 1.0,
        *,
        measure: Measure = "pmi",
        target: Target | None = None,
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
        max_concurrency: int | None = None,
        cache: bool | str | CallCache | None = True,
        transport: Transport | TransportChoice | None = None,
        context_window: int | None = None,
        rpm: float | None = None,
        tpm: float | None = None,
        tokenizer: Tokenizer | None = None,
        **litellm_kwargs: Any,
    ) -> None:
        if measure not in MEASURES:
            raise ConfigurationError(f"unknown likelihood measure {measure!r}; use one of {', '.join(MEASURES)}")
        self.caller = Caller(
            model,
            temperature=0.0,
            probability_weighted=True,
            timeout=timeout,
            retry=retry,
            max_concurrency=max_concurrency,
            cache=cache,
            transport=transport,
            context_window=context_window,
            rpm=rpm,
            tpm=tpm,
            **litellm_kwargs,
        )
        check_forcing(model, litellm_kwargs, "LikelihoodJudge")
        self.measure: Measure = measure
        self.name = name
        self.weight = check_judge_weight(weight)
        self.target: Target | None = None if target is None else _reply_target(target, ConfigurationError)
        self.tokenizer: Tokenizer = tokenizer or LlamaCppTokenizer(model, litellm_kwargs)

    @classmethod
    def from_caller(
        cls, caller: Caller, measure: Measure = "pmi", name: str | None = None, tokenizer: Tokenizer | None = None
    ) -> LikelihoodJudge:
        """A reader through an existing caller (its settings and cache shared): a pairwise judge's
        `method="likelihood"`, refused with that name for a model that cannot be read this way."""
        check_forcing(caller.model, caller.litellm_kwargs, "method='likelihood'")
        judge = cls(caller.model, name, measure=measure, tokenizer=tokenizer, **caller.litellm_kwargs)
        judge.caller = caller
        return judge

    # --- configuration ---------------------------------------------------------------------------------------

    @property
    def model(self) -> str:
        return self.caller.model

    @property
    def settings(self) -> CallSettings:
        return self.caller.settings

    @property
    def display_name(self) -> str:
        return self.name or f"{self.model} (likelihood)"

    @property
    def default_target(self) -> Target:
        return self.target or "last_turn"

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in masked(self.caller.litellm_kwargs).items())
        return f"LikelihoodJudge(model={self.model!r}, measure={self.measure!r}, name={self.name!r}{extra})"

    def with_options(self, **changes: Any) -> LikelihoodJudge:
        """A copy with some settings changed; the original is untouched."""
        options = self.caller.options()
        for key in ("temperature", "structured_output", "probability_weighted", "prefill", "reasks"):
            options.pop(key)
        current = {
            "name": self.name,
            "weight": self.weight,
            "measure": self.measure,
            "target": self.target,
            "tokenizer": self.tokenizer,
            **options,
        }
        current.update(changes)
        return LikelihoodJudge(**current)

    def check(self) -> None:
        """Raise ConfigurationError now if the model cannot be routed or cannot be read this way (no call)."""
        self.caller.check()
        check_forcing(self.model, self.caller.litellm_kwargs, "LikelihoodJudge")

    # --- what is forced --------------------------------------------------------------------------------------

    def contexts(self, item: Item, reply_tokens: int = 0) -> Contexts:
        """The reply of `item` and the messages it is forced after (a conversation too long for the context,
        less `reply_tokens` for the reply itself, shortened first by `conversations.fit_to_context`)."""
        view = item.conversation
        if view is None:
            messages: Messages = (
                *(({"role": "system", "content": item.context},) if item.context else ()),
                {"role": "user", "content": item.prompt},
            )
            shortened = None
        else:
            check_reply_view(view)
            shown, messages = fit_to_context(
                [view], lambda views: history_messages(views[0]), self._budget(reply_tokens), self.caller.count_tokens
            )
            shortened = shown[0].shortening
        without = _without_history(messages) if self.measure == "pmi" else None
        return Contexts(reply_of(item), messages, without, shortened)

    def _budget(self, reply_tokens: int) -> int | None:
        """The prompt tokens a forced request may hold: the model's context less the reply, its end and a margin."""
        window = self.caller.context_window or context_window(self.model)
        if window is None:
            return None
        return max(0, int(window * (1 - CONTEXT_MARGIN)) - reply_tokens - _END_MARGIN)

    # --- judging ---------------------------------------------------------------------------------------------

    async def read(self, item: Item, session: CallSession) -> tuple[Reading | None, Usage, str | None, str | None]:
        """(reading, what it cost, error, shortening) of one item; a failure is returned, never raised."""
        spent: list[Usage] = []
        try:
            tokens = await self.tokenizer.tokenize(reply_of(item))
            if not tokens:
                raise InputError("the reply is empty: there is nothing to read its probability of")
            contexts = self.contexts(item, len(tokens))
            params = {**self.caller.litellm_kwargs, **forced_params(tokens, is_local_model(self.model))}
            forced: list[ForcedReply | None] = []
            for messages in (contexts.with_history, contexts.without_history):
                if messages is None:
                    forced.append(None)
                    continue
                completion = await self.caller.complete(session, messages, params)
                spent.append(Usage.of_call(completion))
                forced.append(read_forced(completion, contexts.reply, tokens))
        except JudgeCallError as exc:
            return None, _total(spent, exc.attempts), exc.recorded, None
        except InputError as exc:
            return None, _total(spent, 0), f"input: {exc}", None
        except ValueError as exc:
            return None, _total(spent, 0), f"parse: {exc}", None
        assert forced[0] is not None
        return Reading(forced[0], forced[1]), _total(spent, 0), None, contexts.shortened

    async def ajudge_one(self, index: int, item: Item, session: CallSession, label: str) -> Vote:
        reading, usage, error, shortened = await self.read(item, session)
        return Vote(
            item=index,
            judge=label,
            score=math.nan if reading is None else reading.score(self.measure),
            raw="" if reading is None else reading.raw(self.measure),
            error=error,
            score_source=None if reading is None else "probabilities",
            shortened=shortened,
            **usage.usage_fields(),
        )

    async def ajudge(
        self, items: Sequence[Item], session: CallSession, progress: Progress, name: str | None = None
    ) -> list[Vote]:
        """Votes on every item, in order; failures are recorded on their vote, never raised."""
        label = name or self.display_name
        for item in items:
            if item.conversation is not None:
                check_reply_view(item.conversation)
        votes = (counted(progress, self.ajudge_one(i, item, session, label)) for i, item in enumerate(items))
        return list(await asyncio.gather(*votes))

    def score(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        *,
        conversations: Any = None,
        data: pd.DataFrame | None = None,
        conversation_col: str | None = None,
        prompt_col: str = "prompt",
        response_col: str = "response",
        target: Target | None = None,
        progress: bool | Progress = True,
    ) -> JudgeResult:
        """Score every response, or every conversation's reply (`conversations=`, or `data=` with
        `conversation_col=`), under `target` ("last_turn" or "each_turn"); works inside Jupyter too."""
        return run_sync(
            self.ascore(
                prompts,
                responses,
                conversations=conversations,
                data=data,
                conversation_col=conversation_col,
                prompt_col=prompt_col,
                response_col=response_col,
                target=target,
                progress=progress,
            )
        )

    async def ascore(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        *,
        conversations: Any = None,
        data: pd.DataFrame | None = None,
        conversation_col: str | None = None,
        prompt_col: str = "prompt",
        response_col: str = "response",
        target: Target | None = None,
        progress: bool | Progress = True,
    ) -> JudgeResult:
        """Async twin of `score`."""
        if target is not None:
            _reply_target(target, InputError)
        items = judged_items(
            prompts,
            responses,
            conversations=conversations,
            data=data,
            conversation_col=conversation_col,
            prompt_col=prompt_col,
            response_col=response_col,
            target=target,
            default_target=self.default_target,
        )
        self.check()
        async with run_scope(progress, len(items), f"reading likelihoods ({self.display_name})") as run:
            votes = await self.ajudge(items, run.session, run.progress)
        return reported(JudgeResult(items=items, vote_list=votes, judge=self.display_name, provenance=provenance(self)))

    # --- cost --------------------------------------------------------------------------------------------------

    def requests(self, item: Item) -> list[Messages]:
        """The messages of every forced request reading `item` sends (what an estimate counts)."""
        return self.contexts(item).requests

    def estimate_items(self, items: Sequence[Item], name: str | None = None) -> JudgeCostEstimate:
        """Tokens of reading `items` (no call is made): the prompt tokens of every forced request, and the reply's
        tokens as completion tokens (counted with litellm's tokenizer; the model's own may differ a little)."""
        read = [self.contexts(item) for item in items]
        requests = [messages for contexts in read for messages in contexts.requests]
        replies = [contexts.reply for contexts in read for _ in contexts.requests]
        completion = max(1, round(sum(len(r) for r in replies) / 4 / max(len(replies), 1)))  # ~4 characters a token
        return estimate_calls(self.caller, name or self.display_name, requests, completion)

    def estimate_cost(self, prompts: Any = None, responses: Any = None, **inputs: Any) -> CostEstimate:
        """What `score` on the same arguments would spend (no call is made)."""
        items = judged_items(prompts, responses, default_target=self.default_target, **inputs)
        return CostEstimate(judges=[self.estimate_items(items)])

    def preview(self, prompts: Any = None, responses: Any = None, **inputs: Any) -> str:
        """The requests reading the first item would send (no call is made): the forced reply after its
        conversation, then without the history (for "pmi")."""
        items = judged_items(prompts, responses, default_target=self.default_target, **inputs)
        contexts = self.contexts(items[0])
        parts = [f"--- forced reply\n{contexts.reply}"]
        shown = (("with the conversation", contexts.with_history), ("without its history", contexts.without_history))
        for title, messages in shown:
            if messages is not None:
                parts.append(f"--- {title}\n{request_text(messages)}")
        return "\n\n".join(parts)


def _reply_target(target: str, error: type[Exception]) -> Target:
    checked = check_target(target, error=error)
    if checked == "whole":
        raise error(
            "the likelihood method reads one reply against the conversation before it: use target='last_turn' or "
            "'each_turn', not 'whole'"
        )
    return checked


def check_reply_view(view: JudgedConversation) -> None:
    """InputError when a conversation is judged whole: the likelihood method reads one reply at a time."""
    if view.judged is None:
        _reply_target("whole", InputError)


def history_messages(view: JudgedConversation) -> Messages:
    """The chat turns before the judged reply, as the model reads them (turns left out to fit dropped)."""
    history = view.history
    kept = [m for i, m in enumerate(history) if view.omitted is None or not view.omitted[0] <= i < view.omitted[1]]
    return tuple(chat_turns(kept, before=()))


def reply_of(item: Item) -> str:
    """The reply an item's reading forces, as one assistant turn's text: a response as it is, a conversation's judged
    turn with its messages' text, tool calls and results written out."""
    view = item.conversation
    if view is None:
        return item.response
    return "\n".join(t["content"] for t in chat_turns(list(view.reply), before=list(view.history)))


def _total(spent: list[Usage], failed_attempts: int) -> Usage:
    """The usage of the calls made, with the attempts of a call that failed (then not a cache hit)."""
    total = Usage.total(spent)
    update = {"attempts": total.attempts + failed_attempts, "cached": total.cached and not failed_attempts}
    return total.model_copy(update=update)
