"""Student variants of node-phrase distillation over the teacher vectors `phrase_distil_variants.py` kept.

    python benchmarks/studies/phrase_distil_students.py --work OUT --tokens TOKENS --name NAME \
        [--listwise-weight 0.1] [--temperature 0.05] [--neighbours 3] [--weighting none|learned] [--order none|bigram|trigram] [--init-seed 0] [--epochs 20]

OUT is a `phrase_distil_variants.py --out` folder (pool.json, teacher_vectors.npy: the fit pairs' phrases, then the
pool). Each variant trains the SWEM node encoder of `graphtx distil-phrases` (`new_student`, its loss
`distillation_loss`: the cosine MSE, plus the listwise KL at --listwise-weight), keeps the epoch with the best Pearson
on the dev anchors of train.csv (as the command does), and scores validation once. `--neighbours K` fills each batch
with K of each phrase's 8 nearest teacher neighbours (a faiss flat search, kept in OUT/knn8.npy). Prints every epoch
with the time and the load; writes OUT/student-NAME.json. Research code, for the record of
benchmarks/results/node-phrase-distillation.md.
"""

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np
import torch

from graphtx.metrics import pearson_spearman
from graphtx.model.config import WORD_ORDERS
from graphtx.model.swem import PhraseTokens
from graphtx.text.phrase_pairs import read_phrase_pairs, split_by_anchor
from graphtx.text.pretrain import load_token_idf, load_tokens
from graphtx.train.phrase_distil import distillation_loss, embed, new_student, student_cosines
from graphtx.train.phrase_distil_config import PhraseDistilConfig


def log(*a):
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.2f}]", *a, flush=True)


def nearest(teacher: np.ndarray, k: int, path: Path) -> np.ndarray:
    """(pool, e) unit vectors -> (pool, k) each phrase's k nearest other phrases by the teacher's cosine."""
    if path.exists():
        return np.load(path)
    import faiss

    started = time.time()
    index = faiss.IndexFlatIP(teacher.shape[1])
    index.add(teacher)
    out = np.zeros((len(teacher), k), dtype=np.int64)
    for s in range(0, len(teacher), 8192):
        out[s : s + 8192] = index.search(teacher[s : s + 8192], k + 1)[1][:, 1:]
    np.save(path, out)
    log(f"teacher {k}-NN of {len(teacher):,} phrases in {time.time() - started:.0f} s")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True, help="a phrase_distil_variants.py --out folder")
    ap.add_argument("--tokens", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument(
        "--data", default="../shared/data/phrase-similarity", help="folder with train.csv and validation.csv"
    )
    ap.add_argument("--listwise-weight", type=float, default=0.0)
    ap.add_argument("--temperature", type=float, default=0.05)
    ap.add_argument("--neighbours", type=int, default=0, choices=range(0, 9))
    ap.add_argument("--weighting", default="none", choices=("none", "learned"))
    ap.add_argument(
        "--order", default="none", choices=WORD_ORDERS, help="the SWEM's word-order channel (model.word_order)"
    )
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--pair-batch-size", type=int, default=128)
    ap.add_argument(
        "--seed", type=int, default=0, help="the dev split's seed: the teacher's (phrase_distil_variants.py --seed)"
    )
    ap.add_argument(
        "--init-seed", type=int, default=None, help="the student's seed (n-gram init, batch order); default --seed"
    )
    a = ap.parse_args()
    torch.set_num_threads(2)
    work = Path(a.work)
    train, valid = read_phrase_pairs(f"{a.data}/train.csv"), read_phrase_pairs(f"{a.data}/validation.csv")
    fit_rows, dev_rows = split_by_anchor(train, 0.1, a.seed)
    fit, dev = train.subset(fit_rows), train.subset(dev_rows)
    phrases = np.unique(np.concatenate([fit.anchor, fit.target])).tolist() + json.loads(
        (work / "pool.json").read_text()
    )
    teacher = np.load(work / "teacher_vectors.npy").astype(np.float32)  # (pool, e)
    teacher /= np.linalg.norm(teacher, axis=1, keepdims=True)
    if len(teacher) != len(phrases):
        raise SystemExit(f"{work}: {len(teacher)} teacher vectors for {len(phrases)} phrases (another seed or pool?)")
    tokenizer, vectors = load_tokens(a.tokens)
    n, m, v = len(phrases), len(dev), len(valid)
    tokens = PhraseTokens(
        tokenizer, phrases + dev.anchor.tolist() + dev.target.tolist() + valid.anchor.tolist() + valid.target.tolist()
    )
    dev_a, dev_t = np.arange(n, n + m), np.arange(n + m, n + 2 * m)
    val_a, val_t = np.arange(n + 2 * m, n + 2 * m + v), np.arange(n + 2 * m + v, n + 2 * m + 2 * v)
    row = {p: i for i, p in enumerate(phrases)}
    pair_a, pair_t = np.array([row[x] for x in fit.anchor]), np.array([row[x] for x in fit.target])

    cfg = PhraseDistilConfig(listwise_weight=a.listwise_weight, listwise_temperature=a.temperature)
    init_seed = a.seed if a.init_seed is None else a.init_seed
    student = new_student(vectors, 256, a.weighting, a.order, init_seed)
    if a.weighting != "none":
        student.load_token_weights(np.maximum(load_token_idf(a.tokens), 1e-3))

    def pearson(ra, rt, scores):
        return pearson_spearman(student_cosines(student, tokens, ra, rt), scores)

    target = torch.from_numpy(teacher)
    neighbours = nearest(teacher, 8, work / "knn8.npy") if a.neighbours else None
    optimizer = torch.optim.AdamW([p for p in student.parameters() if p.requires_grad], lr=a.lr, weight_decay=0.0)
    rng = np.random.default_rng(init_seed)
    history = [{"epoch": 0, "dev": pearson(dev_a, dev_t, dev.score)[0]}]
    best, best_state = history[0]["dev"], {k: x.clone() for k, x in student.state_dict().items()}
    anchors = a.batch_size // (1 + a.neighbours)
    steps = math.ceil(n / a.batch_size)
    torch.manual_seed(init_seed)
    for epoch in range(1, a.epochs + 1):
        student.train()
        order, total = rng.permutation(n), 0.0
        for s in range(steps):
            rows = order[s * anchors : (s + 1) * anchors]
            if a.neighbours:
                rows = np.concatenate([rows, neighbours[rows][:, rng.permutation(8)[: a.neighbours]].reshape(-1)])
            if a.pair_batch_size:
                drawn = rng.integers(0, len(pair_a), a.pair_batch_size)
                rows = np.concatenate([rows, pair_a[drawn], pair_t[drawn]])
            rows = np.unique(rows)
            loss = distillation_loss(embed(student, tokens, rows), target[rows], cfg)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.item()
        history.append({"epoch": epoch, "loss": total / steps, "dev": pearson(dev_a, dev_t, dev.score)[0]})
        log(a.name, f"epoch {epoch} loss {total / steps:.5f} dev {history[-1]['dev']:.4f}")
        if history[-1]["dev"] > best:
            best, best_state = history[-1]["dev"], {k: x.clone() for k, x in student.state_dict().items()}
    student.load_state_dict(best_state)
    result = {
        "args": vars(a),
        "best_epoch": max(history, key=lambda h: h["dev"])["epoch"],
        "dev": best,
        "valid": pearson(val_a, val_t, valid.score),
        "history": history,
    }
    log(a.name, "best epoch", result["best_epoch"], f"dev {best:.4f}", "validation Pearson / Spearman", result["valid"])
    (work / f"student-{a.name}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
