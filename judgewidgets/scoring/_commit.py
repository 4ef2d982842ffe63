"""Commit-first: a model answers the question itself before a judge grades responses to it against that answer.

Without a reference a small judge passes subtly wrong answers; asked the question first, it usually knows the
answer, and grading against its own answer (the reference-grounded path of the templates) catches them. The
MT-Bench paper's reference-guided judge did the same for math. The answer is made once per distinct question in a
run (`CallSession.once`) and cached with every other call; a reference you give always wins over a made one.

By default (`commit_first=None`) only the embedded judge under a template that judges correctness commits first, in
the "short" form, and not for conversations (`commit_first_default`; measured in benchmarks/no_reference.py).

Who answers is a `Solver`: the judge's own model by default, or another (`solver=`: a model string, a `Generator`,
a `ModelSolver`, or your own object in the role). What a vote records (`reference_source`): "given" (yours),
"judge" (the judge's own model answered), "solver:NAME" (another solver did). A solver that fails leaves the item's
vote missing with the error (`answering first ... failed`), never raised: grading without a reference instead would
mix verdicts of two kinds in one table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from .._constants import SOLVER_MAX_TOKENS
from .._errors import ConfigurationError, InputError, JudgeCallError
from ..conversations._render import _message_text, _tool_names
from ..engine import CallCache, Caller, CallSession, ChatRequest, Usage
from ..engine._litellm import is_local_model
from ..templates._words import words
from ._cost import JudgeCostEstimate, estimate_calls, unpriced

if TYPE_CHECKING:
    from .._records import Item
    from ..templates import Template
    from ._generate import Generator

Messages = tuple[dict[str, str], ...]

# Measured on the embedded judge (benchmarks/reference_grounding.py, its docstring has the variants): the short
# answer, as a reference is written, beat one short sentence (the judge then called right answers worded otherwise
# different: right answers' mean 0.84 against 0.74, wrong 0.19 against 0.16), at about 0.7 s a question.
SOLVER_INSTRUCTION = (
    "Give the short answer: a word, a number, a name or a date where one will do; else one short sentence."
)
JUDGE_SOURCE = "judge"
GIVEN_SOURCE = "given"
# commit_first="short": an answer that adds more words than this to its question is not a checkable answer (an open
# instruction's), so the item is graded without a reference. A word, a number, a name or a date fits ("Martin Luther
# King Jr.", "4 July 1776"), and so does a sentence that restates the question around one ("The Pacific Ocean is the
# largest ocean on Earth."), up to SHORT_SENTENCE_WORDS words in all. Measured (benchmarks/no_reference.py): all 90
# short questions' answers fit; of LLMBar's 419 instructions, 72 ask for one fact and 25 of their answers are short.
SHORT_ANSWER_WORDS = 5
SHORT_SENTENCE_WORDS = 15
# commit_first="short" answers first only a question that asks for one fact (`asks_for_a_fact`): what the default
# was measured on (benchmarks/no_reference.py) and what the embedded judge answers well from what it knows. Left
# alone, graded without a reference as before and at no extra call:
# - a request that is not a question (it does not end in "?" nor open with a question word, "Name the ..." or "Tell
#   me who ...") or runs over QUESTION_WORDS words: a task on material of its own (a sum over given prices, the words
#   of a quoted text to count, a riddle, sentences to rewrite), which the small model got wrong often enough,
#   answering first, to cost LLMBar pairs (scored alone under likert: GPTOut -2 and Manual -2 before this rule, 0
#   and 0 after);
# - a request for a judgement, no one answer: a prediction, a hypothetical, advice or an opinion ("will", "would",
#   "should", "best", "worst", "favourite": "What date will the economy crash?" made "December 2020");
# - a request for one example of many: it opens with a verb of naming or making and "a", "an", "some" or a count
#   ("Name a common cause of stress.", "Tell the name of a famous mathematician."); "Name the largest planet" asks
#   for the answer. Grading against the judge's own example ("Sir Isaac Newton." against its "Gauss") lost a pair on
#   LLMBar Neighbor, where leaving them alone gains one.
# All 90 questions of benchmarks/no_reference.py ask for one fact (the longest has 15 words).
QUESTION_WORDS = 25
_ASKS = re.compile(
    r"[?？][\s\"'”’)\]]*$"
    r"|^\W*(?:(?:question|q)\s*:\s*)?(?:(?:in|on|at|by|from|for|to|of)\s+)?"
    r"(?:what|what's|which|who|whom|whose|when|where|how|why)\b"
    r"|^\W*(?:(?:question|q)\s*:\s*)?(?:please\s+)?(?:name|state|give|tell)\s+(?:me\s+|us\s+)?"
    r"(?:the|who|what|when|where|which|how)\b",
    re.IGNORECASE,
)
_JUDGEMENT = re.compile(r"\b(?:will|would|should|best(?!-)|worst|favou?rite)\b", re.IGNORECASE)
_ONE_OF_MANY = re.compile(
    r"^\W*(?:please\s+)?(?:name|give|tell|list|suggest|create|generate|provide|think of|come up with|make|invent|"
    r"recommend)\s+(?:me\s+|us\s+)?(?:the\s+name\s+of\s+)?"
    r"(?:a|an|some|any|one|two|three|four|five|six|seven|eight|nine|ten|\d+)\b",
    re.IGNORECASE,
)
NOT_ASKED_SOURCE = "none: not a question of one fact, nothing was answered first"
NOT_SHORT_SOURCE = "none: the answer made first was not short"
CommitFirst = bool | Literal["short"] | None
# What the embedded judge does without a reference under a correctness template when `commit_first` is unset:
# measured in benchmarks/no_reference.py (docs/benchmarks.md#no-reference-the-defaults).
EMBEDDED_DEFAULT: CommitFirst = "short"
# What a vote that shares an answer another vote made pays for it.
SHARED = Usage(latency_s=0.0, prompt_tokens=0, completion_tokens=0, cost_usd=0.0, cached=True, attempts=0)
# A stand-in for an answer not made yet, of a short sentence's length (what an estimate grades against).
PLACEHOLDER_REFERENCE = "An answer of one short sentence, about as long as the solver's typical answer."


@dataclass(frozen=True)
class Question:
    """A question to answer before grading: `text` as a table shows it (the prompt, or a conversation's last user
    message) and `messages`, the chat that asks it (any context, or a conversation's history before the judged
    turn, included)."""

    text: str
    messages: Messages

    @property
    def key(self) -> str:
        """The question's messages as text: what tells two questions apart."""
        return json.dumps(self.messages, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class Solution:
    """A solver's answer to one question, or the error that kept it from answering (`answer` None), and what
    making it cost."""

    answer: str | None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)  # unknown tokens and cost: a solver of yours may not say


