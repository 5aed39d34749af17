"""Why a hit matched: which query features met which features of the hit.

Legend: m - query nodes, n - hit nodes, d - node_dim, D - base_dim.

A graph vector is the projection of a pooled sum of node states, ``W (sum_i p_i x_i)``
(``p``: pooling weights, ``x``: final node states; then a bias, the MoE head and
L2-normalisation). Without the bias and the head the score of a query (p, x) against a hit
(q, y) splits exactly into node pairs::

    score ~ sum_ij  c_ij,    c_ij = p_i q_j <W x_i, W y_j> / (|W sum p x| |W sum q y|)

so ``c_ij`` is the share of the score the pair (query node i, hit node j) carries, and
``sim_ij = cos(W x_i, W y_j)`` says how alike the two features are on their own. An
explanation lists, for the query nodes whose best pair carries most, that pair: query
feature, hit feature, similarity, pooling weights and contribution; ``total`` is the sum of
all c_ij (the model's score up to the projection bias and MoE head, shown beside it).

Lexical channel (a model with ``model.lexical_dim``; graphtx/model/lexical.py): the search score is
``(1 - b) * graph + b * lexical``. The node pairs above explain the graph part; the lexical part is the
cosine of the two count sketches, which splits into the tokens both graphs hold,
``w_q(t) w_h(t) / (|l_q| |l_h|)``, plus what hash collisions add (``collisions``, usually near 0). The
explanation lists the shared tokens that carry most of it.

Claim chart: the query's feature nodes, numbered 1, 2, ... in graph order (the order the claim
names them), are its elements. An element is *found* in a hit when one hit node holds all of its
words (lower case, a plural ``s`` dropped), or when the model's most similar hit node reaches a threshold
calibrated on the index's own documents (graphtx/index/calibration.py: higher than 99% of a feature's best
matches in unrelated documents, ``search.found_false_rate``; ``search.found_similarity`` fixes a cosine
instead) and the feature holds a word the index knows; the others are listed as "not found: feature 3, 5",
as a claim chart reads. Each element carries its confidence: the share of unrelated-document matches below it.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

from graphtx.graphs.graph import InventionGraph
from graphtx.index.found import FoundRule
from graphtx.model.batch import collate
from graphtx.model.encoder import GraphEncoder


@dataclass(frozen=True)
class NodeMatch:
    query_node: int  # index into the query graph's nodes
    query_text: str
    hit_node: int  # index into the hit graph's nodes
    hit_text: str
    similarity: float  # cos(W x_i, W y_j) of the two nodes' projected states
    query_weight: float  # pooling weight p_i of the query node (sums to 1 over the query graph)
    hit_weight: float  # pooling weight q_j of the hit node
    contribution: float  # c_ij: this pair's share of the score

    def to_json(self) -> dict:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Element:
    """One query feature (claim element) and whether the hit discloses it."""

    number: int  # 1-based, in the query graph's feature order
    query_node: int
    text: str
    hit_node: int  # the hit's most similar node (-1 when the hit has none)
    hit_text: str
    similarity: float  # cos of the two nodes' projected states
    found: str  # "words" (a hit node holds its words), "model" (similarity at the calibrated threshold or above) or "" (not found)
    confidence: float | None = (
        None  # share of matches in unrelated documents below this similarity (graphtx/index/calibration.py); None: uncalibrated
    )

    def to_json(self) -> dict:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class LexicalPart:
    """The lexical channel's share of a search score: ``weight * cosine``, split into shared tokens."""

    weight: float  # b = model.lexical_weight
    cosine: float  # cos of the two sketches
    terms: tuple[tuple[str, float], ...]  # (token, its part of the cosine), largest first
    collisions: float  # cosine - sum over all shared tokens: what hash collisions add

    def to_json(self) -> dict:
        return {
            "weight": round(self.weight, 4),
            "cosine": round(self.cosine, 4),
            "collisions": round(self.collisions, 4),
            "terms": [{"token": t, "part": round(v, 4)} for t, v in self.terms],
        }

    def line(self) -> str:
        terms = ", ".join(f"{t.lstrip('Ġ▁') or t} {v:+.3f}" for t, v in self.terms[:8])
        return f"    lexical channel: {self.weight:g} x cosine {self.cosine:.3f} = {self.weight * self.cosine:+.4f}; shared terms: {terms or 'none'}"


