"""`score` / `run`: a panel over a large table, sharded over a runner, with the single-machine result."""

from __future__ import annotations

import os
from collections.abc import Sequence
from itertools import chain
from typing import Any, Literal, TypeAlias

import pandas as pd

from .._errors import ConfigurationError, InputError
from .._progress import Progress, make_progress
from .._records import Vote, build_items
from .._saved import reported
from ..scoring._panel import LLMPanel
from ..scoring._results import PanelResult
from ._ray import RayRunner
from ._runners import LocalRunner, ShardRunner
from ._shards import OutputStore, cut_shards, default_shard_count, fingerprint, load_table

__all__ = ["run", "score"]

Data: TypeAlias = pd.DataFrame | str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
Engine = Literal["ray", "local"] | ShardRunner


def resolve_runner(engine: Engine) -> ShardRunner:
    """'ray' → a RayRunner with defaults, 'local' → this process, or a ShardRunner object as given."""
    if engine == "ray":
        return RayRunner()
    if engine == "local":
        return LocalRunner()
    if isinstance(engine, str) or not isinstance(engine, ShardRunner):
        raise ConfigurationError(
            f"engine must be 'ray', 'local' or a ShardRunner (e.g. RayRunner(...)), got {engine!r}"
        )
    return engine


def run(
    panel: LLMPanel,
    data: Data,
    *,
    engine: Engine = "ray",
    shards: int | None = None,
    output: str | os.PathLike[str] | None = None,
    output_format: Literal["parquet", "jsonl"] | None = None,
    prompt_col: str = "prompt",
    response_col: str = "response",
    reference_col: str | None = None,
    progress: bool | Progress = True,
) -> PanelResult:
    """The PanelResult of `panel` on every row of `data`, judged shard by shard on `engine`; see `score`."""
    if not isinstance(panel, LLMPanel):
        raise ConfigurationError(f"distributed scoring takes an LLMPanel, got {type(panel).__name__}")
    table = load_table(data)
    wanted = [c for c in (prompt_col, response_col, reference_col) if c is not None]
    missing = [c for c in wanted if c not in table.columns]
    if missing:
        raise InputError(f"column(s) {', '.join(map(repr, missing))} not in the data; it has {list(table.columns)}")
    prompts = table[prompt_col].tolist()
    responses = table[response_col].tolist()
    references = table[reference_col].tolist() if reference_col is not None else None
    items = build_items(prompts, responses, references)  # the same checks, and errors, as a single-machine run
    references = [i.reference for i in items] if references is not None else None
    panel.check()
    runner = resolve_runner(engine)

    store = OutputStore(output, output_format) if output is not None else None
    count = shards if shards is not None else default_shard_count(len(items))
    if shards is not None and shards < 1:
        raise ConfigurationError(f"shards must be >= 1, got {shards}")
    if store is not None:
        manifest = {
            "rows": len(items),
            "shards": count,
            "fingerprint": fingerprint(prompts, responses, references, panel),
            "format": store.format,
            "judges": panel.names,
        }
        found = store.prepare(manifest)
        if shards is None:
            count = int(found["shards"])
        elif found["shards"] != shards:
            raise ConfigurationError(f"{store.folder} was cut into {found['shards']} shards, not {shards}")

    all_shards = cut_shards(prompts, responses, references, count)
    done: dict[int, list[Vote]] = {}
    if store is not None:
        done = {s.index: store.read(s) for s in all_shards if store.finished(s)}
    todo = [s for s in all_shards if s.index not in done]
    calls_per_row = len(panel.judges)
    bar = make_progress(progress, len(items) * calls_per_row, f"panel of {calls_per_row} judges, {count} shards")
    try:
        bar.advance(sum(all_shards[i].rows for i in done) * calls_per_row)
        for shard, votes in runner.run(panel, todo, store, bar):
            done[shard.index] = votes
    finally:
        bar.close()
    lost = [s.name for s in all_shards if s.index not in done]
    if lost:  # a runner that stops early is a bug: never hand back a table with missing rows
        raise RuntimeError(f"shards never finished: {', '.join(lost)}")
    order = {name: i for i, name in enumerate(panel.names)}
    votes = sorted(chain.from_iterable(done.values()), key=lambda v: (order[v.judge], v.item))
    return reported(
        PanelResult(
            items=items, vote_list=votes, judges=panel.names, weights=panel.weights, explaining=panel.explaining
        )
    )


def score(panel: LLMPanel, data: Data, *, engine: Engine = "ray", **options: Any) -> pd.DataFrame:
    """Score every row of `data` with `panel`, sharded over a Ray cluster; the table `panel.score(...).to_df()`
    gives on one machine (same columns, same order).

    data: a DataFrame, or Parquet/JSONL/CSV files (a path, a list, or a folder), read in order.
    engine: "ray" (`RayRunner()`: the cluster `ray.init` finds or starts), "local" (this process), or a
    runner such as `RayRunner(address="ray://head:10001", workers=100)`.
    shards: how many row ranges to cut (default one per 1,000 rows); a dead worker's shard is judged again.
    output: a folder that receives one votes file per finished shard as it finishes; a run over the same data
    and panel resumes there, skipping finished shards. output_format: "parquet" (needs pyarrow) or "jsonl".
    prompt_col, response_col, reference_col: the columns to judge. progress: a bar over all judge calls.
    Share the judges' `cache=` path between workers so a retried shard does not pay for its calls twice.
    """
    return run(panel, data, engine=engine, **options).to_df()
