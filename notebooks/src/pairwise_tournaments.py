# %% [markdown]
# # Pairwise judging and tournaments
#
# Which of two answers is better? The judge sees both orders, so a preference for the first slot cannot decide
# the verdict. Tournaments rank many candidates, and Bradley–Terry ratings come with bootstrap intervals.

# %%
# %load_ext judgewidgets

import judgewidgets as jw

judge = jw.PairwiseJudge("local")
r = judge.compare("What is the capital of Australia?", "Canberra.", "Sydney.")
r.winner, r.consistent, r.confidence

# %% [markdown]
# ## Accuracy and position bias on LLMBar
# LLMBar's Natural set (Zeng et al., 2023; MIT) has instruction-following pairs with a gold label; it ships with
# the package as `jw.datasets.llmbar`. A slice of its short pairs (under 400 characters in all, so the local judge
# gets through them in a minute or two):

# %%
llmbar = jw.datasets.llmbar("Natural")
length = llmbar[["question", "response_a", "response_b"]].apply(lambda c: c.str.len()).sum(axis=1)
pairs = llmbar[length < 400].head(8)
compared = judge.compare_many(pairs)
compared[["winner", "p_a_better", "confidence", "label", "error"]]

# %%
print("accuracy:", (compared["winner"] == compared["label"]).mean())
jw.position_bias(compared)

# %% [markdown]
# Read the bias table before the accuracy. A first-slot preference near 1 means a judge chose whichever answer it
# read first; asked to write its verdict (`method="verdict"`), the 1.5B embedded judge does exactly that on
# LLMBar, and every pair becomes an inconsistent tie. So its default is `method="pointwise"`: each answer is scored
# alone (the expected score under the judge's probabilities) and the pair goes to the better score, with
# `p_a_better` the chance that answer a's score beats b's. Position cannot decide, so both orders agree
# (consistency 1, first-slot preference 0.5). `method="probability"` instead reads P(A) and P(B) from the verdict
# token in both orders and averages them; `jw.meta_evaluate` measures each method on all of LLMBar.
#
# ## Ratings from recorded battles
# `jw.bradley_terry` takes any table of (model_a, model_b, winner) — here Arena-Hard's 1,348 judged battles.

# %%
battles = jw.datasets.arena_hard()
ratings = jw.bradley_terry(battles, bootstrap=1000, seed=0)
ratings[["rank", "candidate", "rating", "ci_low", "ci_high", "wins", "losses", "ties"]].round(0)

# %% [markdown]
# `ratings` has four more columns: `games`, and the logit-scale strengths behind the ratings (`strength`,
# `strength_ci_low`, `strength_ci_high`). `ratings.columns` lists them, and
# `pd.set_option("display.max_columns", None)` shows every column of a wide table.

# %% [markdown]
# ## A tournament of prompt variants
# Five prompt variants answered ten questions; an adaptive tournament spends its 24 comparisons where the ranking
# is least certain (10 pairs × 10 questions would be 100 for a round robin).

# %%
questions = [
    "What is the boiling point of water at sea level?",
    "Who wrote Hamlet?",
    "What is 12 times 12?",
    "What is the capital of Japan?",
    "How many continents are there?",
    "What gas do plants absorb?",
    "Who painted the Mona Lisa?",
    "What is the largest planet in the Solar System?",
    "How many minutes are in an hour?",
    "What is the chemical symbol for gold?",
]
candidates = {
    "precise": [
        "100 °C (212 °F) at sea level.",
        "William Shakespeare.",
        "144.",
        "Tokyo.",
        "Seven.",
        "Carbon dioxide (CO2).",
        "Leonardo da Vinci.",
        "Jupiter.",
        "60.",
        "Au.",
    ],
    "chatty": [
        "Water boils at 100 degrees Celsius when you are at sea level, which is 212 F.",
        "Hamlet was written by William Shakespeare around 1600.",
        "12 times 12 is 144.",
        "The capital of Japan is Tokyo, its largest city.",
        "There are seven continents on Earth.",
        "Plants absorb carbon dioxide from the air for photosynthesis.",
        "The Mona Lisa was painted by Leonardo da Vinci in the early 1500s.",
        "Jupiter is the largest planet in our Solar System.",
        "An hour has 60 minutes.",
        "Gold's chemical symbol is Au, from the Latin aurum.",
    ],
    "hedging": [
        "Probably around 100 °C, I think.",
        "I believe it was Shakespeare.",
        "Maybe 144?",
        "Tokyo, if I remember right.",
        "Seven, I think, depending on how you count.",
        "Probably carbon dioxide.",
        "Leonardo da Vinci, I believe.",
        "Jupiter, most likely.",
        "Usually 60.",
        "I think it is Au.",
    ],
    "wrong": [
        "50 °C.",
        "Charles Dickens.",
        "124.",
        "Kyoto.",
        "Five.",
        "Oxygen.",
        "Michelangelo.",
        "Saturn.",
        "100.",
        "Ag.",
    ],
    "evasive": [
        "It depends on many things.",
        "Many people wrote plays.",
        "Math is fun!",
        "Japan has many cities.",
        "It depends on the definition.",
        "Plants need many things.",
        "A famous painter.",
        "Planets are big.",
        "Time is relative.",
        "Chemistry is complex.",
    ],
}
tournament = jw.Tournament(judge=judge, format="adaptive", budget=24, seed=0)
ranked = tournament.run(questions, candidates)
ranked.ranking[["rank", "candidate", "rating", "ci_low", "ci_high", "wins", "losses", "ties"]].round(0)

# %% [markdown]
# The intervals are bootstrap intervals over comparisons (both orders of a comparison are resampled together).
# With this few comparisons a candidate often wins every game it plays, where maximum likelihood would put it at
# infinite strength; the fit then uses a weak prior on the strengths for the estimate and every resample alike
# (`ranked.ranking.attrs["penalised"]` says so), and the intervals stay a few logits wide.

# %%
ranked.chart()

# %%
jw.TournamentView(ranked)

# %% [markdown]
# ### Pointing the same code at a hosted provider
# Every `"local"` above is a model string. Swap in any [litellm](https://docs.litellm.ai) model and set its key:
#
# ```python
# import os
# os.environ["OPENAI_API_KEY"] = "sk-..."          # or ANTHROPIC_API_KEY, GEMINI_API_KEY, ...
# judges = ["openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-20241022", "local"]
# # or your own OpenAI-compatible server (vLLM, SGLang, llama.cpp, a litellm proxy):
# jw.LLMJudge("openai/my-model", api_base="http://127.0.0.1:8000/v1")
# ```
# Check the bill first with `panel.estimate_cost(prompts, responses)`.
