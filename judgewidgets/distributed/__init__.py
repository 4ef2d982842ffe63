"""Past one machine: a panel over a large table, sharded over a Ray cluster, resumable from per-shard files.

```python
import judgewidgets as jw

panel = jw.LLMPanel([jw.LLMJudge("hosted_vllm/qwen", api_base="http://gpu-1:8000/v1", cache="/shared/calls.sqlite")])
df = jw.distributed.score(panel, "s3-mirror/answers/", engine="ray", shards=400, output="/shared/run-1")
```

Ray is optional (`pip install 'judgewidgets[ray]'`) and imported only when a Ray run starts.
"""

from .._errors import ShardFailedError
from ._ray import RayRunner
from ._runners import LocalRunner, ShardRunner
from ._score import run, score
from ._shards import Shard

__all__ = ["LocalRunner", "RayRunner", "Shard", "ShardFailedError", "ShardRunner", "run", "score"]
