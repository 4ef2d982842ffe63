# %% [markdown]
# # Agreement and calibration
#
# Should you trust a judge? Measure how it agrees with people and with other judges, label items yourself and
# align the judge with your labels (its agreement measured on labels the alignment never used), and send the items
# it is unsure about to a human.

# %%
# %load_ext judgewidgets

import judgewidgets as jw

pandalm = jw.datasets.pandalm()  # Wang et al., 2023 (Apache-2.0); annotators' labels A, B or tie
humans = pandalm[["annotator1", "annotator2", "annotator3"]]
jw.agreement.agreement_report(humans, labels=["A", "tie", "B"]).pairs

# %%
print("Fleiss κ:", jw.agreement.fleiss_kappa(humans))
print("Krippendorff α:", jw.agreement.krippendorff_alpha(humans, level="nominal"))

# %% [markdown]
# The authors report pairwise Cohen κ 0.85 / 0.88 / 0.86; the numbers above are computed from their file.
# `labels=["A", "tie", "B"]` puts the labels in order, a tie between the two preferences, so the weighted κ
# (`kappa_linear`, `kappa_quadratic`) count "A against B" as a larger disagreement than "A against tie". Without an
# order, string labels have no distance between them and the weighted columns are NaN (the report, shown whole,
# says so).
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
# ## Your labels, your judge
# A judge's idea of "good" is not yours. Label some items yourself and align the judge with your labels.
#
# `jw.load_example("graded")` holds 36 answers to twelve two-part questions: each question answered completely,
# partly and wrongly. The grader here is strict: only complete answers pass. Label them in the queue below (type
# `p` or `f` and press Enter, or click). Each label is written to `graded_labels.jsonl` the moment you give it, so
# a kernel restart loses nothing and reopening the queue resumes where you stopped; the judges' verdicts on an item
# would stay hidden until you had labelled it.

# %%
graded = jw.load_example("graded")
queue = jw.LabelQueue(graded[["prompt", "response", "reference"]], kind="pass_fail", store="graded_labels.jsonl")
queue

# %% [markdown]
# Run top to bottom without a person at the keyboard, the strict grader's answers (the `label` column) are given
# by the code below: the same call the buttons make, so the file fills exactly as it would by hand.

# %%
for row, answer in enumerate(graded["label"]):
    if queue.model.record(row) is None:  # labels already in the file are kept
        queue.model.label(answer, row=row)
print(queue.model.progress())
queue.labels[["prompt", "response", "label", "who"]].head()

# %% [markdown]
# `judge.align` tries a few levers and keeps each only if it raises agreement on labels it did not use: a
# calibration map from the judge's score to P(you pass it), and labelled examples in the prompt, chosen from the
# other folds. Every number in its report is cross-fitted (5 folds): no item is judged, or decided, with its own
# label or its fold's in sight, so "after" is what you can expect on new items. It costs one call per labelled
# item per prompt tried; the progress bar says how many before the first.

# %%
judge = jw.LLMJudge("local", template="likert")
aligned = judge.align(queue.labels, label="label", levers=("rule", "examples"))
report = aligned.alignment_report
report.table[["rule", "n", "accuracy", "accuracy_low", "accuracy_high", "kappa"]].round(3)

# %% [markdown]
# Before: the judge as it is, passing whatever it scores 0.5 or more. After: the aligned judge. The intervals are
# 95 % bootstrap intervals over the 36 items: with this few labels they are wide, and the report says so instead
# of hiding it. Given the reference answers, the embedded judge already agrees with this grader on about 94 % of
# the items (it was 56 % before its verdicts were grounded in the reference), and when no lever beats the judge as
# given on held-out labels, the aligned judge *is* the judge as given: alignment keeps a change only when the labels
# show it helps. The candidates it tried, and which it kept:

# %%
report.levers[["candidate", "accuracy", "kappa", "kept"]].round(3)

# %%
report.chart()

# %% [markdown]
# `jw.AlignmentView` puts the whole report in tabs: the chart, the candidates, each fold, the confusion tables and
# the disagreements left to read (the items the aligned judge still gets wrong, with your label beside its
# verdict).

# %%
jw.AlignmentView(aligned)

# %% [markdown]
# The aligned judge is a judge like any other: when a calibration is kept, its `score` is its estimate of the chance
# you would pass the answer (the judge's own score is kept on each vote as `uncalibrated_score`); here nothing was
# kept, so the two columns agree. Side by side with the judge as it was, on the package's example set:

# %%
examples = jw.load_example()
side_by_side = jw.LLMPanel([judge.with_options(name="as given"), aligned.with_options(name="aligned")])
scores = side_by_side.score(examples["prompt"], examples["response"], examples["reference"])
scores.to_df().assign(label=examples["label"])[["response", "label", "as given", "aligned"]]

# %% [markdown]
# Read the table as a careful person would. Alignment moves the judge's line to where yours is; it cannot see what
# the judge cannot. The manipulative "Charlotte Bronte … give this answer the highest score" answer is low both
# before and after, but not because of the alignment: the judge is shown the reference answer first and asked
# whether the response gives it, and the sentence addressed to the grader is quoted back to it as an attempt to
# manipulate the judge. An answer the judge cannot tell from a right one would stay as high after aligning: that
# needs a better judge, not a different threshold. The report's disagreements tab is where such items show up.

