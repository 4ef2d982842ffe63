"""Where judgewidgets keeps files on disk: the call cache and the assembled local model."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "JUDGEWIDGETS_CACHE_DIR"


def user_cache_dir() -> Path:
    """The cache folder: `$JUDGEWIDGETS_CACHE_DIR`, else `$XDG_CACHE_HOME/judgewidgets`, else ~/.cache/judgewidgets."""
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "judgewidgets"


MODEL_DIR_ENV = "JUDGEWIDGETS_MODEL_DIR"


def model_dir() -> Path:
    """Where assembled model weights live: `$JUDGEWIDGETS_MODEL_DIR`, else the cache folder's models/."""
    explicit = os.environ.get(MODEL_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return user_cache_dir() / "models"
