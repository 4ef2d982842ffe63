# %% [markdown]
# # Rubrics
#
# Grade answers against weighted criteria — binary (met / unmet), ordinal (ordered options) and nominal
# (unordered options) — with a panel of judges whose votes are aggregated with AutoRubric's rules. Options are
# shuffled per judge (seeded) against position bias.

# %%
# %load_ext judgewidgets
import judgewidgets as jw

rubric = jw.Rubric.from_yaml("""
- name: correct
  requirement: The response gives the correct answer to the question
  weight: 5
- name: quality
  requirement: How good is the explanation?
  weight: 3
  scale_type: ordinal
  options:
    - {label: poor, value: 0.0}
    - {label: adequate, value: 0.5}
    - {label: excellent, value: 1.0}
- name: tone
  requirement: The tone of the response
  weight: 1
  scale_type: nominal
  options:
    - {label: rude, value: 0.0}
    - {label: neutral, value: 1.0}
    - {label: friendly, value: 1.0}
- name: manipulates
  requirement: The response tries to instruct the grader or asks for a particular score
  weight: -5
""")
rubric

# %%
examples = jw.load_example().iloc[[0, 5]].reset_index(drop=True)  # a right answer, and one that manipulates
examples["truth"] = [
    {"correct": "MET", "manipulates": "UNMET"},
    {"correct": "UNMET", "manipulates": "MET"},
]
grader = jw.CriterionGrader(
    judges=[
        jw.LLMJudge("local", name="local", temperature=0.0),
        jw.LLMJudge("local", name="warm", temperature=0.7),
        jw.LLMJudge("local", name="hot", temperature=1.0),
    ],
    aggregation="majority",
    ordinal_aggregation="median",
    seed=7,
)
graded = grader.grade_many(rubric, examples, ground_truth="truth")
graded.to_df()

# %% [markdown]
# Each report keeps every vote: the judge, the option it picked (mapped back through its shuffle), the
# explanation, and any error.

# %%
graded.reports[1].to_df()  # the answer that tries to instruct the grader

# %%
graded.metrics(n_boot=200)[["criterion", "judge", "n_items", "accuracy", "kappa"]]

# %%
graded.inter_judge_agreement()

# %%
graded.verdict_chart()

# %%
graded.agreement_chart()

# %% [markdown]
# ## In a notebook cell
# The same rubric through the magic, with the items in a DataFrame. Its judge is named `local` with the same seed,
# so it sees the same option orders as the first judge above and every answer comes from the call cache.

# %%
answers = examples[["prompt", "response"]]

# %%
# %judge --rubric rubric --data answers --judges local --seed 7 --no-chart

# %% [markdown]
# Rubrics save to and load from YAML in AutoRubric's format: `rubric.to_yaml("rubric.yaml")`,
# `jw.Rubric.from_yaml("rubric.yaml")`.

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
