"""CriterionGrader: a panel of judges grades each criterion of a rubric, and the votes are aggregated."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, cast

import pandas as pd

from .._batching import Batching, BatchRetry, batchable
from .._constants import PREFILLED_EXPLAINED_MAX_TOKENS, PREFILLED_MAX_TOKENS
from .._errors import ConfigurationError, InputError
from .._probabilities import label_probabilities, prefix_free
from .._progress import Progress, counted
from .._records import Item, _as_text_list, build_conversation_items, check_encodable
from .._run import run_scope
from .._runner import run_sync
from .._saved import provenance, reported
from ..conversations import Target, check_target, fit_to_context
from ..conversations._render import JudgedConversation
from ..engine import Answer, CallSession, Usage
from ..engine._litellm import is_local_model
from ..scoring import CostEstimate, JudgeCostEstimate, LLMJudge
from ..scoring._commit import PLACEHOLDER_REFERENCE, CommitFirst, Committed, Committer, Question, question_of
from ..scoring._cost import estimate_calls, typical_completion_tokens, with_answers
from ._aggregate import aggregate_binary, aggregate_choice
from ._criterion import (
    BINARY_AGGREGATIONS,
    NOMINAL_AGGREGATIONS,
    ORDINAL_AGGREGATIONS,
    Criterion,
    CriterionVerdict,
)
from ._prompts import (
    BINARY_PROMPTS,
    BinaryPrompt,
    binary_question,
    choice_model,
    criterion_messages,
    read_binary,
    read_choice,
    schema_of,
)
from ._records import CriterionResult, CriterionVote, RubricReport
from ._result import GradingResult, read_ground_truth
from ._rubric import Rubric
from ._scoring import CANNOT_ASSESS_MODES, CannotAssess, score
from ._shuffle import item_key, option_order


class CriterionGrader:
    """Grades submissions against a rubric with one or more judges (AutoRubric's semantics).

    Three independent aggregation knobs: `aggregation` for binary criteria (majority, weighted, unanimous,
    any), `ordinal_aggregation` (mean, median, weighted_mean, mode, min, max) and `nominal_aggregation` (mode,
    weighted_mode, unanimous); a criterion's own `aggregation` overrides them. Options are shuffled per
    (item, criterion, judge) from `seed` (drawn and recorded when not given). Judges that fail abstain.

    `binary_prompt` is how a binary criterion is put to a judge: "met_unmet" (AutoRubric's MET / UNMET /
    CANNOT_ASSESS answer) or "statement" (is the requirement, read as a statement about the submission, correct;
    for a flaw, is the submission free of it), mapped back onto MET / UNMET. The default (None) picks per judge:
    "statement" for the embedded judge, which answers MET for most submissions when asked AutoRubric's way
    (measured in benchmarks/rubric_criteria.py), "met_unmet" for the rest.

    `commit_first` and `solver` (as LLMJudge's; given here, they apply to every judge, else each judge's own hold):
    on the criteria about correctness (`Criterion.about_correctness`), a judge grades a submission without a
    reference against an answer to its query made first, once per query for all criteria; each vote records its
    `reference_source` and `made_reference`, and a failed answer leaves the vote abstaining with the error. The
    other criteria are graded as without it. A rubric without a correctness criterion, or a submission without a
    query (or the judged turn of a conversation), is an InputError before any call.
    """

    def __init__(
        self,
        judges: Sequence[str | LLMJudge] | str | LLMJudge = ("local",),
        aggregation: str = "majority",
        ordinal_aggregation: str = "mean",
        nominal_aggregation: str = "mode",
        shuffle_options: bool = True,
        seed: int | None = None,
        cannot_assess: CannotAssess = "skip",
        partial_credit: float = 0.5,
        auto_na_option: bool = True,
        binary_prompt: BinaryPrompt | None = None,
        *,
        commit_first: CommitFirst = None,
        solver: Any = None,
        **judge_kwargs: Any,
    ) -> None:
        if isinstance(judges, (str, LLMJudge)):
            judges = [judges]
        if not judges:
            raise ConfigurationError("a grader needs at least one judge")
        built = []
        for i, judge in enumerate(judges):
            if isinstance(judge, str):
                judge = LLMJudge(judge, **judge_kwargs)
            elif not isinstance(judge, LLMJudge):
                raise ConfigurationError(f"judge {i} is a {type(judge).__name__}; give a model string or an LLMJudge")
            if commit_first is not None or solver is not None:
                judge = judge.with_options(commit_first=commit_first, solver=solver)
            built.append(judge)
        self.judges = built
        self.judge_ids = [j.name or f"judge_{i + 1}" for i, j in enumerate(built)]
        if len(set(self.judge_ids)) != len(self.judge_ids):
            raise ConfigurationError(f"judge names must be unique, got {self.judge_ids}")
        for knob, value, allowed in (
            ("aggregation", aggregation, BINARY_AGGREGATIONS),
            ("ordinal_aggregation", ordinal_aggregation, ORDINAL_AGGREGATIONS),
            ("nominal_aggregation", nominal_aggregation, NOMINAL_AGGREGATIONS),
        ):
            if value not in allowed:
                raise ConfigurationError(f"{knob} {value!r} is not one of {', '.join(allowed)}")
        if cannot_assess not in CANNOT_ASSESS_MODES:
            raise ConfigurationError(f"cannot_assess {cannot_assess!r} is not one of {', '.join(CANNOT_ASSESS_MODES)}")
        if binary_prompt is not None and binary_prompt not in BINARY_PROMPTS:
            raise ConfigurationError(f"binary_prompt {binary_prompt!r} is not one of {', '.join(BINARY_PROMPTS)}")
        if not (isinstance(partial_credit, (int, float)) and 0 <= partial_credit <= 1):
            raise ConfigurationError(f"partial_credit must lie in [0, 1], got {partial_credit!r}")
        self.aggregation = aggregation
        self.ordinal_aggregation = ordinal_aggregation
        self.nominal_aggregation = nominal_aggregation
        self.shuffle_options = shuffle_options
        self.seed = int(seed) if seed is not None else secrets.randbelow(2**31)
        self.cannot_assess: CannotAssess = cannot_assess
        self.partial_credit = float(partial_credit)
        self.auto_na_option = auto_na_option
        self.binary_prompt = binary_prompt

    def __repr__(self) -> str:
        return (
            f"CriterionGrader(judges={self.judge_ids}, aggregation={self.aggregation!r}, "
            f"ordinal_aggregation={self.ordinal_aggregation!r}, nominal_aggregation={self.nominal_aggregation!r}, "
            f"seed={self.seed}"
            + (f", binary_prompt={self.binary_prompt!r})" if self.binary_prompt is not None else ")")
        )

    def check_questions(
        self,
        rubric: Rubric,
        queries: Sequence[str | None],
        references: Sequence[str | None] | None,
        views: Sequence[JudgedConversation | None] | None,
    ) -> None:
        """InputError before any call when a judge commits first but cannot: the rubric has no criterion about
        correctness, or a submission without a reference answers no question (no query, a whole conversation)."""
        if not any(_chosen_committer(judge) is not None for judge in self.judges):
            return
        if not any(c.about_correctness for c in rubric):
            raise InputError(
                "commit-first grades the criteria about correctness against an answer made first, and this rubric "
                "has none: mark one Criterion(..., correctness=True), or turn commit_first off"
            )
        for i, query in enumerate(queries):
            view = views[i] if views else None
            given = references[i] if references else None
            if given is None and _question(query, "", None, view) is None:
                raise InputError(
                    f"commit-first answers each submission's query first, and submission {i} has none (no query, "
                    "or a whole conversation): give queries (query_col) or references, or turn commit_first off"
                )

    def binary_prompt_for(self, judge: LLMJudge) -> BinaryPrompt:
        """How `judge` is asked binary criteria: `binary_prompt`, else "statement" for the embedded judge."""
        if self.binary_prompt is not None:
            return self.binary_prompt
        return "statement" if is_local_model(judge.model) else "met_unmet"

    def effective(self, rubric: Rubric) -> list[Criterion]:
        """The criteria as judged: multi-choice ones get the automatic NA option unless turned off."""
        return [c.with_na_option() if self.auto_na_option else c for c in rubric]

    # --- grading ------------------------------------------------------------------------------------------

    def grade(
        self,
        rubric: Rubric,
        submission: str | None = None,
        query: str | None = None,
        reference: str | None = None,
        *,
        context: str | None = None,
        conversation: Any = None,
        target: Target | None = None,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> RubricReport:
        """Grade one submission, or one `conversation` (messages in the OpenAI chat format, or their JSON): the
        whole of it, or its last turn in context with `target="last_turn"`; works in scripts and inside a running
        event loop.

        `context` (e.g. retrieved documents) is shown to the judges beside the question. `max_cost_usd`: the
        budget, as `grade_many`'s.
        """
        return run_sync(
            self.agrade(
                rubric,
                submission,
                query,
                reference,
                context=context,
                conversation=conversation,
                target=target,
                max_cost_usd=max_cost_usd,
                batch=batch,
                batch_retry=batch_retry,
            )
        )

    @batchable
    async def agrade(
        self,
        rubric: Rubric,
        submission: str | None = None,
        query: str | None = None,
        reference: str | None = None,
        *,
        context: str | None = None,
        conversation: Any = None,
        target: Target | None = None,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> RubricReport:
        """Async twin of `grade`."""
        _check_rubric(rubric)
        view = None
        if conversation is not None:
            if submission is not None or query is not None:
                raise InputError("give a conversation, or a submission (and query), not both")
            [item] = build_conversation_items([conversation], _rubric_target(target))
            submission, query, view = item.response, item.prompt, item.conversation
        elif target is not None:
            raise InputError("target= applies to a conversation; give conversation=")
        if not isinstance(submission, str):
            raise InputError(f"submission must be a string, got {type(submission).__name__}")
        texts = {"submission": submission, "query": query, "reference": reference, "context": context}
        for name, text in texts.items():
            if isinstance(text, str):
                check_encodable(name, None, text)
        for judge in self.judges:
            judge.check()
        self.check_questions(rubric, [query], [reference], [view])
        async with run_scope(
            max_cost_usd=max_cost_usd, batch=batch, batch_retry=batch_retry, makers=self.judges
        ) as run:
            report = await self._grade_item(
                rubric, submission, query, reference, run.session, run.progress, context, view
            )
        return reported(
            report.model_copy(update={"provenance": provenance({"grader": self, "rubric": rubric.criteria})})
        )

    def grade_many(
        self,
        rubric: Rubric,
        data: pd.DataFrame | Sequence[str] | None = None,
        *,
        submission_col: str = "response",
        query_col: str | None = "prompt",
        reference_col: str | None = None,
        ground_truth: str | dict[str, str] | None = None,
        conversations: Any = None,
        conversation_col: str | None = None,
        target: Target | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> GradingResult:
        """Grade every row of `data` (a DataFrame, or a list of submissions) concurrently; or every conversation
        (`conversations=`, or `data` with a `conversation_col` of message lists or their JSON), whole or on its
        last turn (`target`). `max_cost_usd` is the run's budget: no call starts that could take the spend past
        it; the criteria left are recorded as not run (error `budget: ...`), never raised."""
        return run_sync(
            self.agrade_many(
                rubric,
                data,
                submission_col=submission_col,
                query_col=query_col,
                reference_col=reference_col,
                ground_truth=ground_truth,
                conversations=conversations,
                conversation_col=conversation_col,
                target=target,
                progress=progress,
                max_cost_usd=max_cost_usd,
                batch=batch,
                batch_retry=batch_retry,
            )
        )

    @batchable
    async def agrade_many(
        self,
        rubric: Rubric,
        data: pd.DataFrame | Sequence[str] | None = None,
        *,
        submission_col: str = "response",
        query_col: str | None = "prompt",
        reference_col: str | None = None,
        ground_truth: str | dict[str, str] | None = None,
        conversations: Any = None,
        conversation_col: str | None = None,
        target: Target | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> GradingResult:
        """Async twin of `grade_many`."""
        _check_rubric(rubric)
        frame, views = _conversation_frame(data, conversations, conversation_col, submission_col, query_col, target)
        submissions, queries, references = _columns(frame, submission_col, query_col, reference_col)
        truth = read_ground_truth(frame, rubric, ground_truth) if ground_truth is not None else None
        for judge in self.judges:
            judge.check()
        self.check_questions(rubric, queries or [None] * len(submissions), references, views)
        calls = len(submissions) * len(self.judges) * len(rubric)
        async with run_scope(
            progress,
            calls,
            f"grading {len(rubric)} criteria",
            max_cost_usd=max_cost_usd,
            batch=batch,
            batch_retry=batch_retry,
            makers=self.judges,
        ) as run:
            reports = await asyncio.gather(
                *(
                    self._grade_item(
                        rubric,
                        submission,
                        queries[i] if queries else None,
                        references[i] if references else None,
                        run.session,
                        run.progress,
                        None,
                        views[i] if views else None,
                    )
                    for i, submission in enumerate(submissions)
                )
            )
        return reported(
            GradingResult(
                rubric=rubric,
                criteria=self.effective(rubric),
                reports=list(reports),
                queries=queries,
                submissions=submissions,
                ground_truth=truth,
                judge_ids=self.judge_ids,
                provenance=provenance(self),
            )
        )

    async def _grade_item(
        self,
        rubric: Rubric,
        submission: str,
        query: str | None,
        reference: str | None,
        session: CallSession,
        progress: Progress,
        context: str | None = None,
        conversation: JudgedConversation | None = None,
    ) -> RubricReport:
        criteria = self.effective(rubric)
        key = item_key(submission, query)

        async def vote(judge: LLMJudge, judge_id: str, index: int, criterion: Criterion) -> CriterionVote:
            return await counted(
                progress,
                self._vote(
                    judge, judge_id, index, criterion, submission, query, reference, key, session, context, conversation
                ),
            )

        tasks = [
            vote(judge, judge_id, index, criterion)
            for index, criterion in enumerate(criteria)
            for judge, judge_id in zip(self.judges, self.judge_ids)
        ]
        flat = await asyncio.gather(*tasks)
        per_criterion = [flat[i * len(self.judges) : (i + 1) * len(self.judges)] for i in range(len(criteria))]
        results = [self.aggregate(criterion, votes) for criterion, votes in zip(criteria, per_criterion)]
        worst = [_worst_value(c) for c in criteria]
        judge_scores = {
            judge_id: self._score([self.aggregate(c, [votes[j]]) for c, votes in zip(criteria, per_criterion)], worst)
            for j, judge_id in enumerate(self.judge_ids)
        }
        return RubricReport(
            score=self._score(results, worst),
            raw_score=score(results, worst, self.cannot_assess, self.partial_credit, normalize=False),
            criteria=results,
            seed=self.seed,
            judge_scores=judge_scores,
        )

    def _score(self, results: list[CriterionResult], worst: list[float]) -> float | None:
        if results and all(r.votes and all(v.error for v in r.votes) for r in results):
            return None  # no judge judged anything: no score, not a fabricated 0
        return score(results, worst, self.cannot_assess, self.partial_credit)

    def _question(
        self,
        judge: LLMJudge,
        judge_id: str,
        index: int,
        criterion: Criterion,
        submission: str,
        query: str | None,
        reference: str | None,
        key: str,
        context: str | None,
        conversation: JudgedConversation | None = None,
    ) -> tuple[list[int] | None, tuple[dict[str, str], ...], str | None]:
        """(the option order the judge sees, None for a binary criterion; the request's messages; what was left out
        of a conversation too long for the judge's context, None when it reads it whole)."""
        order = (
            option_order(criterion, self.seed, key, index, judge_id, self.shuffle_options)
            if criterion.is_multi_choice
            else None
        )
        binary_prompt = self.binary_prompt_for(judge)
        prefill = order is None and binary_prompt == "statement" and judge.caller.uses_prefill()

        def render(views: Sequence[JudgedConversation | None]) -> tuple[dict[str, str], ...]:
            return criterion_messages(
                criterion,
                submission,
                query,
                reference,
                order,
                context,
                binary_prompt,
                prefill,
                judge.explanations,
                views[0],
            )

        if conversation is None:
            return order, render([None]), None
        shown, messages = fit_to_context(
            [conversation], render, judge.caller.prompt_budget(), judge.caller.count_tokens
        )
        return order, messages, shown[0].shortening

    def estimate_items(
        self,
        rubric: Rubric,
        submissions: Sequence[str],
        queries: Sequence[str | None] | None = None,
        references: Sequence[str | None] | None = None,
        contexts: Sequence[str | None] | None = None,
        conversations: Sequence[JudgedConversation | None] | None = None,
    ) -> list[JudgeCostEstimate]:
        """Every judge's estimate for grading `submissions` (no call is made): the prompt tokens of the very
        requests a run sends, options shuffled as the run shuffles them, and a typical verdict with its reason."""
        criteria = self.effective(rubric)
        requests: dict[str, list[tuple[dict[str, str], ...]]] = {judge_id: [] for judge_id in self.judge_ids}
        asked: list[Question] = []
        for i, submission in enumerate(submissions):
            query = queries[i] if queries else None
            reference, context = references[i] if references else None, contexts[i] if contexts else None
            view = conversations[i] if conversations else None
            question = _question(query, submission, context, view) if reference is None else None
            if question is not None and any(c.about_correctness for c in criteria):
                asked.append(question)
            key = item_key(submission, query)
            for index, criterion in enumerate(criteria):
                for judge, judge_id in zip(self.judges, self.judge_ids):
                    committing = _chosen_committer(judge) is not None and criterion.about_correctness
                    shown = PLACEHOLDER_REFERENCE if committing and question is not None else reference
                    _, messages, _ = self._question(
                        judge, judge_id, index, criterion, submission, query, shown, key, context, view
                    )
                    requests[judge_id].append(messages)
        estimates = []
        for judge, judge_id in zip(self.judges, self.judge_ids):
            # a typical answer is explained unless every criterion is binary and asked without an explanation
            prompt = self.binary_prompt_for(judge)
            explained = any(
                c.is_multi_choice or binary_question(c, prompt).explained(judge.explanations) for c in criteria
            )
            completion = typical_completion_tokens(explained)
            estimate = estimate_calls(judge.caller, judge_id, requests[judge_id], completion)
            chosen = _chosen_committer(judge)
            if chosen is not None and asked:
                estimate = with_answers(estimate, chosen.estimate(asked, judge_id))
            estimates.append(estimate)
        return estimates

    def estimate_cost(
        self,
        rubric: Rubric,
        data: pd.DataFrame | Sequence[str] | None = None,
        *,
        submission_col: str = "response",
        query_col: str | None = "prompt",
        reference_col: str | None = None,
        conversations: Any = None,
        conversation_col: str | None = None,
        target: Target | None = None,
        batch: bool = False,
    ) -> CostEstimate:
        """What `grade_many` on the same arguments would spend, per judge (no call is made);
        `batch=True`: at the batch APIs' price."""
        _check_rubric(rubric)
        frame, views = _conversation_frame(data, conversations, conversation_col, submission_col, query_col, target)
        submissions, queries, references = _columns(frame, submission_col, query_col, reference_col)
        estimate = CostEstimate(judges=self.estimate_items(rubric, submissions, queries, references, None, views))
        return estimate.at_batch_price() if batch else estimate

    async def _vote(
        self,
        judge: LLMJudge,
        judge_id: str,
        index: int,
        criterion: Criterion,
        submission: str,
        query: str | None,
        reference: str | None,
        key: str,
        session: CallSession,
        context: str | None = None,
        conversation: JudgedConversation | None = None,
    ) -> CriterionVote:
        committed = None
        chosen = _chosen_committer(judge)
        if chosen is not None and criterion.about_correctness:
            asked = _question(query, submission, context, conversation) if reference is None else None
            committed = await chosen.commit(reference, asked, session)
            reference = committed.reference
        if committed is not None and committed.failed:
            return self._unanswered(judge, judge_id, criterion, committed)
        order, messages, shortened = self._question(
            judge, judge_id, index, criterion, submission, query, reference, key, context, conversation
        )
        if order is None:
            question = binary_question(criterion, self.binary_prompt_for(judge))
            explained = question.explained(judge.explanations)
            schema, schema_name = schema_of(question.answer_model(explained)), "criterion_verdict"
            answer_key = "verdict"
            labels = question.labels
            read: Callable[[str], tuple[Any, str | None]] = partial(read_binary, question=question)
        else:
            schema, schema_name, answer_key = schema_of(choice_model(len(order))), "criterion_choice", "selected_option"
            labels = [str(k + 1) for k in range(len(order))]
            read = partial(read_choice, n_options=len(order))
            explained = True
        caller = judge.caller
        prefilled = messages[-1]["role"] == "assistant"
        limit = PREFILLED_EXPLAINED_MAX_TOKENS if explained else PREFILLED_MAX_TOKENS
        params = caller.request_params(schema, schema_name, prefilled=prefilled, prefilled_max_tokens=limit)
        answer = await caller.ask(session, messages, params, read)
        shown = _probabilities(answer, answer_key, labels) if answer.value is not None else None
        if order is None:
            vote = _binary_vote(judge_id, judge.weight, answer, question.verdict_probabilities(shown))
        else:
            vote = _choice_vote(judge_id, judge.weight, criterion, order, answer, shown)
        if committed is not None:
            spent = Usage.total([vote, committed.usage]).usage_fields()
            vote = vote.model_copy(update={**spent, **_without_error(committed.recorded)})
        return vote if shortened is None else vote.model_copy(update={"shortened": shortened})

    def _unanswered(self, judge: LLMJudge, judge_id: str, criterion: Criterion, committed: Committed) -> CriterionVote:
        """The vote of a judge whose answer to the query could not be made first: it abstains with the error."""
        failed: Answer[Any] = Answer(value=None, error=committed.error)
        if criterion.is_multi_choice:
            order = list(range(len(criterion.option_list)))
            vote = _choice_vote(judge_id, judge.weight, criterion, order, failed, None)
        else:
            vote = _binary_vote(judge_id, judge.weight, failed, None)
        return vote.model_copy(update={**committed.usage.usage_fields(), **committed.recorded})

    def aggregate(self, criterion: Criterion, votes: Sequence[CriterionVote]) -> CriterionResult:
        """One criterion's outcome from its votes, under this grader's (or the criterion's) strategy."""
        orders = {tuple(v.shuffle_order) for v in votes if v.shuffle_order is not None}
        common: dict[str, Any] = {
            "shuffle_order": list(orders.pop()) if len(orders) == 1 else None,
            "name": criterion.name or criterion.requirement,
            "requirement": criterion.requirement,
            "weight": criterion.weight,
            "scale_type": criterion.scale_type,
            "votes": list(votes),
        }
        if not criterion.is_multi_choice:
            verdict = aggregate_binary(votes, criterion.aggregation or self.aggregation, criterion.weight)
            assessable = [v for v in votes if v.verdict not in (None, CriterionVerdict.CANNOT_ASSESS)]
            agreement = sum(v.verdict == verdict for v in assessable) / len(assessable) if assessable else None
            return CriterionResult(verdict=verdict, agreement=agreement, **common)
        strategy = criterion.aggregation or (
            self.ordinal_aggregation if criterion.scale_type == "ordinal" else self.nominal_aggregation
        )
        index, aggregated = aggregate_choice(votes, criterion, strategy)
        options = criterion.options
        assert options is not None
        option = options[index] if index is not None else None
        assessable = [v for v in votes if not v.na and v.selected_index is not None]
        agreement = sum(v.selected_index == index for v in assessable) / len(assessable) if assessable else None
        return CriterionResult(
            selected_index=index,
            selected_label=option.label if option else None,
            value=option.value if option else None,
            aggregated_value=aggregated,
            na=option.na if option else True,
            agreement=agreement,
            **common,
        )


def _binary_vote(
    judge_id: str, weight: float, answer: Answer[Any], probabilities: dict[str, float] | None
) -> CriterionVote:
    """A binary criterion's vote: the verdict (CANNOT_ASSESS when no answer could be read)."""
    if answer.value is None:
        return CriterionVote(
            judge_id=judge_id,
            weight=weight,
            verdict=CriterionVerdict.CANNOT_ASSESS,
            error=answer.error,
            raw=answer.content,
            **answer.usage().usage_fields(),
        )
    verdict, explanation = answer.value
    return CriterionVote(
        judge_id=judge_id,
        weight=weight,
        verdict=verdict,
        explanation=explanation,
        raw=answer.content,
        probabilities=probabilities,
        confidence=probabilities.get(verdict.value) if probabilities else None,
        **answer.usage().usage_fields(),
    )


def _choice_vote(
    judge_id: str,
    weight: float,
    criterion: Criterion,
    order: list[int],
    answer: Answer[Any],
    shown: dict[str, float] | None,
) -> CriterionVote:
    """A multi-choice criterion's vote: the option picked, mapped back through the shuffle `order` (the NA option
    when no answer could be read); `shown` holds the probabilities of the positions as shown."""
    options = criterion.options
    assert options is not None
    if answer.value is None:
        na = criterion.na_option_index
        return CriterionVote(
            judge_id=judge_id,
            weight=weight,
            selected_index=na,
            selected_label=options[na].label if na is not None else None,
            value=options[na].value if na is not None else None,
            na=True,
            shuffle_order=order,
            error=answer.error,
            raw=answer.content,
            **answer.usage().usage_fields(),
        )
    position, explanation = answer.value
    option = options[order[position]]
    probabilities = {options[order[int(k) - 1]].label: p for k, p in shown.items()} if shown else None
    return CriterionVote(
        judge_id=judge_id,
        weight=weight,
        selected_index=order[position],
        selected_label=option.label,
        value=option.value,
        na=option.na,
        explanation=explanation,
        shuffle_order=order,
        raw=answer.content,
        probabilities=probabilities,
        confidence=probabilities.get(option.label) if probabilities else None,
        **answer.usage().usage_fields(),
    )


def _probabilities(answer: Answer[Any], key: str, labels: list[str]) -> dict[str, float] | None:
    """The judge's probability of each answer at the `key` value's token; None without logprobs (or when the
    labels share a first token: options 1 and 10)."""
    if not prefix_free(labels):
        return None
    return label_probabilities(answer.logprobs, key, labels, answer.prefill)


def _worst_value(criterion: Criterion) -> float:
    if not criterion.is_multi_choice:
        return 0.0
    return criterion.option_list[criterion.worst_scored_option()].value


def _question(
    query: str | None, submission: str, context: str | None, conversation: JudgedConversation | None
) -> Question | None:
    """The question a submission answers: its query (after any context), or a conversation's history before the
    judged turn; None when there is none."""
    if conversation is None and query is None:
        return None
    return question_of(Item(query or "", submission, context=context, conversation=conversation))


def _without_error(recorded: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in recorded.items() if k != "error"}


def _check_rubric(rubric: object) -> None:
    if not isinstance(rubric, Rubric):
        raise ConfigurationError(f"expected a jw.Rubric, got {type(rubric).__name__} (build one with jw.Rubric(...))")


def _columns(
    frame: pd.DataFrame, submission_col: str, query_col: str | None, reference_col: str | None
) -> tuple[list[str], list[str | None] | None, list[str | None] | None]:
    """(submissions, queries, references) of a batch, every column checked; InputError naming what is wrong."""
    for col in (
        submission_col,
        query_col if query_col in frame.columns or query_col != "prompt" else None,
        reference_col,
    ):
        if col is not None and col not in frame.columns:
            raise InputError(f"data has no column {col!r}; its columns are {list(frame.columns)}")
    submissions = _as_text_list(submission_col, frame[submission_col]) or []
    queries = (
        _as_text_list(query_col, frame[query_col], optional=True)
        if query_col is not None and query_col in frame.columns
        else None
    )
    references = _as_text_list(reference_col, frame[reference_col], optional=True) if reference_col else None
    if not submissions:
        raise InputError("nothing to grade: no submissions")
    return cast("list[str]", submissions), queries, references  # optional=False: every value is text


def _rubric_target(target: str | None) -> Target:
    """A rubric grades a conversation whole (the default) or on its last turn: one report per conversation."""
    if target == "each_turn":
        raise InputError("a rubric grades a conversation whole or on its last turn (one report each), not each_turn")
    return check_target(target, "whole")


def _conversation_frame(
    data: pd.DataFrame | Sequence[str] | None,
    conversations: Any,
    conversation_col: str | None,
    submission_col: str,
    query_col: str | None,
    target: str | None,
) -> tuple[pd.DataFrame, list[JudgedConversation | None] | None]:
    """The batch as a frame of texts, and each row's conversation (None without conversations): the judged turn
    (or transcript) under `submission_col`, the last user message under `query_col`."""
    if conversations is None and conversation_col is None:
        if target is not None:
            raise InputError("target= applies to conversations; give conversations= or conversation_col=")
        if data is None:
            raise InputError("nothing to grade: give data (or conversations=)")
        return _as_frame(data, submission_col), None
    if conversation_col is not None:
        if not isinstance(data, pd.DataFrame) or conversation_col not in data.columns:
            columns = list(data.columns) if isinstance(data, pd.DataFrame) else []
            raise InputError(f"data has no column {conversation_col!r}; its columns are {columns}")
        if conversations is not None:
            raise InputError("give conversations= or data with conversation_col=, not both")
        frame = data.reset_index(drop=True)
        conversations = frame[conversation_col].tolist()
    elif data is not None:
        raise InputError("give conversations= or data, not both (a DataFrame's column: conversation_col=)")
    else:
        frame = pd.DataFrame(index=range(len(list(conversations))) if not isinstance(conversations, str) else [0])
    items = build_conversation_items(conversations, _rubric_target(target))
    frame = frame.assign(**{submission_col: [i.response for i in items]})
    if query_col is not None:
        frame[query_col] = [i.prompt for i in items]
    return frame, [i.conversation for i in items]


def _as_frame(data: pd.DataFrame | Sequence[str], submission_col: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data.reset_index(drop=True)
    if isinstance(data, str):
        data = [data]
    return pd.DataFrame({submission_col: list(data)})


def _chosen_committer(judge: LLMJudge) -> Committer | None:
    """The judge's committer when commit-first was chosen (on it or on the grader): a rubric's criteria are not its
    template, so the embedded judge's default for correctness templates does not apply here."""
    committer = judge.committer
    return None if committer is None or committer.by_default else committer
