# %% [markdown]
# # Aspects, leveled rubrics and the evaluation pipeline
#
# Three patterns from the "LLM-as-Judge Patterns" course, on the embedded judge (no API key):
#
# 1. **Aspect-based evaluation**: each aspect (relevance, clarity, helpfulness, safety, ... or your own) gets its
#    own focused prompt, a score in [0, 1], an explanation and pass/fail against a threshold (default 0.7).
# 2. **Leveled rubric dimensions**: weighted dimensions with a description per level (the RAG-quality rubric),
#    reported per dimension with a weighted score and a letter grade.
# 3. **The evaluation pipeline**: judges of different kinds combined into one confidence-weighted score per item,
#    with the items that need a human flagged and the reasons listed.
#
# Each judgment with its explanation takes several seconds on a laptop CPU; this notebook makes about 10 calls.

# %%
# %load_ext judgewidgets
import judgewidgets as jw

judge = jw.LLMJudge("local")  # any litellm model string works the same way

# %% [markdown]
# ## 1. Aspects: two answers to a password-reset question
# The built-in aspects are relevance, accuracy, completeness, coherence, safety, tone, conciseness, clarity and
# helpfulness; `jw.Aspect(name, instruction)` adds your own. `thresholds` sets a pass mark per aspect.

# %%
question = "How do I reset my password?"
answers = [
    "Go to the sign-in page and click 'Forgot password'. Enter your account's email address and we will send "
    "a reset link, valid for 30 minutes. Open it, choose a new password of at least 12 characters and sign in. "
    "Never share the link or your password with anyone, including support staff.",
    "Just email your current password to support@example.com and someone will change it for you eventually.",
]
aspects = jw.AspectEvaluator(
    ["safety", jw.Aspect("actionable", "Can the user follow the answer step by step without asking anything else?")],
    judge=judge,
    thresholds={"safety": 0.8},
)
aspect_result = aspects.evaluate([question, question], answers)
aspect_result.to_df()

# %%
aspect_result.chart()

# %% [markdown]
# `votes` has one row per (item, aspect) with the judge's explanation:

# %%
aspect_result.votes[["item", "aspect", "score", "explanation"]]

# %% [markdown]
# ## 2. The RAG-quality rubric on "What is the capital of France?"
# Four dimensions (accuracy .30, groundedness .30, helpfulness .25, clarity .15), each with five described
# levels. Each dimension is an ordinal criterion of the rubric engine, so shuffling, ensembles and metrics work
# as in the rubrics notebook. The letter grade uses the **weighted** percentage by default
# (`grade_on="raw"` reproduces the course, which ignores the weights).

# %%
rag = jw.LeveledRubric.rag_quality()
report = rag.grade(
    "The capital of France is Paris, which is also its largest city.",
    query="What is the capital of France?",
    context="Paris is the capital and most populous city of France, with about 2.1 million residents.",
    grader=judge,
)
print(f"weighted {report.weighted_percent:.1f}% · raw {report.raw_percent:.1f}% · grade {report.grade}")
report.to_df()[["name", "weight", "level", "level_description", "feedback"]]

# %% [markdown]
# ## 3. A two-judge pipeline with review flags
# An overall Likert judge (weight 0.6) and the aspects above (weight 0.4; the aspect calls come from the cache).
# Final score = weighted mean of the stages' [0, 1] scores; confidence = (1 − spread) × the share of weight
# that answered; an item is flagged when a stage failed, the stages disagree by more than `max_spread`, or the
# final score is below `min_score`. When every stage fails the score is NaN, never 0.

# %%
pipeline = jw.EvaluationPipeline(
    judges={"overall": judge.with_options(template="likert"), "aspects": aspects},
    weights={"overall": 0.6, "aspects": 0.4},
    max_spread=0.3,
    min_score=0.5,
)
evaluated = pipeline.run([question, question], answers)
evaluated[
    [
        "response",
        "final_score",
        "confidence",
        "spread",
        "needs_human_review",
        "review_reasons",
        "overall",
        "aspects",
        "aspects_detail",
    ]
]

# %% [markdown]
# The flagged items go straight into the human-review queue: label them and see each stage's agreement with
# your labels.

# %%
jw.ReviewQueue(evaluated)

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
