"""Helpers for tests that need no server (the scripted transport itself is `judgewidgets.testing.ScriptedTransport`)."""

from __future__ import annotations


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
