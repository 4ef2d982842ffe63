"""Where output goes: a notebook frontend that draws widgets and charts, or a plain terminal."""

from __future__ import annotations

import sys

__all__ = ["notebook_frontend"]


def notebook_frontend() -> bool:
    """Whether this code runs in a Jupyter kernel (a notebook, JupyterLab, VS Code), where widgets and HTML are
    drawn; False in scripts and in terminal IPython, which can only show text."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})
