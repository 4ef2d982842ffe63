"""The loopback batch server against the providers' own SDKs: what they send and read is what the server speaks."""

from __future__ import annotations

import io
import json
import time

import pytest

from judgewidgets.testing import BatchTestServer, json_score

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")


def _file(lines: list[dict]) -> tuple[str, io.BytesIO]:
    return ("batch.jsonl", io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode()))


def _line(i: int, text: str) -> dict:
    body = {"model": "test", "messages": [{"role": "user", "content": text}]}
    return {"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions", "body": body}


def _wait_openai(client, batch_id: str):
    for _ in range(100):
        batch = client.batches.retrieve(batch_id)
        if batch.status in ("completed", "expired", "cancelled", "failed"):
            return batch
        time.sleep(0.05)
    raise AssertionError("the batch never ended")


def test_openai_sdk_batch_lifecycle_with_a_failed_request():
    with BatchTestServer(json_score(4), delay=0.1) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test")
        uploaded = client.files.create(
            file=_file([_line(0, "a"), _line(1, "b [[fault:400]]"), _line(2, "c")]), purpose="batch"
        )
        assert uploaded.object == "file" and uploaded.purpose == "batch"
        created = client.batches.create(
            input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
        )
        assert created.status == "validating" and created.request_counts.total == 3
        batch = _wait_openai(client, created.id)
        assert batch.status == "completed"
        assert (batch.request_counts.completed, batch.request_counts.failed) == (2, 1)
        output = [json.loads(line) for line in client.files.content(batch.output_file_id).text.splitlines()]
        assert [o["custom_id"] for o in output] == ["r0", "r2"]
        body = output[0]["response"]["body"]
        assert (
            output[0]["response"]["status_code"] == 200
            and json.loads(body["choices"][0]["message"]["content"])["score"] == 4
        )
        errors = [json.loads(line) for line in client.files.content(batch.error_file_id).text.splitlines()]
        assert errors[0]["custom_id"] == "r1" and errors[0]["response"]["status_code"] == 400
        assert [b.id for b in client.batches.list(limit=5)] == [created.id]
        counts = server.batch_counts
        assert counts["files.create"] == 1 and counts["batches.create"] == 1 and counts["files.content"] == 2


def test_openai_sdk_cancel_and_expiry():
    with BatchTestServer(json_score(4), delay=0.1, expire=1, expire_answered=0.5) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test")
        uploaded = client.files.create(file=_file([_line(i, f"q{i}") for i in range(4)]), purpose="batch")
        expiring = client.batches.create(
            input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
        )
        batch = _wait_openai(client, expiring.id)
        assert batch.status == "expired" and (batch.request_counts.completed, batch.request_counts.failed) == (2, 2)
        errors = [json.loads(line) for line in client.files.content(batch.error_file_id).text.splitlines()]
        assert {e["error"]["code"] for e in errors} == {"batch_expired"}
        server.plan.delay = 60.0
        slow = client.batches.create(
            input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
        )
        assert client.batches.cancel(slow.id).status == "cancelling"
        assert client.batches.retrieve(slow.id).status == "cancelled"


def test_anthropic_sdk_message_batch_lifecycle():
    with BatchTestServer(json_score(3), delay=0.1) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="sk-test")
        requests = [
            {
                "custom_id": f"a{i}",
                "params": {"model": "claude", "max_tokens": 64, "messages": [{"role": "user", "content": text}]},
            }
            for i, text in enumerate(["x", "y [[fault:500]]", "z"])
        ]
        created = client.messages.batches.create(requests=requests)
        assert created.processing_status == "in_progress" and created.request_counts.processing == 3
        for _ in range(100):
            batch = client.messages.batches.retrieve(created.id)
            if batch.processing_status == "ended":
                break
            time.sleep(0.05)
        counts = batch.request_counts
        assert (counts.succeeded, counts.errored, counts.processing) == (2, 1, 0)
        results = {r.custom_id: r.result for r in client.messages.batches.results(created.id)}
        assert results["a0"].type == "succeeded" and json.loads(results["a0"].message.content[0].text)["score"] == 3
        assert results["a1"].type == "errored" and results["a1"].error.error.type == "api_error"
        assert server.batch_counts["messages.batches.results"] == 1


def test_anthropic_sdk_cancel_expiry_and_missing_routes():
    with BatchTestServer(json_score(3), delay=0.1, expire=1, expire_answered=0.0) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="sk-test")
        requests = [
            {
                "custom_id": "only",
                "params": {"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]},
            }
        ]
        expired = client.messages.batches.create(requests=requests)
        time.sleep(0.15)
        assert [r.result.type for r in client.messages.batches.results(expired.id)] == ["expired"]
        server.plan.delay = 60.0
        slow = client.messages.batches.create(requests=requests)
        assert client.messages.batches.cancel(slow.id).processing_status == "canceling"
        assert client.messages.batches.retrieve(slow.id).request_counts.canceled == 1
        server.plan.missing = True
        with pytest.raises(anthropic.NotFoundError):
            client.messages.batches.create(requests=requests)
