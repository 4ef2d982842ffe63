# %% [markdown]
# # Agreement and calibration
#
# Should you trust a judge? Measure how it agrees with people and with other judges, calibrate it with scored
# examples, and send the items it is unsure about to a human.

# %%
# %load_ext judgewidgets

import judgewidgets as jw

pandalm = jw.datasets.pandalm()  # Wang et al., 2023 (Apache-2.0); annotators' labels A, B or tie
humans = pandalm[["annotator1", "annotator2", "annotator3"]]
jw.agreement.agreement_report(humans).pairs

# %%
print("Fleiss κ:", jw.agreement.fleiss_kappa(humans))
print("Krippendorff α:", jw.agreement.krippendorff_alpha(humans, level="nominal"))

# %% [markdown]
# The authors report pairwise Cohen κ 0.85 / 0.88 / 0.86; the numbers above are computed from their file.
#
# ## The embedded judge against the human majority
# Eight of the short pairs (under 400 characters in all), so the local judge gets through them in a few minutes.

# %%
length = pandalm[["question", "response_a", "response_b"]].apply(lambda column: column.str.len()).sum(axis=1)
pairs = pandalm[length < 400].head(8)  # `label` is the human majority
judged = jw.PairwiseJudge("local").compare_many(pairs)
print("agreement with the human majority:", jw.agreement.accuracy(judged["winner"], judged["label"]))
judged[["winner", "label", "consistent"]]

# %% [markdown]
# Eight pairs are far too few to measure a judge: on a seeded sample of 200 PandaLM pairs the same judge agrees
# with the human majority on 64.0 % (κ 0.33; gpt-3.5-turbo 69.8 %, κ 0.48), and the section below measures a
# judge properly.
#
# The embedded judge compares by scoring each answer alone (`method="pointwise"`), so the order in which a pair is
# shown cannot decide it. `jw.position_bias` shows that: consistency is the share of pairs whose two orders agree,
# first-slot preference the share of verdicts that chose the first slot (0.5 is unbiased).

# %%
jw.position_bias(judged)[["judge", "n_pairs", "consistency", "first_slot_preference"]]

# %% [markdown]
# ## How good is my judge?
# `jw.meta_evaluate` measures any judge — the local one, a hosted model, a panel, another pairwise method — on
# labelled sets that ship with the package: LLMBar's five subsets (which answer follows the instruction; Zeng et
# al., 2024, MIT) and PandaLM's human-annotated pairs (Apache-2.0). Each pair is judged in both orders, the way
# the LLMBar paper measured GPT-4, ChatGPT, LLaMA-2 and the rest, and the table puts the judge beside those
# published numbers. Ten Natural pairs here (about a minute); `python benchmarks/judge_quality.py` runs all 419.

# %%
report = jw.meta_evaluate(jw.PairwiseJudge("local"), "llmbar", subsets=["Natural"], n=10)
report.table[["judge", "subset", "n", "accuracy", "positional_agreement", "first_slot_preference", "source"]]

# %% [markdown]
# Accuracy is averaged over both orders; positional agreement is the share of pairs whose two orders agree, the
# number a judge that leans on position loses. Ten pairs is a small sample, so read the accuracy with a margin of
# about ±15 points; the chart shows the same rows.

# %%
report.chart()

# %% [markdown]
# ## Calibrating with anchors
# Scored examples in the prompt pull the judge's scale towards yours.

# %%
examples = jw.load_example()
anchors = [
    jw.Anchor(prompt="What is 7 times 8?", response="56.", score=5, explanation="correct and direct"),
    jw.Anchor(prompt="What is 7 times 8?", response="It is 54.", score=1, explanation="wrong"),
]
calibrated = jw.LLMPanel(
    [
        jw.LLMJudge("local", template="likert", name="plain"),
        jw.LLMJudge("local", template="likert", name="anchored", anchors=anchors),
    ]
)
scores = calibrated.score(examples["prompt"], examples["response"])
scores.to_df().assign(label=examples["label"]).groupby("label")[["plain", "anchored"]].mean()

# %% [markdown]
# ## The human-review queue
# Items where the judges disagree or score low come to you one at a time; label them and see each judge's
# agreement with your labels on the spot.

# %%
jw.ReviewQueue(scores, jw.ReviewPolicy(max_disagreement=0.15, min_score=0.6))

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
