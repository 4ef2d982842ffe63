# %% [markdown]
# # Judging conversations
#
# Chat assistants and agents are judged on conversations, not on single answers: did the last reply respect a
# constraint set three turns earlier, did the assistant contradict itself, did it call the right tool? This tutorial
# hands judgewidgets conversations in the OpenAI chat format (tool calls included) and looks at:
#
# 1. **what is judged**: the last turn in the light of the history, the whole conversation, or each turn;
# 2. **what the judge reads**: every message fenced as a numbered turn with its role;
# 3. a **labelled set** of twin conversations that differ only in the last reply, judged one by one and side by
#    side, and what the embedded judge gets right and wrong;
# 4. **per-turn judging** with its heatmap, and the **disagreement explorer** showing a conversation as turns;
# 5. a conversation **too long** for the judge's context, and the errors a malformed one gets before any call.
#
# Everything runs on the embedded judge (`model="local"`, no key) in about two minutes on two cores.

# %%
import pandas as pd

import judgewidgets as jw

# %% [markdown]
# ## A conversation, and what of it is judged
# A conversation is a list of messages `{"role", "content"}`: system, user, assistant, and tool results answering
# the assistant's tool calls. Here an agent checks the weather for a user who said, in the first turn, that they
# think in Fahrenheit.

