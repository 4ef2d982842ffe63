# %% [markdown]
# # Scale: the fast transport and Ray
#
# When you judge millions of answers you run your own inference server (vLLM, SGLang, a llama.cpp server, a
# litellm proxy), and the client becomes the bottleneck: litellm spends a few milliseconds of CPU on every call.
# judgewidgets sends requests to OpenAI-compatible servers over its own lean HTTP client instead (the *fast path*,
# the default wherever it applies) and keeps everything else the same: retries, timeouts, the cache, token and
# cost accounting, structured output, logprobs. Past one machine, `jw.distributed.score` shards the work over a
# Ray cluster.
#
# Everything here runs **without an API key and without a GPU**: the "inference server" is
# `judgewidgets.testing.OpenAITestServer`, a loopback OpenAI-compatible server that answers every request after
# 50 ms, like a busy GPU server would. It runs in its own process so it does not compete with this kernel.

# %%
import time

import pandas as pd

import judgewidgets as jw
from judgewidgets.testing import OpenAITestServer

server = OpenAITestServer(latency=0.05, spawn=True).start()  # stands in for http://gpu-1:8000/v1
server.base_url

# %% [markdown]
# ## The same panel on both paths
# Two judges on the server: a Likert rating, and the same rating weighted by the answer's token probabilities
# (which needs logprobs). `transport="auto"` is the default: requests to `openai/...` or `hosted_vllm/...` with an
# `api_base` take the fast path, everything else (Anthropic, Ollama, the embedded `local` judge, a request with
# litellm-only arguments such as `mock_response`) goes through litellm. `transport="litellm"` forces litellm.

# %%
def panel_on(transport: str) -> jw.LLMPanel:
    common = dict(api_base=server.base_url, api_key="sk-local", cache=False, max_concurrency=64, transport=transport)
    return jw.LLMPanel(
        [
            jw.LLMJudge("openai/judge", template="likert", name="likert", **common),
            jw.LLMJudge("openai/judge", template="likert", name="weighted", probability_weighted=True, **common),
        ]
    )


n = 300
prompts = [f"Question {i}: what is {i} + {i}?" for i in range(n)]
responses = [f"It is {2 * i}." for i in range(n)]

results, seconds = {}, {}
for transport in ("auto", "litellm"):
    panel = panel_on(transport)
    panel.score(prompts[:20], responses[:20], progress=False)  # warm up: imports, connections
    started = time.perf_counter()
    results[transport] = panel.score(prompts, responses, progress=False)
    seconds[transport] = time.perf_counter() - started

results["auto"].to_df().head()

# %% [markdown]
# The two paths return the same table, and the fast path gets there many times faster (each path makes 600
# calls, 64 at a time; the ideal is 64 / 0.05 s = 1,280 calls per second):

# %%
print("same table on both paths:", results["auto"].to_df().equals(results["litellm"].to_df()))
calls = 2 * n
pd.DataFrame(
    {
        "transport": list(seconds),
        "seconds": [round(s, 2) for s in seconds.values()],
        "calls/s": [round(calls / s) for s in seconds.values()],
        "of ideal": [f"{calls / s / (64 / 0.05):.0%}" for s in seconds.values()],
    }
)

# %% [markdown]
# litellm spends milliseconds of CPU on each call, so at a few hundred calls per second its CPU, not the server,
# sets the pace; the fast path spends a fraction of a millisecond. `benchmarks/fast_transport.py` measures both
# at 256 calls in flight. With `pip install 'judgewidgets[fast]'` (uvloop and orjson) the sync methods run on
# uvloop and JSON goes through orjson.
#
# Options, per judge:
# - `transport="fast"` sends any model string over the fast path (for a server litellm does not know);
# - `transport=jw.engine.AutoTransport(fast=jw.engine.OpenAIHTTPTransport(client="aiohttp"))` uses aiohttp
#   instead of the built-in HTTP/1.1 client (requests through an `HTTP(S)_PROXY` always do).
#
# ## Past one machine: Ray
# `jw.distributed.score(panel, data, engine="ray")` cuts the rows into shards, judges each shard on a Ray
# worker against the same servers, and returns the table a single-machine run returns. A shard whose worker dies
# is judged again; with `output=` every finished shard is written to a file as it finishes, so a killed run
# resumes where it stopped. Ray is optional:

# %%
import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # a single-machine cluster, on 127.0.0.1
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
try:
    import ray
except ImportError:
    ray = None
    print(
        "Ray is not installed here: `pip install 'judgewidgets[ray]'` and run this notebook again "
        "to see the next cells start a local two-worker cluster."
    )

# %%
if ray is not None:
    for _ in range(3):  # on a busy machine Ray's first start can time out; it usually starts on a retry
        try:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
            break
        except Exception as error:
            print("Ray did not start:", error)
            ray.shutdown()
    else:
        ray = None  # the cells below skip the Ray part

# %%
if ray is not None:
    import tempfile

    data = pd.DataFrame({"prompt": prompts, "response": responses})
    output = tempfile.mkdtemp(prefix="judgewidgets-run-")
    distributed = jw.distributed.score(
        panel_on("auto"),
        data,
        engine=jw.distributed.RayRunner(workers=2),
        shards=6,
        output=output,
    )
    print("same table as the single-machine run:", distributed.equals(results["auto"].to_df()))
    print("shard files:", sorted(os.listdir(output)))

# %% [markdown]
# Running it again with the same `output=` folder resumes: every shard is already there, so no judge is called.

# %%
if ray is not None:
    before = server.stats.total
    again = jw.distributed.score(
        panel_on("auto"),
        data,
        engine=jw.distributed.RayRunner(workers=2),
        shards=6,
        output=output,
    )
    print("calls made:", server.stats.total - before, "· same table:", again.equals(distributed))
    ray.shutdown()

# %%
server.stop()

# %% [markdown]
# ### On a real cluster
# ```python
# judge = jw.LLMJudge("hosted_vllm/qwen", api_base="http://gpu-1:8000/v1", max_concurrency=1024,
#                     cache="/shared/calls.sqlite")      # one WAL SQLite cache on a directory the workers share
# df = jw.distributed.score(jw.LLMPanel([judge]), "s3-mirror/answers/", shards=400, output="/shared/run-1",
#                           engine=jw.distributed.RayRunner(address="ray://head:10001", workers=100))
# ```
# `data` may be a DataFrame or Parquet/JSONL/CSV files (a path, a list, or a folder).
