"""What a build will do and cost, said before anything is spent (``graphtx build --plan``).

The projections are rates measured on the project's reference machine (2 cores, no GPU; benchmarks/RESULTS.md and its
studies), scaled to this machine's cores; on a GPU the teacher and training rates are those of one H100/H200.
They are projections, not promises: the build prints each step's measured time beside its projection.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from graphtx.hardware import TEACHER_BF16

# measured rates, 2 CPU cores (the studies of benchmarks/results/): per second unless named otherwise
PARSE_WORDS_PER_S_PER_WORKER = 8_400  # spaCy en_core_web_sm + rules (speed-parse.md; full-text dev set: 8,400 a worker)
TOKENS_WORDS_PER_S = 51_000.0  # BPE + FastText over the corpus: 83.0 M words of the 42,356 full texts in 1,624 s (load 1-2.6); 14,006 abstracts in 41 s
# (the rate was per document, calibrated on abstracts, and projected 126 s for those full texts: 13x short)
TEACHER_DOCS_PER_S = {"mpnet": 2.4, "minilm": 24.0}  # title + abstract, 2 cores (teacher-distillation.md)
TEACHER_GPU_DOCS_PER_S = {
    "mpnet": 600.0,
    "minilm": 3_000.0,
}  # one H200 (full-text-dev-set.md, run 9, scaled to short texts)
PRETRAIN_S_PER_STEP = 1.0  # stage pretrain over EV abstracts (a 35-node anchor, 35-node candidates), 2 cores
# a step encodes the query and candidate graphs of its batch's documents (32 anchors and 3 teacher neighbours each:
# up to 128 documents, fewer in a smaller corpus), so it costs about as documents x nodes:
REFERENCE_STEP_WORK = 128 * 70.0  # EV: 128 documents of 35 + 35 nodes, 1.0 s a step
# each document-node more costs about 1/8,064 of the reference step: the line through EV and the 42,356 full texts
# (128 documents of 35 + 161 nodes, 2.95-3.05 s a step at load 1.7-2.1). Beside it, the 371 shared USPTO grants (13 +
# 83 nodes): 1.23 s measured, 1.43 s on the line; two weekly files (50 grants, 22 + 158 nodes, every batch all 50):
# 1.26 s measured, 1.0 s on the line (load 1.3-1.9)
STEP_COST_PER_WORK = 2.0 / (128 * 126.0)
# below EV's work a step costs less than that line says (its fixed part weighs more): the 42,356 software abstracts'
# graphs (128 documents of 22 + 22 nodes) ran at 0.74-0.75 s a step (the builds of 2,000 of them: 698 s for 938
# steps; the build of all 42,356: 0.74 s; load 1.8-2.1), where the line said 0.59 s. Below the reference, the line
# through EV and that point.
STEP_COST_PER_WORK_BELOW = (1.0 - 0.745) / (128 * (70.0 - 44.0))
# the step of today's code against the code those constants were measured with, on 2 cores: gathers by index_select
# (fp32), and the distillation under bf16 autocast where the CPU has bf16 in hardware (graphtx.hardware). Measured
# on one machine by benchmarks/bench_adapt_step.py (200 steps over 4,000 software abstracts, two rounds interleaved,
# median s a step): the older code 0.443 / 0.465, fp32 0.416 / 0.405, bf16 0.289 / 0.256; a run by hand before it
# 0.450 / 0.436, 0.396 / 0.417, 0.261 / 0.282 (load 0.1-2.7; benchmarks/RESULTS.md, Speed); the shares pool both.
# The citation stage's steps take the fp32 share: the same model code, not timed there.
CPU_STEP_SHARE = {"fp32": 0.91, "bf16": 0.61}
# one H200 (the device tool's machine, 16 cores) against that calibration's step for the same graphs (the 42,356
# software abstracts: 0.745 s): the distillation over 4,000 of them at 0.0367 / 0.0434 s a step (two runs) with its
# batches built ahead by 4 processes, 0.0730 / 0.0912 s built in line (graphtx/train/prefetch.py;
# benchmarks/RESULTS.md, Speed). The citation stage builds its batches in line: taken as the distillation in line,
# not timed
GPU_STEP_SHARE = {"ahead": 0.040 / 0.745, "in line": 0.082 / 0.745}
# a large corpus's label-free build reads every document ADAPT_MAX_EPOCHS times by default (no sample) when its model
# step is projected within this on the machine, with the teacher a sample would get: on one H200 the 42,356 software
# abstracts (19,855 steps: 12-14 min of distillation by the H200's measured steps; the plan, guessing their graphs'
# sizes from the words, says 18 min of model step), not on 2 cores (3.2 h projected, about 2.5 h measured). The choice
# is made from the plan's projection before the parse (the parsed sizes where the graphs are parsed already). Reading all of them against a seeded
# 2,001, the same seed, nDCG@150 over the 42,356 (benchmarks/results/transfer.md, transfer-ftabs-42k-read): 1.45x
# [1.22, 1.85] over three seeds (1.54x, 1.23x, 1.63x). The hour is the one choose_teacher gives mpnet on a CPU
READ_ALL_WITHIN_S = 3600.0
# a graph's nodes against the words of the text it is parsed from, measured on the 371 shared USPTO grants' graphs
# (first claims of 12 to 406 words: about 0.17 nodes a word; claims + description: 0.14 up to ~1,300 words) and EV
# abstracts (120 words, 35 nodes). A graph levels off a little below the parse's cap (max_feature_nodes +
# max_relation_nodes): 175-179 nodes on average under configs/small.yaml's 192 for the long texts of both sets.
# The mean words of a corpus would mislead: a few long texts hold most words of a corpus of short ones.
NODES_PER_WORD = {"claims": 0.17, "abstract": 0.29, "description": 0.14}
GRAPH_LEVEL_SHARE = 0.93  # of the parse's cap
TEACHER_REFERENCE_WORDS = 130.0  # what TEACHER_DOCS_PER_S was measured on: an EV title + abstract
TEACHER_MIN_WORDS = 8.0  # a document's fixed cost to the teacher, in words (its special tokens, its batch slot)
WORDS_PER_TOKEN = 0.75  # patent English through the teachers' WordPiece tokenizers, about
TEACHER_LOAD_S = 20.0  # loading the peer (the first use of mpnet also joins its 0.4 GB of pieces, once)
TOKENS_FIXED_S = 5.0  # BPE + FastText set-up
# description graphs through the small model, 2 cores: 42,356 full texts (161 nodes) in 375 s at load 1-2 (build.md;
# 60 had projected 12 min for them: 2x long); 100 grants in a cold process ran at 56/s (speed-encode.md)
ENCODE_GRAPHS_PER_S, ENCODE_REFERENCE_NODES = 110.0, 161.0  # a graph's encoding costs about as its nodes
INDEX_FIXED_S = 1.0  # loading the model and writing the index files (371 grants of 83-node graphs: 2.2 s in all)
BYTES_PER_DOCUMENT = {"corpus": 1.2, "graphs": 3.0, "index": 1.5}  # x the document's text bytes, on disk
MPNET_CPU_HOUR_DOCUMENTS = int(TEACHER_DOCS_PER_S["mpnet"] * 3600)  # what 2 cores encode with mpnet in about an hour
# a teacher's time on a CPU under bf16 autocast (graphtx.hardware.teacher_in_bf16) against fp32's, the same texts, 512
# software abstracts on 2 cores with AVX512-BF16, two rounds interleaved (median; benchmarks/bench_teacher_precision.py,
# benchmarks/results/cpu-bf16.md): mpnet 55.5 s in bf16 against 117.9 s in fp32 (load 2.0-2.1); MiniLM 20.1 s against
# 30.8 s (load 2.0-3.7, beside another job)
TEACHER_CPU_BF16_SHARE = {"mpnet": 0.47, "minilm": 0.65}


def teacher_cpu_share(teacher: str, precision: str) -> float:
    """A teacher's CPU time in ``precision`` against its fp32 time (TEACHER_CPU_BF16_SHARE; 1 for float32)."""
    return TEACHER_CPU_BF16_SHARE[teacher] if precision == TEACHER_BF16 else 1.0


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


