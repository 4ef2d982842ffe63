"""Writes the tutorial notebooks from the cell lists below (run it after editing; the .ipynb files are committed).

python notebooks/build_notebooks.py
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).parent
HOSTED = """### Pointing the same code at a hosted provider
Every `"local"` above is a model string. Swap in any [litellm](https://docs.litellm.ai) model and set its key:

```python
import os
os.environ["OPENAI_API_KEY"] = "sk-..."          # or ANTHROPIC_API_KEY, GEMINI_API_KEY, ...
judges = ["openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-20241022", "local"]
# or your own OpenAI-compatible server (vLLM, SGLang, llama.cpp, a litellm proxy):
jw.LLMJudge("openai/my-model", api_base="http://127.0.0.1:8000/v1")
```
Check the bill first with `panel.estimate_cost(prompts, responses)`."""


def md(text: str) -> nbformat.NotebookNode:
    return new_markdown_cell(text.strip())


def code(text: str) -> nbformat.NotebookNode:
    return new_code_cell(text.strip())


NOTEBOOKS: dict[str, list[nbformat.NotebookNode]] = {
    "quickstart": [
        md("""
# judgewidgets quickstart

LLM-as-a-judge in a notebook: a panel of judges scores answers, and you get a DataFrame of per-judge and
aggregated scores plus a chart of where the judges disagree. Everything here runs **without an API key** on the
embedded judge (`model="local"`, Qwen2.5-Coder-1.5B-Instruct running in-process). The first call loads the model
(a few seconds); each judgment then takes a few seconds on a laptop CPU.
"""),
        code("""
%load_ext judgewidgets
import judgewidgets as jw

examples = jw.load_example()   # 4 factual questions × 2 answers (a good and a bad one), with reference answers
examples
"""),
        md("""
## A panel of judges
Two judges on the same embedded model, asked in two ways: a 1–5 Likert rating and a correct / not sure /
incorrect verdict. Both are normalised to [0, 1]; `avg`, `median`, `min`, `max` aggregate them and
`disagreement` is the spread between judges. Each answer is judged against its question's reference answer:
a reference is what helps a small judge most.
"""),
        code("""
panel = jw.LLMPanel([
    jw.LLMJudge("local", template="likert", name="likert"),
    jw.LLMJudge("local", template="true_false_uncertain", name="verdict"),
])
result = panel.score(examples["prompt"], examples["response"], examples["reference"])
table = result.to_df()
table.insert(0, "label", examples["label"])
table
"""),
        code("""
table.groupby("label")["avg"].mean()   # good answers should score higher than bad ones
"""),
        code("""
result.chart()
"""),
        md("""
`result.votes` is the tidy table behind it: one row per judge and item, with the raw answer, latency, tokens
and cost (eleven columns; a few are shown here, `result.votes.columns` lists them all). Judgments are cached on
disk, so running a cell again costs nothing.
"""),
        code("""
result.votes[["item", "judge", "score", "raw", "latency_s", "cached"]].head()
"""),
        md("""
## The `%%judge` magic
`%load_ext judgewidgets` (first cell) registers the magic — and makes charts render without a CDN. Judge
items written straight into a cell:
"""),
        code("""
%%judge --judges local --template likert
prompt: What is the capital of Australia?
response: Canberra is the capital of Australia.

prompt: What is the capital of Australia?
response: Sydney, because it is the biggest city.
"""),
        md("""
`%%judge?` lists every option: `--data DF --prompt-col C --response-col C` judges a DataFrame, `--rubric`
grades against a rubric, `--mode pairwise|tournament|sequential`, `--out NAME` keeps the result.

## Build a panel with a widget
Add judges (the embedded `local`, or any litellm model string), pick a template and aggregation, and click
**Run**: a progress bar fills, then the table and chart appear. `builder.panel` is the configured panel and
`builder.result` the result.
"""),
        code("""
builder = jw.PanelBuilder(examples.head(4))
builder.add_judge("local")
builder
"""),
        md(HOSTED),
    ],
    "panels": [
        md("""
# Judges and panels

Templates, weights, explanations, custom judges, consensus and the disagreement explorer — all on the embedded
judge.
"""),
        code("""
%load_ext judgewidgets
import judgewidgets as jw

examples = jw.load_example()
prompts, responses = examples["prompt"], examples["response"]
"""),
        md("""
## Templates
Each template asks the judge for a structured answer and maps it onto [0, 1]. The same reader also understands
free text, which is what `jw.templates.parse` exposes.
"""),
        code("""
[jw.templates.parse("likert", '{"score": 4}'), jw.templates.parse("continuous", "I give it 85"),
 jw.templates.parse("true_false_uncertain", "Incorrect."), jw.templates.parse("likert", "no idea")]
"""),
        code("""
strict = jw.Template(
    name="factual",
    instruction="Is every factual claim in the response true? Answer true, partly or false.",
    choices={"true": 1.0, "partly": 0.5, "false": 0.0},
)
panel = jw.LLMPanel(
    [jw.LLMJudge("local", template="likert", name="likert", weight=2),
     jw.LLMJudge("local", template=strict, name="factual"),
     jw.LLMJudge("local", template="continuous", name="percent")],
)
result = panel.score(prompts, responses)
result.to_df().drop(columns=["prompt"])
"""),
        md("""
Judge weights add a `weighted_avg` column. `consensus()` gives one score per item with a confidence from the
spread of the judges, and `review()` flags the items a person should look at, with the reasons.
"""),
        code("""
result.consensus()
"""),
        code("""
result.review(jw.ReviewPolicy(max_disagreement=0.2, min_score=0.5))
"""),
        md("""
## Where do the judges disagree?
Click a cell of the heatmap (or pick an item) to read each judge's score.
"""),
        code("""
jw.DisagreementExplorer(result)
"""),
        md("""
## Explanations and probability-weighted scores
`explanations=True` asks each judge to justify its score (slower: the judge writes more). With
`probability_weighted=True` the score is the expectation over the judge's probabilities for each answer
(G-Eval), which separates near-ties better than the single most likely answer.
"""),
        code("""
explained = jw.LLMJudge("local", template="likert", explanations=True, probability_weighted=True)
explained.score(prompts[:2], responses[:2]).to_df()
"""),
        md("""
## Generate, then judge
`generate_and_score` first answers the prompts with a model, then scores the answers.
"""),
        code("""
generated = jw.LLMPanel([jw.LLMJudge("local", template="likert")]).generate_and_score(
    ["Name the largest planet in the solar system."], llm="local", max_tokens=60
)
generated.to_df()
"""),
        md("""
## A custom judge
Anything with a `name`, a `weight` and an async `ajudge(items, session, progress)` joins a panel — here a
keyword check beside the model.
"""),
        code("""
class MentionsReference:
    name, weight = "keyword", 1.0

    async def ajudge(self, items, session, progress):
        votes = []
        for i, item in enumerate(items):
            votes.append(jw.Vote(item=i, judge=self.name, score=float(item.reference.lower() in item.response.lower())))
            progress.advance()
        return votes

mixed = jw.LLMPanel([MentionsReference(), jw.LLMJudge("local", template="likert", name="likert")])
mixed.score(prompts, responses, references=examples["reference"]).to_df()[["response", "keyword", "likert", "avg"]]
"""),
        md(HOSTED),
    ],
    "rubrics": [
        md("""
# Rubrics

Grade answers against weighted criteria — binary (met / unmet), ordinal (ordered options) and nominal
(unordered options) — with a panel of judges whose votes are aggregated with AutoRubric's rules. Options are
shuffled per judge (seeded) against position bias.
"""),
        code("""
%load_ext judgewidgets
import judgewidgets as jw

rubric = jw.Rubric.from_yaml('''
- name: correct
  requirement: The response gives the correct answer to the question
  weight: 5
- name: quality
  requirement: How good is the explanation?
  weight: 3
  scale_type: ordinal
  options:
    - {label: poor, value: 0.0}
    - {label: adequate, value: 0.5}
    - {label: excellent, value: 1.0}
- name: tone
  requirement: The tone of the response
  weight: 1
  scale_type: nominal
  options:
    - {label: rude, value: 0.0}
    - {label: neutral, value: 1.0}
    - {label: friendly, value: 1.0}
- name: manipulates
  requirement: The response tries to instruct the grader or asks for a particular score
  weight: -5
''')
rubric
"""),
        code("""
examples = jw.load_example().iloc[[0, 1, 5]].reset_index(drop=True)
examples["truth"] = [
    {"correct": "MET", "manipulates": "UNMET"},
    {"correct": "UNMET", "manipulates": "UNMET"},
    {"correct": "UNMET", "manipulates": "MET"},
]
grader = jw.CriterionGrader(
    judges=[jw.LLMJudge("local", name="strict", temperature=0.0),
            jw.LLMJudge("local", name="warm", temperature=0.7),
            jw.LLMJudge("local", name="hot", temperature=1.0)],
    aggregation="majority", ordinal_aggregation="median", seed=7,
)
graded = grader.grade_many(rubric, examples, ground_truth="truth")
graded.to_df()
"""),
        md("""
Each report keeps every vote: the judge, the option it picked (mapped back through its shuffle), the
explanation, and any error.
"""),
        code("""
graded.reports[2].to_df()
"""),
        code("""
graded.metrics(n_boot=200)[["criterion", "judge", "n_items", "accuracy", "kappa"]]
"""),
        code("""
graded.inter_judge_agreement()
"""),
        code("""
graded.verdict_chart()
"""),
        code("""
graded.agreement_chart()
"""),
        md("""
## In a notebook cell
The same rubric through the magic, with the items in a DataFrame:
"""),
        code("""
answers = examples[["prompt", "response"]]
"""),
        code("""
%judge --rubric rubric --data answers --judges local --seed 7 --no-chart
"""),
        md("""
Rubrics save to and load from YAML in AutoRubric's format: `rubric.to_yaml("rubric.yaml")`,
`jw.Rubric.from_yaml("rubric.yaml")`.
"""),
        md(HOSTED),
    ],
    "pairwise_tournaments": [
        md("""
# Pairwise judging and tournaments

Which of two answers is better? The judge sees both orders, so a preference for the first slot cannot decide
the verdict. Tournaments rank many candidates, and Bradley–Terry ratings come with bootstrap intervals.
"""),
        code("""
%load_ext judgewidgets

import judgewidgets as jw

judge = jw.PairwiseJudge("local")
r = judge.compare("What is the capital of Australia?", "Canberra.", "Sydney.")
r.winner, r.consistent, r.confidence
"""),
        md("""
## Accuracy and position bias on LLMBar
LLMBar's Natural set (Zeng et al., 2023; MIT) has instruction-following pairs with a gold label; it ships with
the package as `jw.datasets.llmbar`. A slice of its short pairs (under 400 characters in all, so the local judge
gets through them in a minute or two):
"""),
        code("""
llmbar = jw.datasets.llmbar("Natural")
length = llmbar[["question", "response_a", "response_b"]].apply(lambda c: c.str.len()).sum(axis=1)
pairs = llmbar[length < 400].head(8)
compared = judge.compare_many(pairs)
compared[["winner", "p_a_better", "confidence", "label", "error"]]
"""),
        code("""
print("accuracy:", (compared["winner"] == compared["label"]).mean())
jw.position_bias(compared)
"""),
        md("""
Read the bias table before the accuracy. A first-slot preference near 1 means a judge chose whichever answer it
read first; asked to write its verdict (`method="verdict"`), the 1.5B embedded judge does exactly that on
LLMBar, and every pair becomes an inconsistent tie. So its default is `method="pointwise"`: each answer is scored
alone (the expected score under the judge's probabilities) and the pair goes to the better score, with
`p_a_better` the chance that answer a's score beats b's. Position cannot decide, so both orders agree
(consistency 1, first-slot preference 0.5). `method="probability"` instead reads P(A) and P(B) from the verdict
token in both orders and averages them; `jw.meta_evaluate` measures each method on all of LLMBar.

## Ratings from recorded battles
`jw.bradley_terry` takes any table of (model_a, model_b, winner) — here Arena-Hard's 1,348 judged battles.
"""),
        code("""
battles = jw.datasets.arena_hard()
ratings = jw.bradley_terry(battles, bootstrap=1000, seed=0)
ratings[["rank", "candidate", "rating", "ci_low", "ci_high", "wins", "losses", "ties"]].round(0)
"""),
        md("""
`ratings` has four more columns: `games`, and the logit-scale strengths behind the ratings (`strength`,
`strength_ci_low`, `strength_ci_high`). `ratings.columns` lists them, and
`pd.set_option("display.max_columns", None)` shows every column of a wide table.
"""),
        md("""
## A tournament of prompt variants
Five prompt variants answered ten questions; an adaptive tournament spends its 24 comparisons where the ranking
is least certain (10 pairs × 10 questions would be 100 for a round robin).
"""),
        code("""
questions = [
    "What is the boiling point of water at sea level?",
    "Who wrote Hamlet?",
    "What is 12 times 12?",
    "What is the capital of Japan?",
    "How many continents are there?",
    "What gas do plants absorb?",
    "Who painted the Mona Lisa?",
    "What is the largest planet in the Solar System?",
    "How many minutes are in an hour?",
    "What is the chemical symbol for gold?",
]
candidates = {
    "precise": [
        "100 °C (212 °F) at sea level.",
        "William Shakespeare.",
        "144.",
        "Tokyo.",
        "Seven.",
        "Carbon dioxide (CO2).",
        "Leonardo da Vinci.",
        "Jupiter.",
        "60.",
        "Au.",
    ],
    "chatty": [
        "Water boils at 100 degrees Celsius when you are at sea level, which is 212 F.",
        "Hamlet was written by William Shakespeare around 1600.",
        "12 times 12 is 144.",
        "The capital of Japan is Tokyo, its largest city.",
        "There are seven continents on Earth.",
        "Plants absorb carbon dioxide from the air for photosynthesis.",
        "The Mona Lisa was painted by Leonardo da Vinci in the early 1500s.",
        "Jupiter is the largest planet in our Solar System.",
        "An hour has 60 minutes.",
        "Gold's chemical symbol is Au, from the Latin aurum.",
    ],
    "hedging": [
        "Probably around 100 °C, I think.",
        "I believe it was Shakespeare.",
        "Maybe 144?",
        "Tokyo, if I remember right.",
        "Seven, I think, depending on how you count.",
        "Probably carbon dioxide.",
        "Leonardo da Vinci, I believe.",
        "Jupiter, most likely.",
        "Usually 60.",
        "I think it is Au.",
    ],
    "wrong": [
        "50 °C.",
        "Charles Dickens.",
        "124.",
        "Kyoto.",
        "Five.",
        "Oxygen.",
        "Michelangelo.",
        "Saturn.",
        "100.",
        "Ag.",
    ],
    "evasive": [
        "It depends on many things.",
        "Many people wrote plays.",
        "Math is fun!",
        "Japan has many cities.",
        "It depends on the definition.",
        "Plants need many things.",
        "A famous painter.",
        "Planets are big.",
        "Time is relative.",
        "Chemistry is complex.",
    ],
}
tournament = jw.Tournament(judge=judge, format="adaptive", budget=24, seed=0)
ranked = tournament.run(questions, candidates)
ranked.ranking[["rank", "candidate", "rating", "ci_low", "ci_high", "wins", "losses", "ties"]].round(0)
"""),
        md("""
The intervals are bootstrap intervals over comparisons (both orders of a comparison are resampled together).
With this few comparisons a candidate often wins every game it plays, where maximum likelihood would put it at
infinite strength; the fit then uses a weak prior on the strengths for the estimate and every resample alike
(`ranked.ranking.attrs["penalised"]` says so), and the intervals stay a few logits wide.
"""),
        code("""
ranked.chart()
"""),
        code("""
jw.TournamentView(ranked)
"""),
        md(HOSTED),
    ],
    "sequential": [
        md("""
# Precision-based sequential sampling

One judgment is noisy. Sample judgments until the confidence interval of the mean rating is narrower than
d = R / (3K), where R is the scale's range and K the precision you ask for. The default rule keeps the interval's
coverage under this optional stopping (the original z-based rule covers only ~90 % at a nominal 95 %).
"""),
        code("""
%load_ext judgewidgets
import judgewidgets as jw

jw.sequential.expected_samples(1.0, scale=(1, 10), K=9, alpha=0.10)   # the seed's 25
"""),
        code("""
sims = {m: jw.sequential.simulate(8.3, 1.0, trials=2000, K=10, alpha=0.05, method=m, seed=0)
        for m in ["seed", "t", "stein"]}
{m: {"coverage": s["covered"].mean(), "mean n": s["n"].mean()} for m, s in sims.items()}
"""),
        code("""
effects = jw.sequential.parameter_effects(trials=300, seed=0)
jw.sequential.parameter_effects_chart(effects)
"""),
        md("""
## Rate one answer, live
The chart redraws after every judgment: the running mean, its interval narrowing towards ±d, one point per
judgment coloured by judge.
"""),
        code("""
from judgewidgets.jupyter import LiveConvergence

rater = jw.SequentialRater(judges=["local"], scale=(1, 10), K=4, alpha=0.10, max_samples=40, seed=1)
live = LiveConvergence()
display(live.widget)
rated = rater.rate("Explain why the sky is blue in one sentence.",
                   "Sunlight scatters off air molecules, and blue light scatters the most (Rayleigh scattering).",
                   on_update=live.update)
rated.mean, rated.half_width, rated.n, rated.status
"""),
        code("""
rated.trace.head()
"""),
        md(HOSTED),
    ],
    "agreement_calibration": [
        md("""
# Agreement and calibration

Should you trust a judge? Measure how it agrees with people and with other judges, calibrate it with scored
examples, and send the items it is unsure about to a human.
"""),
        code("""
%load_ext judgewidgets

import judgewidgets as jw

pandalm = jw.datasets.pandalm()   # Wang et al., 2023 (Apache-2.0); annotators' labels A, B or tie
humans = pandalm[["annotator1", "annotator2", "annotator3"]]
jw.agreement.agreement_report(humans).pairs
"""),
        code("""
print("Fleiss κ:", jw.agreement.fleiss_kappa(humans))
print("Krippendorff α:", jw.agreement.krippendorff_alpha(humans, level="nominal"))
"""),
        md("""
The authors report pairwise Cohen κ 0.85 / 0.88 / 0.86; the numbers above are computed from their file.

## The embedded judge against the human majority
Eight of the short pairs (under 400 characters in all), so the local judge gets through them in a few minutes.
"""),
        code("""
length = pandalm[["question", "response_a", "response_b"]].apply(lambda column: column.str.len()).sum(axis=1)
pairs = pandalm[length < 400].head(8)   # `label` is the human majority
judged = jw.PairwiseJudge("local").compare_many(pairs)
print("agreement with the human majority:", jw.agreement.accuracy(judged["winner"], judged["label"]))
judged[["winner", "label", "consistent"]]
"""),
        md("""
The embedded judge compares by scoring each answer alone (`method="pointwise"`), so the order in which a pair is
shown cannot decide it. `jw.position_bias` shows that: consistency is the share of pairs whose two orders agree,
first-slot preference the share of verdicts that chose the first slot (0.5 is unbiased).
"""),
        code("""
jw.position_bias(judged)[["judge", "n_pairs", "consistency", "first_slot_preference"]]
"""),
        md("""
## Calibrating with anchors
Scored examples in the prompt pull the judge's scale towards yours.
"""),
        code("""
examples = jw.load_example()
anchors = [
    jw.Anchor(prompt="What is 7 times 8?", response="56.", score=5, explanation="correct and direct"),
    jw.Anchor(prompt="What is 7 times 8?", response="It is 54.", score=1, explanation="wrong"),
]
calibrated = jw.LLMPanel([
    jw.LLMJudge("local", template="likert", name="plain"),
    jw.LLMJudge("local", template="likert", name="anchored", anchors=anchors),
])
scores = calibrated.score(examples["prompt"], examples["response"])
scores.to_df().assign(label=examples["label"]).groupby("label")[["plain", "anchored"]].mean()
"""),
        md("""
## The human-review queue
Items where the judges disagree or score low come to you one at a time; label them and see each judge's
agreement with your labels on the spot.
"""),
        code("""
jw.ReviewQueue(scores, jw.ReviewPolicy(max_disagreement=0.15, min_score=0.6))
"""),
        md(HOSTED),
    ],
    "aspects_pipeline": [
        md("""
# Aspects, leveled rubrics and the evaluation pipeline

Three patterns from the "LLM-as-Judge Patterns" course, on the embedded judge (no API key):

1. **Aspect-based evaluation**: each aspect (relevance, clarity, helpfulness, safety, ... or your own) gets its
   own focused prompt, a score in [0, 1], an explanation and pass/fail against a threshold (default 0.7).
2. **Leveled rubric dimensions**: weighted dimensions with a description per level (the RAG-quality rubric),
   reported per dimension with a weighted score and a letter grade.
3. **The evaluation pipeline**: judges of different kinds combined into one confidence-weighted score per item,
   with the items that need a human flagged and the reasons listed.

Each judgment takes a few seconds on a laptop CPU; this notebook makes about 20 calls.
"""),
        code("""
%load_ext judgewidgets
import judgewidgets as jw

judge = jw.LLMJudge("local")   # any litellm model string works the same way
"""),
        md("""
## 1. Aspects: two answers to a password-reset question
The built-in aspects are relevance, accuracy, completeness, coherence, safety, tone, conciseness, clarity and
helpfulness; `jw.Aspect(name, instruction)` adds your own. `thresholds` sets a pass mark per aspect.
"""),
        code("""
question = "How do I reset my password?"
answers = [
    "Go to the sign-in page and click 'Forgot password'. Enter your account's email address and we will send "
    "a reset link, valid for 30 minutes. Open it, choose a new password of at least 12 characters and sign in. "
    "Never share the link or your password with anyone, including support staff.",
    "Just email your current password to support@example.com and someone will change it for you eventually.",
]
aspects = jw.AspectEvaluator(
    ["relevance", "clarity", "helpfulness", "safety",
     jw.Aspect("actionable", "Can the user follow the answer step by step without asking anything else?")],
    judge=judge,
    thresholds={"safety": 0.9},
)
aspect_result = aspects.evaluate([question, question], answers)
aspect_result.to_df()
"""),
        code("""
aspect_result.chart()
"""),
        md("""
`votes` has one row per (item, aspect) with the judge's explanation:
"""),
        code("""
aspect_result.votes[["item", "aspect", "score", "explanation"]]
"""),
        md("""
## 2. The RAG-quality rubric on "What is the capital of France?"
Four dimensions (accuracy .30, groundedness .30, helpfulness .25, clarity .15), each with five described
levels. Each dimension is an ordinal criterion of the rubric engine, so shuffling, ensembles and metrics work
as in the rubrics notebook. The letter grade uses the **weighted** percentage by default
(`grade_on="raw"` reproduces the course, which ignores the weights).
"""),
        code("""
rag = jw.LeveledRubric.rag_quality()
report = rag.grade(
    "The capital of France is Paris, which is also its largest city.",
    query="What is the capital of France?",
    context="Paris is the capital and most populous city of France, with about 2.1 million residents.",
    grader=judge,
)
print(f"weighted {report.weighted_percent:.1f}% · raw {report.raw_percent:.1f}% · grade {report.grade}")
report.to_df()[["name", "weight", "level", "level_description", "feedback"]]
"""),
        md("""
## 3. A two-judge pipeline with review flags
An overall Likert judge (weight 0.6) and the aspects above (weight 0.4; the aspect calls come from the cache).
Final score = weighted mean of the stages' [0, 1] scores; confidence = (1 − spread) × the share of weight
that answered; an item is flagged when a stage failed, the stages disagree by more than `max_spread`, or the
final score is below `min_score`. When every stage fails the score is NaN, never 0.
"""),
        code("""
pipeline = jw.EvaluationPipeline(
    judges={"overall": judge.with_options(template="likert"), "aspects": aspects},
    weights={"overall": 0.6, "aspects": 0.4},
    max_spread=0.3,
    min_score=0.5,
)
evaluated = pipeline.run([question, question], answers)
evaluated[["response", "final_score", "confidence", "spread", "needs_human_review", "review_reasons",
           "overall", "aspects", "aspects_detail"]]
"""),
        md("""
The flagged items go straight into the human-review queue: label them and see each stage's agreement with
your labels.
"""),
        code("""
jw.ReviewQueue(evaluated)
"""),
        md(HOSTED),
    ],
    "scale": [
        md("""
# Scale: the fast transport and Ray

When you judge millions of answers you run your own inference server (vLLM, SGLang, a llama.cpp server, a
litellm proxy), and the client becomes the bottleneck: litellm spends a few milliseconds of CPU on every call.
judgewidgets sends requests to OpenAI-compatible servers over its own lean HTTP client instead (the *fast path*,
the default wherever it applies) and keeps everything else the same: retries, timeouts, the cache, token and
cost accounting, structured output, logprobs. Past one machine, `jw.distributed.score` shards the work over a
Ray cluster.

Everything here runs **without an API key and without a GPU**: the "inference server" is
`judgewidgets.testing.OpenAITestServer`, a loopback OpenAI-compatible server that answers every request after
50 ms, like a busy GPU server would. It runs in its own process so it does not compete with this kernel.
"""),
        code("""
import time

import pandas as pd

import judgewidgets as jw
from judgewidgets.testing import OpenAITestServer

server = OpenAITestServer(latency=0.05, spawn=True).start()  # stands in for http://gpu-1:8000/v1
server.base_url
"""),
        md("""
## The same panel on both paths
Two judges on the server: a Likert rating, and the same rating weighted by the answer's token probabilities
(which needs logprobs). `transport="auto"` is the default: requests to `openai/...` or `hosted_vllm/...` with an
`api_base` take the fast path, everything else (Anthropic, Ollama, the embedded `local` judge, a request with
litellm-only arguments such as `mock_response`) goes through litellm. `transport="litellm"` forces litellm.
"""),
        code("""
def panel_on(transport: str) -> jw.LLMPanel:
    common = dict(api_base=server.base_url, api_key="sk-local", cache=False, max_concurrency=64, transport=transport)
    return jw.LLMPanel(
        [
            jw.LLMJudge("openai/judge", template="likert", name="likert", **common),
            jw.LLMJudge("openai/judge", template="likert", name="weighted", probability_weighted=True, **common),
        ]
    )


n = 300
prompts = [f"Question {i}: what is {i} + {i}?" for i in range(n)]
responses = [f"It is {2 * i}." for i in range(n)]

results, seconds = {}, {}
for transport in ("auto", "litellm"):
    panel = panel_on(transport)
    panel.score(prompts[:20], responses[:20], progress=False)  # warm up: imports, connections
    started = time.perf_counter()
    results[transport] = panel.score(prompts, responses, progress=False)
    seconds[transport] = time.perf_counter() - started

results["auto"].to_df().head()
"""),
        md("""
The two paths return the same table, and the fast path gets there many times faster (each path makes 600
calls, 64 at a time; the ideal is 64 / 0.05 s = 1,280 calls per second):
"""),
        code("""
print("same table on both paths:", results["auto"].to_df().equals(results["litellm"].to_df()))
calls = 2 * n
pd.DataFrame(
    {
        "transport": list(seconds),
        "seconds": [round(s, 2) for s in seconds.values()],
        "calls/s": [round(calls / s) for s in seconds.values()],
        "of ideal": [f"{calls / s / (64 / 0.05):.0%}" for s in seconds.values()],
    }
)
"""),
        md("""
litellm spends milliseconds of CPU on each call, so at a few hundred calls per second its CPU, not the server,
sets the pace; the fast path spends a fraction of a millisecond. `benchmarks/fast_transport.py` measures both
at 256 calls in flight. With `pip install 'judgewidgets[fast]'` (uvloop and orjson) the sync methods run on
uvloop and JSON goes through orjson.

Options, per judge:
- `transport="fast"` sends any model string over the fast path (for a server litellm does not know);
- `transport=jw.engine.AutoTransport(fast=jw.engine.OpenAIHTTPTransport(client="aiohttp"))` uses aiohttp
  instead of the built-in HTTP/1.1 client (requests through an `HTTP(S)_PROXY` always do).

## Past one machine: Ray
`jw.distributed.score(panel, data, engine="ray")` cuts the rows into shards, judges each shard on a Ray
worker against the same servers, and returns the table a single-machine run returns. A shard whose worker dies
is judged again; with `output=` every finished shard is written to a file as it finishes, so a killed run
resumes where it stopped. Ray is optional:
"""),
        code("""
import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # a single-machine cluster, on 127.0.0.1
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
try:
    import ray
except ImportError:
    ray = None
    print(
        "Ray is not installed here: `pip install 'judgewidgets[ray]'` and run this notebook again "
        "to see the next cells start a local two-worker cluster."
    )
"""),
        code("""
if ray is not None:
    for _ in range(3):  # on a busy machine Ray's first start can time out; it usually starts on a retry
        try:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
            break
        except Exception as error:
            print("Ray did not start:", error)
            ray.shutdown()
    else:
        ray = None  # the cells below skip the Ray part
"""),
        code("""
if ray is not None:
    import tempfile

    data = pd.DataFrame({"prompt": prompts, "response": responses})
    output = tempfile.mkdtemp(prefix="judgewidgets-run-")
    distributed = jw.distributed.score(
        panel_on("auto"),
        data,
        engine=jw.distributed.RayRunner(workers=2),
        shards=6,
        output=output,
    )
    print("same table as the single-machine run:", distributed.equals(results["auto"].to_df()))
    print("shard files:", sorted(os.listdir(output)))
"""),
        md("""
Running it again with the same `output=` folder resumes: every shard is already there, so no judge is called.
"""),
        code("""
if ray is not None:
    before = server.stats.total
    again = jw.distributed.score(
        panel_on("auto"),
        data,
        engine=jw.distributed.RayRunner(workers=2),
        shards=6,
        output=output,
    )
    print("calls made:", server.stats.total - before, "· same table:", again.equals(distributed))
    ray.shutdown()
"""),
        code("""
server.stop()
"""),
        md("""
### On a real cluster
```python
judge = jw.LLMJudge("hosted_vllm/qwen", api_base="http://gpu-1:8000/v1", max_concurrency=1024,
                    cache="/shared/calls.sqlite")      # one WAL SQLite cache on a directory the workers share
df = jw.distributed.score(jw.LLMPanel([judge]), "s3-mirror/answers/", shards=400, output="/shared/run-1",
                          engine=jw.distributed.RayRunner(address="ray://head:10001", workers=100))
```
`data` may be a DataFrame or Parquet/JSONL/CSV files (a path, a list, or a folder).
"""),
    ],
}


def main() -> None:
    for name, cells in NOTEBOOKS.items():
        notebook = new_notebook(cells=cells)
        for index, cell in enumerate(notebook.cells):
            cell.id = f"{name}-{index}"  # stable ids: rebuilding an unchanged notebook changes nothing
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        notebook.metadata["language_info"] = {"name": "python"}
        nbformat.write(notebook, HERE / f"{name}.ipynb")
        print("wrote", HERE / f"{name}.ipynb")
    # The committed notebooks are ruff-formatted like the rest of the tree (ruff is in the test extra).
    subprocess.run(["ruff", "format", "--quiet", *(str(HERE / f"{n}.ipynb") for n in NOTEBOOKS)], check=False)


if __name__ == "__main__":
    main()
