"""Runs you can keep: results saved to a folder and loaded back.

```python
result.save("evals/v1")                 # Parquet tables + run.json (settings without secrets, versions, usage)
again = jw.load("evals/v1")             # the same kind of result, every method working
```
"""

from ._load import KINDS, load

__all__ = ["KINDS", "load"]
