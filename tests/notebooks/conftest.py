"""Each tutorial's wall time in the run's summary (under `-q` too), so CI's log says what the notebooks cost."""

from __future__ import annotations

import pytest

NOTEBOOK_TIMES = pytest.StashKey[dict[str, float]]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[NOTEBOOK_TIMES] = {}


@pytest.fixture
def record_notebook_time(request: pytest.FixtureRequest) -> dict[str, float]:
    """Where a notebook test writes its seconds, keyed by notebook."""
    return request.config.stash[NOTEBOOK_TIMES]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    times = config.stash.get(NOTEBOOK_TIMES, {})
    if times:
        terminalreporter.section("tutorial notebooks, seconds each")
        for notebook, seconds in times.items():
            terminalreporter.write_line(f"{notebook:32} {seconds:7.0f} s")
        terminalreporter.write_line(f"{'all':32} {sum(times.values()):7.0f} s")
