# %% [markdown]
# # judgewidgets quickstart
#
# LLM-as-a-judge in a notebook: a panel of judges scores answers, and you get a DataFrame of per-judge and
# aggregated scores plus a chart of where the judges disagree. Everything here runs **without an API key** on the
# embedded judge (`model="local"`, Qwen2.5-Coder-1.5B-Instruct running in-process). The first call loads the model
# (a few seconds); each judgment then takes a few seconds on a laptop CPU.

# %%
# %load_ext judgewidgets
import judgewidgets as jw

examples = jw.load_example()  # 4 factual questions × 2 answers (a good and a bad one), with reference answers
examples

# %% [markdown]
# ## A panel of judges
# Two judges on the same embedded model, asked in two ways: a 1–5 Likert rating and a correct / not sure /
# incorrect verdict. Both are normalised to [0, 1]; `avg` averages them and `disagreement` is the spread between
# judges. Each answer is judged against its question's reference answer: a reference is what helps a small judge
# most.
#
# The embedded judge's scores are *probability-weighted*: it writes one answer, but at that token it weighed every
# answer it could give, and its score is the expected score under those probabilities (G-Eval). So the table shows
# both: `likert wrote` is the answer it wrote with the probability it gave it, `likert expected score` the score.
# A written 5 of 5 is 1.0 by itself; a judge that gave lower answers part of its probability scores below 1 (0.80,
# say).

# %%
panel = jw.LLMPanel(
    [
        jw.LLMJudge("local", template="likert", name="likert"),
        jw.LLMJudge("local", template="true_false_uncertain", name="verdict"),
    ]
)
result = panel.score(examples["prompt"], examples["response"], examples["reference"])
jw.scoring.readable_table(result, label=examples["label"])

# %% [markdown]
# `result.to_df()` is the same result as a DataFrame to compute with: one column per judge, `avg`, `median`,
# `min`, `max` and `disagreement`.

# %%
table = result.to_df()
table.groupby(examples["label"])["avg"].mean()  # good answers should score higher than bad ones

# %%
result.chart()

# %% [markdown]
# `result.votes` is the tidy table behind it: one row per judge and item, with the raw answer, latency, tokens
# and cost (eleven columns; a few are shown here, `result.votes.columns` lists them all). Judgments are cached on
# disk, so running a cell again costs nothing.

# %%
result.votes[["item", "judge", "score", "raw", "latency_s", "cached"]].head()

# %% [markdown]
# ## No reference answer? The judge answers first
# The examples above come with reference answers. Your own data usually does not, and then a small judge passes
# answers that are subtly wrong. So without a reference the embedded judge, under a template that judges
# correctness (likert, true_false_uncertain, true_false, continuous), asks its own model the question first (its
# short answer, once per question, cached) and grades each response against that answer when it is short, as
# against a reference you gave. It does so for a question that asks for one fact; an open instruction (write,
# summarise, count these words) is graded as without a reference. `reference_source` and `made_reference` say what each verdict was graded against;
# `commit_first=False` turns it off, as for the "no reference" judge here.

# %%
questions = [
    "What is the atomic number of carbon?",
    "What is the derivative of sin(x)?",
    "How many days are in a leap year?",
]
answers = ["Carbon has atomic number 12.", "The derivative of sin(x) is -cos(x).", "366 days."]
plain = jw.LLMJudge("local", template="true_false_uncertain", name="no reference", commit_first=False)
first = jw.LLMJudge("local", template="true_false_uncertain", name="answers first")  # the default
without = plain.score(questions, answers).to_df()
committed = first.score(questions, answers).to_df()
committed.assign(without_reference=without["score"])[
    ["prompt", "response", "without_reference", "score", "made_reference"]
]

# %% [markdown]
# The first two answers are wrong (carbon is 6; the derivative is cos(x)), and without a reference the judge lets
# both through (0.99 and 0.87). Having answered "6" itself, it marks the carbon answer down (0.01): answering first
# turned that verdict right. The other two show its limits. It answered "cos(x)" and still passes "-cos(x)" (0.90):
# a 1.5B judge misses a sign, with a reference or without. And it answered "29" days for a leap year, so it grades
# the right answer, 366, against its own mistake and fails it (0.02, where it passed it at 0.95 without). On 50 short questions the embedded model answered 46
# right; a reference you give always wins over its answer, and a stronger model can answer instead
# (`solver="openai/gpt-4o"`).

# %% [markdown]
# ## The `%%judge` magic
# `%load_ext judgewidgets` (first cell) registers the magic; the charts need no setup (they draw offline with or
# without it). Judge items written straight into a cell:

# %%
# %%judge --judges local --template likert
prompt: What is the capital of Australia?
response: Canberra is the capital of Australia.

prompt: What is the capital of Australia?
response: Sydney, because it is the biggest city.

# %% [markdown]
# No reference is given here, so the judge answered "Canberra" first and graded both answers against it: about 0.8
# for Canberra and 0.2 for Sydney (with `--commit-first off`, about 0.6 and 0.3). `%%judge?` lists every option: `--data DF --prompt-col C --response-col C` judges a DataFrame, `--rubric`
# grades against a rubric, `--mode pairwise|tournament|sequential`, `--out NAME` keeps the result.
#
# ## Build a panel with a widget
# Add judges (the embedded `local`, or any litellm model string), pick a template and aggregation, and click
# **Run**: a progress bar fills, then the table and chart appear. `builder.panel` is the configured panel and
# `builder.result` the result.

# %%
builder = jw.PanelBuilder(examples.head(4))
builder.add_judge("local")
builder

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
