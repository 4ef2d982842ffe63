# %% [markdown]
# # Trust or escalate: a guaranteed agreement with humans, at a cheap judge's price
#
# A small local judge is right on the easy pairs and unsure on the hard ones. A **cascade** trusts its verdict
# only where its confidence has been shown, on pairs people labelled, to be high enough; the rest go to the next
# judge, and when the last judge is unsure too the cascade abstains. The thresholds are certified so that, with
# probability at least 1 − δ, the verdicts the cascade gives agree with the human labels at least
# `target_agreement` of the time (Jung, Brahman & Choi, *Trust or Escalate*, ICLR 2025).
#
# What the certification needs is a confidence that means "the chance a person agrees with this verdict". A
# judge's own probability is not that, so each stage here is first **aligned** with a few labelled pairs
# (`judge.align`), which calibrates its confidence; the cascade is then certified on other labelled pairs and
# checked on held-out ones. It runs on the embedded judge (no key, no network) in under three minutes on two
# cores: two wordings of the local judge, 120 to 160 calls in all.

# %%
import pandas as pd

import judgewidgets as jw

# %% [markdown]
# ## Labelled pairs
# LLMBar's Natural set and PandaLM's human-annotated test set ship with the package. We keep the pairs where the
# annotators prefer one response (PandaLM's ties left out, and its word-for-word repeats, so that no pair lands in
# two parts), and short ones, so the local judge is quick. Forty of them, in three parts: 10 to align the judges
# with, 20 to certify the cascade on, 10 to check it on.

# %%
columns = ["question", "response_a", "response_b", "label"]
pandalm = jw.datasets.pandalm()
pool = pd.concat([jw.datasets.llmbar("Natural")[columns], pandalm[pandalm["label"].isin(["A", "B"])][columns]])
pool = pool.drop_duplicates(["question", "response_a", "response_b"]).reset_index(drop=True)
length = pool[["question", "response_a", "response_b"]].apply(lambda c: c.str.len()).sum(axis=1)
pairs = pool[length < 250].sample(40, random_state=0).reset_index(drop=True)
to_align, labelled, held_out = pairs.iloc[:10], pairs.iloc[10:30], pairs.iloc[30:]
labelled.head(3)

# %% [markdown]
# ## Two local judges, aligned
# Stage 1 is the local judge's default pairwise method: each response is scored alone ("does it follow the
# instruction?"), and P(a better) comes from its token probabilities. Stage 2 is the same model asked differently
# (a 1–5 instruction-following scale), so it is wrong on different pairs. With a hosted key you would put a strong
# hosted judge last instead.
#
# `align(levers=("rule",))` judges each of the 10 pairs once (two calls a pair) and fits, on those labels, the
# judge's decision rule (kept only if it beats the judge as given on held-out labels) and the calibration of its
# confidence: the chance that the person agrees with each verdict. The calibration changes no verdict; it changes
# which verdicts look surest. The aligned judges send the very requests the raw ones do, so anything they judge
# again comes from the call cache.

# %%
stage_1 = jw.PairwiseJudge("local", name="local · yes/no")
stage_2 = jw.PairwiseJudge("local", name="local · 1–5 scale", pointwise_template="instruction_following")
aligned_1 = stage_1.align(to_align, levers=("rule",))
aligned_2 = stage_2.align(to_align, levers=("rule",))
pd.concat(
    {
        s.name: a.alignment_report.table.set_index("rule")[["accuracy", "kappa"]]
        for s, a in [(stage_1, aligned_1), (stage_2, aligned_2)]
    }
)

# %% [markdown]
# ## The cascade
# We ask for 70 % agreement with δ = 0.2 (the guarantee may fail in at most one calibration draw in five). Fewer
# rows than `minimum_labelled_rows()` could not certify the target even if every verdict agreed, and the cascade
# says so before making a call.

# %%
cascade = jw.Cascade([aligned_1, aligned_2], target_agreement=0.7, delta=0.2, names=[stage_1.name, stage_2.name])
print(cascade.sources)
print("fewest labelled rows that could certify the target:", cascade.minimum_labelled_rows())
print(cascade.estimate_cost(held_out))  # before calibration: as if every pair reached every stage

# %% [markdown]
# A stage's calibration was fitted to the labels of the pairs it was aligned on; certified on those same pairs, a
# threshold would promise what the fit was shaped to show. The cascade refuses them, before any call:

# %%
try:
    cascade.calibrate(to_align)
except jw.InputError as error:
    print(error)

