"""uqlm's LLMPanel as a throughput peer; run by panel_throughput.py with an interpreter that has uqlm installed.

python _uqlm_peer.py BASE_URL ITEMS       (prints one JSON line: calls, wall_s, cpu_s)
"""

import asyncio
import json
import sys
import time


async def main(base_url: str, n: int) -> None:
    from langchain_openai import ChatOpenAI
    from uqlm import LLMPanel

    judges = [ChatOpenAI(model=f"bench-{i}", base_url=base_url, api_key="sk-bench", temperature=0) for i in range(3)]
    panel = LLMPanel(judges=judges, scoring_templates=["likert"] * 3)
    prompts = [f"Question {i}: what is {i} + {i}?" for i in range(n)]
    responses = [f"The answer is {2 * i}." for i in range(n)]
    await panel.score(prompts[:20], responses[:20], show_progress_bars=False, _display_header=False)
    cpu, wall = time.process_time(), time.perf_counter()
    await panel.score(prompts, responses, show_progress_bars=False, _display_header=False)
    print(json.dumps({"calls": 3 * n, "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
