"""One training stage: batches → augment → encode → triplet loss → AdamW, with evaluation and checkpoints.

Per step (global batch = pair indices of ``SizeAwareBatcher``)::

    shard for this rank ─▶ choose graph kinds (augmentation) ─▶ collate anchors + cited graphs
      ─▶ node dropout ─▶ model ─▶ (b, D) anchors, (m, D) cited [─▶ gather over ranks]
      ─▶ triplet loss, hardest allowed negative per anchor ─▶ backward ─▶ clip ─▶ AdamW
      (model.late_dim > 0: the same loss on the node-level late-interaction scores of anchors x
       candidates, mixed in by ``train.late_interaction_weight``)

Evaluation runs ``evals_per_epoch`` times an epoch (Recall@k, nDCG@k on the
selection split, held-out training queries, over all candidates); the learning rate is halved after
``plateau_patience`` evaluations without a Recall@k (or, with ``select_metric: ndcg``, nDCG@k) gain, the stage stops after
``early_stop_evals`` of them (evaluations during LR warm-up count for selection but not
for patience), and the best evaluation's weights are kept.

Everything random is a function of (seed, stage, epoch, batch) except dropout
inside the model, whose RNG state goes into the checkpoint: a run killed at any
point and resumed from its last checkpoint repeats the lost steps exactly.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from graphtx.atomic import atomic_write_json, atomic_write_text, replacing
from graphtx.model.batch import collate
from graphtx.model.encoder import GraphEncoder
from graphtx.model.io import save_model
from graphtx.model.late import late_score_matrix
from graphtx.progress import progress_bar
from graphtx.train.augment import choose_kinds, node_dropout
from graphtx.train.batching import SizeAwareBatcher, shard_for_rank
from graphtx.train.config import TrainConfig
from graphtx.train.data import GraphStore
from graphtx.train.distributed import (
    DistContext,
    all_gather_objects,
    all_reduce_sum,
    barrier,
    bf16_autocast,
    broadcast_object,
    cpu_threads_beside_gpu,
    gather_rows,
    rng_devices,
)
from graphtx.train.evaluate import CitationEvaluator, EvalResult
from graphtx.train.loss import (
    allowed_negatives,
    contrastive_loss,
    contrastive_loss_from_scores,
    triplet_loss,
    triplet_loss_from_distances,
)
from graphtx.train.pairs import Pair

STAGE_INDEX = {"base": 0, "reduced": 1}
CHECKPOINT_FILE, LOG_FILE, EVALS_FILE, DONE_FILE, BEST_DIR = (
    "checkpoint.pt",
    "log.jsonl",
    "evals.jsonl",
    "done.json",
    "best",
)


@dataclass
class StageState:
    """Where a stage is; saved in every checkpoint."""

    epoch: int = 0
    batch: int = 0  # next batch index within the epoch
    step: int = 0  # optimiser steps done in this stage
    evals: int = 0
    best_recall: float = -1.0
    best_ndcg: float = float("nan")
    best_step: int = -1
    evals_without_gain: int = 0
    evals_since_lr_cut: int = 0
    lr_scale: float = 1.0
    stopped: str = ""  # why the stage ended ("early stop", "max epochs", "max steps")


@dataclass
class TrainingSet:
    store: GraphStore
    pairs: list[Pair]
    known: dict[str, set[str]]  # citing id → documents known relevant (never negatives)
    groups: list[str]  # per pair: batch group key
    pair_nodes: np.ndarray  # per pair: nodes of its citing + cited graph
    extra_negatives: dict[str, list[str]] = field(default_factory=dict)  # negatives="paecter": anchor → documents


class StageTrainer:
    def __init__(
        self,
        stage: str,
        model: GraphEncoder,
        tokenizer,
        data: TrainingSet,
        evaluator: CitationEvaluator,
        cfg: TrainConfig,
        seed: int,
        out_dir: Path,
        ctx: DistContext = DistContext(),
        progress: bool | None = None,
        tokenizer_file: Path | None = None,
    ):
        self.stage, self.cfg, self.seed, self.ctx = stage, cfg, seed, ctx
        self.model = model.to(ctx.device)
        self.tokenizer, self.data, self.evaluator = tokenizer, data, evaluator
        self.out_dir = Path(out_dir)
        self.progress = progress
        self.tokenizer_file = tokenizer_file
        self.base_lr = cfg.lr if stage == "base" else cfg.reduced_lr
        self.optimizer = torch.optim.AdamW(self._param_groups(), lr=self.base_lr, weight_decay=cfg.weight_decay)
        min_pairs = max(2, ctx.world_size)
        self.batcher = SizeAwareBatcher(
            data.pair_nodes,
            data.groups,
            cfg.max_nodes_per_batch,
            cfg.max_pairs_per_batch,
            seed + 1000 * STAGE_INDEX[stage],
            min_pairs=min_pairs,
        )
        self.state = StageState()
        self.ddp = None
        if ctx.enabled:
            from torch.nn.parallel import DistributedDataParallel

            self.ddp = DistributedDataParallel(
                self.model, device_ids=[ctx.device.index] if ctx.device.type == "cuda" else None
            )

    # --- public -----------------------------------------------------------------------
    def run(self, stop_after_steps: int = 0) -> StageState:
        """Train until early stop / max epochs / max steps; ``stop_after_steps`` (tests) simulates a kill."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if (self.out_dir / DONE_FILE).exists():
            self.state = StageState(**json.loads((self.out_dir / DONE_FILE).read_text())["state"])
            return self.state
        # model dropout draws from a seeded RNG, the caller's left alone; beside a GPU, few CPU threads
        with torch.random.fork_rng(devices=rng_devices(self.ctx.device)), cpu_threads_beside_gpu(self.ctx.device):
            torch.manual_seed(self.seed * 1_000 + STAGE_INDEX[self.stage] * 100 + self.ctx.rank)
            return self._run(stop_after_steps)

    def _run(self, stop_after_steps: int) -> StageState:
        resumed = self._load_checkpoint()
        if not resumed and self.ctx.is_main:
            for name in (LOG_FILE, EVALS_FILE):
                (self.out_dir / name).unlink(missing_ok=True)
        if not resumed:
            self._evaluate(reference=True)  # step 0: logged as the starting point; selection starts with training
        cfg, st = self.cfg, self.state
        steps_run = 0
        bar = progress_bar(
            desc=f"train {self.stage}", unit="step", enabled=self.progress if self.ctx.is_main else False
        )
        try:
            while not st.stopped:
                if st.epoch >= cfg.max_epochs:
                    st.stopped = "max epochs"
                    break
                batches = self.batcher.batches(st.epoch)
                eval_at = {
                    max(1, round(len(batches) * (i + 1) / cfg.evals_per_epoch)) for i in range(cfg.evals_per_epoch)
                }
                bar.reset(total=len(batches))
                bar.update(st.batch)
                bar.set_description(f"train {self.stage} epoch {st.epoch + 1}")
                while st.batch < len(batches):
                    record = self._step(batches[st.batch])
                    st.batch += 1
                    st.step += 1
                    steps_run += 1
                    bar.update(1)
                    bar.set_postfix(loss=f"{record['loss']:.4f}", best=f"{st.best_recall:.4f}")
                    if self.ctx.is_main and st.step % cfg.log_every_steps == 0:
                        self._append(LOG_FILE, record)
                    if st.batch in eval_at:
                        self._evaluate()
                    if cfg.max_steps and st.step >= cfg.max_steps and not st.stopped:
                        st.stopped = "max steps"
                    if st.stopped:
                        break
                    if st.step % cfg.checkpoint_every_steps == 0 or st.batch in eval_at:
                        self._save_checkpoint()
                    if stop_after_steps and steps_run >= stop_after_steps:
                        raise _SimulatedKill
                if st.batch >= len(batches):
                    st.epoch, st.batch = st.epoch + 1, 0
        except _SimulatedKill:
            bar.close()
            return self.state
        bar.close()
        self._finish()
        return self.state

    def close(self) -> None:
        """Drop the DDP wrapper (and its reducer, which holds the process group): before ``distributed.shutdown``."""
        self.ddp = None

    def load_best(self) -> GraphEncoder:
        from graphtx.model.io import load_model

        model = load_model(self.out_dir / BEST_DIR).model
        return model

    # --- one step ---------------------------------------------------------------------
    def _step(self, batch: list[int]) -> dict:
        cfg, st, ctx = self.cfg, self.state, self.ctx
        t0 = time.perf_counter()
        self.model.train()
        lr = self._lr()
        for group in self.optimizer.param_groups:
            group["lr"] = lr * group["lr_scale"]
        rng = np.random.default_rng([self.seed, STAGE_INDEX[self.stage], st.epoch, st.batch])
        kinds = dict(
            zip(
                batch,
                choose_kinds(
                    len(batch), cfg.graph_type_augment_p, cfg.query_kind, cfg.candidate_kind, cfg.augment_kind, rng
                ),
            )
        )
        shards = shard_for_rank(batch, self.data.pair_nodes, ctx.world_size)
        # every rank knows every shard's cited documents: the gathered candidate order is known without talking
        shard_candidates = [self._candidate_docs(s) for s in shards]
        mine = shards[ctx.rank]
        pairs = [self.data.pairs[i] for i in mine]
        cand_docs = shard_candidates[ctx.rank]
        graphs = [self.data.store.get(p.citing, kinds[i][0]) for i, p in zip(mine, pairs)]
        graphs += [self.data.store.get(d, kind) for d, kind in self._candidate_kinds(mine, kinds, cand_docs)]
        gb = collate(graphs, self.tokenizer, self.model.config.max_tokens_per_node)
        g = torch.Generator().manual_seed(int(rng.integers(2**62)) + ctx.rank)
        gb = node_dropout(gb, cfg.node_dropout_max, cfg.node_dropout_half, g).to(ctx.device)
        late = self.model.late is not None and cfg.late_interaction_weight > 0
        with bf16_autocast(ctx.device, cfg.amp):
            out = (self.ddp or self.model)(gb, return_details=late, lexical=cfg.lexical_in_loss)
            vectors = (
                out.vectors if late else out
            ).float()  # (b + m, D), D = out_dim (+ lexical_dim with lexical_in_loss)
        anchors, cands = vectors[: len(pairs)], vectors[len(pairs) :]  # (b, D), (m, D)
        offset = 0
        all_cand_docs = cand_docs
        if ctx.enabled and cfg.cross_rank_negatives:
            cands, _ = gather_rows(cands, ctx)  # (Σm, D)
            offset = sum(len(c) for c in shard_candidates[: ctx.rank])
            all_cand_docs = [d for c in shard_candidates for d in c]
        positive = torch.tensor([offset + k for k in range(len(pairs))], device=ctx.device)  # own pair's cited graph
        allowed = allowed_negatives([p.citing for p in pairs], all_cand_docs, self.data.known).to(ctx.device)
        margins = torch.tensor([cfg.margin(p.category) for p in pairs], device=ctx.device)
        if cfg.loss == "infonce":
            loss_sum, denom, active = contrastive_loss(anchors, cands, positive, allowed, cfg.temperature)
        else:
            loss_sum, denom, active = triplet_loss(anchors, cands, positive, allowed, margins, cfg.distance, cfg.mining)
        late_loss = None
        if late:
            late_sum, late_denom = self._late_loss(out, gb, len(pairs), cand_docs, pairs, margins)
            late_loss = float(late_sum.detach() / late_denom.clamp(min=1.0))
            w = cfg.late_interaction_weight  # late mean rescaled to the pooled loss's denominator: (1-w) mean + w mean
            loss_sum = (1 - w) * loss_sum + w * late_sum * (
                denom.detach().clamp(min=1.0) / late_denom.detach().clamp(min=1.0)
            )
        global_denom = all_reduce_sum(denom.detach(), ctx).clamp(min=1.0)
        loss = loss_sum * ctx.world_size / global_denom
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(
            self.model.parameters(), cfg.grad_clip if cfg.grad_clip > 0 else float("inf")
        )
        self.optimizer.step()
        seconds = time.perf_counter() - t0
        totals = all_reduce_sum(
            torch.tensor(
                [float(loss_sum.detach()), float(active), len(pairs), len(graphs), gb.num_nodes, gb.num_tokens]
            ),
            ctx,
        )
        return {
            "stage": self.stage,
            "epoch": st.epoch,
            "batch": st.batch,
            "step": st.step + 1,
            "lr": lr,
            "loss": float(totals[0] / global_denom.cpu()),
            "active_triplets": int(totals[1]),
            "pairs": int(totals[2]),
            "graphs": int(totals[3]),
            "nodes": int(totals[4]),
            "tokens": int(totals[5]),
            "grad_norm": float(grad_norm),
            "seconds": seconds,
            **({"late_loss": late_loss} if late_loss is not None else {}),
            "graphs_per_s": float(totals[3]) / seconds,
            "triplets_per_s": float(totals[2]) / seconds,
        }

    def _late_loss(
        self, out, gb, num_anchors: int, cand_docs: list[str], pairs: list, margins: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(loss sum, denominator) of the late-interaction score matrix of this rank's anchors x candidates."""
        cfg = self.cfg
        node_graph = gb.node_graph  # (n,)
        is_query = node_graph < num_anchors  # (n,): the anchors come first in the batch
        scores = late_score_matrix(
            out.late_vectors[is_query].float(),
            out.late_weights[is_query].float(),
            node_graph[is_query],
            num_anchors,
            out.late_vectors[~is_query].float(),
            node_graph[~is_query] - num_anchors,
            gb.num_graphs - num_anchors,
        )  # (b, m)
        positive = torch.arange(num_anchors, device=scores.device)
        allowed = allowed_negatives([p.citing for p in pairs], cand_docs, self.data.known).to(scores.device)
        if cfg.loss == "infonce":
            loss_sum, denom, _ = contrastive_loss_from_scores(scores, positive, allowed, cfg.temperature)
        else:
            loss_sum, denom, _ = triplet_loss_from_distances(1.0 - scores, positive, allowed, margins, cfg.mining)
        return loss_sum, denom

    def _candidate_docs(self, shard: list[int]) -> list[str]:
        """Cited documents of a shard: one per pair (its positive), then the PaECTER-style extra negatives."""
        docs = [self.data.pairs[i].cited for i in shard]
        for i in shard:
            docs.extend(self.data.extra_negatives.get(self.data.pairs[i].citing, ()))
        return docs

    def _candidate_kinds(self, shard: list[int], kinds: dict, cand_docs: list[str]) -> list[tuple[str, str]]:
        out = [(self.data.pairs[i].cited, kinds[i][1]) for i in shard]
        out += [(d, self.cfg.candidate_kind) for d in cand_docs[len(shard) :]]
        return out

    def _param_groups(self) -> list[dict]:
        """The token table (and learned token weights) learn at ``token_lr_scale`` x the LR, without weight
        decay (they start from FastText vectors and IDF, which decay would shrink); 0 keeps them fixed.
        Everything else: the LR."""
        swem = self.model.swem
        tokens = [swem.embedding.weight] + ([swem.token_log_weight] if swem.weighting == "learned" else [])
        for p in tokens:
            p.requires_grad_(self.cfg.token_lr_scale > 0)
        rest = [p for p in self.model.parameters() if all(p is not t for t in tokens)]
        groups = [{"params": rest, "lr_scale": 1.0}]
        if self.cfg.token_lr_scale > 0:
            groups.append({"params": tokens, "lr_scale": self.cfg.token_lr_scale, "weight_decay": 0.0})
        return groups

    def _lr(self) -> float:
        warm = min(1.0, (self.state.step + 1) / self.cfg.warmup_steps) if self.cfg.warmup_steps else 1.0
        return max(self.cfg.min_lr, self.base_lr * warm * self.state.lr_scale)

    # --- evaluation and checkpoints -----------------------------------------------------
    def _evaluate(self, reference: bool = False) -> None:
        """Score the model; keep it when Recall@k improved. ``reference``: the untrained model at
        step 0, logged for comparison but never selected (a lucky start must not end a stage early)."""
        st, cfg = self.state, self.cfg
        result = None
        if self.ctx.is_main:
            t0 = time.perf_counter()
            result = self.evaluator(self.model, self.tokenizer)
            improved = self._score(result) > self._best_score() and not reference
            record = {
                "stage": self.stage,
                "step": st.step,
                "epoch": st.epoch,
                "batch": st.batch,
                "k": cfg.eval_k,
                "ndcg_k": cfg.eval_ndcg_k,
                **asdict(result),
                "improved": improved,
                "reference": reference,
                "lr": self._lr(),
                "seconds": time.perf_counter() - t0,
            }
            self._append(EVALS_FILE, record)
            if improved:
                save_model(self.out_dir / BEST_DIR, self.model, tokenizer=self.tokenizer_file)
        result = broadcast_object(result, self.ctx)
        if reference:
            barrier(self.ctx)
            return
        st.evals += 1
        if self._score(result) > self._best_score():
            st.best_recall, st.best_ndcg, st.best_step = result.recall, result.ndcg, st.step
            st.evals_without_gain = st.evals_since_lr_cut = 0
        elif st.step >= cfg.warmup_steps:  # during warm-up the LR is still rising: no patience spent yet
            st.evals_without_gain += 1
            st.evals_since_lr_cut += 1
            if st.evals_since_lr_cut >= cfg.plateau_patience:
                st.lr_scale *= cfg.plateau_factor
                st.evals_since_lr_cut = 0
            if st.evals_without_gain >= cfg.early_stop_evals:
                st.stopped = "early stop"
        barrier(self.ctx)

    def _score(self, result: EvalResult) -> float:
        """What selects checkpoints and spends patience: Recall@k (the paper's) or nDCG@k."""
        return result.ndcg if self.cfg.select_metric == "ndcg" else result.recall

    def _best_score(self) -> float:
        return selection_score(self.state, self.cfg.select_metric)

    def _save_checkpoint(self) -> None:
        rng_states = all_gather_objects(torch.get_rng_state(), self.ctx)
        if not self.ctx.is_main:
            barrier(self.ctx)
            return
        payload = {
            "state": asdict(self.state),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "torch_rng": rng_states,
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
            "world_size": self.ctx.world_size,
            "log_lines": _count_lines(self.out_dir / LOG_FILE),
            "eval_lines": _count_lines(self.out_dir / EVALS_FILE),
        }
        with replacing(self.out_dir / CHECKPOINT_FILE) as tmp:  # a kill leaves the old or the new checkpoint
            torch.save(payload, tmp)
        barrier(self.ctx)

    def _load_checkpoint(self) -> bool:
        path = self.out_dir / CHECKPOINT_FILE
        if not path.exists():
            return False
        payload = torch.load(path, map_location=self.ctx.device, weights_only=False)
        if payload["world_size"] != self.ctx.world_size:
            raise ValueError(
                f"{path} was written by {payload['world_size']} processes; resume with the same number (now {self.ctx.world_size})"
            )
        self.model.load_state_dict(payload["model"])
        self.optimizer.load_state_dict(payload["optimizer"])
        self.state = StageState(**payload["state"])
        torch.set_rng_state(payload["torch_rng"][self.ctx.rank])
        if payload["cuda_rng"] is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(payload["cuda_rng"])
        if self.ctx.is_main:  # drop log lines of steps after the checkpoint: they will be redone
            _truncate_lines(self.out_dir / LOG_FILE, payload["log_lines"])
            _truncate_lines(self.out_dir / EVALS_FILE, payload["eval_lines"])
        return True

    def _finish(self) -> None:
        if self.ctx.is_main:
            if not (self.out_dir / BEST_DIR).exists():
                save_model(self.out_dir / BEST_DIR, self.model, tokenizer=self.tokenizer_file)
            summary = {
                "state": asdict(self.state),
                "best_fingerprint": (self.out_dir / BEST_DIR / "fingerprint.txt").read_text().strip(),
            }
            atomic_write_json(self.out_dir / DONE_FILE, summary)
            (self.out_dir / CHECKPOINT_FILE).unlink(missing_ok=True)
        barrier(self.ctx)

    def _append(self, name: str, record: dict) -> None:
        with open(self.out_dir / name, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, allow_nan=True) + "\n")


class _SimulatedKill(Exception):
    pass


def selection_score(state: StageState, metric: str) -> float:
    """The selection metric at a stage's best evaluation; -1 before any (so the first one wins)."""
    if state.best_step < 0:
        return -1.0
    return state.best_ndcg if metric == "ndcg" else state.best_recall


def _count_lines(path: Path) -> int:
    return sum(1 for _ in open(path, encoding="utf-8")) if path.exists() else 0


def _truncate_lines(path: Path, keep: int) -> None:
    if path.exists():
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        atomic_write_text(path, "".join(lines[:keep]))


def evaluation_summary(result: EvalResult, k: int, ndcg_k: int) -> str:
    return f"Recall@{k} {result.recall:.4f}, nDCG@{ndcg_k} {result.ndcg:.4f} ({result.queries} queries, {result.pairs} pairs, {result.candidates} candidates)"