@dataclass(frozen=True)
class Explanation:
    doc_id: str
    score: float  # the model's score (cosine of the graph vectors)
    total: float  # sum of all pair contributions (score before projection bias and MoE head)
    matches: tuple[NodeMatch, ...]  # best pair of each query node, largest contribution first
    query_graph: InventionGraph
    hit_graph: InventionGraph
    elements: tuple[Element, ...] = ()  # every query feature, numbered, found or not
    lexical: LexicalPart | None = None  # the lexical channel's part of the score (models with one)

    @property
    def not_found(self) -> tuple[int, ...]:
        """Numbers of the query features the hit does not disclose."""
        return tuple(e.number for e in self.elements if not e.found)

    def to_json(self) -> dict:
        return {
            "doc_id": self.doc_id,
            "score": round(self.score, 4),
            "total": round(self.total, 4),
            "matches": [m.to_json() for m in self.matches],
            "elements": [e.to_json() for e in self.elements],
            "not_found": list(self.not_found),
        } | ({"lexical": self.lexical.to_json()} if self.lexical is not None else {})

    def chart(self) -> list[str]:
        return chart_lines(self.elements)

    def table(self) -> list[str]:
        """Markdown-ish rows: query feature | hit feature | sim | weights | contribution."""
        if not self.matches:
            return ["    (no node matches)"]
        qw = max(len(_cut(m.query_text)) for m in self.matches)
        hw = max(len(_cut(m.hit_text)) for m in self.matches)
        lines = [f"    {'query feature':<{qw}}  {'hit feature':<{hw}}   sim   p_q    p_h   contrib"]
        for m in self.matches:
            lines.append(
                f"    {_cut(m.query_text):<{qw}}  {_cut(m.hit_text):<{hw}}  {m.similarity:5.2f}  {m.query_weight:.3f}  {m.hit_weight:.3f}  {m.contribution:+.4f}"
            )
        lines.append(self.sum_line())
        return lines

    def sum_line(self) -> str:
        """How the contributions add up to the graph score: the pairs shown, the other pairs, and what bias and head add."""
        shown = sum(m.contribution for m in self.matches)
        return (
            f"    = {shown:+.4f} from these pairs {self.total - shown:+.4f} from the other node pairs "
            f"{self.score - self.total:+.4f} from the projection bias and head = graph score {self.score:.4f}"
        )

    def highlights(self) -> tuple[dict[int, float], dict[int, float]]:
        """Node → similarity in [0, 1] of the matched nodes of the query graph and of the hit graph.

        With a claim chart: the found query features and the hit nodes that disclose them; else the
        node pairs that carry most of the score.
        """
        q: dict[int, float] = {}
        h: dict[int, float] = {}
        found = [e for e in self.elements if e.found and e.hit_node >= 0]
        for e in found:
            s = min(max(e.similarity, 0.0), 1.0) if e.found == "model" else 1.0
            q[e.query_node] = max(q.get(e.query_node, 0.0), s)
            h[e.hit_node] = max(h.get(e.hit_node, 0.0), s)
        if found:
            return q, h
        for m in self.matches:
            s = min(max(m.similarity, 0.0), 1.0)
            q[m.query_node] = max(q.get(m.query_node, 0.0), s)
            h[m.hit_node] = max(h.get(m.hit_node, 0.0), s)
        return q, h


