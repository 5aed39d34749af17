"""The variants behind `graphtx distil-phrases`' defaults: a phrase teacher (MiniLM, fine-tuned on train.csv) distilled
into the SWEM node encoder, then optionally the supervised fine-tune of `graphtx eval phrases` on top.

    python benchmarks/studies/phrase_distil_variants.py --tokens TOKENS --cache PARSE_CACHE_FOLDER --out OUT \
        [--teacher-epochs 2] [--distil-epochs 40] [--node-dim 256] [--freeze-proj] [--distil-lr 1e-3] [--teacher-only] \
        [--shared DIR]

The phrase pairs are SHARED/phrase-similarity/{train,validation}.csv (--shared: $GRAPHTX_SHARED, else ../shared/data
beside the repository, as benchmarks/regress.py; --data names the folder itself).

PARSE_CACHE_FOLDER is one or more `graphtx parse --cache` folders (parse-<fingerprint>/ with shard-*.pkl): their
feature-node phrases are the pool (the shipped command reads a graphs directory instead). OUT keeps the tuned teacher, the pool and
the teacher's vectors, so further variants with the same OUT reuse them. Prints one line per stage with the time and
the load
writes OUT/results.json. Research code, kept for the record of benchmarks/results/node-phrase-distillation.md.
"""

import argparse
import glob
import json
import math
import os
import pickle
import random
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from graphtx.eval.phrases import PhraseConfig, pearson_spearman, read_phrase_pairs, score, split_by_anchor
from graphtx.eval.phrases import finetune as ft_mod
from graphtx.eval.phrases.model import _new_model
from graphtx.text.peers import encode_texts, load_peer, minilm_path
from graphtx.text.pretrain import load_tokens

REPO = Path(__file__).resolve().parents[2]
# the shared data folder, as benchmarks/regress.py --shared: $GRAPHTX_SHARED, else ../shared/data beside the repository
SHARED = os.environ.get("GRAPHTX_SHARED") or str(REPO.parent / "shared" / "data")
CACHE: list[str] = []  # --cache


def log(*a):
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.2f}]", *a, flush=True)


def teacher_pearson(model, pairs):
    a = encode_texts(model, pairs.anchor.tolist(), 256)
    t = encode_texts(model, pairs.target.tolist(), 256)
    return pearson_spearman((a * t).sum(1), pairs.score)


def tune_teacher(model, fit, dev, epochs, seed, lr=2e-5, bs=32):
    torch.manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    n = len(fit)
    steps = epochs * math.ceil(n / bs)
    warm = int(0.1 * steps)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lambda s: (
            min(1.0, (s + 1) / max(1, warm)) * max(0.0, (steps - s) / max(1, steps - warm))
            if s >= warm
            else (s + 1) / max(1, warm)
        ),
    )
    g = np.random.default_rng(seed)
    best = (teacher_pearson(model, dev)[0], None, 0)
    log(f"teacher epoch 0 dev pearson {best[0]:.4f}")
    step = 0
    for ep in range(1, epochs + 1):
        model.train()
        order = g.permutation(n)
        tot = 0.0
        for i in range(0, n, bs):
            r = order[i : i + bs]
            texts = fit.anchor[r].tolist() + fit.target[r].tolist()
            feats = model.tokenize(texts)
            emb = model(feats)["sentence_embedding"]
            a, t = emb.chunk(2)
            cos = F.cosine_similarity(a, t)
            loss = F.mse_loss(cos, torch.tensor(fit.score[r], dtype=torch.float32))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            tot += loss.item() * len(r)
            step += 1
            if step % 200 == 0:
                log(f"teacher step {step}/{steps} loss {tot / min(n, i + bs):.4f}")
        model.eval()
        p = teacher_pearson(model, dev)[0]
        log(f"teacher epoch {ep} train mse {tot / n:.4f} dev pearson {p:.4f}")
        if p > best[0]:
            best = (p, {k: v.detach().clone() for k, v in model.state_dict().items()}, ep)
    if best[1] is not None:
        model.load_state_dict(best[1])
    model.eval()
    return best[2]