# %%
trip = [
    {"role": "system", "content": "You are a travel assistant. Tools: get_weather(city) returns the forecast in °C."},
    {"role": "user", "content": "I'm from Chicago, so please always give me temperatures in Fahrenheit."},
    {"role": "assistant", "content": "Noted: temperatures in °F from now on. Where are you headed?"},
    {"role": "user", "content": "Lisbon on Friday. Will I need a jacket?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"friday": {"high_c": 16, "low_c": 9, "rain": "light"}}'},
    {"role": "assistant", "content": "Friday in Lisbon: a high of 61 °F and a low of 48 °F with light rain, so yes."},
]
print(jw.conversations.transcript(jw.conversations.parse_conversation(trip).messages))

# %% [markdown]
# `target` says what is judged:
#
# - `"last_turn"` (the default): the assistant's last turn — here the tool call, its result and the answer — read in
#   the light of every message before it (MT-Bench's setting for a second turn);
# - `"whole"`: the assistant's part of the whole conversation, for conversation-level qualities (five built-in
#   templates: `task_completion`, `consistency`, `knowledge_retention`, `role_adherence`, `user_frustration`);
# - `"each_turn"`: every turn of the assistant, each in the light of the messages before it and never after.
#
# The judge reads each message as a numbered turn fenced with its role, the tool call written out, and the judged
# turn apart in its own fence; the system message says what the material is. A turn's text reaches the judge
# exactly as written, except the package's own tag names, so a user turn cannot close its turn or pose as the
# assistant. `judge.preview(...)` shows the request for the first item without making a call. Its `n` numbers
# messages, so the judged reply here is messages 5-7; the tables count the assistant's turns instead, where the same
# reply is `turn 2` (its second). The preview's first line gives both:

# %%
judge = jw.LLMJudge("local", template="likert", name="likert")
print(judge.preview(conversations=[trip]))  # the request as it would be sent; no call is made

# %% [markdown]
# Scoring takes `conversations=` (lists of messages or their JSON text) or a DataFrame column of them
# (`data=`, `conversation_col=`); the table shows the last user message as the prompt, the judged turn as the
# response and its number among the assistant's turns as `turn` (empty for the whole conversation). Judged here as a
# reply, and as a whole conversation on whether the assistant kept what the user said:

# %%
last_turn = judge.score(conversations=[trip])
whole = jw.LLMJudge("local", template="knowledge_retention").score(conversations=[trip])
pd.concat([last_turn.to_df().assign(judged="last turn"), whole.to_df().assign(judged="whole")])[
    ["judged", "turn", "prompt", "score", "raw"]
]

# %% [markdown]
# ## Twin conversations: a labelled set
# `jw.datasets.conversations()` holds 45 pairs of conversations written for judgewidgets: each pair shares its
# history and differs only in the assistant's last reply, one good and one bad for a reason that is not a matter of
# taste — the reply breaks a constraint the user set in the first turn, contradicts the assistant's own earlier
# statement, uses what the user corrected, gives what it refused before, or calls the wrong tool. Here are six pairs
# of the two kinds that hinge on something the user said earlier.

# %%
twins = jw.datasets.conversations(kinds=["forgets_constraint", "ignores_correction"])
twins = twins[twins["pair_id"].isin(twins["pair_id"].unique()[[0, 1, 2, 9, 10, 11]])].reset_index(drop=True)
twins[["id", "kind", "note"]]

# %% [markdown]
# A panel of two judges on the last turn of each: a 1–5 rating of the reply, and `knowledge_retention` (does the
# assistant keep what the user told it?) asked of the same turn. A good twin should score above its bad twin.

# %%
panel = jw.LLMPanel([judge, jw.LLMJudge("local", template="knowledge_retention", name="retention")])
verdicts = panel.score(data=twins, conversation_col="messages", target="last_turn")
table = verdicts.to_df()[["likert", "retention"]].assign(pair=twins["pair_id"], label=twins["label"])
paired = table.pivot(index="pair", columns="label", values=["likert", "retention"])
paired.columns = [f"{judge_name} {'good' if label else 'bad'}" for judge_name, label in paired.columns]
paired.assign(
    likert_orders_right=paired["likert good"] > paired["likert bad"],
    retention_orders_right=paired["retention good"] > paired["retention bad"],
).round(2)

# %% [markdown]
# Read the scores pair by pair before trusting any mean. The embedded judge is a 1.5-billion-parameter model: on a
# single reply it mostly rates fluency, and a fluent reply that quietly drops the user's constraint scores about as
# well as the one that keeps it. `benchmarks/conversations.py` measures this on all 90 conversations (the
# table is in the docs, `docs/benchmarks.md`): 45–52 % in every setting, which is
# chance. That is a finding about this judge, not about the method: the same code sends a hosted judge
# (`jw.LLMJudge("openai/gpt-4o-mini", ...)`) the same turns, and `judge.align(labelled, conversation_col=...)`
# measures any judge on your own labelled conversations before you trust it.
#
# Would the judge do better with both replies side by side? A pairwise judge reads the shared history once and the
# two replies, in both orders (the table's `label` says which reply is the good one):

# %%
pairs = jw.datasets.conversation_pairs(kinds=["forgets_constraint", "ignores_correction"])
pairs = pairs[pairs["pair_id"].isin(twins["pair_id"])].reset_index(drop=True)
pairwise = jw.PairwiseJudge("local", method="probability")
compared = pairwise.compare_many(pairs, progress=False)
compared.assign(right=compared["winner"] == compared["label"])[
    ["pair_id", "label", "winner_ab", "winner_ba", "winner", "consistent", "right"]
]

# %% [markdown]
# `winner_ab` and `winner_ba` are the verdicts with the replies shown in the two orders; `consistent` says whether
# they named the same reply. Where they disagree, the judge's choice followed the position, not the reply: that is
# the position bias the two orders exist to catch, and this judge shows a lot of it (on the whole set its two orders
# agree on 20 % of the pairs). `winner` then comes from the two orders' probabilities averaged, a tie when they are
# close, so it leans on how sure the judge was in each order rather than on either verdict alone.
#
# ### Reading the model instead of asking it
# The same small model does know which reply its conversation supports; asking it just does not show it. The
# likelihood method asks nothing: it makes the judge model write each reply, token by token, once after the whole
# conversation and once after only the last user message, and reads how much more likely the earlier turns make the
# reply (its pointwise mutual information with the history, in nats). A reply that drops what the user said earlier
# loses that support. Nothing is shown in an order, so there is no position to favour. It works with the embedded
# judge and llama.cpp servers, which report a given reply's probabilities; it costs a generated token per token of
# each reply, twice (about 15 s a pair here).

# %%
reader = jw.PairwiseJudge("local", method="likelihood")
read = reader.compare_many(pairs, progress=False)
read.assign(right=read["winner"] == read["label"])[["pair_id", "label", "winner", "p_a_better", "right"]].round(3)

# %% [markdown]
# Read rather than asked, the judge puts the good reply first in five of the six pairs, where asked it followed the
# slot. `p_a_better` is σ of the difference of the two replies' pmi: the judge model's own odds between them. The
# one it gets wrong shows what it cannot see: in `ignores_correction-01` the user corrects Jon's name in the *last*
# message, which both contexts hold, so the earlier turns give neither note an edge. On all 45 pairs of the set it
# orders 36 right (80 %), against 45–52 % asked (`docs/benchmarks.md`); compare replies to the same conversation with
# it, not scores across conversations.
#
# The probability comparison above, on MT-Bench's second turns (Zheng et al. 2023): `jw.datasets.mt_bench_pairs()`
# holds 27 pairs written on MT-Bench's questions — the user's first question, an assistant's answer, the follow-up
# question, and two second-turn replies, one right and one wrong (a plain mistake, a contradiction of the first
# answer, or a broken instruction). One pair of each kind:

# %%
mt_bench = jw.datasets.mt_bench_pairs().groupby("kind").head(1).reset_index(drop=True)
mt_compared = pairwise.compare_many(mt_bench, progress=False)
mt_compared.assign(right=mt_compared["winner"] == mt_compared["label"])[
    ["category", "kind", "flaw", "label", "winner_ab", "winner_ba", "winner", "right"]
]

# %% [markdown]
# ## Each turn, and the explorer
# With `target="each_turn"` every assistant turn is judged in the light of what came before it: `to_df()` has a row
# per turn, `by_conversation()` one row per conversation, and `turn_chart()` draws conversations × turns (hover a
# cell for the turn's text).

# %%
per_turn = judge.score(conversations=[trip, twins["messages"][0]], target="each_turn")
per_turn.by_conversation()

# %%
per_turn.turn_chart()

# %% [markdown]
# The disagreement explorer over the panel's verdicts shows a conversation as its turns: who said what, tool calls
# written out, the judged turn marked. Click a cell of the heatmap (or pick an item from the list) to read it with
# every judge's vote.

# %%
jw.DisagreementExplorer(verdicts)

# %% [markdown]
# ## Long conversations, and malformed ones
# A conversation longer than the judge's context is shortened by one stated rule: the opening (system message and
# first user turn) and the latest turns are kept, whole exchanges in the middle left out; the judge reads a line
# saying which turns are missing and the vote records it. The embedded judge takes 4,096 tokens; here a judge told it
# has 1,200 reads a 30-message chat:

# %%
long_chat = [trip[0], trip[1], trip[2]]
for day in range(1, 14):
    long_chat += [
        {"role": "user", "content": f"Day {day}: what should I see in Lisbon? Give me a couple of ideas."},
        {"role": "assistant", "content": f"Day {day}: the Alfama quarter in the morning, then a tram ride west."},
    ]
short = jw.LLMJudge("local", template="likert", context_window=1_200).score(conversations=[long_chat])
short.to_df()[["prompt", "score", "shortened"]]

# %% [markdown]
# A malformed conversation is one clear error before any model is asked — a missing role, an unknown role, an empty
# list, a tool result that answers no call:

# %%
for bad in (
    [{"content": "hello"}],
    [{"role": "customer", "content": "hello"}],
    [],
    [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "42"}],
):
    try:
        judge.score(conversations=[bad])
    except jw.InputError as error:
        print(f"InputError: {error}")

# %% [markdown]
# ## Where to go next
# - The conversations guide (`docs/guide/conversations.md`) covers pairwise comparisons of whole conversations,
#   tournaments of replies, rubrics graded on a conversation, the sequential rater, `%judge --conversation-col` and
#   the command line.
# - Align a judge with your own labels on conversations: `judge.align(labelled, conversation_col="messages")`.