@dataclass(frozen=True)
class Committed:
    """What committing first gave one item: the `reference` to grade it against (None when none could be made:
    `error`), where it came from (`source`: "given", "judge" or "solver:NAME"), the answer `made` first (None for a
    given reference), and the item's share of that answer's cost (`usage`: the whole of it for the item whose ask
    made it, nothing for the others)."""

    reference: str | None
    source: str | None
    made: str | None = None
    error: str | None = None
    usage: Usage = SHARED

    @property
    def failed(self) -> bool:
        """Whether the item cannot be graded: the answer it needed could not be made (`error`)."""
        return self.error is not None

    @property
    def recorded(self) -> dict[str, Any]:
        """What a vote records of it: `reference_source`, `made_reference` and any `error`."""
        fields: dict[str, Any] = {"reference_source": self.source, "made_reference": self.made}
        return fields | ({"error": self.error} if self.error else {})


@runtime_checkable
class Solver(Protocol):
    """The role that answers a question before a judge grades responses to it (commit-first).

    `name` is how votes record it (`reference_source="solver:NAME"`); `check()` raises ConfigurationError before
    any call when it cannot run; `asolve` answers one question, returning the answer's text or a `Solution`, and may
    raise: a failure is recorded on the votes that needed the answer, never raised from a run."""

    @property
    def name(self) -> str: ...

    def check(self) -> None: ...

    async def asolve(self, question: Question, session: CallSession) -> str | Solution: ...