def pool_phrases(n_pool, exclude, seed, max_words=6):
    counts = Counter()
    for f in sorted(f for folder in CACHE for f in glob.glob(f"{folder}/shard-*.pkl")):
        for _doc, graphs, *_ in pickle.load(open(f, "rb")):
            for gr in graphs:
                for txt, typ in zip(gr.node_text, gr.node_type):
                    if typ == "feature" and 1 <= len(txt.split()) <= max_words:
                        counts[txt.lower()] += 1
    for e in exclude:
        counts.pop(e, None)
    log(f"pool: {len(counts)} distinct feature phrases (<= {max_words} words) in the parse cache")
    ranked = [p for p, _ in counts.most_common()]
    top = ranked[: n_pool // 2]
    rest = ranked[n_pool // 2 :]
    rng = random.Random(seed)
    return top + rng.sample(rest, min(len(rest), n_pool - len(top)))


def csr(tokenizer, phrases, m=16):
    ids = tokenizer.encode_batch(phrases)
    lengths = np.array([min(len(x), m) for x in ids], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    flat = np.fromiter((t for x in ids for t in x[:m]), dtype=np.int64, count=int(lengths.sum()))
    return flat, starts, lengths


def embed_rows(student, data, rows):
    flat, starts, lengths = data
    ln = lengths[rows]
    within = np.arange(int(ln.sum())) - np.repeat(np.cumsum(ln) - ln, ln)
    tok = torch.from_numpy(flat[np.repeat(starts[rows], ln) + within])
    node = torch.from_numpy(np.repeat(np.arange(len(rows)), ln))
    z = torch.zeros(len(rows), dtype=torch.long)
    return student.embed(tok, node, z, z)  # (n, d): FiLM rows 0 = identity until fine-tuned


def distil(student, phrases, tvec, fit, tokenizer, dev, epochs, seed, bs=512, pair_bs=128, lr=1e-3, freeze_proj=False):
    data = csr(tokenizer, phrases)
    index = {p: i for i, p in enumerate(phrases)}
    pa = np.array([index[a] for a in fit.anchor])
    pt = np.array([index[t] for t in fit.target])
    params = [
        p
        for n_, p in student.named_parameters()
        if "film" not in n_ and not (freeze_proj and ("proj" in n_ or "type_embedding" in n_))
    ]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    g = np.random.default_rng(seed)
    torch.manual_seed(seed)
    T = torch.from_numpy(tvec)
    best = (score_dev(student, dev), {k: v.clone() for k, v in student.state_dict().items()}, 0)
    log(f"distil epoch 0 dev pearson {best[0]:.4f}")
    n = len(phrases)
    for ep in range(1, epochs + 1):
        student.train()
        order = g.permutation(n)
        tot = 0.0
        k = 0
        for i in range(0, n, bs):
            pr = g.integers(0, len(pa), pair_bs)
            rows = np.concatenate([order[i : i + bs], pa[pr], pt[pr]])
            h = F.normalize(embed_rows(student, data, rows), dim=-1)
            t = T[rows]
            loss = F.mse_loss(h @ h.T, t @ t.T)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item()
            k += 1
        p = score_dev(student, dev)
        log(f"distil epoch {ep} loss {tot / k:.5f} dev pearson {p:.4f}")
        if p > best[0]:
            best = (p, {k_: v.clone() for k_, v in student.state_dict().items()}, ep)
    student.load_state_dict(best[1])
    return best[2]


def score_dev(model, dev):
    model.eval()
    return pearson_spearman(score(model, dev), dev.score)[0]


def main():
    global CACHE
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument(
        "--cache", required=True, nargs="+", help="parse cache folders (parse-<fingerprint>/); their phrases pooled"
    )
    ap.add_argument(
        "--shared",
        default=SHARED,
        help="the shared data folder (default: $GRAPHTX_SHARED, else ../shared/data beside the repository)",
    )
    ap.add_argument("--data", help="folder with train.csv and validation.csv (default: SHARED/phrase-similarity)")
    ap.add_argument("--teacher-epochs", type=int, default=1)
    ap.add_argument("--distil-epochs", type=int, default=8)
    ap.add_argument("--pool", type=int, default=150000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--node-dim", type=int, default=0)
    ap.add_argument(
        "--freeze-proj", action="store_true", help="distil the token table only (projection stays identity)"
    )
    ap.add_argument("--distil-lr", type=float, default=1e-3)
    ap.add_argument(
        "--teacher-only",
        action="store_true",
        help="stop once the teacher's vectors of the pool are kept (for phrase_distil_students.py)",
    )
    args = ap.parse_args()
    args.data = args.data or os.path.join(args.shared, "phrase-similarity")
    CACHE = args.cache
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(2)
    res = {"args": vars(args)}
    cfg = PhraseConfig()
    train, valid = read_phrase_pairs(f"{args.data}/train.csv"), read_phrase_pairs(f"{args.data}/validation.csv")
    fit_rows, dev_rows = split_by_anchor(train, cfg.dev_fraction, args.seed)
    fit, dev = train.subset(fit_rows), train.subset(dev_rows)
    tokenizer, vectors = load_tokens(args.tokens)

    teacher = load_peer(minilm_path(), 32)
    res["teacher_untuned_valid"] = teacher_pearson(teacher, valid)
    log("teacher untuned valid", res["teacher_untuned_valid"])
    tpath = out / "teacher.pt"
    if args.teacher_epochs:
        if tpath.exists():
            teacher.load_state_dict(torch.load(tpath))
        else:
            t0 = time.time()
            res["teacher_best_epoch"] = tune_teacher(teacher, fit, dev, args.teacher_epochs, args.seed)
            res["teacher_seconds"] = time.time() - t0
            torch.save(teacher.state_dict(), tpath)
        res["teacher_tuned_valid"] = teacher_pearson(teacher, valid)
        log("teacher tuned valid", res["teacher_tuned_valid"])

    dev_phr = set(np.concatenate([dev.anchor, dev.target]).tolist())
    val_phr = set(np.concatenate([valid.anchor, valid.target]).tolist())
    fit_phr = np.unique(np.concatenate([fit.anchor, fit.target])).tolist()
    ppath = out / "pool.json"
    if ppath.exists():
        corpus = json.loads(ppath.read_text())
    else:
        corpus = pool_phrases(args.pool, dev_phr | val_phr | set(fit_phr), args.seed)
        ppath.write_text(json.dumps(corpus))
    phrases = fit_phr + corpus
    res["pool"] = {"fit_phrases": len(fit_phr), "corpus_phrases": len(corpus)}
    vpath = out / "teacher_vectors.npy"
    if vpath.exists():
        tvec = np.load(vpath)
    else:
        t0 = time.time()
        tvec = encode_texts(teacher, phrases, 256)
        np.save(vpath, tvec)
        log(f"teacher encoded {len(phrases)} phrases in {time.time() - t0:.0f} s")
    del teacher
    if args.teacher_only:
        (out / "results.json").write_text(json.dumps(res, indent=1, default=float))
        return

    base = ft_mod.fine_tune(train, tokenizer, vectors, cfg, args.seed, progress=False)
    res["swem_supervised_only_valid"] = pearson_spearman(score(base, valid), valid.score)
    log("SWEM supervised only (today's row) valid", res["swem_supervised_only_valid"], "best epoch", base.best_epoch)

    node_dim = args.node_dim or 2 * vectors.shape[1]
    student = _new_model(
        tokenizer,
        vectors,
        contexts=np.unique(fit.context).tolist(),
        node_dim=node_dim,
        embedding_dropout=0.0,
        use_context=True,
        max_tokens_per_phrase=16,
    )
    res["distil_best_epoch"] = distil(
        student,
        phrases,
        tvec,
        fit,
        tokenizer,
        dev,
        args.distil_epochs,
        args.seed,
        lr=args.distil_lr,
        freeze_proj=args.freeze_proj,
    )
    np.save(out / "distilled_table.npy", student.encoder.embedding.weight.detach().numpy())
    res["distilled_only_valid"] = pearson_spearman(score(student, valid), valid.score)
    log("distilled only valid", res["distilled_only_valid"])

    # supervised fine-tune starting from the distilled student
    orig = ft_mod._new_model
    state = {k: v.clone() for k, v in student.state_dict().items()}

    def from_student(tok, vec, **kw):
        m = orig(tok, vec, **kw)
        m.load_state_dict(state)
        return m

    ft_mod._new_model = from_student
    tuned = ft_mod.fine_tune(train, tokenizer, vectors, PhraseConfig(node_dim=node_dim), args.seed, progress=False)
    ft_mod._new_model = orig
    res["distilled_then_supervised_valid"] = pearson_spearman(score(tuned, valid), valid.score)
    res["history"] = tuned.history
    log("distilled + supervised valid", res["distilled_then_supervised_valid"], "best epoch", tuned.best_epoch)
    (out / "results.json").write_text(json.dumps(res, indent=1, default=float))


if __name__ == "__main__":
    main()