def chart_lines(elements: tuple[Element, ...]) -> list[str]:
    """The claim-chart line: which numbered query features the hit lacks, and which the model (not the words) found, with its confidence."""
    if not elements:
        return []
    missing = [e for e in elements if not e.found]
    by_model = [e for e in elements if e.found == "model"]
    model_note = ""
    if by_model:
        model_note = "; by the model: " + ", ".join(
            f"feature {e.number} ({_cut(e.hit_text, 30)}, sim {e.similarity:.2f}"
            + (f", confidence {e.confidence:.3f})" if e.confidence is not None else ")")
            for e in by_model[:NAMED_MISSING]
        )
    if not missing:
        text = f"all {len(elements)} query features found" + model_note
    else:
        found = len(elements) - len(missing)
        named = [
            f"feature {e.number} ({_cut(e.text, 30)})" for e in missing[:NAMED_MISSING]
        ]  # the rest by number: a long graph stays readable
        rest = [str(e.number) for e in missing[NAMED_MISSING:]]
        text = (
            f"{found} of {len(elements)} query features found{model_note}; not found: "
            + ", ".join(named)
            + (f"; also {', '.join(rest)}" if rest else "")
        )
    return textwrap.wrap(text, width=110, initial_indent="    ", subsequent_indent="      ", break_on_hyphens=False)


NAMED_MISSING = 10  # missing features named in the chart line; further ones are listed by number


