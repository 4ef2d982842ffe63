"""The real embedded judge through `litellm.acompletion(model="local/default")`: slow, so few and short."""

from __future__ import annotations

import asyncio
import json
import os
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from judgewidgets.local import ensure_registered, to_litellm_model
from tests.local_model import require_local_model

pytestmark = require_local_model()

LIKERT_SYSTEM = (
    "You are a strict grader. Rate the response to the question on a 1-5 Likert scale, where 1 means wrong "
    "or unhelpful and 5 means fully correct and helpful. Answer with JSON only."
)
LIKERT_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "likert",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}},
            "required": ["score"],
        },
    },
}


def _likert(question: str, answer: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": LIKERT_SYSTEM},
        {"role": "user", "content": f"Question: {question}\nResponse: {answer}"},
    ]


async def _judge(question: str, answer: str, **params: object) -> object:
    import litellm

    ensure_registered()
    return await litellm.acompletion(
        model=to_litellm_model("local"),
        messages=_likert(question, answer),
        response_format=LIKERT_FORMAT,
        temperature=0.0,
        max_tokens=16,
        **params,
    )


async def test_a_likert_judgment_parses_and_carries_logprobs() -> None:
    response = await _judge("What is the capital of France?", "Paris.", logprobs=True, top_logprobs=5)
    content = response.choices[0].message.content
    score = json.loads(content)["score"]
    assert score in {1, 2, 3, 4, 5}
    assert response.usage.prompt_tokens > 20 and 0 < response.usage.completion_tokens <= 16
    tokens = response.choices[0].logprobs.content
    assert "".join(token.token for token in tokens) == content
    (digit,) = [token for token in tokens if token.token.strip().isdigit()]
    assert int(digit.token) == score
    alternatives = [alt.token.strip() for alt in digit.top_logprobs]
    assert len(alternatives) == 5 and alternatives[0] == str(score)
    assert len({a for a in alternatives if a in {"1", "2", "3", "4", "5"}}) >= 3


async def test_the_json_schema_constrains_generation() -> None:
    """An answer the model would never write unprompted: only the grammar from the schema can produce it."""
    import litellm

    ensure_registered()
    schema = {
        "type": "object",
        "properties": {"animal": {"type": "string", "enum": ["purple-octopus-42"]}},
        "required": ["animal"],
    }
    response = await litellm.acompletion(
        model="local/default",
        messages=[{"role": "user", "content": "Say hello."}],
        response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
        max_tokens=48,  # room for whitespace: cached and uncached prompts may lay the JSON out differently
        temperature=0.0,
    )
    assert json.loads(response.choices[0].message.content) == {"animal": "purple-octopus-42"}


async def test_concurrent_judgments_all_succeed_and_the_loop_stays_free() -> None:
    gaps: list[float] = []
    done = asyncio.Event()

    async def heartbeat() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.02)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    beat = asyncio.create_task(heartbeat())
    answers = ["Eight.", "Six.", "Spiders have eight legs."]
    responses = await asyncio.gather(*(_judge("How many legs does a spider have?", a) for a in answers))
    done.set()
    await beat
    scores = [json.loads(r.choices[0].message.content)["score"] for r in responses]
    assert all(score in {1, 2, 3, 4, 5} for score in scores)
    assert max(gaps) < 0.5  # the model ran on worker threads, not on the event loop


def test_the_sync_path_answers() -> None:
    import litellm

    ensure_registered()
    response = litellm.completion(model="local/default", messages=_likert("2+2?", "4"), max_tokens=3, seed=1)
    assert response.choices[0].message.content
    assert response.usage.completion_tokens <= 3