class ModelSolver:
    """Answers questions with a model through the shared call path (cached, paced and counted like every judge
    call): `instruction` as the system message (default: the short answer), temperature 0, at most `max_tokens`.

    `model` is a model string (extra keyword arguments go to litellm: `api_base`, `api_key`, ...) or a `Caller`,
    whose settings are used as they are."""

    def __init__(
        self,
        model: str | Caller = "local",
        instruction: str = SOLVER_INSTRUCTION,
        *,
        max_tokens: int = SOLVER_MAX_TOKENS,
        temperature: float = 0.0,
        cache: bool | str | CallCache | None = True,
        name: str | None = None,
        **litellm_kwargs: Any,
    ) -> None:
        if not isinstance(instruction, str) or not instruction.strip():
            raise ConfigurationError(f"a solver's instruction must be non-empty text, got {instruction!r}")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ConfigurationError(f"a solver's max_tokens must be a whole number >= 1, got {max_tokens!r}")
        if isinstance(model, Caller):
            if litellm_kwargs:
                raise ConfigurationError("give litellm arguments with a model string, not with a Caller")
            self.caller = model
        else:
            self.caller = Caller(model, temperature=temperature, cache=cache, **litellm_kwargs)
        self.instruction = instruction
        self.max_tokens = max_tokens
        self._name = name

    @classmethod
    def of_judge(cls, caller: Caller) -> ModelSolver:
        """The judge's own model answering: its caller's model, endpoint, keys and call settings, at temperature 0
        and asked for plain text (no schema, logprobs or prefill)."""
        own = caller.with_options(temperature=0.0, structured_output=False, probability_weighted=False, prefill=False)
        return cls(own)

    @classmethod
    def of_generator(cls, generator: Generator, cache: bool | str | CallCache | None = True) -> ModelSolver:
        """A Generator answering: its model, temperature, settings and system prompt (else the solver's
        instruction), with the call cache of the judge it answers for (a Generator's own is off: it samples)."""
        own = generator.caller.with_options(cache=cache)
        return cls(own, generator.system_prompt or SOLVER_INSTRUCTION)

    @property
    def name(self) -> str:
        return self._name or self.caller.model

    @property
    def model(self) -> str:
        return self.caller.model

    def __repr__(self) -> str:
        return f"ModelSolver(model={self.model!r}, instruction={self.instruction!r}, max_tokens={self.max_tokens})"

    def check(self) -> None:
        """Raise ConfigurationError now if the model cannot be routed (no call is made)."""
        self.caller.check()

    def request(self, question: Question) -> tuple[Messages, dict[str, Any]]:
        """The messages and parameters of the call that answers `question`: the instruction as the system
        message (after a conversation's own system message), then the question's chat."""
        messages = question.messages
        if messages and messages[0]["role"] == "system":
            system = f"{messages[0]['content']}\n\n{self.instruction}"
            messages = ({"role": "system", "content": system}, *messages[1:])
        else:
            messages = ({"role": "system", "content": self.instruction}, *messages)
        params = self.caller.request_params(None, probabilities=False)
        params["max_tokens"] = self.max_tokens
        return messages, params

    def key(self, question: Question) -> str:
        """What identifies this answer within a run: the request's cache key (model, messages, parameters), so
        two judges whose solvers would send the same request share one answer."""
        messages, params = self.request(question)
        return ChatRequest(self.caller.model, messages, params).cache_key()

    async def asolve(self, question: Question, session: CallSession) -> Solution:
        """The model's answer, or the error of its call (recorded, never raised)."""
        messages, params = self.request(question)
        try:
            completion = await self.caller.complete(session, messages, params)
        except JudgeCallError as exc:
            return Solution(None, exc.recorded, Usage(attempts=exc.attempts))
        usage = Usage.of_call(completion)
        text = completion.content.strip()
        if not text:
            return Solution(None, "parse: the model returned an empty answer", usage)
        return Solution(text, None, usage)

    def estimate(self, questions: Sequence[Question], name: str) -> JudgeCostEstimate:
        """Tokens and dollars of answering `questions` (no call is made), each answer counted at its limit."""
        requests = [self.request(q)[0] for q in questions]
        return estimate_calls(self.caller, name, requests, self.max_tokens)


