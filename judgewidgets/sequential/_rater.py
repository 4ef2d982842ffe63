"""SequentialRater: ask judges for ratings until the mean rating is known to the precision asked for."""

from __future__ import annotations

import asyncio
import inspect
import math
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from .._fence import fence
from .._manipulation import manipulation_note
from .._progress import Progress, counted
from .._records import Item, Vote, build_conversation_items, build_items, judged_items
from .._review import failure_kind
from .._run import run_scope
from .._runner import run_sync
from .._saved import provenance, reported
from ..conversations import Target, check_target
from ..conversations._render import JudgedConversation, history_block, judged_text, reply_block
from ..engine import CallSession
from ..engine._budget import BUDGET_KIND
from ..scoring import CostEstimate, LLMJudge
from ..scoring._conversations import conversation_columns
from ..scoring._cost import estimate_calls, typical_completion_tokens
from ..templates import Anchor, Template
from ..templates._template import _fmt
from ._methods import make_rule, method_name
from ._precision import Precision
from ._result import TRACE_COLUMNS, SequentialFrame, SequentialResult
from ._rules import SEED_PILOT, StoppingRule, check_int

# Called after every judgment with a snapshot (status "running", the trace so far) and once more with the final
# result; it may be a coroutine function. It runs on the thread driving the rating (for the sync `rate`, the
# background event-loop thread), so a notebook can redraw `snapshot.chart()` in place from it.
UpdateHook = Callable[[SequentialResult], "Awaitable[None] | None"]

DEFAULT_INSTRUCTION = (
    "Rate the overall quality of the response to the question: correctness, helpfulness, completeness and "
    "clarity. Use the whole scale from {low} (worst) to {high} (best)."
)
DEFAULT_MAX_CONSECUTIVE_FAILURES = 5
_DRAWS_PER_SEED = 1_000_000  # sample indices of one seed; a different seed draws (and caches) fresh judgments


class PromptVariantTemplate(Template):
    """A rating template whose user message is a meta-prompt with {prompt} and {response} placeholders.

    The placeholders receive the question and response fenced in tags, so the judge's system message (the
    answer schema and the rule that tagged text is data, not instructions) still applies.
    """

    user_format: str

    def messages(
        self,
        prompt: str,
        response: str,
        reference: str | None = None,
        explanations: bool = False,
        context: str | None = None,
        anchors: Sequence[Anchor] = (),
        prefill: bool = False,
        conversation: JudgedConversation | None = None,
    ) -> tuple[dict[str, str], ...]:
        """With a `conversation`, {prompt} receives its history (turns fenced with their roles) and {response} the
        judged turn (nothing for the whole conversation)."""
        system = super().messages(prompt, response, reference, explanations, context, anchors, False, conversation)[0]
        if conversation is None:
            fenced = {"{prompt}": fence("question", prompt), "{response}": fence("response", response)}
            judged = {"the response": response}
        else:
            whole = conversation.judged is None
            fenced = {"{prompt}": history_block(conversation), "{response}": "" if whole else reply_block(conversation)}
            judged = {"the assistant's part" if whole else "the response": judged_text(conversation)}
        # One pass, so a placeholder written inside the judged text is never filled in.
        text = re.sub(r"\{prompt\}|\{response\}", lambda m: fenced[m.group(0)], self.user_format)
        if reference:
            text += "\n" + fence("reference", reference)
        note = manipulation_note(judged)
        if note:
            text += "\n" + note
        messages: tuple[dict[str, str], ...] = (system, {"role": "user", "content": text})
        if prefill:
            messages += ({"role": "assistant", "content": self.answer_prefill()},)
        return messages


def rating_template(scale: tuple[float, float], instruction: str | None = None, name: str = "rating") -> Template:
    """A numeric rating template on `scale` (integers when both ends are)."""
    low, high = scale
    integer = float(low).is_integer() and float(high).is_integer()
    text = (instruction or DEFAULT_INSTRUCTION).replace("{low}", _fmt(low)).replace("{high}", _fmt(high))
    return Template(name=name, instruction=text, scale=(low, high), integer=integer)


