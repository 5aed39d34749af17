"""Node-phrase distillation (``graphtx distil-phrases``): a peer text embedder teaches the SWEM node encoder.

A node of an invention graph is a short phrase ("lithium nickel oxide cathode"); the SWEM node encoder turns it into
one vector, ``W [mean ; max](token vectors) + b``. FastText token vectors know co-occurrence, not what a patent
searcher calls the same thing. Here a teacher that does (all-MiniLM-L6-v2, optionally fine-tuned first on labelled
phrase pairs) scores phrases, and the token table and projection learn to give the same cosines:

1. **Teacher** (``teacher_epochs`` > 0 and ``--pairs``): the peer fine-tuned on the pairs' expert scores, cosine
   against score (sentence-transformers' CosineSimilarityLoss), the epoch with the best Pearson on a seeded
   ``dev_fraction`` of the pairs' *anchors* kept (0 = the peer as shipped takes part).
2. **Pool**: the distinct feature-node phrases of ``--graphs`` (at most ``max_words`` words, lower-cased): the
   ``max_phrases / 2`` most frequent, then a seeded draw from the rest; the fit pairs' phrases join it. Phrases of
   the dev anchors' pairs never do (they select), and neither do phrases given with ``--exclude`` (a validation set:
   its phrases are then never taught, even as unlabelled corpus text).
3. **Student**: each step takes ``batch_size`` pool phrases and ``pair_batch_size`` fit pairs (both phrases, so that
   near neighbours are in the batch too), and minimises the mean squared difference between the student's and the
   teacher's cosine over all pairs of the batch (relational distillation: what is kept is the geometry the
   searched cosines read, not the teacher's coordinates), plus ``listwise_weight`` x the KL divergence between the
   teacher's and the student's softmax of each phrase's cosines to the rest of the batch at ``listwise_temperature``
   (the MSE is dominated by the many far pairs; the softmax weighs a phrase's nearest neighbours, the pairs phrase
   similarity asks about: 0.576 against 0.565 Pearson in the prototype). AdamW over the token table and the projection, which
   starts as the identity over ``[mean ; max]`` padded with zeros to ``node_dim``; the epoch with the best dev
   Pearson is kept (the last one without pairs). With ``word_order`` (bigram | trigram) the student also reads its
   phrases' consecutive tokens (``graphtx/model/swem.py``): 0.601 against 0.575 Pearson for the bag of tokens.

The output is a tokens directory: the same tokenizer and IDF, the distilled token vectors, ``node_projection.npz``
(``graphtx/text/pretrain.py``) and a manifest that says how it was made. ``graphtx train``/``init-model`` with
``--tokens`` on it start their SWEM from both (a model of the same ``node_dim``); ``graphtx eval phrases`` scores
the distilled node encoder as it is.

The tuned teacher and the teacher's vectors of the pool are kept in ``OUT.distil-work/`` under the job's key (a
killed or repeated run reuses them) and removed when the directory is written.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import shutil
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from graphtx.metrics import pearson_spearman
from graphtx.model.swem import PhraseTokens, SWEMNodeEncoder
from graphtx.text.phrase_pairs import PhrasePairs, split_by_anchor
from graphtx.train.phrase_distil_config import PhraseDistilConfig

FEATURE = "feature"
WORK_SUFFIX = ".distil-work"


@dataclass
class PhraseDistilReport:
    out: str
    phrases: dict  # corpus (distinct in the graphs), pool, fit pairs' phrases
    teacher: dict  # peer, epochs, best_epoch, dev pearson before/after
    student: dict  # best_epoch, dev pearson before/after, history
    seconds: dict

    def lines(self) -> list[str]:
        t, s = self.teacher, self.student
        out = [
            f"distilled {self.phrases['pool']:,} phrases ({self.phrases['corpus']:,} distinct in the graphs) from {t['peer']} "
            f"into the node encoder: {self.out}"
        ]
        if t.get("dev_pearson_after") is not None:
            out.append(
                f"teacher dev Pearson {t['dev_pearson_before']:.3f} -> {t['dev_pearson_after']:.3f} (epoch {t['best_epoch']} kept)"
            )
        if s.get("dev_pearson_after") is not None:
            out.append(
                f"node encoder dev Pearson {s['dev_pearson_before']:.3f} -> {s['dev_pearson_after']:.3f} (epoch {s['best_epoch']} kept)"
            )
        out.append(f"seconds: {self.seconds}")
        return out


# --- the pool --------------------------------------------------------------------


def graph_phrases(graphs_dirs: Iterable[str | Path], max_words: int) -> Counter:
    """How often each lower-cased feature-node phrase of at most ``max_words`` words occurs in the graphs."""
    from graphtx.graphs.parse import iter_graphs

    counts: Counter = Counter()
    for graphs in graphs_dirs:
        for graph in iter_graphs(graphs):
            for text, kind in zip(graph.node_text, graph.node_type):
                if kind == FEATURE and 1 <= len(text.split()) <= max_words:
                    counts[text.lower()] += 1
    return counts


def select_pool(counts: Counter, max_phrases: int, seed: int, exclude: set[str]) -> list[str]:
    """The ``max_phrases // 2`` most frequent phrases (ties by text), then a seeded draw from the rest; none of ``exclude``."""
    ranked = sorted((p for p in counts if p not in exclude), key=lambda p: (-counts[p], p))
    top, rest = ranked[: max_phrases // 2], ranked[max_phrases // 2 :]
    take = min(len(rest), max_phrases - len(top))
    drawn = (
        np.random.default_rng(seed).choice(len(rest), size=take, replace=False) if take else np.zeros(0, dtype=np.int64)
    )
    return top + [rest[i] for i in sorted(drawn)]


# --- the teacher -----------------------------------------------------------------


def teacher_cosines(model, anchors: list[str], targets: list[str], batch_size: int) -> np.ndarray:
    from graphtx.text.peers import encode_texts

    return (encode_texts(model, anchors, batch_size) * encode_texts(model, targets, batch_size)).sum(1)


def tune_teacher(
    model, fit: PhrasePairs, dev: PhrasePairs | None, cfg: PhraseDistilConfig, seed: int, progress: bool | None
) -> dict:
    """Fine-tune the sentence-transformers ``model`` in place on ``fit`` (cosine vs. score); keep its best dev epoch."""
    from graphtx.progress import progress_bar

    def dev_pearson() -> float:
        model.eval()
        return (
            pearson_spearman(
                teacher_cosines(model, dev.anchor.tolist(), dev.target.tolist(), cfg.encode_batch_size), dev.score
            )[0]
            if dev
            else math.nan
        )

    steps = cfg.teacher_epochs * math.ceil(len(fit) / cfg.teacher_batch_size)
    warm = max(1, steps // 10)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.teacher_lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: (s + 1) / warm if s < warm else max(0.0, (steps - s) / max(1, steps - warm))
    )
    rng = np.random.default_rng(seed)
    history = [dev_pearson()]
    best, best_state, best_epoch = history[0], None, 0
    with (
        torch.random.fork_rng(devices=[]),
        progress_bar(total=steps, desc="distil-phrases teacher", unit="step", enabled=progress) as bar,
    ):
        torch.manual_seed(seed)  # the teacher's dropout
        for epoch in range(1, cfg.teacher_epochs + 1):
            model.train()
            order = rng.permutation(len(fit))
            for start in range(0, len(fit), cfg.teacher_batch_size):
                rows = order[start : start + cfg.teacher_batch_size]
                features = model.tokenize(fit.anchor[rows].tolist() + fit.target[rows].tolist())
                anchor, target = model(features)["sentence_embedding"].chunk(2)  # (b, dim) each
                loss = F.mse_loss(
                    F.cosine_similarity(anchor, target), torch.from_numpy(fit.score[rows].astype(np.float32))
                )
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                schedule.step()
                bar.update(1)
            history.append(dev_pearson())
            if dev is None or history[-1] > best:
                best, best_epoch = history[-1], epoch
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return {"best_epoch": best_epoch, "dev_pearson_before": history[0], "dev_pearson_after": best, "history": history}


# --- the student -----------------------------------------------------------------


def new_student(
    vectors: np.ndarray, node_dim: int, weighting: str = "none", word_order: str = "none", seed: int = 0
) -> SWEMNodeEncoder:
    """A SWEM over the token vectors whose projection starts as the identity over ``[mean ; max]`` (zero-padded or cut to
    node_dim); the word-order channels' columns start at zero (so the start is the bag-of-tokens SWEM), their convolutions seeded."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        student = SWEMNodeEncoder(
            vectors.shape[0], vectors.shape[1], node_dim, weighting=weighting, word_order=word_order
        )
    student.load_token_vectors(np.asarray(vectors))
    with torch.no_grad():
        torch.nn.init.eye_(
            student.proj.weight
        )  # (node_dim, pooled): identity on the first min(node_dim, pooled) coordinates
        student.proj.weight[:, 2 * vectors.shape[1] :] = 0.0  # the word-order channels (if any) enter from zero
        student.proj.bias.zero_()
    student.type_embedding.weight.requires_grad_(
        False
    )  # every node here is a feature node: a shared shift, not learned
    return student


def embed(student: SWEMNodeEncoder, tokens: PhraseTokens, rows: np.ndarray) -> torch.Tensor:
    """(n,) phrase rows -> (n, node_dim) node vectors (feature nodes)."""
    token_ids, token_node = tokens.node_inputs(rows)
    return student(token_ids, token_node, torch.full((len(rows),), _feature_type(), dtype=torch.long))


def relational_mse(student_vectors: torch.Tensor, teacher_vectors: torch.Tensor) -> torch.Tensor:
    """(n, d), (n, e) -> (): mean squared difference of the two cosine matrices (all pairs of the batch)."""
    s, t = F.normalize(student_vectors, dim=-1), F.normalize(teacher_vectors, dim=-1)
    return F.mse_loss(s @ s.T, t @ t.T)


def listwise_kl(student_vectors: torch.Tensor, teacher_vectors: torch.Tensor, temperature: float) -> torch.Tensor:
    """(n, d), (n, e) -> (): mean over phrases of KL(teacher || student) between their softmaxes over the batch's
    other phrases (cosine / temperature; a phrase is never its own neighbour)."""
    s, t = F.normalize(student_vectors, dim=-1), F.normalize(teacher_vectors, dim=-1)
    self_pair = torch.eye(len(s), dtype=torch.bool, device=s.device)  # (n, n)
    log_s = F.log_softmax((s @ s.T / temperature).masked_fill(self_pair, -1e9), dim=-1)  # (n, n)
    log_t = F.log_softmax((t @ t.T / temperature).masked_fill(self_pair, -1e9), dim=-1)  # (n, n)
    return F.kl_div(log_s, log_t, log_target=True, reduction="batchmean")


def distillation_loss(
    student_vectors: torch.Tensor, teacher_vectors: torch.Tensor, cfg: PhraseDistilConfig
) -> torch.Tensor:
    """The student's loss on one batch: relational MSE + listwise_weight x listwise KL."""
    loss = relational_mse(student_vectors, teacher_vectors)
    if cfg.listwise_weight:
        loss = loss + cfg.listwise_weight * listwise_kl(student_vectors, teacher_vectors, cfg.listwise_temperature)
    return loss


@torch.no_grad()
def student_cosines(
    student: SWEMNodeEncoder, tokens: PhraseTokens, anchor_rows: np.ndarray, target_rows: np.ndarray
) -> np.ndarray:
    student.eval()
    return (
        F.cosine_similarity(embed(student, tokens, anchor_rows), embed(student, tokens, target_rows)).double().numpy()
    )


def distil_student(
    student: SWEMNodeEncoder,
    tokens: PhraseTokens,
    teacher_vectors: np.ndarray,
    pair_rows: tuple[np.ndarray, np.ndarray],
    dev: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    cfg: PhraseDistilConfig,
    seed: int,
    progress: bool | None,
) -> dict:
    """Train ``student`` in place. ``pair_rows``: (anchor rows, target rows) of the fit pairs in the pool;
    ``dev``: (anchor rows, target rows, scores) of the dev pairs, or None (the last epoch is kept)."""
    from graphtx.progress import progress_bar

    def dev_pearson() -> float:
        return pearson_spearman(student_cosines(student, tokens, dev[0], dev[1]), dev[2])[0] if dev else math.nan

    teacher = torch.from_numpy(np.asarray(teacher_vectors, dtype=np.float32))  # (pool, e)
    n, pairs = len(teacher), len(pair_rows[0])
    steps = math.ceil(n / cfg.batch_size)
    optimizer = torch.optim.AdamW([p for p in student.parameters() if p.requires_grad], lr=cfg.lr, weight_decay=0.0)
    rng = np.random.default_rng(seed)
    history = [{"epoch": 0, "loss": math.nan, "dev_pearson": dev_pearson()}]
    best, best_epoch = history[0]["dev_pearson"], 0
    best_state = {k: v.clone() for k, v in student.state_dict().items()}
    with progress_bar(total=cfg.epochs * steps, desc="distil-phrases student", unit="step", enabled=progress) as bar:
        for epoch in range(1, cfg.epochs + 1):
            student.train()
            order, total = rng.permutation(n), 0.0
            for start in range(0, n, cfg.batch_size):
                rows = order[start : start + cfg.batch_size]
                if pairs and cfg.pair_batch_size:
                    drawn = rng.integers(0, pairs, cfg.pair_batch_size)
                    rows = np.unique(np.concatenate([rows, pair_rows[0][drawn], pair_rows[1][drawn]]))  # a phrase once
                loss = distillation_loss(embed(student, tokens, rows), teacher[rows], cfg)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                total += loss.item()
                bar.update(1)
            history.append({"epoch": epoch, "loss": total / steps, "dev_pearson": dev_pearson()})
            if dev is None or history[-1]["dev_pearson"] > best:
                best, best_epoch = history[-1]["dev_pearson"], epoch
                best_state = {k: v.clone() for k, v in student.state_dict().items()}
    student.load_state_dict(best_state)
    student.eval()
    return {
        "best_epoch": best_epoch,
        "dev_pearson_before": history[0]["dev_pearson"],
        "dev_pearson_after": best,
        "history": history,
    }


# --- the whole job ---------------------------------------------------------------


def distil_phrases(
    tokens_dir: str | Path,
    graphs_dirs: list[str | Path],
    out: str | Path,
    cfg: PhraseDistilConfig = PhraseDistilConfig(),
    pairs: PhrasePairs | None = None,
    exclude: PhrasePairs | None = None,
    seed: int = 0,
    progress: bool | None = None,
    peer_cache_dir: str | Path = "",
) -> PhraseDistilReport:
    """Distil ``cfg.peer`` (tuned on ``pairs`` when given) into the node encoder over ``tokens_dir``; write the tokens directory ``out``."""
    from graphtx.text.peers import encode_texts, load_peer, require_peer
    from graphtx.text.pretrain import load_tokens

    started = time.time()
    peer_path = require_peer(cfg.peer, peer_cache_dir)  # before any work: installed, weights checked
    tokens_dir, out = Path(tokens_dir), Path(out)
    if tokens_dir.resolve() == out.resolve():
        raise ValueError(f"--out {out} is the input tokens directory: write the distilled tokens elsewhere")
    tokenizer, vectors = load_tokens(tokens_dir)

    fit = dev = None
    if pairs is not None and len(pairs):
        fit_rows, dev_rows = split_by_anchor(pairs, cfg.dev_fraction, seed)
        fit, dev = pairs.subset(fit_rows), (pairs.subset(dev_rows) if len(dev_rows) else None)
    held_out = set() if dev is None else set(dev.anchor.tolist()) | set(dev.target.tolist())
    if exclude is not None:
        held_out |= set(exclude.anchor.tolist()) | set(exclude.target.tolist())
    counts = graph_phrases(graphs_dirs, cfg.max_words)
    fit_phrases = [] if fit is None else sorted((set(fit.anchor.tolist()) | set(fit.target.tolist())) - held_out)
    corpus = select_pool(counts, cfg.max_phrases, seed, held_out | set(fit_phrases))
    if not corpus and not fit_phrases:
        raise ValueError(
            f"no feature-node phrases of 1-{cfg.max_words} words in {', '.join(map(str, graphs_dirs))} and no pairs: nothing to distil"
        )
    phrases = fit_phrases + corpus
    t_pool = time.time()

    work = out.parent / f"{out.name}{WORK_SUFFIX}"
    pool_digest = hashlib.sha256("\n".join(phrases).encode()).hexdigest()
    key = {
        "tokens": _fingerprint(tokens_dir),
        "phrases": len(phrases),
        "pool_sha256": pool_digest,
        "seed": seed,
        "teacher": {
            k: getattr(cfg, k)
            for k in ("peer", "max_tokens", "teacher_epochs", "teacher_lr", "teacher_batch_size", "dev_fraction")
        },
        "pairs": None if fit is None else {"fit": len(fit), "source": pairs.source},
    }
    key = json.loads(json.dumps(key))
    if work.is_dir() and _read_json(work / "key.json") != key:
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    (work / "key.json").write_text(json.dumps(key))

    def say(message: str) -> None:
        if progress is not False:
            print(f"distil-phrases: {message}", file=sys.stderr, flush=True)

    say(
        f"{len(phrases):,} phrases to distil ({len(corpus):,} of {len(counts):,} distinct in the graphs, {len(fit_phrases):,} of the pairs)"
    )
    teacher_info: dict = {"peer": cfg.peer, "epochs": 0}
    teacher_vectors_file = work / "teacher_vectors.npy"
    if teacher_vectors_file.exists():
        teacher_vectors = np.load(teacher_vectors_file)
        teacher_info |= _read_json(work / "teacher.json") or {}
        say(f"the teacher's vectors of a previous run of this job reused from {work}")
    else:
        model = load_peer(peer_path, cfg.max_tokens)
        if fit is not None and cfg.teacher_epochs:
            teacher_info |= {"epochs": cfg.teacher_epochs} | tune_teacher(model, fit, dev, cfg, seed, progress)
        from graphtx.atomic import atomic_write_json

        say(f"encoding the {len(phrases):,} phrases with the teacher (about 370 a second on 2 cores)")
        teacher_vectors = encode_texts(model, phrases, cfg.encode_batch_size)  # (pool, e)
        _save_npy(teacher_vectors_file, teacher_vectors)
        atomic_write_json(work / "teacher.json", teacher_info)
        del model
    t_teacher = time.time()

    dev_phrases = [] if dev is None else dev.anchor.tolist() + dev.target.tolist()
    tokens = PhraseTokens(tokenizer, phrases + dev_phrases)  # dev phrases after the pool: scored, never drawn to teach
    index = {p: i for i, p in enumerate(phrases)}
    pair_rows = (np.zeros(0, dtype=np.int64),) * 2
    if fit is not None:
        keep = [i for i in range(len(fit)) if fit.anchor[i] in index and fit.target[i] in index]
        pair_rows = (
            np.array([index[fit.anchor[i]] for i in keep], dtype=np.int64),
            np.array([index[fit.target[i]] for i in keep], dtype=np.int64),
        )
    dev_rows = None
    if dev is not None:
        m = len(dev)
        dev_rows = (
            np.arange(len(phrases), len(phrases) + m),
            np.arange(len(phrases) + m, len(phrases) + 2 * m),
            dev.score,
        )
    student = new_student(vectors, cfg.node_dim, word_order=cfg.word_order, seed=seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        student_info = distil_student(student, tokens, teacher_vectors, pair_rows, dev_rows, cfg, seed, progress)
    t_student = time.time()

    report = PhraseDistilReport(
        out=str(out),
        phrases={
            "corpus": len(counts),
            "pool": len(phrases),
            "fit_pair_phrases": len(fit_phrases),
            "held_out": len(held_out),
        },
        teacher=teacher_info,
        student=student_info,
        seconds={
            "pool": round(t_pool - started, 1),
            "teacher": round(t_teacher - t_pool, 1),
            "student": round(t_student - t_teacher, 1),
        },
    )
    _write_tokens(tokens_dir, out, student, report, cfg, seed, graphs_dirs, pairs, exclude)
    shutil.rmtree(work, ignore_errors=True)
    report.seconds["total"] = round(time.time() - started, 1)
    return report


def _write_tokens(
    tokens_dir: Path,
    out: Path,
    student: SWEMNodeEncoder,
    report: PhraseDistilReport,
    cfg: PhraseDistilConfig,
    seed: int,
    graphs_dirs,
    pairs,
    exclude,
) -> None:
    from graphtx.atomic import StagedDir
    from graphtx.text.bpe import TOKENIZER_FILE
    from graphtx.text.pretrain import IDF_FILE, NODE_PROJECTION_FILE, VECTORS_FILE, NodeProjection, tokens_fingerprint

    source = json.loads((tokens_dir / "manifest.json").read_text())
    staged = StagedDir(
        out, "`graphtx distil-phrases`", (TOKENIZER_FILE, VECTORS_FILE, IDF_FILE, NODE_PROJECTION_FILE)
    ).__enter__()
    try:
        shutil.copyfile(tokens_dir / TOKENIZER_FILE, staged.path(TOKENIZER_FILE))
        if (tokens_dir / IDF_FILE).exists():
            shutil.copyfile(tokens_dir / IDF_FILE, staged.path(IDF_FILE))
        np.save(staged.path(VECTORS_FILE), student.embedding.weight.detach().numpy().astype(np.float32))
        with open(staged.path(NODE_PROJECTION_FILE), "wb") as f:
            weight, bias, ngram = student.projection_arrays()
            np.savez(f, **NodeProjection(weight, bias, student.word_order, ngram).arrays())
        fingerprint = tokens_fingerprint(staged.partial)
    except BaseException as err:
        staged.__exit__(type(err), err, err.__traceback__)
        raise
    manifest = source | {
        "fingerprint": fingerprint,
        "phrase_distillation": {
            "from_tokens": {"path": str(tokens_dir), "fingerprint": source.get("fingerprint", "")},
            "graphs": [str(g) for g in graphs_dirs],
            "pairs": None if pairs is None else pairs.source,
            "excluded": None if exclude is None else exclude.source,
            "node_dim": cfg.node_dim,
            "word_order": cfg.word_order,
            "seed": seed,
            "config": dataclasses.asdict(cfg),
            "phrases": report.phrases,
            "teacher": report.teacher,
            "student": report.student,
            "seconds": report.seconds,
        },
    }
    with staged:
        staged.commit(manifest)


def _feature_type() -> int:
    from graphtx.graphs.graph import NODE_TYPES

    return NODE_TYPES.index(FEATURE)


def _fingerprint(tokens_dir: Path) -> str:
    return str((_read_json(tokens_dir / "manifest.json") or {}).get("fingerprint", ""))


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _save_npy(path: Path, array: np.ndarray) -> None:
    """Written whole or not at all (a killed run leaves no half file to reuse)."""
    import io

    from graphtx.atomic import atomic_write_bytes

    buffer = io.BytesIO()
    np.save(buffer, array)
    atomic_write_bytes(path, buffer.getvalue())
