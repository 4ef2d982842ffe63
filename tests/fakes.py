"""Fakes that implement the engine's roles, for tests that need no server."""

from __future__ import annotations


class ScriptedTransport:
    """A fake Transport: answers each request with `reply(request, attempt)`; records every attempt.

    `reply` returns the completion text, a Completion, or raises (e.g. CallFailure) to fail the attempt.
    """

    name = "scripted"

    def __init__(self, reply, delay: float = 0.0) -> None:  # type: ignore[no-untyped-def]
        self.reply = reply
        self.delay = delay
        self.requests: list = []
        self.attempts: dict[str, int] = {}
        self.active = 0
        self.max_active = 0

    async def complete(self, request, timeout):  # type: ignore[no-untyped-def]
        import asyncio

        from judgewidgets.engine import Completion

        key = request.cache_key()
        attempt = self.attempts.get(key, 0)
        self.attempts[key] = attempt + 1
        self.requests.append(request)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            out = self.reply(request, attempt)
        finally:
            self.active -= 1
        if isinstance(out, Completion):
            return out
        return Completion(content=out, prompt_tokens=10, completion_tokens=3, cost_usd=0.001, latency_s=self.delay)


def user_text(request) -> str:  # type: ignore[no-untyped-def]
    """The user message of a judge request (holds the fenced question and response)."""
    return request.messages[-1]["content"] if request.messages[-1]["role"] == "user" else request.messages[1]["content"]


def schema_aware(body: dict) -> str:
    """A test-server responder: a verdict with an explanation when the schema asks for one, else a hashed likert
    score (deterministic per request, so two runs of the same requests give the same table)."""
    import json

    from judgewidgets.testing import hashed_score

    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
    if "verdict" in schema.get("properties", {}):
        text = body["messages"][-1]["content"]
        verdict = ("correct", "incorrect", "not sure")[sum(map(ord, text)) % 3]
        return json.dumps({"explanation": f"Because {len(text)} characters.", "verdict": verdict})
    return hashed_score(1, 5)(body)
