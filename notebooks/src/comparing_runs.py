# %% [markdown]
# # Did the change make it better? Keeping and comparing runs
#
# An evaluation is rarely run once. You change a prompt, a model or a judge, run again, and ask two questions:
# *is the new version better overall*, and *on which items did it get worse?* This tutorial walks through that
# loop on the embedded judge (`model="local"`, no key):
#
# 1. judge version 1 of an assistant's answers and **save the run**;
# 2. change the assistant, judge its new answers and save that run too;
# 3. **load** a run back (as after a kernel restart) and look at the **run log**;
# 4. **compare** the two runs item by item: the change per judge with an interval, the regressions worst first;
# 5. turn the comparison into a **check** for a test suite or CI, in Python or on the command line.
#
# The whole notebook makes 32 judge calls (8 answers × 2 judges × 2 runs).

# %%
import pandas as pd

import judgewidgets as jw

# %% [markdown]
# ## The questions, and version 1 of the answers
# Eight questions with reference answers, and the answers version 1 of our assistant gave. (Here the answers are
# written out, so that the tutorial is quick and the same every time; in your work they come from your model or
# application.)

# %%
questions = pd.DataFrame(
    {
        "question": [
            "What is the capital of Australia?",
            "How many legs does a spider have?",
            "What is the chemical symbol for gold?",
            "Who wrote the novel Pride and Prejudice?",
            "At what temperature does water boil at sea level, in degrees Celsius?",
            "What is the largest planet in the Solar System?",
            "How many continents are there on Earth?",
            "What is the square root of 81?",
        ],
        "reference": ["Canberra", "Eight", "Au", "Jane Austen", "100 °C", "Jupiter", "Seven", "9"],
    }
)
answers_v1 = [
    "Canberra is the capital of Australia.",
    "Spiders have eight legs.",
    "The chemical symbol for gold is Ag.",
    "Jane Austen wrote Pride and Prejudice.",
    "Water boils at 100 °C at sea level.",
    "Saturn is the largest planet in the Solar System.",
    "There are seven continents.",
    "The square root of 81 is 9.",
]

# %% [markdown]
# ## Run 1: judge and save
# Two judges on the embedded model, each answer judged against its reference: a 1–5 Likert rating and a
# correct / not sure / incorrect verdict, both on [0, 1].
#
# `jw.Runs("evals")` is a folder of saved runs. `evals.save(result, "v1")` writes the run into `evals/v1/`: one
# Parquet file per table (the votes, the items) and `run.json` with what made it — each judge's settings (never a
# key), the package versions, a fingerprint of the inputs, the time, tokens and cost, and the headline scores.
# `overwrite=True` lets you run this notebook again; without it, saving never replaces a run.

# %%
panel = jw.LLMPanel(
    [
        jw.LLMJudge("local", template="likert", name="likert"),
        jw.LLMJudge("local", template="true_false_uncertain", name="verdict"),
    ]
)
evals = jw.Runs("evals")

run_1 = panel.score(questions["question"], answers_v1, questions["reference"])
evals.save(run_1, "v1", overwrite=True)
run_1.to_df()

# %% [markdown]
# ## The change, and run 2
# Version 2 of the assistant has a new system prompt asking for short answers. It fixed the two answers version 1
# got wrong (gold, the largest planet) — and it broke three others. That is the kind of change a single mean
# score hides, and what comparing item by item shows.

# %%
answers_v2 = [
    "Sydney.",
    "A spider has 8 legs.",
    "Au.",
    "Charlotte Brontë.",
    "100 °C.",
    "Jupiter.",
    "Seven.",
    "8.",
]
run_2 = panel.score(questions["question"], answers_v2, questions["reference"])
evals.save(run_2, "v2", overwrite=True)

# %% [markdown]
# ## A restart loses nothing
# A saved run comes back as the result it was — the same class, every method working — so nothing depends on
# the kernel that made it. `evals.table` is the run log: one row per saved run, read from each `run.json` alone.
# Runs of the same items have the same input fingerprint.

# %%
del run_1, run_2  # as after a kernel restart
before = jw.load("evals/v1")  # or evals["v1"]
before.summary()

# %%
evals.table[["name", "when", "kind", "judges", "items", "mean_score", "latency_s", "fingerprint"]]

# %% [markdown]
# ## Compare the runs
# `evals.compare("v1", "v2")` (or `jw.compare(before, after)` on results or folders) pairs each item of one run
# with the same item of the other — by the question and its reference, so new answers still pair up — and per
# judge (and `overall`, the panel's average) reports the mean score and the pass rate (score ≥ 0.5) before and
# after, the change with a 95 % interval from a paired bootstrap of the items, the exact sign test's p-value,
# and how many items got better, worse or stayed the same.
#
# With eight items the intervals are wide: a change of a few answers is not yet evidence of a trend. That is
# what the interval is for — and why the regressions themselves, item by item, are worth reading.

# %%
comparison = evals.compare("v1", "v2")
comparison

# %%
comparison.summary[["judge", "metric", "before", "after", "change", "low", "high", "p_value", "better", "worse"]]

# %% [markdown]
# ### Which items got worse?
# `regressions()` lists the items whose score fell, the worst first, with the question, both answers and (when the
# judges were asked for them with `explanations=True`) both runs' explanations; `improvements()` the ones that
# rose. The per-item table for every judge is `comparison.to_df()`.

# %%
comparison.regressions()[["input", "response_before", "response_after", "before", "after", "delta"]]

# %%
comparison.improvements()[["input", "response_before", "response_after", "before", "after", "delta"]]

# %% [markdown]
# The chart shows each item's score before and after per judge (a falling line is a regression; hover for the
# texts), above each judge's change with its interval.

# %%
comparison.chart()

# %% [markdown]
# `pager()` pages through the regressions one judge at a time, worst first, with the texts side by side; and
# `evals.browser()` lists the saved runs, lets you pick two and shows their comparison.

# %%
comparison.pager()

# %%
evals.browser()

# %% [markdown]
# ## A check for CI
# `assert_no_regression(margin=...)` raises `jw.RegressionError` — an `AssertionError`, so pytest reports it as a
# failed test — when a judge's mean score fell by more than the margin, naming the judges and the worst items.
# `rule="interval"` is stricter: it fails unless the interval's lower bound stays above −margin, so a small or noisy
# evaluation cannot pass by luck.

# %%
try:
    comparison.assert_no_regression(margin=0.05)
    print("no regression beyond 0.05")
except jw.RegressionError as failed:
    print(failed)

# %% [markdown]
# The same check runs from a shell: `judgewidgets compare` prints the comparison and exits with status 1 on a
# regression beyond `--margin` (2 on bad usage), so a CI step fails on it. `judgewidgets score ... --save FOLDER`
# keeps a run from the command line.

# %%
# !judgewidgets compare evals/v1 evals/v2 --margin 0.05 --show 3; echo "exit status: $?"

# %% [markdown]
# ## Where next
# - `result.save(path)` and `jw.load(path)` work for every result kind: panels, rubric gradings, pairwise
#   comparisons and tournaments, pipelines, sequential ratings, cascades, alignment reports and estimates.
# - `jw.compare` also compares rubric gradings, aspect results, pipeline tables, pairwise comparisons (the change in
#   win rate), cascades (their verdicts; abstentions unscored) and sequential ratings, and any table with a
#   `score` column.
# - `result.log_to_mlflow(run_name="v2")` logs a run into MLflow (`pip install 'judgewidgets[mlflow]'`).