def graph_nodes(words: float, text: str, cap: float) -> float:
    """Expected nodes of a graph parsed from ``words`` words of ``text`` (claims, abstract or description) under the
    parse's cap of ``cap`` nodes a graph."""
    return min(GRAPH_LEVEL_SHARE * cap, NODES_PER_WORD[text] * max(words, 0.0))


def document_graph_nodes(row: dict, cfg) -> dict[str, float]:
    """Expected nodes of each graph kind of one corpus row (title, abstract, claims, first_claim_index,
    description), from the texts the parse feeds each kind (graphtx.graphs.builder.plan_texts) under ParseConfig
    ``cfg``."""
    cap = float(cfg.max_feature_nodes + cfg.max_relation_nodes)
    claims = [c["text"] for c in row.get("claims") or () if (c["text"] or "").strip()]
    paragraphs = [p for p in (row.get("description") or "").split("\n") if p.strip()]
    description = len(" ".join(paragraphs)[: cfg.max_description_chars].split())
    if claims:
        index = row.get("first_claim_index")
        listed = row.get("claims") or ()
        first = listed[index]["text"] if index is not None and 0 <= index < len(listed) else ""
        first = first if (first or "").strip() else claims[0]
        all_claims = len(" ".join(claims)[: cfg.max_claims_chars].split())
        return {
            "first_claim": graph_nodes(len(first.split()), "claims", cap),
            "all_claims": graph_nodes(all_claims, "claims", cap),
            "description": graph_nodes(all_claims + description, "description", cap),
        }
    abstract = (row.get("abstract") or "").strip()
    lead = abstract or (paragraphs[0] if paragraphs else "") or (row.get("title") or "")
    lead_nodes = graph_nodes(len(lead.split()), "abstract", cap)
    together = len(lead.split()) + description - (len(paragraphs[0].split()) if paragraphs and not abstract else 0)
    return {
        "first_claim": lead_nodes,
        "all_claims": lead_nodes,
        "description": max(lead_nodes, graph_nodes(together, "description", cap)),
    }


