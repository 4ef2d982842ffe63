"""The embedded judge opens no network listener: after a local judgment the process listens on no TCP or UDP port,
and the one socket llama.cpp's built-in HTTP server insists on is a Unix socket in a folder only this user can
enter, which refuses a request without its API key (kept only in memory, never written or logged)."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

import judgewidgets as jw
from tests.local_model import require_local_model

pytestmark = require_local_model()


def _socket_inodes() -> set[str]:
    """Inodes of the sockets this process holds open."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def _network_listeners(mine: set[str]) -> list[str]:
    """This process's listening TCP sockets and bound UDP sockets, as `proto local-address`."""
    found = []
    for proto, listening in (("tcp", "0A"), ("tcp6", "0A"), ("udp", "07"), ("udp6", "07")):
        with open(f"/proc/net/{proto}") as table:
            for line in table.readlines()[1:]:
                fields = line.split()
                if fields[3] == listening and fields[9] in mine:
                    found.append(f"{proto} {fields[1]}")
    return found


def _unix_listeners(mine: set[str]) -> list[str]:
    """Paths of this process's listening Unix sockets."""
    paths = []
    with open("/proc/net/unix") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if fields[3] == "00010000" and fields[6] in mine and len(fields) > 7:  # __SO_ACCEPTCON: listening
                paths.append(fields[7])
    return paths


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's /proc/net tables")
def test_a_local_judgment_opens_no_network_listener() -> None:
    result = jw.LLMJudge("local", cache=False).score(["What is 2 + 2?"], ["4"], progress=False)
    assert result.vote_list[0].error is None, result.vote_list[0].error
    mine = _socket_inodes()
    assert _network_listeners(mine) == [], "the process listens on a network port"
    # The model may have been loaded by an earlier test of this process: look for its socket, not a new one.
    added = [p for p in _unix_listeners(mine) if p.endswith("llama.sock")]
    assert len(added) == 1, _unix_listeners(mine)
    folder = Path(added[0]).parent
    mode = folder.stat()
    assert stat.S_IMODE(mode.st_mode) == 0o700 and mode.st_uid == os.getuid()

    # Even a process of this user that finds the socket cannot use the model without the key.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(30)
        client.connect(added[0])
        body = b'{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}'
        client.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        reply = b""
        while chunk := client.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 401"), reply[:200]
