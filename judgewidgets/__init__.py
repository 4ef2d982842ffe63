"""judgewidgets: LLM-as-a-judge evaluation, native to Jupyter.

```python
import judgewidgets as jw
panel = jw.LLMPanel(judges=["local", "openai/gpt-4o-mini"], template="likert")
panel.score(prompts, responses).to_df()
```
"""

import os as _os

# litellm fetches its model cost map from the network at import unless told otherwise; never let it.
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from . import templates  # noqa: E402
from ._errors import (  # noqa: E402
    ConfigurationError,
    InputError,
    JudgeCallError,
    JudgeWidgetsError,
    LocalModelError,
    ParseError,
)
from ._examples import load_example  # noqa: E402
from ._generate import Generator  # noqa: E402
from ._judge import Judge, LLMJudge  # noqa: E402
from ._panel import LLMPanel  # noqa: E402
from ._records import Item, Vote  # noqa: E402
from ._results import JudgeResult, PanelResult  # noqa: E402
from ._runner import run_sync  # noqa: E402
from ._version import __version__  # noqa: E402
from .engine import CallCache, RetryPolicy  # noqa: E402
from .templates import Template  # noqa: E402

__all__ = [
    "CallCache",
    "ConfigurationError",
    "Generator",
    "InputError",
    "Item",
    "JudgeCallError",
    "JudgeResult",
    "JudgeWidgetsError",
    "Judge",
    "LLMJudge",
    "LLMPanel",
    "LocalModelError",
    "PanelResult",
    "ParseError",
    "RetryPolicy",
    "Template",
    "Vote",
    "__version__",
    "load_example",
    "run_sync",
    "templates",
]
