"""Testing evaluations without a paid API: a loopback OpenAI-compatible server, and a scripted transport.

```python
from judgewidgets.testing import FaultPlan, OpenAITestServer, json_score

with OpenAITestServer(json_score(4), latency=0.05, faults=FaultPlan(rate_limit=0.1, seed=1)) as server:
    judge = jw.LLMJudge(model="openai/test", api_base=server.base_url, api_key="sk-test")
    ...
    assert server.stats.by_status[429] > 0
```

Directives in the last user message plant per-item behaviour: `[[reply:TEXT]]` answers exactly TEXT;
`[[fault:KIND]]` always fails; `[[fault-once:KIND]]` fails the first time that exact request body is seen.
KIND is `429`, `500`, `503`, `400`, `422`, `timeout`, `malformed`, `empty` (or a `FaultPlan` field name, e.g.
`context_exceeded`, `content_policy`).

`limit=ProviderLimit(rpm=600, headers="openai")` makes it answer as a rate-limited provider does: a bucket of
requests (and tokens) per model, 429 with `retry-after`, and OpenAI's or Anthropic's limit headers on every answer.

It also speaks Anthropic's Messages API (`POST /v1/messages`: point `ANTHROPIC_BASE_URL` at `server.url`) and bills
as both providers do: a prompt prefix is cached only once a request carrying it was answered (OpenAI: prompts of
1,024 tokens and more, in 128-token steps; Anthropic: at `cache_control` breakpoints of the model's minimum length),
reasoning models refuse what OpenAI's refuse and spend reasoning tokens, and `server.stats.bill` (a `Bill`) holds
each model's tokens by kind and dollars at published prices (a `ModelPrice` each) beside the list price.
`anthropic_message_body` answers one Messages request body without a server.

Without a server, `ScriptedTransport(reply)` answers each request with `reply(request, attempt)` in-process (as
httpx's `MockTransport` does): `jw.LLMJudge("openai/test", transport=ScriptedTransport(lambda r, a: '{"score": 4}'))`.
"""

from ._anthropic import anthropic_message_body
from ._batch import BatchPlan
from ._batch_server import BatchTestServer
from ._billing import Bill, ModelBill, ModelPrice
from ._faults import FaultKind, FaultPlan
from ._limits import ProviderLimit
from ._responders import Responder, echo, fits_schema, fixed, hashed_score, json_score
from ._server import OpenAITestServer
from ._stats import RecordedRequest, ServerStats
from ._transport import Reply, ScriptedTransport

__all__ = [
    "BatchPlan",
    "BatchTestServer",
    "Bill",
    "FaultKind",
    "FaultPlan",
    "ModelBill",
    "ModelPrice",
    "OpenAITestServer",
    "ProviderLimit",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ScriptedTransport",
    "ServerStats",
    "anthropic_message_body",
    "echo",
    "fits_schema",
    "fixed",
    "hashed_score",
    "json_score",
]
