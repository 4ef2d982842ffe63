# %% [markdown]
# # Trust or escalate: a guaranteed agreement with humans, at a cheap judge's price
#
# A small local judge is right on the easy pairs and unsure on the hard ones. A **cascade** trusts its verdict
# only where its confidence has been shown, on pairs people labelled, to be high enough; the rest go to the next
# judge, and when the last judge is unsure too the cascade abstains. The thresholds are certified so that, with
# probability at least 1 − δ, the verdicts the cascade gives agree with the human labels at least
# `target_agreement` of the time (Jung, Brahman & Choi, *Trust or Escalate*, ICLR 2025).
#
# This tutorial runs on the embedded judge (no key, no network) in a few minutes on two cores: two wordings of
# the local judge, calibrated on 24 human-labelled pairs and checked on 24 others.

# %%
import pandas as pd

import judgewidgets as jw

# %% [markdown]
# ## Labelled pairs
# LLMBar's Natural set and PandaLM's human-annotated test set ship with the package. We keep the pairs where the
# annotators prefer one response (PandaLM's ties left out), and short ones, so the local judge is quick; half of
# them calibrate the cascade and the other half check it.

# %%
columns = ["question", "response_a", "response_b", "label"]
pandalm = jw.datasets.pandalm()
pool = pd.concat([jw.datasets.llmbar("Natural")[columns], pandalm[pandalm["label"].isin(["A", "B"])][columns]])
pool = pool.reset_index(drop=True)
length = pool[["question", "response_a", "response_b"]].apply(lambda c: c.str.len()).sum(axis=1)
pairs = pool[length < 300].sample(48, random_state=0).reset_index(drop=True)
labelled, held_out = pairs.iloc[:24].reset_index(drop=True), pairs.iloc[24:].reset_index(drop=True)
labelled.head(3)

# %% [markdown]
# ## The cascade
# Stage 1 is the local judge's default pairwise method: each response is scored alone ("does it follow the
# instruction?"), and its confidence is the probability, from its own token probabilities, that the winner is
# better. Stage 2 is the same model asked differently (a 1–5 instruction-following scale), so it is wrong on
# different pairs. With a hosted key you would put a strong hosted judge last instead.
#
# With only 24 labelled pairs we ask for 80 % agreement with δ = 0.2 (the guarantee may fail in at most one
# calibration draw in five). Fewer rows than `minimum_labelled_rows()` could not certify the target even if every
# verdict agreed, and the cascade says so before making a call.

# %%
cascade = jw.Cascade(
    [
        jw.PairwiseJudge("local", name="local · yes/no"),
        jw.PairwiseJudge("local", name="local · 1–5 scale", pointwise_template="instruction_following"),
    ],
    target_agreement=0.8,
    delta=0.2,
)
print(cascade.sources)
print("fewest labelled rows that could certify the target:", cascade.minimum_labelled_rows())
print(cascade.estimate_cost(held_out))  # before calibration: as if every pair reached every stage

# %% [markdown]
# ## Calibrate
# Every stage judges every labelled pair; then, stage by stage, the candidate thresholds are tested from the
# most confident down with an exact binomial (Clopper–Pearson) test, and the walk stops at the first that fails.
# A stage that certifies nothing is skipped at run time.

# %%
calibration = cascade.calibrate(labelled)
calibration

# %% [markdown]
# The chart refits the thresholds for every target on the same judgments (no calls): how much of the data each
# guaranteed agreement leaves decided, which stage decides it, and the calls relative to running the last stage
# on everything.

# %%
calibration.chart()

# %% [markdown]
# ## Run, and check the guarantee on held-out labels
# The held-out pairs keep their `label` column, so the result reports the agreement of the pairs it decided.

# %%
result = cascade.run(held_out)
result

# %%
summary = result.summary()
print(f"coverage {summary['coverage']:.0%}: {summary['decided']} of {summary['items']} pairs decided")
if summary["decided"]:
    met = summary["agreement"] >= cascade.target_agreement
    print(f"agreement on the decided pairs {summary['agreement']:.0%} (target met: {met})")
print(f"calls {summary['calls']:.0f} vs {summary['last_stage_alone_calls']:.0f} for the last stage on every pair")
result.table[["stage", "verdict", "confidence", "label", "agrees", "calls", "seconds"]]

# %% [markdown]
# If the cascade abstained on every pair, it did its job: it will not promise what the labelled rows cannot
# support. The calibration walks down from the most confident verdicts, and this small judge makes some of its
# mistakes among its most confident ones; with 24 labelled rows, one early mistake ends the walk before any
# threshold reaches 80 % with the required certainty (the chart above shows the same for every target). On real
# data (`python benchmarks/cascade.py`) 50 labelled PandaLM pairs certified nothing down to a 65 % target either,
# for judges right on 64 % of pairs alone. A cascade needs a judge whose confidence separates its right verdicts
# from its wrong ones, and enough labelled rows to prove it: a few hundred, or a strong hosted judge as the last
# stage. The simulation below shows what that buys.
#
# The guarantee is about the population of pairs like these: on 24 pairs the measured agreement scatters around
# it, and on a rare unlucky calibration draw (at most δ of them) it fails. To see it hold, simulate judges of
# known accuracy over a thousand calibration/test splits (no model, a second or two):

# %%
weak, strong = jw.cascade.SimulatedJudge(bias=0.8), jw.cascade.SimulatedJudge(bias=2.0)
splits = jw.cascade.simulate([weak, strong], target_agreement=0.8, delta=0.2, n_calibration=200, splits=1000)
print(f"accuracy alone: {weak.accuracy():.0%} and {strong.accuracy():.0%}")
print(f"guarantee held in {splits['holds'].mean():.1%} of splits (needs ≥ 80 %)")
print(f"mean coverage {splits['coverage'].mean():.0%}")

# %% [markdown]
# ## Pick the target
# Move the slider to see the thresholds, coverage and cost each target buys on the labelled pairs; `.cascade`
# is the cascade at the chosen target (refit without a call).

# %%
picker = jw.CascadeTargetPicker(cascade)
picker

# %% [markdown]
# ## Where next
# - A hosted judge last: `jw.Cascade([jw.PairwiseJudge("local"), jw.PairwiseJudge("openai/gpt-4o")])`;
#   `cascade.estimate_cost(pairs)` tells you what the escalations will cost before you run.
# - Vote shares as confidence: `jw.cascade.simulated_annotators(jw.PairwiseJudge("local"))` is one stage of three
#   differently worded copies of the judge.
# - Single responses: `jw.Cascade([jw.LLMJudge(...), ...], pass_threshold=0.5)` with pass/fail labels.
# - `python benchmarks/cascade.py` runs the same experiment on PandaLM and LLMBar with more pairs.
