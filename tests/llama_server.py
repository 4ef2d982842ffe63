"""llama.cpp's own HTTP server on loopback, serving the embedded judge's weights through xllamacpp: the server a user
starts with `llama-server -m model.gguf`, for tests that check judgewidgets against it (they need the runtime and
the weights, so they sit with the `local_model` tests; `tests/local/conftest.py` has the session fixture).

The server runs in a subprocess of its own, as a user's would, with two threads and a 4,096-token context; it is
ready when `/health` answers 200 and is stopped when the fixture ends.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

_SERVE = """
import signal, sys
import xllamacpp
params = xllamacpp.CommonParams()
params.model.path = sys.argv[1]
params.n_ctx = int(sys.argv[3])
params.n_parallel = 1
params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 2
params.hostnames = ["127.0.0.1"]
params.port = int(sys.argv[2])
params.verbosity = -1
server = xllamacpp.Server(params)
print("listening", server.listening_address, flush=True)
signal.sigwait([signal.SIGTERM, signal.SIGINT])
"""
READY_TIMEOUT_S = 180.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def llama_server(n_ctx: int = 4096) -> Iterator[str]:
    """Serve the embedded judge's weights with llama.cpp's server; yields its OpenAI base URL (`.../v1`)."""
    from judgewidgets.local._weights import resolve_model_path

    path = resolve_model_path("default", None)
    port = _free_port()
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVE, str(path), str(port), str(n_ctx)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    root = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama.cpp's server exited ({process.returncode}): {process.stderr.read()[-2000:]}")
            try:
                if httpx.get(f"{root}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama.cpp's server did not become ready within {READY_TIMEOUT_S:.0f} s")
            time.sleep(0.5)
        yield f"{root}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