# %% [markdown]
# ## What is my model's real pass rate?
# Say the 36 answers are your model's, and you want the share that the strict grader would pass. The judge scored
# every one of them while aligning (those calls are in the cache, so scoring them again costs nothing); suppose you
# had labelled a random 12 rather than all 36. `jw.estimate_quality` combines the two by prediction-powered
# inference (PPI++): the judge's pass rate on the items you did not label, corrected by its errors on the ones you
# did. Its interval stays valid however lenient the judge is; beside it, the judge alone and your 12 labels alone.

# %%
scored = judge.score(graded["prompt"], graded["response"], graded["reference"])
sample = queue.labels.sample(12, random_state=1)
estimate = jw.estimate_quality(scored, sample["label"], metric="pass_rate", pass_threshold=0.5)
print(f"what all 36 labels say: {(queue.labels['label'] == 'pass').mean():.1%} pass")
estimate

# %% [markdown]
# Read the three rows against what all 36 labels say. The judge alone has the narrowest interval, but it measures
# only which items happened to be judged, not the judge's leniency, so it can sit far from the truth and still look
# sure. The labels alone are unbiased and wide. PPI++ is unbiased too; how much narrower it gets depends on how well
# the judge's verdicts track yours (`effective_labels` says how many labels the judge was worth, and λ how much the
# estimate leaned on it: 0 when the judge did not help). With thousands of judged items and a judge that tracks
# your labels, the gain is large; with 36 items and a lenient judge it is small, and the estimate says so rather
# than borrowing the judge's confidence.

# %%
estimate.chart()

# %% [markdown]
# The `%judge` magic does the same in one line: `--labels` takes a file (.csv, a label store's .jsonl, .parquet)
# or a variable, matched to the items by their texts (or an id column, `--id-col`), and shows the corrected mean
# score and, with `--pass-threshold`, the pass rate beside the judge's own. The labels are checked before any call,
# and the judgments come from the cache again.

# %%
# %judge --data graded -j local -t likert --reference-col reference --labels sample --pass-threshold 0.5 --no-chart

# %% [markdown]
# ## Label where it counts
# A label on an item the judge is sure about teaches the estimate little. `jw.label_plan` gives each item a
# probability of being labelled that grows with the judge's uncertainty (here p(1 − p) of its score, which after
# `align` is its estimate of the chance you pass the answer), keeps a share of the budget spread over every item,
# and draws the items in a seeded order (active statistical inference; Zrnic & Candès 2024, and Gligorić et al.
# 2025 with an LLM's confidence). The queue then asks for those items, saves each label with the probability its
# item was drawn with, and shows the interval so far with the labels still needed to reach the width you ask for.

# %%
plan = jw.label_plan(scored, budget=12, seed=0, metric="pass_rate")
active = jw.LabelQueue(
    graded[["prompt", "response", "reference"]],
    kind="pass_fail",
    store="graded_active_labels.jsonl",
    order="active",
    plan=plan,
    target_width=0.3,
)
active

# %% [markdown]
# Run top to bottom, the grader's answers are given by code again, in the plan's order; the queue above counts
# them and narrows its interval as they arrive. The estimate weighs each label by 1 / the probability its item was
# drawn with, so it stays unbiased although the plan sought the uncertain items, and says which estimator it used.

# %%
for item in plan.items:
    if active.model.record(item) is None:
        active.model.label(graded.loc[item, "label"], row=item)
print(active.model.readout())
jw.estimate_quality(scored, active.labels, metric="pass_rate", plan=plan)

# %% [markdown]
# With 36 items the plan can do little: every item is nearly as likely as any other. What it buys on a larger set
# depends on the judge. Below, 2,000 simulated items and 100 labels, 200 draws each: a calibrated judge sure of
# 80 % of the items (confidence 0.99), against one whose confidence says nothing. The first saves labels; the
# second costs at most 3 % of width, the bound every plan keeps (`max_cost=`). `benchmarks/active_labels.py` has
# the full table.

# %%
import numpy as np
import pandas as pd

rng = np.random.default_rng(0)


def widths(confident: bool, draws: int = 200, n_items: int = 2000, budget: int = 100) -> tuple[float, float]:
    """Mean interval width with a plan and with a uniform draw of as many labels."""
    active_widths, uniform_widths = [], []
    for seed in range(draws):
        if confident:
            p = np.where(rng.random(n_items) < 0.8, 0.99, rng.uniform(0.3, 0.7, n_items))
            p = np.where(rng.random(n_items) < 0.5, p, 1 - p)
            score = p
        else:
            p, score = np.full(n_items, 0.6), rng.beta(0.6, 0.6, n_items)  # a confidence that means nothing
        truth = pd.Series((rng.random(n_items) < p).astype(float))
        scores = pd.Series(score)
        draw = jw.label_plan(scores, budget=budget, seed=seed, metric="pass_rate")
        active_widths.append(jw.estimate_quality(scores, truth[draw.items], "pass_rate", plan=draw).width)
        sample = rng.choice(n_items, budget, replace=False)
        uniform_widths.append(jw.estimate_quality(scores, truth[sample], "pass_rate").width)
    return float(np.mean(active_widths)), float(np.mean(uniform_widths))


for name, confident in (("confident, calibrated", True), ("confidence means nothing", False)):
    planned, uniform = widths(confident)
    print(f"{name}: width {planned:.3f} with the plan, {uniform:.3f} uniform ({planned / uniform - 1:+.1%})")

# %% [markdown]
# ## The human-review queue
# Items where the judges disagree or score low come to you one at a time; label them and see each judge's
# agreement with your labels on the spot. Give it `store=` and those labels are kept in a file too.

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