class Committer:
    """How a judge commits first: the solver that answers, the `reference_source` its votes record, whether only a
    short answer to a question of one fact is graded against (`short_only`: only such a question is answered first,
    and any other item is graded without a reference), and whether the judge commits first by its default rather
    than by your choice (`by_default`: a conversation is then graded without a reference, neither answered first
    nor refused)."""

    def __init__(self, solver: Solver, source: str, short_only: bool = False, *, by_default: bool = False) -> None:
        self.solver = solver
        self.source = source
        self.short_only = short_only
        self.by_default = by_default

    def __repr__(self) -> str:
        return (
            f"Committer(solver={self.solver!r}, source={self.source!r}, short_only={self.short_only}, "
            f"by_default={self.by_default})"
        )

    def question(self, item: Item) -> Question | None:
        """The question to answer before grading `item`: None when it has a reference, and, by default, for a
        conversation (its turns are not the short questions the default was measured on)."""
        if item.reference is not None or (self.by_default and item.conversation is not None):
            return None
        return question_of(item)

    def answers(self, question: Question) -> bool:
        """Whether `question` is answered first: every one, or, `short_only`, one that asks for one fact
        (`asks_for_a_fact`); the others are graded without a reference, at no extra call."""
        return not self.short_only or asks_for_a_fact(question.text)

    def answered(self, item: Item) -> Question | None:
        """The question answered first before grading `item` (`question`, when `answers` it), else None."""
        question = self.question(item)
        return question if question is not None and self.answers(question) else None

    def check(self) -> None:
        """Raise ConfigurationError now when the solver cannot run (no call is made), naming it."""
        try:
            self.solver.check()
        except ConfigurationError as exc:
            raise ConfigurationError(f"the solver that answers first ({self.source}): {exc}") from None

    async def solution(self, question: Question, session: CallSession) -> tuple[Solution, bool]:
        """The answer to `question`, made once per run however many votes ask (concurrently or later), and
        whether this ask made it (the vote that did carries its cost; the others share it at no cost)."""
        key = getattr(self.solver, "key", None)
        memo = ("commit-first", key(question) if callable(key) else (id(self.solver), question.key))
        return await session.once(memo, lambda: self._solve(question, session))

    async def _solve(self, question: Question, session: CallSession) -> Solution:
        try:
            made = await self.solver.asolve(question, session)
        except JudgeCallError as exc:
            return Solution(None, exc.recorded, Usage(attempts=exc.attempts))
        except Exception as exc:  # a solver of yours that raised: recorded on the votes that needed it
            return Solution(None, f"infrastructure: {type(exc).__name__}: {exc}")
        if isinstance(made, str):
            made = Solution(made.strip() or None, None if made.strip() else "parse: the solver gave an empty answer")
        if not isinstance(made, Solution):
            kind = type(made).__name__
            return Solution(None, f"parse: the solver returned a {kind}, not the answer's text or a Solution")
        return made

    async def commit(self, reference: str | None, question: Question | None, session: CallSession) -> Committed:
        """The reference to grade an item against: the given `reference` as it is (it always wins), else the answer
        to `question` made first (None with the error when it could not be made, or when the item answers no one
        question), with this item's share of the answer's cost."""
        if reference is not None:
            return Committed(reference, GIVEN_SOURCE)
        if question is None:
            if self.by_default:
                return Committed(None, None)
            return Committed(None, None, error="input: commit-first: the item answers no one question")
        if not self.answers(question):
            return Committed(None, NOT_ASKED_SOURCE)
        solution, made_here = await self.solution(question, session)
        spent = solution.usage if made_here else SHARED
        if solution.answer is None:
            kind, _, rest = (solution.error or "infrastructure: no answer").partition(": ")
            error = f"{kind}: answering first ({self.source}) failed: {rest}"
            return Committed(None, self.source, error=error, usage=spent)
        if self.short_only and not is_short(solution.answer, question.text):
            return Committed(None, NOT_SHORT_SOURCE, solution.answer, usage=spent)
        return Committed(solution.answer, self.source, solution.answer, usage=spent)

    def estimate(self, questions: Sequence[Question], name: str) -> JudgeCostEstimate:
        """What answering every distinct question it answers costs (no call is made)."""
        distinct = list({q.key: q for q in questions if self.answers(q)}.values())
        estimate = getattr(self.solver, "estimate", None)
        if callable(estimate):
            return estimate(distinct, name)
        return unpriced(name, self.solver.name, len(distinct))


