import asyncio

import pytest

import judgewidgets as jw
from judgewidgets._runner import run_sync


async def answer() -> int:
    await asyncio.sleep(0)
    return 42


def test_plain_script() -> None:
    assert run_sync(answer()) == 42


def test_inside_a_running_loop() -> None:
    async def cell() -> int:
        return run_sync(answer())

    assert asyncio.run(cell()) == 42


def test_inside_uvloop() -> None:
    uvloop = pytest.importorskip("uvloop")

    async def cell() -> int:
        return run_sync(answer())

    assert uvloop.run(cell()) == 42


def test_nest_asyncio_strategy_runs_on_the_callers_loop() -> None:
    async def on_which_loop() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    async def cell() -> bool:
        loop = asyncio.get_running_loop()
        return run_sync(on_which_loop(), strategy="nest_asyncio") is loop

    assert asyncio.run(cell())


def test_nest_asyncio_cannot_patch_uvloop() -> None:
    uvloop = pytest.importorskip("uvloop")

    async def cell() -> int:
        return run_sync(answer(), strategy="nest_asyncio")

    with pytest.raises(jw.ConfigurationError, match="cannot patch"):
        uvloop.run(cell())


def test_sync_call_from_inside_engine_work_is_refused_clearly() -> None:
    async def nested() -> int:
        return run_sync(answer())

    with pytest.raises(RuntimeError, match="use the async twin"):
        run_sync(nested())


def test_exceptions_propagate() -> None:
    async def boom() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        run_sync(boom())


def test_unknown_strategy() -> None:
    with pytest.raises(jw.ConfigurationError, match="unknown sync strategy"):
        run_sync(answer(), strategy="magic")  # type: ignore[arg-type]
