"""``graphtx fit-late-head``: a late-interaction head trained on a frozen, trained model.

Legend: n - cached nodes, d - node_dim, L - late_dim, b - anchors, m - candidates.

The joint route (``model.late_dim > 0`` in ``graphtx train``) trains encoder and head together,
at several times the cost of a step on 2 CPU cores. This route keeps a trained model as it is (its
graph vectors, hence its dense ranking, stay identical) and fits only the head
(``graphtx.model.late.LateInteractionHead``) on the model's final node states, computed once:

1. node states of every candidate graph and every citing graph (eval mode, cached; no encoder
   forward pass during training);
2. per training citation an anchor (the citing graph), its positive (the cited graph) and
   ``train.late_head_dense_negatives`` negatives drawn from the citing document's *dense top
   ``train.select_rerank_depth``* that it does not cite: the documents the head will re-rank;
3. InfoNCE (``train.temperature``) over each batch's late score matrix (every other pair's
   documents are in-batch negatives too), AdamW at ``train.lr``;
4. after each epoch the validation queries' dense top N are re-ranked by the head; the head with
   the best ``train.select_metric`` (Recall@k or nDCG@k) is kept.

The output is a model directory: the same weights plus the head (``late_dim`` in its config),
so ``graphtx index`` stores its node vectors and ``--rerank late`` uses them.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from graphtx.atomic import atomic_write_json, replacing
from graphtx.corpus.schema import Citation
from graphtx.metrics import dense_rankings, ndcg_at_k, recall_at_k
from graphtx.model.batch import collate
from graphtx.model.encoder import GraphEncoder
from graphtx.model.late import LateInteractionHead, late_score_matrix, late_scores
from graphtx.train.config import TrainConfig
from graphtx.train.data import GraphStore
from graphtx.train.loss import contrastive_loss_from_scores


class NodeCache:
    """Final node states (eval mode) of graphs, flat: graph g owns rows ``offsets[g]:offsets[g + 1]``."""

    def __init__(self, model: GraphEncoder, tokenizer, graphs: list, batch_size: int = 64):
        states, counts, vectors = [], [], []
        model.eval()
        with torch.no_grad():
            for i in range(0, len(graphs), batch_size):
                batch = collate(graphs[i : i + batch_size], tokenizer, model.config.max_tokens_per_node)
                out = model(
                    batch, return_details=True, lexical=True
                )  # one pass: node states and the searched vectors (channel included)
                states.append(out.node_states.float())
                vectors.append(out.vectors.float())
                counts.append(batch.nodes_per_graph())
        self.states = torch.cat(states) if states else torch.zeros(0, model.config.node_dim)  # (n, d)
        c = torch.cat(counts) if counts else torch.zeros(0, dtype=torch.long)
        self.offsets = torch.cat([c.new_zeros(1), c.cumsum(0)])  # (graphs + 1,)
        self.vectors = (
            torch.cat(vectors) if vectors else torch.zeros(0, model.out_dim)
        )  # (graphs, out_dim): the dense first stage

    def gather(self, graph_ids: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """States of the given graphs (concatenated) and each row's position in ``graph_ids``."""
        parts = [self.states[self.offsets[g] : self.offsets[g + 1]] for g in graph_ids]
        owner = torch.repeat_interleave(
            torch.arange(len(graph_ids)), torch.tensor([len(p) for p in parts], dtype=torch.long)
        )
        return torch.cat(parts) if parts else self.states[:0], owner