class SequentialRater:
    """Rates one response (or many) by drawing judgments until the interval is narrow enough.

    Precision: ratings on `scale`, target half-width d = R/(3K) at confidence 1 − `alpha`. `method` is a stopping
    rule's name ("t", the default; "seed"; "stein"; "confidence_sequence") or a StoppingRule object; `pilot`
    judgments come first; at most `max_samples` are counted. `judges` (model strings or LLMJudge objects) are
    rotated with the `meta_prompts` so every (judge, prompt variant) pair is used in turn, a mixed panel whose
    samples are less correlated than one judge's. A meta-prompt containing ``{response}`` (and optionally
    ``{prompt}``) is a whole user message; any other string is an alternative instruction. Judges built from
    model strings sample at `temperature` (default 1.0: repeated judgments must be able to differ); other keyword
    arguments go to them. Failed calls are retried by the engine, then left uncounted; after
    `max_consecutive_failures` failures in a row the rating stops with status "failed". Judgments are cached per
    draw, so re-rating replays them; pass another `seed` to draw fresh ones.
    """

    def __init__(
        self,
        judges: Sequence[str | LLMJudge] | str | LLMJudge = "local",
        scale: tuple[float, float] = (1, 10),
        K: float = 10,
        alpha: float = 0.05,
        pilot: int = SEED_PILOT,
        max_samples: int = 200,
        *,
        method: str | StoppingRule | None = None,
        meta_prompts: Sequence[str | Template] | None = None,
        instruction: str | None = None,
        max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES,
        seed: int = 0,
        temperature: float = 1.0,
        **judge_kwargs: Any,
    ) -> None:
        self.precision = Precision(scale=scale, K=K, alpha=alpha)
        self.pilot = check_int("pilot", pilot, 2)
        self.max_samples = check_int("max_samples", max_samples, 1)
        if self.max_samples < self.pilot:
            raise ConfigurationError(f"max_samples ({max_samples}) must be >= pilot ({pilot})")
        if self.max_samples >= _DRAWS_PER_SEED // 10:
            raise ConfigurationError(f"max_samples must be < {_DRAWS_PER_SEED // 10}, got {max_samples}")
        self.max_consecutive_failures = check_int("max_consecutive_failures", max_consecutive_failures, 1)
        self.seed = check_int("seed", seed, 0)
        self.rule = make_rule(method, self.precision, self.pilot)
        if isinstance(judges, (str, LLMJudge)):
            judges = [judges]
        judges = list(judges)
        if not judges:
            raise ConfigurationError("a sequential rater needs at least one judge")
        template = rating_template(self.precision.scale, instruction)
        base: list[LLMJudge] = []
        for i, judge in enumerate(judges):
            if isinstance(judge, str):
                judge = LLMJudge(judge, template=template, temperature=temperature, **judge_kwargs)
            elif not isinstance(judge, LLMJudge):
                raise ConfigurationError(f"judge {i} is a {type(judge).__name__}; give a model string or an LLMJudge")
            elif judge.template.scale is None or tuple(judge.template.scale) != self.precision.scale:
                raise ConfigurationError(
                    f"judge {judge.display_name!r} rates with template {judge.template.name!r} "
                    f"(scale {judge.template.scale}); give it a template with scale={self.precision.scale} "
                    "or pass the model string"
                )
            base.append(judge)
        self.judges = base
        self.variants = self._variants(meta_prompts, base, instruction)

    def _variants(
        self, meta_prompts: Sequence[str | Template] | None, judges: list[LLMJudge], instruction: str | None
    ) -> list[tuple[str, str, LLMJudge]]:
        """(judge name, variant name, judge) for every pair, in rotation order: judges fastest."""
        if meta_prompts is None:
            # Each draw is one sampled rating: the expectation over the judge's probabilities would not vary.
            return [(j.display_name, "default", j.with_options(probability_weighted=False)) for j in judges]
        if isinstance(meta_prompts, (str, Template)):
            meta_prompts = [meta_prompts]
        if not meta_prompts:
            raise ConfigurationError("meta_prompts is empty; give prompt variants or leave it None")
        templates: list[Template] = []
        for k, variant in enumerate(meta_prompts):
            name = f"variant_{k + 1}"
            if isinstance(variant, Template):
                if variant.scale is None or tuple(variant.scale) != self.precision.scale:
                    raise ConfigurationError(
                        f"meta-prompt template {variant.name!r} must have scale={self.precision.scale}"
                    )
                templates.append(variant)
            elif isinstance(variant, str) and variant.strip():
                if "{response}" in variant:
                    base = rating_template(self.precision.scale, instruction, name)
                    templates.append(PromptVariantTemplate(**base.model_dump(), user_format=variant))
                else:
                    templates.append(rating_template(self.precision.scale, variant, name))
            else:
                raise ConfigurationError(f"meta-prompt {k} must be a non-empty string or a Template")
        return [
            (judge.display_name, template.name, judge.with_options(template=template, probability_weighted=False))
            for template in templates
            for judge in judges
        ]

    def __repr__(self) -> str:
        names = ", ".join(sorted({name for name, _, _ in self.variants}))
        return (
            f"SequentialRater(judges=[{names}], variants={len({v for _, v, _ in self.variants})}, "
            f"scale={self.precision.scale}, K={self.precision.K:g}, alpha={self.precision.alpha:g}, "
            f"method={method_name(self.rule)!r})"
        )

    # --- rating ----------------------------------------------------------------------------------------------

    def rate(
        self,
        prompt: str | None = None,
        response: str | None = None,
        reference: str | None = None,
        *,
        conversation: Any = None,
        target: Target | None = None,
        on_update: UpdateHook | None = None,
        max_cost_usd: float | None = None,
    ) -> SequentialResult:
        """Rate one response, or one `conversation` (OpenAI chat messages or their JSON: its last turn in context,
        or `target="whole"`); works in scripts and inside Jupyter. `on_update(snapshot)` runs after each judgment.
        `max_cost_usd` is the run's budget: no judgment starts that could take the spend past it, and a rating
        it stops ends with status "budget" and the interval it had reached."""
        return run_sync(
            self.arate(
                prompt,
                response,
                reference,
                conversation=conversation,
                target=target,
                on_update=on_update,
                max_cost_usd=max_cost_usd,
            )
        )

    async def arate(
        self,
        prompt: str | None = None,
        response: str | None = None,
        reference: str | None = None,
        *,
        conversation: Any = None,
        target: Target | None = None,
        on_update: UpdateHook | None = None,
        max_cost_usd: float | None = None,
    ) -> SequentialResult:
        """Async twin of `rate`."""
        if conversation is not None:
            if prompt is not None or response is not None:
                raise InputError("give a conversation, or a prompt and a response, not both")
            if target == "each_turn":
                raise InputError("rate gives one rating: use rate_many(conversations=..., target='each_turn')")
            references = [reference] if reference is not None else None
            item = build_conversation_items([conversation], check_target(target), references)[0]
        else:
            if target is not None:
                raise InputError("target= applies to a conversation; give conversation=")
            item = build_items([prompt], [response], [reference] if reference is not None else None)[0]  # type: ignore[list-item]  # checked there
        self._check()
        async with run_scope(max_cost_usd=max_cost_usd, makers=[self]) as run:
            result = await self._rate_item(0, item, run.session, on_update)
        return reported(result.model_copy(update={"provenance": provenance(self)}))

    def rate_many(
        self,
        prompts: pd.DataFrame | Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        *,
        prompt_col: str = "prompt",
        response_col: str = "response",
        reference_col: str | None = None,
        conversations: Any = None,
        conversation_col: str | None = None,
        target: Target | None = None,
        on_update: UpdateHook | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
    ) -> SequentialFrame:
        """One sequential rating per item, all running concurrently; a DataFrame with `.results` and `.traces`.
        Conversations: `conversations=` or a DataFrame's `conversation_col`, judged under `target` (the last turn
        by default; "each_turn" rates every turn, with conversation and turn columns). `max_cost_usd`: the
        budget, as `rate`'s (each rating it stops has status "budget")."""
        return run_sync(
            self.arate_many(
                prompts,
                responses,
                references,
                prompt_col=prompt_col,
                response_col=response_col,
                reference_col=reference_col,
                conversations=conversations,
                conversation_col=conversation_col,
                target=target,
                on_update=on_update,
                progress=progress,
                max_cost_usd=max_cost_usd,
            )
        )

    async def arate_many(
        self,
        prompts: pd.DataFrame | Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        *,
        prompt_col: str = "prompt",
        response_col: str = "response",
        reference_col: str | None = None,
        conversations: Any = None,
        conversation_col: str | None = None,
        target: Target | None = None,
        on_update: UpdateHook | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
    ) -> SequentialFrame:
        """Async twin of `rate_many`."""
        items = _items_from(
            prompts,
            responses,
            references,
            prompt_col,
            response_col,
            reference_col,
            conversations,
            conversation_col,
            target,
        )
        self._check()
        async with run_scope(
            progress,
            len(items),
            f"sequential rating ({method_name(self.rule)})",
            max_cost_usd=max_cost_usd,
            makers=[self],
        ) as run:
            rated = (
                counted(run.progress, self._rate_item(i, item, run.session, on_update)) for i, item in enumerate(items)
            )
            results = list(await asyncio.gather(*rated))
        rows = [r.summary() for r in results]
        frame = SequentialFrame(
            pd.DataFrame(rows)[
                ["item", "prompt", "response", "mean", "low", "high", "half_width", "n", "sd", "status", "failures"]
            ]
        )
        for position, (name, values) in enumerate(conversation_columns(items).items()):
            frame.insert(1 + position, name, values)
        frame.results = results
        frame.attrs["provenance"] = provenance(self)
        return reported(frame)

    def estimate_cost(
        self,
        prompts: pd.DataFrame | Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        *,
        prompt_col: str = "prompt",
        response_col: str = "response",
        reference_col: str | None = None,
        draws: int | None = None,
        conversations: Any = None,
        conversation_col: str | None = None,
        target: Target | None = None,
    ) -> CostEstimate:
        """What rating every item would spend when `draws` judgments are drawn for it (no call is made), per
        judge: the prompt tokens of the very requests those draws send, and a typical answer's length. The
        default, `max_samples`, is the most a rating can spend; one that converges sooner spends less."""
        items = _items_from(
            prompts,
            responses,
            references,
            prompt_col,
            response_col,
            reference_col,
            conversations,
            conversation_col,
            target,
        )
        n = self.max_samples if draws is None else check_int("draws", draws, 1)
        params = {id(judge): judge.request_params() for _, _, judge in self.variants}
        requests: dict[str, tuple[LLMJudge, list[tuple[dict[str, str], ...]]]] = {}
        for item in items:
            for k in range(n):
                name, _, judge = self.variants[k % len(self.variants)]
                requests.setdefault(name, (judge, []))[1].append(judge.request(item, params[id(judge)])[1])
        return CostEstimate(
            judges=[
                estimate_calls(judge.caller, name, asked, typical_completion_tokens(judge.explanations))
                for name, (judge, asked) in requests.items()
            ]
        )

    def _check(self) -> None:
        for _, _, judge in self.variants:
            judge.check()

    async def _rate_item(
        self, index: int, item: Item, session: CallSession, on_update: UpdateHook | None
    ) -> SequentialResult:
        run = _Run(self, index, item)
        params = {id(judge): judge.request_params() for _, _, judge in self.variants}

        async def draw(k: int) -> tuple[int, Vote]:
            name, _, judge = self.variants[k % len(self.variants)]
            sample = self.seed * _DRAWS_PER_SEED + k
            return k, await judge.ajudge_one(index, item, session, params[id(judge)], name, sample=sample)

        status = "running"
        while status == "running":
            status = run.decide()
            if status != "running":
                break
            draws = range(run.draws, run.draws + run.wanted)
            run.draws += run.wanted
            tasks = [asyncio.ensure_future(draw(k)) for k in draws]
            try:
                for task in tasks:  # in draw order, so a run is reproducible; each is reported as it lands
                    k, vote = await task
                    run.add(k, vote)
                    if on_update is not None:
                        outcome = on_update(run.result("running"))
                        if inspect.isawaitable(outcome):
                            await outcome
            finally:
                for task in tasks:
                    task.cancel()
            if run.not_run:
                status = "budget"
            elif run.consecutive_failures >= self.max_consecutive_failures:
                status = "failed"
        result = run.result(status)
        if on_update is not None:
            outcome = on_update(result)
            if inspect.isawaitable(outcome):
                await outcome
        return result


