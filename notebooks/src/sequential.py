# %% [markdown]
# # Precision-based sequential sampling
#
# One judgment is noisy. Sample judgments until the confidence interval of the mean rating is narrower than
# d = R / (3K), where R is the scale's range and K the precision you ask for. The default rule keeps the interval's
# coverage under this optional stopping (the original z-based rule covers only ~90 % at a nominal 95 %).

# %%
# %load_ext judgewidgets
import judgewidgets as jw

jw.sequential.expected_samples(1.0, scale=(1, 10), K=9, alpha=0.10)  # the seed's 25

# %%
sims = {
    m: jw.sequential.simulate(8.3, 1.0, trials=2000, K=10, alpha=0.05, method=m, seed=0) for m in ["seed", "t", "stein"]
}
{m: {"coverage": s["covered"].mean(), "mean n": s["n"].mean()} for m, s in sims.items()}

# %%
effects = jw.sequential.parameter_effects(trials=300, seed=0)
jw.sequential.parameter_effects_chart(effects)

# %% [markdown]
# ## Rate one answer, live
# The chart redraws after every judgment: the running mean, its interval narrowing towards ±d, one point per
# judgment coloured by judge.

# %%
from judgewidgets.jupyter import LiveConvergence

rater = jw.SequentialRater(judges=["local"], scale=(1, 10), K=4, alpha=0.10, max_samples=40, seed=1)
live = LiveConvergence()
display(live.widget)
rated = rater.rate(
    "Explain why the sky is blue in one sentence.",
    "Sunlight scatters off air molecules, and blue light scatters the most (Rayleigh scattering).",
    on_update=live.update,
)
rated.mean, rated.half_width, rated.n, rated.status

# %%
rated.trace.head()

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