class CommitsFirst:
    """What the judges that can commit first share: their `commit_first` and `solver` settings, resolved through
    the judge's `caller` (and `template`, for the default) into its `committer`, again whenever either is
    replaced."""

    caller: Caller
    commit_first: CommitFirst = None
    solver: Any = None
    _committed: tuple[Caller, Template | None, Committer | None] | None = None

    @property
    def default_template(self) -> Template | None:
        """The template whose kind decides the default (`commit_first_default`); None: no default, off."""
        return None

    @property
    def committer(self) -> Committer | None:
        """Who answers first and how votes name it, or None when this judge does not commit first."""
        template = self.default_template
        if self._committed is None or self._committed[0] is not self.caller or self._committed[1] is not template:
            default = commit_first_default(self.caller.model, template)
            self._committed = (self.caller, template, committer(self.commit_first, self.solver, self.caller, default))
        return self._committed[2]


def committer(commit_first: CommitFirst, solver: Any, caller: Caller, default: CommitFirst = False) -> Committer | None:
    """The committer of a judge that calls through `caller`, or None when it does not commit first.

    `commit_first`: True, "short" (answer first only a question of one fact, and grade against the answer only
    when it is short: a word, a number, a name or a date), False, or None for `default` (False, True or "short"),
    unless a `solver` is named (then it is on).
    `solver`: None (the judge's own model), a model string, a `Generator`, or a `Solver`. One ConfigurationError
    for anything else, before any call."""
    from ._generate import Generator

    for value in (commit_first, default):
        if value is not None and not isinstance(value, bool) and value != "short":
            raise ConfigurationError(f'commit_first must be True, "short", False or None, got {value!r}')
    if commit_first is False and solver is not None:
        raise ConfigurationError("solver= answers questions for commit-first grading; it needs commit_first=True")
    if commit_first is None and solver is None:
        if not default:
            return None
        return Committer(ModelSolver.of_judge(caller), JUDGE_SOURCE, default == "short", by_default=True)
    if not (commit_first or solver is not None):
        return None
    short = commit_first == "short"
    if solver is None:
        return Committer(ModelSolver.of_judge(caller), JUDGE_SOURCE, short)
    if isinstance(solver, str):
        if not solver.strip():
            raise ConfigurationError("solver must name a model, got an empty string")
        made: Solver = ModelSolver(solver, cache=caller.settings.cache)
    elif isinstance(solver, Generator):
        made = ModelSolver.of_generator(solver, caller.settings.cache)
    elif isinstance(solver, Solver):
        made = solver
    else:
        raise ConfigurationError(
            f"solver must be a model string, a Generator or a Solver (name, check, async asolve), got "
            f"{type(solver).__name__}"
        )
    return Committer(made, f"solver:{made.name}", short)