class _Run:
    """The state of one item's sequential rating: counted ratings, the trace, the failure streak."""

    def __init__(self, rater: SequentialRater, index: int, item: Item) -> None:
        self.rater = rater
        self.rule = rater.rule
        self.index = index
        self.item = item
        self.values: list[float] = []
        self.rows: list[dict[str, Any]] = []
        self.draws = 0
        self.wanted = 0
        self.failures = 0
        self.consecutive_failures = 0
        self.last_error: str | None = None
        self.not_run = False  # a judgment the run's budget did not allow: the rating stops there

    def decide(self) -> str:
        """'running' (and how many to draw, in `wanted`), 'converged' or 'max_samples'."""
        n = len(self.values)
        if n >= self.rater.max_samples:
            return "max_samples"
        if n < self.rule.pilot:
            wanted = self.rule.pilot - n
        elif self.rule.should_stop(np.asarray(self.values)):
            return "converged"
        else:
            wanted = int(self.rule.next_batch(np.asarray(self.values)))
        self.wanted = max(1, min(wanted, self.rater.max_samples - n))
        return "running"

    def add(self, draw: int, vote: Vote) -> None:
        _, variant, _ = self.rater.variants[draw % len(self.rater.variants)]
        target = self.rater.precision
        ok = vote.error is None and math.isfinite(vote.score)
        value = target.low + vote.score * target.R if ok else math.nan
        if ok:
            self.values.append(value)
            self.consecutive_failures = 0
        else:
            self.failures += 1
            self.consecutive_failures += 1
            self.last_error = vote.error or "the judge returned no score"
            self.not_run = self.not_run or failure_kind(self.last_error) == BUDGET_KIND
        mean, low, high = self._interval()
        self.rows.append(
            {
                "draw": draw,
                "judge": vote.judge,
                "variant": variant,
                "value": value,
                "counted": ok,
                "n": len(self.values),
                "mean": mean,
                "low": low,
                "high": high,
                "half_width": (high - low) / 2.0,
                "error": vote.error,
                **vote.usage_fields(),
            }
        )

    def _interval(self) -> tuple[float, float, float]:
        if not self.values:
            return math.nan, math.nan, math.nan
        values = np.asarray(self.values)
        if len(values) < 2:
            return float(values[0]), math.nan, math.nan
        low, high = self.rule.interval(values)
        return float(values.mean()), float(low), float(high)

    def result(self, status: str) -> SequentialResult:
        target = self.rater.precision
        mean, low, high = self._interval()
        values = np.asarray(self.values)
        trace = pd.DataFrame(self.rows, columns=TRACE_COLUMNS).astype({"n": int, "counted": bool, "draw": int})
        return SequentialResult(
            item=self.index,
            prompt=self.item.prompt,
            response=self.item.response,
            mean=mean,
            low=low,
            high=high,
            half_width=(high - low) / 2.0,
            n=len(values),
            sd=float(values.std(ddof=1)) if len(values) > 1 else math.nan,
            status=status,
            method=method_name(self.rule),
            scale=target.scale,
            K=target.K,
            alpha=target.alpha,
            target_half_width=target.d,
            failures=self.failures,
            error=self.last_error if status in ("failed", "budget") else None,
            trace=trace,
        )