def teacher_document_words(row: dict, fields: tuple[str, ...], max_tokens: int, passages: int) -> float:
    """Words the teacher reads of one corpus row: its fields, cut at ``passages`` windows of ``max_tokens``."""
    parts = []
    for f in fields:
        value = row.get(f)
        if f == "claims":
            value = " ".join(c["text"] or "" for c in value or ())
        parts.append(value or "")
    return min(len(" ".join(parts).split()), WORDS_PER_TOKEN * max_tokens * max(passages, 1))


def step_factor(query_nodes: float, candidate_nodes: float, batch_documents: float = 128.0) -> float:
    """A distillation step's cost against an EV-abstract step, from the mean nodes of the query and candidate graphs
    and the documents a batch holds (``min(corpus, anchors x (1 + teacher neighbours))``)."""
    work = batch_documents * (query_nodes + candidate_nodes)
    slope = STEP_COST_PER_WORK if work >= REFERENCE_STEP_WORK else STEP_COST_PER_WORK_BELOW
    return max(0.3, 1.0 + (work - REFERENCE_STEP_WORK) * slope)


def parse_seconds(words: int, workers: int) -> float:
    return words / (PARSE_WORDS_PER_S_PER_WORKER * max(1, min(workers, os.cpu_count() or 1)))


def teacher_seconds(
    documents: int,
    teacher: str,
    gpu: bool,
    words_per_document: float = TEACHER_REFERENCE_WORDS,
    precision: str = "float32",
) -> float:
    """The teacher's time for ``documents`` new documents of ``words_per_document`` words read on average (cut as it
    cuts: teacher_document_words): its rate scales with the words, down to a floor of fixed cost (TEACHER_MIN_WORDS).
    ``precision``: the CPU encoding's (float32, or TEACHER_BF16 at TEACHER_CPU_BF16_SHARE of fp32's time)."""
    if teacher not in TEACHER_DOCS_PER_S:
        return 0.0  # a directory: written already
    share = teacher_cpu_share(teacher, precision)
    rate = TEACHER_GPU_DOCS_PER_S[teacher] if gpu else TEACHER_DOCS_PER_S[teacher] / core_scale() / share
    return TEACHER_LOAD_S + documents * max(TEACHER_MIN_WORDS, words_per_document) / TEACHER_REFERENCE_WORDS / rate


def index_seconds(documents: int, description_nodes: float, scale: float) -> float:
    """Encoding ``documents`` description graphs of ``description_nodes`` nodes on average into the index."""
    rate = ENCODE_GRAPHS_PER_S * ENCODE_REFERENCE_NODES / max(description_nodes, 20.0)
    return INDEX_FIXED_S + documents / rate * scale


def choose_teacher(
    configured: str,
    documents: int,
    gpu: bool,
    asked: bool,
    words: dict[str, float] | None = None,
    mpnet_cached: int = 0,
    precision: str = "float32",
) -> tuple[str, str]:
    """The teacher the build uses and a line about the choice. On a CPU, above what mpnet encodes in about an hour
    (documents of the reference length: EV titles + abstracts; ``words``: teacher -> mean words a document it reads),
    the default teacher all-mpnet-base-v2 gives way to all-MiniLM-L6-v2 (ten times faster; 0.90x mpnet's student at
    Recall@3 on EV, benchmarks/results/teacher-distillation.md), unless the teacher was asked for by name. Only the
    documents mpnet would still encode count: ``mpnet_cached`` of the ``documents`` whose mpnet vectors the peer
    vector cache already holds (an earlier build, `graphtx teacher`, an evaluation) cost nothing. ``precision``: the
    teacher's on this CPU (under bf16 autocast an hour holds more documents: TEACHER_CPU_BF16_SHARE)."""
    words = words or {}
    length = {t: max(TEACHER_MIN_WORDS, words.get(t, TEACHER_REFERENCE_WORDS)) for t in ("mpnet", "minilm")}
    hour = MPNET_CPU_HOUR_DOCUMENTS / core_scale()
    to_encode = max(0, documents - mpnet_cached)
    share = teacher_cpu_share("mpnet", precision)
    if configured != "mpnet" or gpu or asked or to_encode * length["mpnet"] / TEACHER_REFERENCE_WORDS * share <= hour:
        return configured, ""
    cost = duration(teacher_seconds(to_encode, "mpnet", False, length["mpnet"], precision))
    held = f" ({mpnet_cached:,} more are in the peer vector cache)" if mpnet_cached else ""
    return "minilm", (
        f"teacher: all-MiniLM-L6-v2, not all-mpnet-base-v2: mpnet would take about {cost} on this CPU for "
        f"{to_encode:,} documents{held} (MiniLM about "
        f"{duration(teacher_seconds(documents, 'minilm', False, length['minilm'], precision))}; "
        "its student scored 0.90x mpnet's at Recall@3 on EV). Ask for mpnet with --teacher mpnet, or build on a GPU."
    )
