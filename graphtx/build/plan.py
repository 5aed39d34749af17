"""What a build will do and cost, said before anything is spent (``graphtx build --plan``).

The projections are rates measured on the project's reference machine (2 cores, no GPU; benchmarks/RESULTS.md and its
studies), scaled to this machine's cores; on a GPU the teacher and training rates are those of one H100/H200.
They are projections, not promises: the build prints each step's measured time beside its projection.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

# measured rates, 2 CPU cores (the studies of benchmarks/results/): per second unless named otherwise
PARSE_WORDS_PER_S_PER_WORKER = 8_400  # spaCy en_core_web_sm + rules (speed-parse.md; full-text dev set: 8,400 a worker)
TOKENS_WORDS_PER_S = 51_000.0  # BPE + FastText over the corpus: 83.0 M words of the 42,356 full texts in 1,624 s (load 1-2.6); 14,006 abstracts in 41 s
# (the rate was per document, calibrated on abstracts, and projected 126 s for those full texts: 13x short)
TEACHER_DOCS_PER_S = {"mpnet": 2.4, "minilm": 24.0}  # title + abstract, 2 cores (teacher-distillation.md)
TEACHER_GPU_DOCS_PER_S = {
    "mpnet": 600.0,
    "minilm": 3_000.0,
}  # one H200 (full-text-dev-set.md, run 9, scaled to short texts)
PRETRAIN_S_PER_STEP = (
    1.0  # stage pretrain, 32 EV abstracts + neighbours a step (35 nodes a graph), 2 cores (16-36 min for 1,500 steps)
)
EV_WORDS, EV_NODES = (
    120,
    35,
)  # an EV-battery abstract: words, nodes of its graph; longer texts give larger graphs (to about 190 nodes)
TEACHER_LOAD_S = 20.0  # loading the peer (the first use of mpnet also joins its 0.4 GB of pieces, once)
TOKENS_FIXED_S = 5.0  # BPE + FastText set-up
# description graphs through the small model, 2 cores: 42,356 full texts (161 nodes) in 375 s at load 1-2 (build.md;
# 60 had projected 12 min for them: 2x long); 100 grants in a cold process ran at 56/s (speed-encode.md)
ENCODE_GRAPHS_PER_S = 110.0
INDEX_FIXED_S = 3.0  # loading the model and writing the index files
BYTES_PER_DOCUMENT = {"corpus": 1.2, "graphs": 3.0, "index": 1.5}  # x the document's text bytes, on disk
MPNET_CPU_HOUR_DOCUMENTS = int(TEACHER_DOCS_PER_S["mpnet"] * 3600)  # what 2 cores encode with mpnet in about an hour


@dataclass
class PlannedStep:
    name: str
    what: str
    seconds: float  # projected on this machine
    done: bool = False  # up to date: skipped


@dataclass
class BuildPlan:
    documents: int
    words: int
    text_bytes: int
    route: str  # "train" (citations within the corpus) or "adapt" (none: label-free)
    teacher: str
    teacher_note: str
    steps: list[PlannedStep] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.steps if not s.done)

    def lines(self) -> list[str]:
        out = [
            f"plan: {self.documents:,} documents, {self.words:,} words; route: {self.route}; teacher: {self.teacher}"
        ]
        if self.teacher_note:
            out.append(f"  {self.teacher_note}")
        for s in self.steps:
            out.append(f"  {s.name:<7} {'up to date' if s.done else duration(s.seconds):>12}  {s.what}")
        disk = sum(self.text_bytes * v for v in BYTES_PER_DOCUMENT.values())
        out.append(
            f"  total   {duration(self.seconds):>12}  on {os.cpu_count()} cores; about {disk / 2**20:,.0f} MiB on disk"
        )
        return out


def duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def core_scale() -> float:
    """This machine's speed against the reference's 2 cores (more cores: proportionally faster, to 8)."""
    return 2.0 / min(max(os.cpu_count() or 2, 1), 8)


def step_factor(words_per_document: float) -> float:
    """A distillation step's cost against an EV-abstract step: graphs grow with the text (about as its square root)."""
    nodes = min(190.0, EV_NODES * (max(words_per_document, 1.0) / EV_WORDS) ** 0.5)
    return max(1.0, (nodes + 25.0) / (EV_NODES + 25.0))


def parse_seconds(words: int, workers: int) -> float:
    return words / (PARSE_WORDS_PER_S_PER_WORKER * max(1, min(workers, os.cpu_count() or 1)))


def teacher_seconds(documents: int, teacher: str, gpu: bool) -> float:
    if teacher not in TEACHER_DOCS_PER_S:
        return 0.0  # a directory: written already
    rate = TEACHER_GPU_DOCS_PER_S[teacher] if gpu else TEACHER_DOCS_PER_S[teacher] / core_scale()
    return TEACHER_LOAD_S + documents / rate


def choose_teacher(configured: str, documents: int, gpu: bool, asked: bool) -> tuple[str, str]:
    """The teacher the build uses and a line about the choice. On a CPU, above what mpnet encodes in about an hour,
    the default teacher all-mpnet-base-v2 gives way to all-MiniLM-L6-v2 (ten times faster; 0.90x mpnet's student at
    Recall@3 on EV, benchmarks/results/teacher-distillation.md), unless the teacher was asked for by name."""
    if configured != "mpnet" or gpu or asked or documents <= MPNET_CPU_HOUR_DOCUMENTS / core_scale():
        return configured, ""
    cost = duration(teacher_seconds(documents, "mpnet", False))
    return "minilm", (
        f"teacher: all-MiniLM-L6-v2, not all-mpnet-base-v2: mpnet would take about {cost} on this CPU for "
        f"{documents:,} documents (MiniLM about {duration(teacher_seconds(documents, 'minilm', False))}; its student scored "
        f"0.90x mpnet's at Recall@3 on EV). Ask for mpnet with --teacher mpnet, or build on a GPU."
    )
