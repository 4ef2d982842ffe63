"""`python -m judgewidgets.testing`: run the OpenAI test server in its own process, e.g. for benchmarks.

    python -m judgewidgets.testing --port 8000 --latency 0.05 --rate-limit 0.05 --seed 1

The first line printed is the base URL (`http://127.0.0.1:PORT/v1`); the server runs until Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import pickle
import signal
import sys
import threading
from collections.abc import Sequence

from ._app import ChatService, ServerConfig, start_site
from ._faults import FAULT_KINDS, FaultPlan
from ._responders import Responder, fixed, hashed_score, json_score


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m judgewidgets.testing",
        description="A loopback OpenAI-compatible chat completions server with injectable faults.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (default): the OS picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds every answer waits")
    parser.add_argument("--jitter", type=float, default=0.0, help="extra uniform(0, JITTER) seconds")
    answer = parser.add_mutually_exclusive_group()
    answer.add_argument("--reply", help="always answer this text")
    answer.add_argument("--score", help='always answer {"score": SCORE, ...}; default: a hash of the prompt')
    for kind in FAULT_KINDS:
        flag = "--" + kind.replace("_", "-")
        parser.add_argument(flag, type=float, default=0.0, dest=kind, help=f"rate of {kind} faults")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault draws")
    parser.add_argument("--retry-after", type=float, default=0.05, help="seconds sent with a 429")
    parser.add_argument("--hang-seconds", type=float, default=30.0, help="how long a timeout fault hangs")
    parser.add_argument("--record", type=int, default=100, help="how many last requests the stats keep")
    parser.add_argument("--model", action="append", dest="models", help="listed by GET /v1/models")
    parser.add_argument("--api-key", default=None, help="answer 401 to chat requests without this bearer key")
    parser.add_argument(
        "--loop", choices=("auto", "asyncio", "uvloop"), default="auto", help="auto: uvloop when installed"
    )
    # Used by OpenAITestServer(spawn=True): the config arrives pickled on stdin, and EOF there means stop.
    parser.add_argument("--from-parent", action="store_true", help=argparse.SUPPRESS)
    return parser


def _config_from_args(args: argparse.Namespace) -> ServerConfig:
    responder: Responder = hashed_score()
    if args.reply is not None:
        responder = fixed(args.reply)
    elif args.score is not None:
        score: float | int | str = args.score
        with contextlib.suppress(ValueError):
            score = float(args.score) if "." in args.score else int(args.score)
        responder = json_score(score)
    rates = {kind: getattr(args, kind) for kind in FAULT_KINDS}
    faults = FaultPlan(**rates, seed=args.seed, retry_after=args.retry_after, hang_seconds=args.hang_seconds)
    return ServerConfig(
        responder=responder,
        latency=args.latency,
        jitter=args.jitter,
        faults=faults,
        record=args.record,
        models=tuple(args.models or ("test",)),
        api_key=args.api_key,
    )


def _config_from_parent() -> ServerConfig:
    parent_path, blob = pickle.load(sys.stdin.buffer)
    sys.path.extend(p for p in parent_path if p not in sys.path)
    config = pickle.loads(blob)
    if not isinstance(config, ServerConfig):
        raise TypeError(f"expected a ServerConfig on stdin, got {type(config).__name__}")
    return config


async def _serve(config: ServerConfig, host: str, port: int, from_parent: bool) -> None:
    runner, bound = await start_site(ChatService(config), host, port)
    print(f"http://{host}:{bound}/v1", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    if from_parent:

        def wait_for_eof() -> None:
            try:
                sys.stdin.buffer.read()
            finally:
                loop.call_soon_threadsafe(stop.set)

        threading.Thread(target=wait_for_eof, daemon=True).start()
    with contextlib.suppress(NotImplementedError):  # no signal handlers on Windows' loops
        loop.add_signal_handler(signal.SIGTERM, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until Ctrl-C, SIGTERM, or (when started by a parent) the end of stdin."""
    args = _parser().parse_args(argv)
    config = _config_from_parent() if args.from_parent else _config_from_args(args)
    use_uvloop = args.loop == "uvloop" or (args.loop == "auto" and importlib.util.find_spec("uvloop"))
    coro = _serve(config, args.host, args.port, args.from_parent)
    with contextlib.suppress(KeyboardInterrupt):
        if use_uvloop:
            import uvloop

            uvloop.run(coro)
        else:
            asyncio.run(coro)
    return 0


if __name__ == "__main__":
    sys.exit(main())