def checkable(answer: str, question: str) -> bool:
    """Whether `answer`, made first, is a reference to grade responses to `question` against (commit_first="short"):
    a short answer (`is_short`) to a question that asks for one fact (`asks_for_a_fact`)."""
    return asks_for_a_fact(question) and is_short(answer, question)


def asks_for_a_fact(question: str) -> bool:
    """Whether `question` asks for one fact, the kind commit_first="short" answers first: a question ("...?", or
    opening with a question word, "Name the" or "Tell me who", after any "Question:"), of at most QUESTION_WORDS
    words, asking neither for a judgement ("will", "should", "best", ...) nor for one example of many ("Name a
    famous mathematician.")."""
    text = question.strip()
    return (
        len(text.split()) <= QUESTION_WORDS
        and _ASKS.search(text) is not None
        and _JUDGEMENT.search(text) is None
        and _ONE_OF_MANY.search(text) is None
    )


def is_short(answer: str, question: str) -> bool:
    """Whether `answer` is a checkable answer to `question`: at most `SHORT_ANSWER_WORDS` words beyond those the
    question holds ("The Pacific Ocean is the largest ocean on Earth." adds one to "What is the largest ocean on
    Earth?"), in at most `SHORT_SENTENCE_WORDS` words in all."""
    said, asked = words(answer), set(words(question))
    return len(said) <= SHORT_SENTENCE_WORDS and sum(w not in asked for w in said) <= SHORT_ANSWER_WORDS


def commit_first_option(typed: str | None) -> CommitFirst:
    """`--commit-first` as typed in `%%judge` and the CLI ("all", "short" or "off"; None when not given) as the
    judges' `commit_first=`."""
    return {None: None, "all": True, "short": "short", "off": False}[typed]


def solver_at(model: str | None, api_base: str | None, cache: bool | str | CallCache | None = True) -> Any:
    """The solver a command line or magic names: the model string as it is, or a `ModelSolver` served at
    `api_base` when the judges are (the embedded model is never served)."""
    if model is None or not api_base or is_local_model(model):
        return model
    return ModelSolver(model, cache=cache, api_base=api_base)


def question_of(item: Item) -> Question | None:
    """The question a judged item answers (None for a whole conversation: it answers no one question): the prompt
    (after its context), or the conversation's messages before the judged turn."""
    view = item.conversation
    if view is None:
        text = item.prompt if not item.context else f"Context:\n{item.context}\n\nQuestion: {item.prompt}"
        return Question(item.prompt, ({"role": "user", "content": text},))
    if view.judged is None:
        return None
    history = view.history
    names = _tool_names(history)
    messages = []
    for message in history:
        role = {"developer": "system", "tool": "user", "function": "user"}.get(message.role, message.role)
        messages.append({"role": role, "content": _message_text(message, names)})
    return Question(item.prompt, tuple(messages))


def check_questions(items: Sequence[Item], who: str) -> None:
    """InputError, before any call, when a judge that commits first is given an item with nothing to answer first
    (a whole conversation without a reference)."""
    for position, item in enumerate(items):
        if item.reference is None and question_of(item) is None:
            raise InputError(
                f"{who} commits first, but item {position} is a whole conversation: it answers no one question; "
                "judge target='last_turn' or 'each_turn', give references, or turn commit_first off"
            )


def commit_first_default(model: str, template: Template | None = None) -> CommitFirst:
    """How a judge of `model` scoring under `template` commits first when `commit_first` is left unset (None):
    `EMBEDDED_DEFAULT` for the embedded judge under a template that judges correctness (`Template.correctness`),
    else not at all (see docs/guide/judges.md#without-a-reference-commit-first for the measurements behind both)."""
    if template is not None and template.correctness and is_local_model(model):
        return EMBEDDED_DEFAULT
    return False