# %% [markdown]
# ## Calibrate
# Every stage judges every labelled pair; then, stage by stage, candidate thresholds are tested with an exact
# binomial (Clopper–Pearson) test, walking down from two starts: the most confident pairs, and where the stage's
# own confidences predict the test can pass on the most pairs (δ split between them). A stage that certifies
# nothing is skipped at run time.

# %%
calibration = cascade.calibrate(labelled)
calibration

# %% [markdown]
# The same two judges without their alignment, certified on the same pairs (their requests are the aligned ones',
# so this costs no call): their confidence is their own probability of the verdict.

# %%
raw = jw.Cascade([stage_1, stage_2], target_agreement=0.7, delta=0.2)
raw.calibrate(labelled, progress=False).table()[["stage", "confidence", "threshold", "trusted", "share"]]

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
summary = result.summary()
print(f"coverage {summary['coverage']:.0%}: {summary['decided']} of {summary['items']} held-out pairs decided")
if summary["decided"]:
    print(f"agreement on the decided pairs {summary['agreement']:.0%} (the guarantee: ≥ 70 % on pairs like these)")
    print(f"calls {summary['calls']:.0f} vs {summary['last_stage_alone_calls']:.0f} for the last stage on every pair")
else:
    print(
        "nothing decided: no stage certified 70 % on the 20 labelled pairs. Each stage alone was right on "
        + ", ".join(f"{a:.0%}" for a in calibration.agrees.mean(axis=0))
        + " of them; to certify 70 % at δ = 0.2 the trusted pairs must agree far more often than that (all of "
        f"the first {cascade.minimum_labelled_rows()}, then nearly all), and these judges' surest verdicts do not."
    )
result.table[["stage", "verdict", "confidence", "label", "agrees", "calls"]]

# %% [markdown]
# How to read it. The guarantee is about the population of pairs like these: on 10 held-out pairs the measured
# agreement scatters around it, and on a rare unlucky calibration draw (at most δ of them) it fails. With 20
# labelled pairs the walk can only certify a stage whose surest verdicts are nearly all right: a judge right on
# 85 % of its surest verdicts certifies 70 % on some samples of 20 pairs and on others nothing at all. Deciding
# nothing is the guarantee refusing to promise what 20 labels cannot support, not a failure.
# More labelled pairs (`python benchmarks/cascade.py --compare` uses 100 per part) or a strong hosted judge as
# the last stage buy coverage. The simulation below shows what they buy.
#
# ## The guarantee, by simulation
# Judges of known accuracy over a thousand calibration/test splits (no model, a few seconds). These two are
# calibrated but level off: however easy the pair, each is right at most 88 % of the time, as a small judge is.
# The paper's walk starts at the most confident rows only, where one early disagreement ends it; the two-start
# walk certifies more, and both keep the guarantee.

# %%
judges = [jw.cascade.SimulatedJudge(bias=0.8, ceiling=0.88), jw.cascade.SimulatedJudge(bias=1.0, ceiling=0.88)]
print(f"accuracy alone: {judges[0].accuracy():.0%} and {judges[1].accuracy():.0%}")
for walk in ("paper", "two starts"):
    splits = jw.cascade.simulate(judges, target_agreement=0.7, delta=0.2, n_calibration=200, splits=1000, walk=walk)
    print(f"{walk}: mean coverage {splits['coverage'].mean():.0%}, guarantee held in {splits['holds'].mean():.1%}")

# %% [markdown]
# ## Pick the target
# Move the slider to see the thresholds, coverage and cost each target buys on the labelled pairs; `.cascade`
# is the cascade at the chosen target (refit without a call).

# %%
picker = jw.CascadeTargetPicker(cascade)
picker

# %% [markdown]
# ## Where next
# - A hosted judge last: `jw.Cascade([aligned_local, jw.PairwiseJudge("openai/gpt-4o")])`;
#   `cascade.estimate_cost(pairs)` tells you what the escalations will cost before you run.
# - Align with more of your labels, and more levers (`levers=("rule", "examples")`): labelled examples in the
#   prompt raised the local judge's agreement on PandaLM from 60 % to 70 % with 50 labels.
# - Vote shares as confidence: `jw.cascade.simulated_annotators(jw.PairwiseJudge("local"))` is one stage of three
#   differently worded copies of the judge.
# - Single responses: `jw.Cascade([aligned_judge, ...], pass_threshold=0.5)` with pass/fail labels; an aligned
#   `LLMJudge`'s confidence is then its calibrated P(pass) (or 1 − P(pass) for a fail).
# - `python benchmarks/cascade.py --compare` runs raw against aligned stages on PandaLM and LLMBar with more pairs.
