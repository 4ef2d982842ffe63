"""The batches file: what a restarted process reads to resume a batch instead of paying for it again."""

from __future__ import annotations

import time

from judgewidgets.engine._batch_store import BatchRecord, BatchStore


def _record(local_id: str, **changes: object) -> BatchRecord:
    fields: dict[str, object] = {
        "local_id": local_id,
        "run_id": "run",
        "provider": "openai",
        "base_url": "http://127.0.0.1:9/v1",
        "model": "openai/test",
        "key_env": "OPENAI_API_KEY",
        "cache_path": None,
        "file_id": None,
        "batch_id": None,
        "status": "preparing",
        "n_requests": 0,
        "n_completed": 0,
        "n_failed": 0,
        "created_at": time.time(),
        "collected": False,
    }
    return BatchRecord(**{**fields, **changes})  # type: ignore[arg-type]


def test_a_batch_is_found_by_its_requests_until_its_answers_are_collected(tmp_path) -> None:
    store = BatchStore(tmp_path / "batches.sqlite")
    keys = [f"{i:064x}" for i in range(1_200)]  # more than one query's worth of custom_ids
    store.add_batch(_record("first", n_requests=1_000), keys[:1_000])
    store.update("first", file_id="file-1", batch_id="batch_1", status="in_progress")
    store.add_run("run", b"recipe")
    again = BatchStore(tmp_path / "batches.sqlite")  # another process
    found = again.pending(keys)
    assert len(found) == 1_000 and set(found.values()) == {"first"}
    record = again.find("batch_1")
    assert record is not None and record.file_id == "file-1" and record.status == "in_progress"
    assert again.recipe("run") == b"recipe" and again.custom_ids("first") == keys[:1_000]
    again.update("first", collected=1)
    assert store.pending(keys) == {} and store.get("first").collected  # type: ignore[union-attr]
    assert [r.local_id for r in store.of_run("run")] == ["first"]


def test_a_request_in_two_open_batches_waits_for_the_older(tmp_path) -> None:
    store = BatchStore(tmp_path / "batches.sqlite")
    store.add_batch(_record("old", created_at=1.0), ["k"])
    store.add_batch(_record("new", created_at=2.0), ["k"])
    assert store.pending(["k"]) == {"k": "old"}
    assert store.get("old").key_env == "OPENAI_API_KEY"  # type: ignore[union-attr]  # where the key is, not the key
