# %% [markdown]
# # Judges and panels
#
# Templates, weights, explanations, custom judges, consensus and the disagreement explorer — all on the embedded
# judge.

# %%
# %load_ext judgewidgets
import judgewidgets as jw

examples = jw.load_example()
prompts, responses = examples["prompt"], examples["response"]

# %% [markdown]
# ## Templates
# Each template asks the judge for a structured answer and maps it onto [0, 1]. The same reader also understands
# free text, which is what `jw.templates.parse` exposes.

# %%
[
    jw.templates.parse("likert", '{"score": 4}'),
    jw.templates.parse("continuous", "I give it 85"),
    jw.templates.parse("true_false_uncertain", "Incorrect."),
    jw.templates.parse("likert", "no idea"),
]

# %%
strict = jw.Template(
    name="factual",
    instruction="Is every factual claim in the response true? Answer true, partly or false.",
    choices={"true": 1.0, "partly": 0.5, "false": 0.0},
)
panel = jw.LLMPanel(
    [
        jw.LLMJudge("local", template="likert", name="likert", weight=2),
        jw.LLMJudge("local", template=strict, name="factual"),
        jw.LLMJudge("local", template="continuous", name="percent"),
    ],
)
result = panel.score(prompts, responses, examples["reference"])  # a reference answer helps a small judge most
result.to_df().drop(columns=["prompt", "reference"])

# %% [markdown]
# Judge weights add a `weighted_avg` column. `consensus()` gives one score per item with a confidence from the
# spread of the judges, and `review()` flags the items a person should look at, with the reasons.

# %%
result.consensus()

# %%
result.review(jw.ReviewPolicy(max_disagreement=0.2, min_score=0.5))

# %% [markdown]
# ## Where do the judges disagree?
# Click a cell of the heatmap (or pick an item) to read each judge's score.

# %%
jw.DisagreementExplorer(result)

# %% [markdown]
# ## Explanations and probability-weighted scores
# `explanations=True` asks each judge to justify its score (slower: the judge writes more). With
# `probability_weighted=True` the score is the expectation over the judge's probabilities for each answer
# (G-Eval), which separates near-ties better than the single most likely answer.

# %%
explained = jw.LLMJudge("local", template="likert", explanations=True, probability_weighted=True)
explained.score(prompts[:2], responses[:2]).to_df()

# %% [markdown]
# ## Generate, then judge
# `generate_and_score` first answers the prompts with a model, then scores the answers.

# %%
generated = jw.LLMPanel([jw.LLMJudge("local", template="likert")]).generate_and_score(
    ["Name the largest planet in the solar system."], llm="local", max_tokens=60
)
generated.to_df()

# %% [markdown]
# ## A custom judge
# Anything with a `name`, a `weight` and an async `ajudge(items, session, progress)` joins a panel — here a
# keyword check beside the model.

# %%
class MentionsReference:
    name, weight = "keyword", 1.0

    async def ajudge(self, items, session, progress):
        votes = []
        for i, item in enumerate(items):
            votes.append(jw.Vote(item=i, judge=self.name, score=float(item.reference.lower() in item.response.lower())))
            progress.advance()
        return votes


mixed = jw.LLMPanel([MentionsReference(), jw.LLMJudge("local", template="likert", name="likert")])
mixed.score(prompts, responses, references=examples["reference"]).to_df()[["response", "keyword", "likert", "avg"]]

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
