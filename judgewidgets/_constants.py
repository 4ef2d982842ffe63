"""Named defaults of the judging engine, in one place."""

from __future__ import annotations

# Retry policy (the same numbers openai-python uses).
DEFAULT_MAX_RETRIES = 2
INITIAL_RETRY_DELAY_S = 0.5
MAX_RETRY_DELAY_S = 8.0
RETRY_JITTER = 0.25
MAX_RETRY_AFTER_S = 60.0
RETRYABLE_STATUS_CODES = frozenset({408, 409, 429})  # plus every 5xx
# An overloaded endpoint (Anthropic's 529 `overloaded_error`, a 503, a gateway's 502 / 504) is waited out like a
# rate limit, not retried twice and given up (engine/_faults.py has the table of answers).
OVERLOAD_STATUS_CODES = frozenset({502, 503, 504, 529})
# A rate-limited or overloaded call is not a failure: it is retried, without a count, until its endpoint has
# answered nothing for this long (a daily limit does not pass) ...
RATE_LIMIT_PATIENCE_S = 600.0
# ... or until this one request was refused more than this many times, over at least this long, while its
# endpoint answered other calls and refused none (OpenAI answers a request larger than the tokens-per-minute limit
# with a 429 on every try; a real limit's `retry-after`, honoured, lets the request through).
OWN_REFUSALS = 4
OWN_REFUSAL_PATIENCE_S = 20.0

# Pacing per endpoint (engine/_pacing.py).
PACING_HEADROOM = 0.97  # of a known limit: what calls are paced at (our clock and the provider's differ a little)
PROBE_WINDOW = 1  # calls in flight to an endpoint that has not answered yet (its answer may state the limits) ...
PROBE_HOLD_S = 1.0  # ... one more every this many seconds while none has (a hung first call holds no one back)
SLOW_START_WINDOW = 16  # then, when it stated none: calls in flight, one more per answer ...
SLOW_START_OPEN = 256  # ... until this many, when the endpoint counts as unlimited until it sends a 429
RATE_LIMIT_PAUSE_S = 1.0  # the endpoint's pause after a 429 without `retry-after` (doubling while nothing answers)
RATE_DECREASE = 0.9  # a 429 sets a pace learned from 429s to this share of the pace refused (or of what got through)
RATE_PROBE_PER_S = 0.2  # while answers come, a pace learned from 429s grows this much a second ...
RATE_NEAR_REFUSED = 0.85  # ... below this share of the last pace refused, and ...
RATE_CREEP_PER_S = 0.02  # ... this much above it (also how a known limit's headroom, cut by 429s, grows back)
PACING_MIN_MEASURE_S = 2.0  # what got through is measured over at least this long before it sets the pace
PACING_MIN_RPS = 1 / 60  # the slowest pace learned from 429s: one call a minute
PACING_STATUS_INTERVAL_S = 0.5  # how often a run's progress bar is told how a rate limit holds it back

# Calls.
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_CONCURRENCY = 32
DEFAULT_REASKS = 1
# The embedded judge runs one call at a time on the CPU: queue in the engine, and allow slow machines time.
LOCAL_MAX_CONCURRENCY = 1
LOCAL_TIMEOUT_S = 600.0

# Expected completion lengths used by cost estimates before a run.
ESTIMATED_SCORE_TOKENS = 12
ESTIMATED_EXPLANATION_TOKENS = 120

# Probabilities: alternatives asked for at each token (OpenAI allows up to 20), and the tokens a prefilled answer
# needs to finish (the value, its closing quote and brace).
TOP_LOGPROBS = 10
PREFILLED_MAX_TOKENS = 8
# A reference-grounded answer prefilled up to its `matches_reference`: yes or no, then the verdict after it
# (`yes", "verdict": "not sure"}` is about 11 tokens).
GROUNDED_PREFILLED_MAX_TOKENS = 16
# A prefilled answer that goes on to explain itself (a rubric verdict, then its explanation).
PREFILLED_EXPLAINED_MAX_TOKENS = 200
# The embedded judge's whole answer when it explains first (a JSON verdict whose explanation asks for a sentence or
# two: 50–120 tokens measured). At ~9 tokens/s a reply that falls into repeating itself would otherwise run to the
# runtime's 1,024-token cap (95 s seen in the aspects tutorial) before it is re-asked.
LOCAL_ANSWER_MAX_TOKENS = 300
# Commit-first: the answer a solver makes before grading (a short answer asked for; this caps a longer one).
SOLVER_MAX_TOKENS = 64
# Pairwise: a comparison is a tie when P(a better) and P(b better) differ by no more than this. 0 (a tie only when
# they are equal) measured best on LLMBar Natural for the embedded judge: pointwise 75.0 % vs 72.5 % at 0.05,
# the probability method 52.5 % vs 17.5 % (its orders' averages sit near 0.5). Raise it where ties are labels.
DEFAULT_TIE_MARGIN = 0.0
