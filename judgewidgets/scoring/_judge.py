"""LLMJudge: one model scoring responses with one template, through the shared call path."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .._batching import Batching, BatchRetry, batchable
from .._constants import DEFAULT_REASKS, GROUNDED_PREFILLED_MAX_TOKENS
from .._errors import ConfigurationError
from .._probabilities import expected_value
from .._progress import Progress, counted
from .._records import Item, Vote, judged_items
from .._run import run_scope
from .._runner import run_sync
from .._saved import provenance, reported
from ..conversations import Target, check_target, fit_to_context
from ..engine import CallCache, Caller, CallSession, CallSettings, RetryPolicy, Transport, TransportChoice, Usage
from ..engine._request import masked, request_text
from ..templates import Anchor, Template, get_template
from ._aggregate import check_judge_weight
from ._commit import (
    PLACEHOLDER_REFERENCE,
    CommitFirst,
    CommitsFirst,
    Committed,
    check_questions,
)
from ._cost import CostEstimate, JudgeCostEstimate, estimate_calls, typical_completion_tokens, with_answers
from ._probability import ProbabilityReading, read_probabilities
from ._results import JudgeResult

if TYPE_CHECKING:
    import pandas as pd

    from ..alignment import AlignmentReport, ScoreCalibration


@runtime_checkable
class Judge(Protocol):
    """The judge role: what a panel asks of every judge, LLMJudge included.

    A name and a weight; `check()` raises ConfigurationError before any call when the judge cannot run;
    `estimate_items` says what judging `items` would cost (no call is made); `ajudge` votes on every item, in
    order, recording failures on their votes (never raising), labelling votes `name` when given. A panel also
    takes a minimal judge with only a name, a weight and `ajudge(items, session, progress)`: see `as_judge`.
    """

    @property
    def name(self) -> str | None: ...

    @property
    def weight(self) -> float: ...

    def check(self) -> None: ...

    def estimate_items(self, items: Sequence[Item], name: str | None = None) -> JudgeCostEstimate: ...

    async def ajudge(
        self, items: Sequence[Item], session: CallSession, progress: Progress, name: str | None = None
    ) -> list[Vote]: ...


class LLMJudge(CommitsFirst):
    """Scores responses with a language model under a template, each score normalised to [0, 1].

    `model` is any litellm model string or ``"local"`` (the embedded judge). Extra keyword arguments go to
    `litellm.acompletion` unchanged (`api_base`, `api_key`, `mock_response`, `max_tokens`, ...).
    Calls run `max_concurrency` at a time per model (default 32; 1 for the embedded judge, which has a single
    slot, so queueing happens here and never eats into a call's `timeout`, 120 s; 600 s for the local judge).
    `anchors` are human-scored examples put in the prompt to calibrate the judge's scale to yours.
    `calibration` maps the judge's score onto your labels' scale (P(pass) for pass/fail labels); `align()` fits
    it, and the vote keeps the judge's own score in `uncalibrated_score`.
    `probability_weighted` asks for the answer token's log-probabilities and reports the expected score under
    the judge's probabilities over its answers (G-Eval); the vote keeps the sampled answer in `raw`, the
    probabilities and a `confidence`, and says `score_source="answer"` with a `fallback` reason when none came
    back. The default (None) turns it on wherever the model can return logprobs: the embedded judge, any
    OpenAI-compatible endpoint, and providers litellm lists as supporting `logprobs`.
    `prefill` ends the request with the start of the JSON answer as the assistant's own words, so the next
    token is the answer (one generated token instead of a dozen); the default (None) does so for the embedded
    judge when no explanation is asked for. Only models that continue an assistant message support it.
    `transport` picks the call path: "auto" (default) sends OpenAI-compatible requests (`openai/...`,
    `hosted_vllm/...`, any `api_base` of theirs) straight over pooled HTTP and everything else through litellm;
    "litellm" forces litellm, "fast" forces the direct HTTP path; a Transport object is used as given.
    `target` says what of a conversation is judged ("last_turn", "whole", "each_turn"; a call's own `target`
    wins); the default (None) is the template's (`Template.target`), else the last turn.
    `commit_first` (see `scoring._commit`): before grading an item without a reference, a model answers its
    question (its short answer, temperature 0, once per distinct question per run, cached) and the judge grades
    the response against that answer as its reference; a reference you give always wins. `solver` names who
    answers: None (the judge's own model), a model string, a `Generator` or a `Solver`; naming one turns
    commit-first on. The default (None) is `commit_first_default(model, template)`: "short" (only a question of
    one fact is answered first, and only a short answer graded against) for the embedded judge under a template
    that judges correctness (likert, true_false_uncertain, true_false, continuous), off otherwise.
    Each vote records its `reference_source` and `made_reference`; a failed answer leaves the vote missing with
    the error.
    """

    def __init__(
        self,
        model: str = "local",
        template: str | Template = "likert",
        name: str | None = None,
        explanations: bool = False,
        temperature: float = 0.0,
        weight: float = 1.0,
        *,
        probability_weighted: bool | None = None,
        prefill: bool | None = None,
        structured_output: bool | None = None,
        reasks: int = DEFAULT_REASKS,
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
        max_concurrency: int | None = None,
        cache: bool | str | CallCache | None = True,
        transport: Transport | TransportChoice | None = None,
        anchors: Sequence[Anchor] = (),
        calibration: ScoreCalibration | None = None,
        target: Target | None = None,
        commit_first: CommitFirst = None,
        solver: Any = None,
        **litellm_kwargs: Any,
    ) -> None:
        self.weight = check_judge_weight(weight)
        self.caller = Caller(
            model,
            temperature=temperature,
            structured_output=structured_output,
            probability_weighted=probability_weighted,
            prefill=prefill,
            reasks=reasks,
            timeout=timeout,
            retry=retry,
            max_concurrency=max_concurrency,
            cache=cache,
            transport=transport,
            **litellm_kwargs,
        )
        self.template = get_template(template)
        self.name = name
        self.explanations = bool(explanations)
        self.anchors = tuple(anchors)
        for anchor in self.anchors:
            self.template.check_anchor(anchor)
        self.calibration = calibration
        self.target: Target | None = None if target is None else check_target(target, error=ConfigurationError)
        self.alignment_report: AlignmentReport | None = None
        self.commit_first = commit_first
        self.solver = solver
        _ = self.committer  # a bad commit_first / solver is one ConfigurationError now

    @classmethod
    def from_caller(
        cls,
        caller: Caller,
        template: str | Template = "likert",
        name: str | None = None,
        explanations: bool = False,
        weight: float = 1.0,
        *,
        anchors: Sequence[Anchor] = (),
        commit_first: CommitFirst = None,
        solver: Any = None,
    ) -> LLMJudge:
        """A judge that scores under `template` through an existing caller (its settings and cache shared)."""
        judge = cls(template=template, name=name, explanations=explanations, weight=weight, anchors=anchors)
        judge.caller = caller
        judge.commit_first, judge.solver = commit_first, solver
        _ = judge.committer
        return judge

    # --- configuration ---------------------------------------------------------------------------------------

    @property
    def model(self) -> str:
        return self.caller.model

    @property
    def default_template(self) -> Template:
        """Its template: one that judges correctness has the embedded judge commit first by default."""
        return self.template

    @property
    def temperature(self) -> float:
        return self.caller.temperature

    @property
    def settings(self) -> CallSettings:
        """The call settings (timeout, concurrency, retries, cache, transport), held by the caller."""
        return self.caller.settings

    @property
    def litellm_kwargs(self) -> dict[str, Any]:
        return self.caller.litellm_kwargs

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in masked(self.litellm_kwargs).items())
        return (
            f"LLMJudge(model={self.model!r}, template={self.template.name!r}, name={self.name!r}, "
            f"weight={self.weight}{extra})"
        )

    def with_options(self, **changes: Any) -> LLMJudge:
        """A copy with some settings changed; the original is untouched."""
        current = {
            "template": self.template,
            "name": self.name,
            "explanations": self.explanations,
            "weight": self.weight,
            "anchors": self.anchors,
            "calibration": self.calibration,
            "target": self.target,
            "commit_first": self.commit_first,
            "solver": self.solver,
            **self.caller.options(),
        }
        current.update(changes)
        return LLMJudge(**current)

    @property
    def display_name(self) -> str:
        return self.name or self.model

    @property
    def default_target(self) -> Target:
        """What of a conversation this judge judges when a call does not say: its `target`, else its template's,
        else the last turn."""
        return self.target or self.template.target or "last_turn"

    def check(self) -> None:
        """Raise ConfigurationError now if the model (or the solver's, when it commits first) cannot be routed (no
        call is made)."""
        self.caller.check()
        if self.committer is not None:
            self.committer.check()

    def check_items(self, items: Sequence[Item]) -> None:
        """InputError now for an item this judge cannot grade as configured (committing first, a whole
        conversation without a reference: it answers no one question)."""
        if self.committer is not None and not self.committer.by_default:
            check_questions(items, f"judge {self.display_name!r}")

    def estimate_cost(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        *,
        batch: bool = False,
        **inputs: Any,
    ) -> CostEstimate:
        """Tokens and dollars this judge would spend on the batch (no call is made); conversations are counted as
        the judge would read them; `batch=True`: at the batch APIs' price. `inputs`: as `score`'s (conversations,
        data and its columns, target)."""
        items = judged_items(prompts, responses, references, default_target=self.default_target, **inputs)
        estimate = CostEstimate(judges=[self.estimate_items(items)])
        return estimate.at_batch_price() if batch else estimate

    def preview(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        **inputs: Any,
    ) -> str:
        """The request this judge would send for the first item of the batch (no call is made): each message as
        `[role]` and its text, a conversation fenced and shortened as it would be, after a line saying which
        turn is judged in both numberings a reader meets (the tables' `turn`, and the request's message numbers).
        `inputs`: as `score`'s."""
        items = judged_items(prompts, responses, references, default_target=self.default_target, **inputs)
        params = self.request_params(prefilled=self.uses_prefill())
        _, messages = self.request(items[0], self.item_params(items[0], params))
        view = items[0].conversation
        return (f"--- judged: {view.heading}\n" if view is not None else "") + request_text(messages)

    def estimate_items(self, items: Sequence[Item], name: str | None = None) -> JudgeCostEstimate:
        """Tokens and dollars of judging `items`: the prompt tokens of the very requests a run sends (a
        conversation as the judge reads it, shortened to fit), and a typical completion length. A judge that
        commits first also counts answering each distinct question without a reference (graded against an
        answer of typical length)."""
        params = self.request_params(prefilled=self.uses_prefill())
        committer = self.committer
        questions, graded = [], []
        for item in items:
            question = committer.answered(item) if committer is not None else None
            if question is not None:
                questions.append(question)
                item = replace(item, reference=PLACEHOLDER_REFERENCE)
            graded.append(item)
        requests = [self.request(item, self.item_params(item, params))[1] for item in graded]
        label = name or self.display_name
        judging = estimate_calls(self.caller, label, requests, typical_completion_tokens(self.explanations))
        if committer is None or not questions:
            return judging
        return with_answers(judging, committer.estimate(questions, label))

    def uses_probabilities(self) -> bool:
        """Whether calls ask for logprobs: `probability_weighted`, else wherever the model can return them."""
        return self.caller.uses_probabilities()

    def uses_prefill(self) -> bool:
        """Whether the request ends with the start of the answer: `prefill`, else for the embedded judge
        when no explanation comes first."""
        return self.caller.uses_prefill(self.explanations)

    def uses_structured_output(self) -> bool:
        """Whether calls ask for schema-constrained JSON (see `Caller.uses_structured_output`)."""
        return self.caller.uses_structured_output()

    def request_params(
        self,
        schema: dict[str, Any] | None = None,
        schema_name: str = "verdict",
        *,
        prefilled: bool = False,
        probabilities: bool | None = None,
    ) -> dict[str, Any]:
        """Everything sent besides model and messages: the caller's parameters, asking for the template's answer
        schema unless `schema` replaces it (see `Caller.request_params`)."""
        if schema is None:
            schema = self.template.json_schema(self.explanations)
        return self.caller.request_params(schema, schema_name, prefilled=prefilled, probabilities=probabilities)

    # --- scoring ---------------------------------------------------------------------------------------------

    def score(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        *,
        conversations: Any = None,
        data: pd.DataFrame | None = None,
        conversation_col: str | None = None,
        prompt_col: str = "prompt",
        response_col: str = "response",
        reference_col: str | None = None,
        target: Target | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> JudgeResult:
        """Score every response, or every conversation (`conversations=`, or `data=` with `conversation_col=`:
        message lists in the OpenAI chat format or their JSON) under `target` ("last_turn", "whole",
        "each_turn"; default: `default_target`); works in scripts and inside a running event loop (Jupyter).
        `max_cost_usd` is the run's budget: no call starts that could take the spend past it, and the items
        left are recorded as not run (error `budget: ...`), never raised. `batch=True` sends the calls through the
        provider's batch API at half the price, resumable after a restart (`jw.resume_batch`); `batch_retry` says
        how requests a batch left unanswered are resent ("live", the default, or "batch")."""
        return run_sync(
            self.ascore(
                prompts,
                responses,
                references,
                conversations=conversations,
                data=data,
                conversation_col=conversation_col,
                prompt_col=prompt_col,
                response_col=response_col,
                reference_col=reference_col,
                target=target,
                progress=progress,
                max_cost_usd=max_cost_usd,
                batch=batch,
                batch_retry=batch_retry,
            )
        )

    @batchable
    async def ascore(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        *,
        conversations: Any = None,
        data: pd.DataFrame | None = None,
        conversation_col: str | None = None,
        prompt_col: str = "prompt",
        response_col: str = "response",
        reference_col: str | None = None,
        target: Target | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> JudgeResult:
        """Async twin of `score`."""
        items = judged_items(
            prompts,
            responses,
            references,
            conversations=conversations,
            data=data,
            conversation_col=conversation_col,
            prompt_col=prompt_col,
            response_col=response_col,
            reference_col=reference_col,
            target=target,
            default_target=self.default_target,
        )
        self.check()
        self.check_items(items)
        async with run_scope(
            progress,
            len(items),
            f"judging ({self.display_name})",
            max_cost_usd=max_cost_usd,
            makers=[self],
            batch=batch,
            batch_retry=batch_retry,
        ) as run:
            votes = await self.ajudge(items, run.session, run.progress)
        return reported(JudgeResult(items=items, vote_list=votes, judge=self.display_name, provenance=provenance(self)))

    async def ajudge(
        self, items: Sequence[Item], session: CallSession, progress: Progress, name: str | None = None
    ) -> list[Vote]:
        """Votes on every item, in order; failures are recorded on their vote, never raised."""
        params = self.request_params(prefilled=self.uses_prefill())
        label = name or self.display_name

        votes = (counted(progress, self.ajudge_one(i, item, session, params, label)) for i, item in enumerate(items))
        return list(await asyncio.gather(*votes))

    def messages(self, item: Item, params: dict[str, Any]) -> tuple[dict[str, str], ...]:
        """The messages of the request that judges `item` with `params` (prefilled when they ask for no schema
        and the judge prefills)."""
        # Only a conversation's item passes it on, so a Template subclass of yours without the argument still works.
        conversation = {"conversation": item.conversation} if item.conversation is not None else {}
        return self.template.messages(
            item.prompt,
            item.response,
            item.reference,
            self.explanations,
            context=item.context,
            anchors=self.anchors,
            prefill="response_format" not in params and self.uses_prefill(),
            **conversation,
        )

    def request(self, item: Item, params: dict[str, Any]) -> tuple[Item, tuple[dict[str, str], ...]]:
        """`item` as the judge reads it and the messages that judge it: a conversation too long for the model's
        context is shortened first (`conversations.fit_to_context`; the item's view then says what was left out)."""
        view = item.conversation
        if view is None:
            return item, self.messages(item, params)
        shown, messages = fit_to_context(
            [view],
            lambda views: self.messages(replace(item, conversation=views[0]), params),
            self.caller.prompt_budget(),
            self.caller.count_tokens,
        )
        return replace(item, conversation=shown[0]), messages

    def item_params(self, item: Item, params: dict[str, Any]) -> dict[str, Any]:
        """`params` as sent for `item`: a reference-grounded judgment (see `Template.grounds`) asks for the answer
        with its `matches_reference` (the template's schema with that field, or the few more tokens a prefilled answer
        needs to get past it to the verdict); any other item's are unchanged."""
        if not self.template.grounds(item.reference):
            return params
        params = dict(params)
        answer_format = params.get("response_format")
        if answer_format is not None:
            schema = answer_format.get("json_schema", {}) if isinstance(answer_format, dict) else {}
            if schema.get("schema") == self.template.json_schema(self.explanations):
                grounded = {**schema, "schema": self.template.json_schema(self.explanations, grounded=True)}
                params["response_format"] = {**answer_format, "json_schema": grounded}
        elif self.uses_prefill() and "max_tokens" not in self.litellm_kwargs:
            params["max_tokens"] = max(int(params.get("max_tokens") or 0), GROUNDED_PREFILLED_MAX_TOKENS)
        return params

    async def ajudge_one(
        self, index: int, item: Item, session: CallSession, params: dict[str, Any], label: str, sample: int = 0
    ) -> Vote:
        """This judge's vote on one item; `sample` distinguishes repeated draws of the same item in the cache.

        A reference-grounded judgment's score is the verdict the judge gives after its `matches_reference`, read as any
        other (probability-weighted where it can be): its probabilities follow what the judge said about the
        reference. A judge that commits first grades an item without a reference against the answer made first
        (the vote that made it carries its cost)."""
        committed: dict[str, Any] = {}
        spent: list[Usage] = []
        if self.committer is not None:
            item, made = await self.commit(item, session)
            committed, spent = made.recorded, [made.usage]
            if made.failed:
                return Vote(item=index, judge=label, score=math.nan, **committed, **made.usage.usage_fields())
        params = self.item_params(item, params)
        item, messages = self.request(item, params)
        answer = await self.caller.ask(session, messages, params, self.template.read, sample)
        score = math.nan
        explanation = None
        reading = ProbabilityReading()
        if answer.value is not None:
            value, explanation = answer.value
            score = self.template.normalise(value)
            if params.get("logprobs"):
                reading = read_probabilities(self.template, answer)
                if reading.probabilities is not None:
                    score = expected_value(reading.probabilities, self.template.option_values())
        uncalibrated = None
        if self.calibration is not None and not math.isnan(score):
            uncalibrated, score = score, self.calibration(score)
        return Vote(
            item=index,
            judge=label,
            score=score,
            uncalibrated_score=uncalibrated,
            raw=answer.content,
            explanation=(explanation or thinking_of(answer)) if self.explanations else None,
            error=answer.error,
            score_source=None if answer.value is None else reading.source,
            fallback=reading.fallback or (REASONING_FALLBACK if answer.value is not None and self.reasons() else None),
            probabilities=reading.probabilities,
            confidence=reading.confidence,
            shortened=item.conversation.shortening if item.conversation is not None else None,
            **committed,
            **Usage.total([answer.usage(), *spent]).usage_fields(),
        )

    async def commit(self, item: Item, session: CallSession) -> tuple[Item, Committed]:
        """`item` as this committing judge grades it (the answer made first as its reference when it has none),
        and what committing gave it (see `Committed`)."""
        committer = self.committer
        assert committer is not None
        committed = await committer.commit(item.reference, committer.question(item), session)
        return replace(item, reference=committed.reference), committed

    def reasons(self) -> bool:
        """Whether this judge's model reasons before it answers (its votes then come from the written answer, with
        a note in `fallback`, unless `probability_weighted=False` says not to look for probabilities at all)."""
        return self.caller.probability_weighted is not False and self.caller.reasons()

    # --- alignment -------------------------------------------------------------------------------------------

    def align(self, labelled: pd.DataFrame, label: str = "label", **options: Any) -> LLMJudge:
        """A copy of this judge aligned with a person's labels (pass/fail or scores) in `labelled[label]`,
        carrying its `alignment_report`: agreement before and after, measured on labels the alignment never used.
        Options: `jw.alignment.AlignOptions`, plus `templates`, `reflector` and the text columns (`prompt_col`,
        `response_col`, `reference_col`), or `conversation_col` (one conversation per row) and `target`
        ("last_turn" or "whole"), which the aligned judge keeps."""
        return run_sync(self.aalign(labelled, label, **options))

    async def aalign(self, labelled: pd.DataFrame, label: str = "label", **options: Any) -> LLMJudge:
        """Async twin of `align`."""
        from ._alignment import aalign_judge

        return await aalign_judge(self, labelled, label, **options)


REASONING_FALLBACK = "a reasoning model returns no logprobs: the written answer is the score"


def thinking_of(answer: Any) -> str | None:
    """A reasoning model's thinking text (kept apart from its verdict): the explanation of a vote asked to explain
    whose answer gave none."""
    completion = answer.completion
    return completion.reasoning if completion is not None else None
