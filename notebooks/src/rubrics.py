# %% [markdown]
# # Rubrics
#
# Grade answers against weighted criteria — binary (met / unmet), ordinal (ordered options) and nominal
# (unordered options) — with a panel of judges whose votes are aggregated with AutoRubric's rules. Options are
# shuffled per judge (seeded) against position bias.
#
# The embedded judge is asked each binary criterion as a statement about the response ("is this statement
# correct?"; for a flaw such as `manipulates`, "is the response free of it?") and its answer is mapped back to
# MET / UNMET: asked AutoRubric's MET / UNMET question, this small model calls most things MET and reads a flaw
# backwards (`benchmarks/rubric_criteria.py`: 84 % vs 74 % right on 50 labelled criteria, every flaw right vs
# half). Hosted judges get AutoRubric's question; `CriterionGrader(binary_prompt=...)` chooses.

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
        # sampled judges, seeded so that a re-run samples the same verdicts
        jw.LLMJudge("local", name="warm", temperature=0.7, seed=7),
        jw.LLMJudge("local", name="hot", temperature=1.0, seed=7),
    ],
    aggregation="majority",
    ordinal_aggregation="median",
    seed=7,
)
# the reference answers are shown to the judges as ground truth: without one, this 1.5B judge takes
# "Charlotte Bronte wrote Pride and Prejudice" for a correct answer
graded = grader.grade_many(rubric, examples, reference_col="reference", ground_truth="truth")
graded.to_df()

# %% [markdown]
# Read the verdicts as a reviewer would. The binary criteria are right for every judge (the right answer correct
# and not manipulative, the other wrong and manipulative), and they decide the scores: 1.0 and 0.0. The multi-choice
# criteria are not to be trusted the same way: all three judges call the explanation in the wrong, manipulative
# answer "excellent" and its tone "friendly". Multi-choice criteria are this small judge's weak spot, measured in
# `benchmarks/rubric_choices.py`: on 36 labelled cases it picks the true option in 15 (a random pick: about 9), and
# it leans to the favourable option. With the embedded judge, phrase what matters as binary criteria; a hosted
# judge can be measured with the same script (`--model`).

# %% [markdown]
# Each report keeps every vote: the judge, the option it picked (mapped back through its shuffle), its
# probabilities and confidence, and any error. A judge explains its binary verdicts when built with
# `jw.LLMJudge("local", explanations=True)`: about 4 s more per criterion here, and measured on this judge it
# gets fewer verdicts right (74 % vs 84 %), so this tutorial leaves them off.
#
# Sampled judges (temperature above 0) add noise where the judge is unsure: the greedy judge's P(MET) for
# `manipulates` on the second answer is only about 0.6, and in one unseeded run both sampled judges said UNMET
# and outvoted it. The `confidence` on each vote, and the agreement statistics below, show where that can
# happen; seed sampled judges (as here) so a re-run reproduces their verdicts.

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
# The same rubric through the magic, with the items (and their reference answers) in a DataFrame: one embedded
# judge at temperature 0, like `local` above, so its binary verdicts are the same; the option orders of the
# multi-choice criteria are drawn per judge name, so those may differ.

# %%
answers = examples[["prompt", "response", "reference"]]

# %%
# %judge --rubric rubric --data answers --judges local --seed 7 --reference-col reference --no-chart

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
