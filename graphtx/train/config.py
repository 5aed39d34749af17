"""TrainConfig: citation-supervised training, both stages (kept free of torch).

Loaded from the ``train:`` section of a config YAML (see configs/small.yaml).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Protocol

DEFAULT_MARGINS = {
    # Cosine-distance margins per citation category: a novelty-destroying X citation must
    # sit closer to its query than an A (background) one needs to.
    "X": 0.3,
    "Y": 0.25,
    "A": 0.15,
    "examiner": 0.2,
    "applicant": 0.1,
    "other": 0.1,
    "unknown": 0.2,
    "trivial": 0.3,  # a first claim and its own description
}


STAGE_ORDER = ("pretrain", "base", "reduced")  # each stage starts from the model of the one before it


@dataclass(frozen=True)
class TrainConfig:
    # keys taken out after a negative study: a config that still names one fails with this reason (graphtx.from_dict)
    REMOVED: ClassVar[dict[str, str]] = {
        "pretrain_cloze_weight": "inverse-cloze pre-training, negative in benchmarks/results/full-text-dev-set.md run 5",
        "pretrain_lexical_in_loss": "pre-training losses on [graph ; lexical], negative in benchmarks/results/full-text-dev-set.md runs 6 and 10",
        "pretrain_teacher_target": "the teacher's cosine margins (Margin-MSE) in place of its softmax, 0.84x the softmax at nDCG@150 in benchmarks/results/transfer.md (teacher-margins-2k; last at 0761f6d)",
    }

    # --- data -------------------------------------------------------------------------
    query_kind: str = "first_claim"  # graph of the citing document (falls back to what the document has)
    candidate_kind: str = "description"  # graph of the cited document = what the index holds
    augment_kind: str = "all_claims"  # graph-type augmentation swaps in this kind
    graph_type_augment_p: float = 0.4  # per pair: replace the citing OR the cited graph (never both) with augment_kind
    trivial_share: float = 0.2  # trivial pairs (own first claim -> own description) added, as a share of citation pairs
    trivial_same_graph: bool = (
        False  # also when both graphs are one and the same (abstract-only documents): two node-dropout views
    )
    category_map: dict = field(default_factory=dict)  # citation category -> category used for its margin (e.g. {I: X})
    margins: dict = field(
        default_factory=lambda: dict(DEFAULT_MARGINS)
    )  # category -> triplet margin; missing -> margins["unknown"]
    split: str = "files"  # files: --citations/--valid-citations given; random: by family; year: by citing year
    valid_share: float = 0.1  # split=random: share of citing families for validation
    test_share: float = 0.1  # split=random: share of citing families held out for test
    valid_from_year: int = 0  # split=year: citing year >= this is validation ...
    test_from_year: int = 0  # ... and >= this is test (0 = no test set)
    ranker_holdout: float = (
        0.0  # share of training citing families kept out of training for `graphtx rank-fit` (RUN/ranker_citations.tsv)
    )
    # the selection split: the latest share of the (remaining) training queries by citing date, kept out of training; they
    # select checkpoints, early stopping and the shipped stage. Validation and test citations are scored once, at the end.
    selection_share: float = 0.15
    # --- batches ----------------------------------------------------------------------
    max_nodes_per_batch: int = 6000  # size-aware batches: node budget over all graphs of a batch
    max_pairs_per_batch: int = 128  # and at most this many (citing, cited) pairs
    group_by: str = "cluster"  # ipc | cpc | cluster (k-means of averaged token vectors) | none: what a batch shares
    num_clusters: int = 32  # group_by=cluster: k of the k-means over documents
    negatives: str = (
        "in_batch"  # in_batch | paecter (+ per anchor one cited-by-its-citations doc and one same-class doc)
    )
    bm25_negatives: int = (
        0  # + per citing document its top-N BM25 hits that it does not cite (DPR's hard negatives; 0 = off)
    )
    # model.lexical_dim > 0: the loss scores the searched vector [graph ; lexical channel], a residual to the exact terms
    # (on in configs/small.yaml; off keeps older runs' loss: the graph part alone). The pretrain stage has its own switch.
    lexical_in_loss: bool = False
    # --- regularisation ---------------------------------------------------------------
    node_dropout_max: float = 0.2  # node dropout p(n) = max * n / (n + half): small graphs lose little
    node_dropout_half: int = 32  # graph size (nodes) at which p reaches half of node_dropout_max
    # --- loss -------------------------------------------------------------------------
    loss: str = "triplet"  # triplet (margins per category, mining below) | infonce (in-batch softmax, temperature)
    temperature: float = 0.05  # loss=infonce: softmax temperature over cosine similarities
    distance: str = "cosine"  # cosine (1 - cos) | l2 (on the L2-normalised vectors)
    mining: str = "hardest"  # hardest | semihard | all: which in-batch negatives each anchor gets
    cross_rank_negatives: bool = True  # DDP: mine negatives among the cited graphs of every rank
    select_rerank_depth: int = 0  # model.late_dim > 0: validation re-ranks each dense top N by late interaction (selects for --rerank late; 0 = dense alone)
    late_head_epochs: int = 20  # graphtx fit-late-head: epochs over the training citations (early stop: early_stop_evals epochs without gain)
    late_head_dense_negatives: int = 3  # graphtx fit-late-head: per anchor, negatives drawn from its dense top select_rerank_depth (what re-ranking sees)
    late_interaction_weight: float = 0.5  # model.late_dim > 0: loss = (1 - w) pooled-vector loss + w late-interaction loss (same loss kind; its in-batch negatives stay on the rank)
    # --- optimisation -----------------------------------------------------------------
    lr: float = 1e-3  # AdamW learning rate of the base stage
    reduced_lr: float = 5e-4  # AdamW learning rate of the reduction stage
    finetune_lr: float = 0.0  # the base stage's learning rate when it starts from pre-trained weights (stage pretrain before it, or --init); 0 = lr
    weight_decay: float = 0.01  # AdamW weight decay
    token_lr_scale: float = (
        1.0  # LR multiplier of the FastText-initialised token table (0 = frozen: little data overfits it)
    )
    grad_clip: float = 1.0  # max global gradient norm (0 = off)
    warmup_steps: int = 20  # linear warm-up at the start of each stage
    plateau_patience: int = 2  # evaluations without Recall@k gain before the LR is halved
    plateau_factor: float = 0.5  # LR multiplier applied at a plateau
    min_lr: float = 1e-6  # the LR is never cut below this
    amp: bool = True  # bf16 autocast on CUDA; on a CPU with bf16 in hardware (AVX512-BF16, AMX) the distillation's and the teacher's too
    # --- loop -------------------------------------------------------------------------
    stages: tuple[str, ...] = (
        "base",
        "reduced",
    )  # pretrain: self-supervised (below); base: output = base_dim; reduced: + MoE head
    init_from: str = ""  # model directory to start from (a pretrain run's model/): what --init gives; "" = a fresh model from --tokens
    max_epochs: int = 30  # per stage
    max_steps: int = 0  # per stage, 0 = no cap (tests and smoke runs)
    evals_per_epoch: int = 3  # evaluations on the selection split (held-out training queries) per epoch
    early_stop_evals: int = 3  # stop a stage after this many evaluations without Recall@k gain
    eval_k: int = 3  # Recall@k that selects checkpoints
    select_metric: str = "recall"  # recall (Recall@eval_k, the paper's) | ndcg (nDCG@eval_ndcg_k: steadier on a few hundred judged pairs)
    eval_ndcg_k: int = 150  # nDCG@k reported at each evaluation (and selecting with select_metric: ndcg)
    checkpoint_every_steps: int = 25  # besides every evaluation
    log_every_steps: int = 1  # a line in the training log every this many steps
    encode_batch_size: int = 128  # graphs per forward pass at evaluation
    # --- stage pretrain (graphtx/train/pretrain_graph.py): no citations, unlabelled graphs ---------------
    pretrain_graphs: tuple[str, ...] = ()  # more graphs directories pooled with --graphs (any `graphtx parse` output)
    pretrain_steps: int = 400  # optimiser steps of the stage
    # label-free adaptation (graphtx/train/adapt.py, `graphtx build` without citations): the most passes its steps make
    # over the corpus's documents; a smaller corpus gets fewer steps than pretrain_steps. 30 measured level with 15 on
    # 2,000 software abstracts at twice the time (benchmarks/regressions/adapt-passes-2k.yaml, three seeds)
    adapt_max_passes: float = 15.0
    pretrain_batch_docs: int = (
        32  # pool documents per step (each gives a span, a candidate graph and maybe a view anchor)
    )
    # processes building the next steps' batches ahead (graphtx/train/prefetch.py); the same batches either way
    pretrain_batch_workers: int = -1  # -1 auto: 4 beside a GPU where the cores allow, none on a CPU; 0 in line
    pretrain_lr: float = 1e-3  # AdamW peak learning rate (warm-up, then cosine decay to min_lr)
    pretrain_evals: int = 5  # evaluations on the selection split (zero-shot); the best is kept
    pretrain_views_weight: float = (
        1.0  # (a) InfoNCE: query view (first claim / abstract) -> own candidate view (description); 0 = off
    )
    pretrain_bm25_weight: float = (
        1.0  # (b) KL to BM25's softmax over the batch's candidates for a span cut from the document; 0 = off
    )
    pretrain_bm25_candidates: int = 3  # per span: its top BM25 documents (not itself) added to the batch's candidates
    pretrain_bm25_temperature: float = (
        0.2  # teacher softmax temperature on BM25 scores divided by the query's best score
    )
    pretrain_query_min_share: float = 0.3  # span = a random contiguous share in [min, max] of the query graph's nodes
    pretrain_query_max_share: float = 0.6  # upper end of that share
    # (c) teacher distillation:
    pretrain_teacher: str = ""  # a `graphtx teacher` directory, or a peer (minilm, mpnet) whose vectors the run writes to RUN_DIR/teacher; "" = off
    # what a named peer reads of each document (some of title, abstract, description, claims; graphtx teacher --fields)
    pretrain_teacher_fields: tuple[str, ...] = ("title", "abstract")
    pretrain_teacher_passages: int = (
        1  # a named peer reads this many windows of the eval's cut and averages them (--passages)
    )
    pretrain_teacher_weight: float = 0.0  # (c) KL to the teacher's softmax over the batch's other documents; 0 = off
    pretrain_teacher_neighbours: int = 3  # per document: its nearest pool documents by the teacher, added to the batch
    pretrain_teacher_temperature: float = (
        0.05  # teacher softmax temperature on its cosines (the student keeps `temperature`)
    )

    def __post_init__(self) -> None:
        from graphtx.graphs.graph import GRAPH_KINDS

        for name in ("query_kind", "candidate_kind", "augment_kind"):
            if getattr(self, name) not in GRAPH_KINDS:
                raise ValueError(f"train.{name} must be one of {GRAPH_KINDS}")
        if not 0.0 < self.selection_share < 1.0:
            raise ValueError(
                "train.selection_share must be in (0, 1): checkpoints and stages are selected on held-out training queries"
            )
        for name in ("graph_type_augment_p", "node_dropout_max", "valid_share", "test_share", "ranker_holdout"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"train.{name} must be in [0, 1)")
        if not 0.0 <= self.late_interaction_weight < 1.0:
            raise ValueError(
                "train.late_interaction_weight must be in [0, 1) (the pooled vector is the first stage: it must keep training)"
            )
        if self.temperature <= 0:
            raise ValueError("train.temperature must be > 0")
        if self.finetune_lr < 0:
            raise ValueError("train.finetune_lr must be >= 0 (0 = train.lr)")
        if self.token_lr_scale < 0:
            raise ValueError("train.token_lr_scale must be >= 0 (0 = frozen token table)")
        if self.late_head_epochs < 1 or self.late_head_dense_negatives < 0:
            raise ValueError("train.late_head_epochs must be >= 1 and train.late_head_dense_negatives >= 0")
        if self.select_rerank_depth < 0:
            raise ValueError("train.select_rerank_depth must be >= 0")
        if self.bm25_negatives < 0:
            raise ValueError("train.bm25_negatives must be >= 0")
        if self.trivial_share < 0:
            raise ValueError("train.trivial_share must be >= 0")
        choices = {
            "split": ("files", "random", "year"),
            "group_by": ("ipc", "cpc", "cluster", "none"),
            "negatives": ("in_batch", "paecter"),
            "distance": ("cosine", "l2"),
            "mining": ("hardest", "semihard", "all"),
            "loss": ("triplet", "infonce"),
            "select_metric": ("recall", "ndcg"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"train.{name} must be one of {allowed}, got {getattr(self, name)!r}")
        order = STAGE_ORDER
        if (
            not self.stages
            or set(self.stages) - set(order)
            or list(self.stages) != sorted(set(self.stages), key=order.index)
        ):
            raise ValueError(
                "train.stages must be an ordered subset of [pretrain, base, reduced], e.g. [base, reduced] or [pretrain, base]"
            )
        if not (0 < self.pretrain_query_min_share <= self.pretrain_query_max_share <= 1):
            raise ValueError("train.pretrain_query_min_share and pretrain_query_max_share need 0 < min <= max <= 1")
        if self.pretrain_bm25_temperature <= 0:
            raise ValueError("train.pretrain_bm25_temperature must be > 0")
        weights = (self.pretrain_views_weight, self.pretrain_bm25_weight, self.pretrain_teacher_weight)
        if min(weights) < 0 or sum(weights) == 0:
            raise ValueError(
                "train.pretrain_views_weight, pretrain_bm25_weight and pretrain_teacher_weight must be >= 0, not all 0"
            )
        from graphtx.text.peers import TEACHER_FIELDS

        if not self.pretrain_teacher_fields or any(f not in TEACHER_FIELDS for f in self.pretrain_teacher_fields):
            raise ValueError(
                f"train.pretrain_teacher_fields must be some of {', '.join(TEACHER_FIELDS)}, not {list(self.pretrain_teacher_fields)}"
            )
        if self.pretrain_teacher_passages < 1:
            raise ValueError("train.pretrain_teacher_passages must be >= 1")
        if self.pretrain_teacher_temperature <= 0 or self.pretrain_teacher_neighbours < 0:
            raise ValueError("train.pretrain_teacher_temperature must be > 0 and pretrain_teacher_neighbours >= 0")
        if (
            min(self.pretrain_steps, self.pretrain_evals, self.pretrain_bm25_candidates + 1) < 1
            or self.pretrain_batch_docs < 2
        ):
            raise ValueError(
                "train.pretrain_steps, pretrain_evals must be >= 1, pretrain_bm25_candidates >= 0, pretrain_batch_docs >= 2"
            )
        if self.adapt_max_passes <= 0:
            raise ValueError(f"train.adapt_max_passes must be > 0, not {self.adapt_max_passes}")
        if self.pretrain_batch_workers < -1:
            raise ValueError("train.pretrain_batch_workers must be -1 (auto), 0 (in line) or a number of processes")
        if self.split == "year" and not self.valid_from_year:
            raise ValueError("train.split = year needs train.valid_from_year")
        if "unknown" not in self.margins or any(m < 0 for m in self.margins.values()):
            raise ValueError("train.margins needs an 'unknown' entry and margins >= 0")
        ints = (
            "max_nodes_per_batch",
            "max_pairs_per_batch",
            "num_clusters",
            "node_dropout_half",
            "max_epochs",
            "evals_per_epoch",
            "early_stop_evals",
            "eval_k",
            "eval_ndcg_k",
            "checkpoint_every_steps",
            "log_every_steps",
            "encode_batch_size",
        )
        low = [n for n in ints if getattr(self, n) < 1]
        if low:
            raise ValueError(f"train.{', train.'.join(low)} must be >= 1")
        if self.max_pairs_per_batch < 2:
            raise ValueError("train.max_pairs_per_batch must be >= 2 (negatives come from the batch)")

    def margin(self, category: str) -> float:
        category = self.category_map.get(category, category)
        return float(self.margins.get(category, self.margins["unknown"]))


if TYPE_CHECKING:
    from graphtx.model.config import ModelConfig


class ExperimentConfig(Protocol):
    """What training reads of the whole experiment config: its model and train sections and its seed (the dataclass
    ``graphtx.config.GraphtxConfig``, which assembles every stage's section above training, is one; training names this
    shape instead, so it depends on no higher layer)."""

    model: ModelConfig
    train: TrainConfig
    seed: int