def fit_late_head(
    model: GraphEncoder,
    tokenizer,
    store: GraphStore,
    train: list[Citation],
    valid: list[Citation],
    cfg: TrainConfig,
    late_dim: int,
    seed: int = 0,
    log=None,
    on_best=None,
) -> tuple[GraphEncoder, dict]:
    """(model + the best head, history); see the module docstring."""
    t_start = time.perf_counter()
    depth = cfg.select_rerank_depth or 100
    cand_ids = sorted(store.ids_with(cfg.candidate_kind))
    cand_pos = {d: i for i, d in enumerate(cand_ids)}
    known: dict[str, set[str]] = defaultdict(set)
    for c in train + valid:
        known[c.citing_id].add(c.cited_id)
    pairs = [
        (c.citing_id, c.cited_id)
        for c in train
        if c.citing_id != c.cited_id and store.has(c.citing_id, cfg.query_kind) and c.cited_id in cand_pos
    ]
    relevant: dict[str, dict[str, float]] = defaultdict(dict)
    for c in valid:
        if store.has(c.citing_id, cfg.query_kind) and c.cited_id in cand_pos and c.cited_id != c.citing_id:
            relevant[c.citing_id][c.cited_id] = 1.0
    if not pairs or not relevant:
        raise ValueError(
            f"fit-late-head needs training and validation citations with graphs (got {len(pairs)} pairs, {len(relevant)} validation queries)"
        )
    query_ids = sorted({a for a, _ in pairs} | set(relevant))
    q_pos = {d: i for i, d in enumerate(query_ids)}

    cands = NodeCache(model, tokenizer, [store.get(d, cfg.candidate_kind) for d in cand_ids], cfg.encode_batch_size)
    queries = NodeCache(model, tokenizer, [store.get(d, cfg.query_kind) for d in query_ids], cfg.encode_batch_size)
    dense = dense_rankings(
        query_ids, queries.vectors, cand_ids, cands.vectors, k=max(depth, cfg.eval_k, cfg.eval_ndcg_k)
    )  # the first stage
    cache_seconds = time.perf_counter() - t_start

    head = LateInteractionHead(model.config.node_dim, late_dim)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        head.reset_parameters()
    opt = torch.optim.AdamW(head.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    rng = np.random.default_rng(seed)
    history, best, best_state = [], -1.0, None
    valid_queries = sorted(relevant)

    def evaluate() -> tuple[float, float]:
        head.eval()
        with torch.no_grad():
            cu, _ = head(cands.states, _graph_of(cands.offsets), len(cand_ids))
            qu, qw = head(queries.states, _graph_of(queries.offsets), len(query_ids))
        rankings = {}
        for q in valid_queries:
            g = q_pos[q]
            top = dense[q][:depth]
            nodes = [cu[cands.offsets[cand_pos[d]] : cands.offsets[cand_pos[d] + 1]].numpy() for d in top]
            s = late_scores(
                qu[queries.offsets[g] : queries.offsets[g + 1]].numpy(),
                qw[queries.offsets[g] : queries.offsets[g + 1]].numpy(),
                nodes,
            )
            order = sorted(range(len(top)), key=lambda j: (-s[j], j))
            rankings[q] = [top[j] for j in order] + dense[q][depth:]
        return recall_at_k(rankings, relevant, cfg.eval_k), ndcg_at_k(rankings, relevant, cfg.eval_ndcg_k)

    r0, n0 = evaluate()
    history.append({"epoch": 0, "recall": r0, "ndcg": n0, "loss": None})
    if log:
        log(
            f"dense top {depth} re-ranked by the untrained head: Recall@{cfg.eval_k} {r0:.4f}, nDCG@{cfg.eval_ndcg_k} {n0:.4f}"
        )
    bad = 0
    for epoch in range(1, cfg.late_head_epochs + 1):
        head.train()
        order = rng.permutation(len(pairs))
        losses = []
        for start in range(0, len(order), cfg.max_pairs_per_batch):
            batch = [pairs[i] for i in order[start : start + cfg.max_pairs_per_batch]]
            if len(batch) < 2:
                continue
            anchors = [a for a, _ in batch]
            docs = [p for _, p in batch]
            for a in anchors:  # hard negatives: from the anchor's dense top N, not cited by it
                pool = [d for d in dense[a][:depth] if d not in known[a] and d != a]
                if pool and cfg.late_head_dense_negatives:
                    docs += [
                        pool[int(j)]
                        for j in rng.choice(
                            len(pool), size=min(cfg.late_head_dense_negatives, len(pool)), replace=False
                        )
                    ]
            xq, oq = queries.gather([q_pos[a] for a in anchors])
            xd, od = cands.gather([cand_pos[d] for d in docs])
            uq, wq = head(xq, oq, len(anchors))
            ud, _ = head(xd, od, len(docs))
            s = late_score_matrix(uq, wq, oq, len(anchors), ud, od, len(docs))  # (b, m)
            allowed = torch.tensor([[d != a and d not in known[a] for d in docs] for a in anchors], dtype=torch.bool)
            total, denom, _ = contrastive_loss_from_scores(s, torch.arange(len(anchors)), allowed, cfg.temperature)
            loss = total / denom.clamp(min=1)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(head.parameters(), cfg.grad_clip if cfg.grad_clip > 0 else float("inf"))
            opt.step()
            losses.append(float(loss.detach()))
        r, n = evaluate()
        score = n if cfg.select_metric == "ndcg" else r
        improved = score > best
        history.append(
            {
                "epoch": epoch,
                "recall": r,
                "ndcg": n,
                "loss": float(np.mean(losses)) if losses else None,
                "improved": improved,
            }
        )
        if log:
            log(
                f"epoch {epoch}: loss {history[-1]['loss']:.4f}, re-ranked Recall@{cfg.eval_k} {r:.4f}, nDCG@{cfg.eval_ndcg_k} {n:.4f}{' *' if improved else ''}"
            )
        if improved:
            best, best_state, bad = score, {k: v.detach().clone() for k, v in head.state_dict().items()}, 0
            if on_best is not None:  # e.g. save: a run stopped later still leaves its best head
                on_best(_with_head(model, late_dim, best_state), history)
        else:
            bad += 1
            if bad >= cfg.early_stop_evals:
                break

    out = _with_head(model, late_dim, best_state)
    dense_r = recall_at_k({q: dense[q] for q in valid_queries}, relevant, cfg.eval_k)
    dense_n = ndcg_at_k({q: dense[q] for q in valid_queries}, relevant, cfg.eval_ndcg_k)
    summary = {
        "history": history,
        "best": max(history[1:], key=lambda h: h["ndcg"] if cfg.select_metric == "ndcg" else h["recall"])
        if len(history) > 1
        else history[0],
        "dense": {"recall": dense_r, "ndcg": dense_n},
        "depth": depth,
        "pairs": len(pairs),
        "valid_queries": len(valid_queries),
        "cache_seconds": round(cache_seconds, 1),
        "seconds": round(time.perf_counter() - t_start, 1),
    }
    return out.eval(), summary


def _with_head(model: GraphEncoder, late_dim: int, head_state: dict) -> GraphEncoder:
    """The model's weights (any old head dropped) under the given late-interaction head."""
    config = dataclasses.replace(model.config, late_dim=late_dim)
    with torch.device("meta"):
        out = GraphEncoder(config)
    state = {k: v for k, v in model.state_dict().items() if not k.startswith("late.")}
    state |= {f"late.{k}": v for k, v in head_state.items()}
    out.load_state_dict(state, strict=True, assign=True)
    return out.eval()


def _graph_of(offsets: torch.Tensor) -> torch.Tensor:
    return torch.repeat_interleave(torch.arange(len(offsets) - 1), offsets.diff())


def run_fit_late_head(
    config,
    model_dir: str,
    corpus_dir: str,
    graphs_dir: str,
    citations: str,
    valid_citations: str,
    out_dir: str,
    late_dim: int,
    log=None,
) -> dict:
    """The command: load, fit, save ``out_dir`` (a model directory) and ``out_dir/late_head.json``."""
    from graphtx.corpus.citations import read_citations
    from graphtx.model.io import load_model, record_corpus_profile, save_model
    from graphtx.text.field import read_model_profile
    from graphtx.train.pairs import drop_held_out_targets
    from graphtx.train.run import Documents, resolve_ids

    if late_dim < 1:
        raise ValueError("fit-late-head needs --late-dim >= 1 (or model.late_dim in the config)")
    cfg: TrainConfig = config.train
    loaded = load_model(model_dir)
    model, tokenizer = loaded.model, loaded.tokenizer
    docs = Documents.read(corpus_dir)
    store = GraphStore.load(graphs_dir, {cfg.query_kind, cfg.candidate_kind})
    valid = resolve_ids(read_citations(valid_citations), docs.ids)
    train, _ = drop_held_out_targets(resolve_ids(read_citations(citations), docs.ids), {c.citing_id for c in valid})
    out = Path(out_dir)
    learned_on = read_model_profile(model_dir)

    def save(fitted: GraphEncoder, history: list) -> None:  # beside, then renamed: a kill leaves the last best whole
        with replacing(out) as tmp:
            save_model(tmp, fitted, tokenizer=Path(model_dir) / "tokenizer.json")
            if learned_on is not None:  # the backbone is the base model's, frozen: so is the corpus it learned on
                record_corpus_profile(tmp, learned_on)
            (tmp / "late_head.json").write_text(
                json.dumps(
                    {"history": history, "base_model": str(Path(model_dir).resolve()), "late_dim": late_dim}, indent=2
                )
            )

    torch.manual_seed(config.seed)
    _, summary = fit_late_head(model, tokenizer, store, train, valid, cfg, late_dim, config.seed, log, on_best=save)
    summary |= {"base_model": str(Path(model_dir).resolve()), "late_dim": late_dim, "seed": config.seed}
    atomic_write_json(out / "late_head.json", summary)
    return summary


def summary_lines(summary: dict, out_dir: str | Path) -> list[str]:
    """What ``graphtx fit-late-head`` prints: the dense ranking, the re-ranked one at the best epoch, where the model is."""
    b, d = summary["best"], summary["dense"]
    return [
        f"dense: Recall@3 {d['recall']:.4f}, nDCG@150 {d['ndcg']:.4f}; dense top {summary['depth']} re-ranked by the late head: "
        f"Recall@3 {b['recall']:.4f}, nDCG@150 {b['ndcg']:.4f} (epoch {b['epoch']}); {summary['seconds']} s",
        f"model with the late-interaction head: {out_dir}",
    ]