def _cut(text: str, width: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@torch.no_grad()
def node_details(model: GraphEncoder, batch) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Per graph of a collated batch: (projected node states (n, D), pooling weights (n,), graph vector (out_dim,)), eval mode."""
    was_training = model.training
    model.eval()
    try:
        out = model(batch.to(next(model.parameters()).device), return_details=True)
    finally:
        model.train(was_training)
    states = out.node_states.float()  # (n, d)
    if isinstance(model.proj, nn.Linear):
        states = states @ model.proj.weight.float().T  # (n, D): the projection without its bias
    ptr = batch.ptr().tolist()
    return [
        (
            states[ptr[g] : ptr[g + 1]].cpu(),
            out.node_weights[ptr[g] : ptr[g + 1]].float().cpu(),
            out.vectors[g].float().cpu(),
        )
        for g in range(batch.num_graphs)
    ]


def explain_hits(
    model: GraphEncoder,
    tokenizer,
    query: InventionGraph,
    hits: list[InventionGraph],
    rows: int = 8,
    found_similarity: float = 0.9,
) -> list[Explanation]:
    """The node matches behind each hit's score for ``query``; all graphs are encoded in one batch."""
    batch = collate([query, *hits], tokenizer, model.config.max_tokens_per_node)
    details = node_details(model, batch)
    u, p, gq = details[0]
    out = [
        _explain(query, hit, u, p, gq, v, q, gh, rows, found_similarity) for hit, (v, q, gh) in zip(hits, details[1:])
    ]
    if model.lexical is None:
        return out
    parts = lexical_parts(model, tokenizer, batch, rows)
    return [dataclasses.replace(e, lexical=part) for e, part in zip(out, parts)]


@torch.no_grad()
def lexical_parts(model: GraphEncoder, tokenizer, batch, rows: int = 8) -> list[LexicalPart]:
    """The lexical channel's cosine of the batch's first graph (the query) and each other one, split into the tokens both hold."""
    channel = model.lexical
    batch = batch.to(channel.idf.device)
    args = (batch.token_ids, batch.token_node, batch.node_graph, batch.num_graphs)
    weights = channel.token_weights(*args)  # per graph: token -> weight
    raw = channel(*args, normalize=False).double().cpu()  # (1 + hits, L) sketches before L2-normalisation
    norms = raw.norm(dim=-1).tolist()  # what each cosine divides by
    sketches = nn.functional.normalize(raw, dim=-1)
    wq, nq = weights[0], norms[0]
    out = []
    for h, wh in enumerate(weights[1:], start=1):
        cosine = float(sketches[0] @ sketches[h])
        shared = {t: wq[t] * wh[t] / (nq * norms[h]) for t in wq.keys() & wh.keys()} if nq > 0 and norms[h] > 0 else {}
        top = sorted(shared.items(), key=lambda kv: (-kv[1], kv[0]))[:rows]
        terms = tuple((tokenizer.id_to_token(t) if hasattr(tokenizer, "id_to_token") else str(t), v) for t, v in top)
        out.append(LexicalPart(model.config.lexical_weight, cosine, terms, cosine - sum(shared.values())))
    return out


def explain_pair(
    model: GraphEncoder,
    tokenizer,
    query: InventionGraph,
    hit: InventionGraph,
    rows: int = 8,
    found_similarity: float = 0.9,
) -> Explanation:
    return explain_hits(model, tokenizer, query, [hit], rows, found_similarity)[0]


def _words(text: str) -> frozenset[str]:
    """Lower-case words of a node text, a plural s dropped ("Battery cells" -> {battery, cell})."""
    return frozenset(
        w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
        for w in re.findall(r"[a-z0-9]+", text.lower())
    )


def claim_elements(
    query: InventionGraph, hit: InventionGraph, sim: torch.Tensor | None, found_similarity
) -> tuple[Element, ...]:
    """Every feature node of ``query``, numbered, with the hit node most like it and whether it is found.

    ``sim``: (m, n) cosines of the query's and the hit's projected node states (None: words only).
    ``found_similarity``: a ``FoundRule`` (graphtx/index/calibration.py: calibrated threshold, confidences, known words),
    or a bare cosine threshold.
    """
    rule = found_similarity if isinstance(found_similarity, FoundRule) else FoundRule(float(found_similarity))
    hit_words = [_words(t) for t in hit.node_text]
    out = []
    features = [i for i, t in enumerate(query.node_type) if t == "feature"]
    for number, i in enumerate(features, 1):
        words = _words(query.node_text[i])
        by_words = next((j for j, w in enumerate(hit_words) if words and words <= w), -1)
        best = int(sim[i].argmax()) if sim is not None and sim.shape[1] else -1
        similarity = float(sim[i, best]) if best >= 0 else 0.0
        found = (
            "words" if by_words >= 0 else "model" if best >= 0 and rule.found(query.node_text[i], similarity) else ""
        )
        j = by_words if by_words >= 0 else best
        if by_words >= 0 and sim is not None:
            similarity = float(sim[i, j])
        confidence = (
            rule.confidence(similarity) if j >= 0 and found != "words" else None
        )  # words: certain, not calibrated
        out.append(
            Element(number, i, query.node_text[i], j, hit.node_text[j] if j >= 0 else "", similarity, found, confidence)
        )
    return tuple(out)


def _explain(query, hit, u, p, gq, v, q, gh, rows: int, found_similarity: float = 0.9) -> Explanation:
    """u (m, D), p (m,), gq (out,): the query's projected node states, pooling weights, vector; v, q, gh: the hit's."""
    score = float(gq @ gh)
    if u.shape[0] == 0 or v.shape[0] == 0:
        return Explanation(hit.doc_id, score, 0.0, (), query, hit, claim_elements(query, hit, None, found_similarity))
    pooled_q = (p[:, None] * u).sum(0)  # (D,)
    pooled_h = (q[:, None] * v).sum(0)  # (D,)
    norm = (pooled_q.norm() * pooled_h.norm()).clamp_min(1e-12)
    contrib = (p[:, None] * u) @ (q[:, None] * v).T / norm  # (m, n), sums to cos(pooled_q, pooled_h)
    sim = nn.functional.normalize(u, dim=-1) @ nn.functional.normalize(v, dim=-1).T  # (m, n)
    best = contrib.argmax(dim=1)  # (m,) best hit node of each query node
    best_contrib = contrib[torch.arange(len(best)), best]  # (m,)
    order = sorted(range(len(best)), key=lambda i: (-float(best_contrib[i]), i))[:rows]
    matches = tuple(
        NodeMatch(
            query_node=i,
            query_text=query.node_text[i],
            hit_node=int(best[i]),
            hit_text=hit.node_text[int(best[i])],
            similarity=float(sim[i, best[i]]),
            query_weight=float(p[i]),
            hit_weight=float(q[best[i]]),
            contribution=float(best_contrib[i]),
        )
        for i in order
    )
    return Explanation(
        hit.doc_id, score, float(contrib.sum()), matches, query, hit, claim_elements(query, hit, sim, found_similarity)
    )


def render_explanation(
    explanation: Explanation, out_path: str | Path, max_nodes: int = 40, rank: int | None = None
) -> Path:
    """One PNG: the query graph (left) and the hit's graph (right), matched nodes shaded by similarity."""
    import tempfile

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.image import imread

    from graphtx.graphs.render import render_graph

    q_high, h_high = explanation.highlights()
    query, q_high, q_note = focus(explanation.query_graph, q_high, max_nodes)
    hit, h_high, h_note = focus(explanation.hit_graph, h_high, max_nodes)
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    head = f"hit {rank}: " if rank is not None else "hit: "
    with tempfile.TemporaryDirectory() as tmp:
        left = render_graph(query, Path(tmp) / "q.png", highlight=q_high, max_nodes=max_nodes, title=f"query{q_note}")
        right = render_graph(
            hit,
            Path(tmp) / "h.png",
            highlight=h_high,
            max_nodes=max_nodes,
            title=f"{head}{explanation.doc_id} (score {explanation.score:.3f}){h_note}",
        )
        images = [imread(left), imread(right)]
    height = max(im.shape[0] for im in images)
    width = sum(im.shape[1] for im in images)
    dpi = 100
    fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    FigureCanvasAgg(fig)
    x = 0.0
    for im in images:
        ax = fig.add_axes((x / width, 1 - im.shape[0] / height, im.shape[1] / width, im.shape[0] / height))
        ax.imshow(im)
        ax.set_axis_off()
        x += im.shape[1]
    fig.savefig(out, dpi=dpi)
    return out


def focus(
    graph: InventionGraph, highlight: dict[int, float], max_nodes: int
) -> tuple[InventionGraph, dict[int, float], str]:
    """The graph cut to at most ``max_nodes`` nodes that keep every matched node, then the highest-degree ones.

    Returns (graph, highlight re-indexed, a title note saying what was cut).
    """
    if graph.num_nodes <= max_nodes:
        return graph, highlight, ""
    degree = [0] * graph.num_nodes
    for s, d in zip(graph.edge_src, graph.edge_dst):
        degree[s] += 1
        degree[d] += 1
    matched = sorted(highlight, key=lambda i: (-highlight[i], i))[:max_nodes]
    rest = sorted((i for i in range(graph.num_nodes) if i not in highlight), key=lambda i: (-degree[i], i))
    keep = sorted(matched + rest[: max_nodes - len(matched)])
    new = {old: i for i, old in enumerate(keep)}
    edges = [(new[s], new[d], t) for s, d, t in graph.edges() if s in new and d in new]
    cut = InventionGraph(
        doc_id=graph.doc_id,
        kind=graph.kind,
        text_source=graph.text_source,
        node_text=tuple(graph.node_text[i] for i in keep),
        node_type=tuple(graph.node_type[i] for i in keep),
        edge_src=tuple(e[0] for e in edges),
        edge_dst=tuple(e[1] for e in edges),
        edge_type=tuple(e[2] for e in edges),
        truncated=graph.truncated,
    )
    note = f" (showing {len(keep)} of {graph.num_nodes} nodes: the matched ones, then the highest degree)"
    return cut, {new[i]: v for i, v in highlight.items() if i in new}, note


_focus = focus  # the name it had before the web page drew graphs too