def _items_from(
    prompts: pd.DataFrame | Sequence[str] | str | None,
    responses: Sequence[str] | str | None,
    references: Sequence[str | None] | None,
    prompt_col: str,
    response_col: str,
    reference_col: str | None,
    conversations: Any = None,
    conversation_col: str | None = None,
    target: str | None = None,
) -> list[Item]:
    if conversations is not None or conversation_col is not None:
        data = prompts if isinstance(prompts, pd.DataFrame) else None
        if prompts is not None and data is None:
            raise InputError("give conversations, or prompts and responses, not both")
        return judged_items(
            None,
            responses,
            references,
            conversations=conversations,
            data=data,
            conversation_col=conversation_col,
            reference_col=reference_col,
            target=target,
        )
    if target is not None:
        raise InputError("target= applies to conversations; give conversations= or conversation_col=")
    if prompts is None:
        raise InputError("nothing to rate: give prompts and responses, a DataFrame, or conversations=")
    if isinstance(prompts, pd.DataFrame):
        if responses is not None or references is not None:
            raise InputError("give a DataFrame alone (with prompt_col/response_col), or lists of prompts and responses")
        missing = [c for c in (prompt_col, response_col, reference_col) if c is not None and c not in prompts.columns]
        if missing:
            raise InputError(f"column(s) {', '.join(missing)} not in the DataFrame; it has {list(prompts.columns)}")
        frame = prompts
        return build_items(
            frame[prompt_col].tolist(),
            frame[response_col].tolist(),
            frame[reference_col].tolist() if reference_col else None,
        )
    if responses is None:
        raise InputError("responses are missing: give prompts and responses, or a DataFrame")
    return build_items(prompts, responses, references)
