"""Triplet loss with online hard-negative mining over a batch, with a margin per citation category.

For anchor i (a citing graph), its positive p(i) (the cited graph of its pair) and
a negative j (another candidate graph of the batch that is not known relevant to
the anchor's document):

    ℓ(i, j) = max(0, d(a_i, c_p(i)) − d(a_i, c_j) + m_i)

with d = 1 − cos (``cosine``) or the Euclidean distance of the L2-normalised
vectors (``l2``) and m_i the margin of the pair's category.

Mining:
- ``hardest``: per anchor, the closest allowed negative (batch-hard, Hermans et
  al. 2017); loss = Σ_i ℓ(i, j*) / #anchors with a negative.
- ``semihard``: per anchor, the closest negative farther than the positive
  (FaceNet, Schroff et al. 2015), the hardest one when none is; same mean.
- ``all``: every (anchor, negative) with ℓ > 0; loss = Σ ℓ / #active triplets.

``contrastive_loss`` (``train.loss: infonce``) is the in-batch softmax alternative (InfoNCE,
van den Oord et al. 2018; "multiple negatives ranking", Henderson et al. 2017): per anchor,
cross-entropy of its positive against every allowed negative of the batch at once,

    ℓ_i = −log( exp(s_ip / τ) / (exp(s_ip / τ) + Σ_{j allowed} exp(s_ij / τ)) ),  s = cos,

so every negative pushes in proportion to how close it is, instead of a hinge that is flat
once a margin is met.

``*_from_scores`` / ``*_from_distances`` take the similarity matrix itself, so the node-level
late-interaction score (``graphtx.model.late``, ``train.late_interaction_weight``) trains with the
same losses as the pooled cosine (triplet distance = 1 − score).

Both return the summed loss and its denominator separately so that data-parallel training
can normalise by the global count (see train.distributed).

``mse_loss`` and ``cosent_loss`` train the phrase-similarity model of ``graphtx eval phrases``
(graphtx.eval.phrases): a predicted cosine per pair against an expert score in [0, 1].

Example::

    total, denom, active = triplet_loss(a, c, pos, allowed, margins, "cosine", "hardest")
    loss = total / denom.clamp(min=1)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def distances(a: torch.Tensor, c: torch.Tensor, kind: str) -> torch.Tensor:
    """(b, d) × (m, d) → (b, m)."""
    cos = a @ c.T  # (b, m)
    if kind == "cosine":
        return 1.0 - cos
    return (2.0 - 2.0 * cos).clamp(min=1e-12).sqrt()  # ||a - c|| for unit vectors


def triplet_loss(
    anchors: torch.Tensor,  # (b, d) L2-normalised
    candidates: torch.Tensor,  # (m, d) L2-normalised; holds every anchor's positive
    positive: torch.Tensor,  # (b,) long: column of each anchor's positive in candidates
    allowed: torch.Tensor,  # (b, m) bool: candidate j may serve as a negative of anchor i
    margins: torch.Tensor,  # (b,) float
    distance: str = "cosine",
    mining: str = "hardest",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(loss sum, denominator, active triplets); divide the first by the second."""
    return triplet_loss_from_distances(distances(anchors, candidates, distance), positive, allowed, margins, mining)


def triplet_loss_from_distances(
    d: torch.Tensor,  # (b, m) anchor-candidate distances
    positive: torch.Tensor,  # (b,) long
    allowed: torch.Tensor,  # (b, m) bool
    margins: torch.Tensor,  # (b,) float
    mining: str = "hardest",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``triplet_loss`` on a given distance matrix (e.g. 1 - late-interaction score)."""
    d_pos = d.gather(1, positive.unsqueeze(1))  # (b, 1)
    has_neg = allowed.any(1)  # (b,)
    inf = torch.finfo(d.dtype).max
    if mining == "all":
        losses = (d_pos - d + margins.unsqueeze(1)).clamp(min=0) * allowed  # (b, m)
        active = (losses > 0).sum()
        return losses.sum(), active.to(d.dtype), active
    masked = d.masked_fill(~allowed, inf)  # (b, m)
    if mining == "semihard":
        farther = allowed & (d > d_pos)  # (b, m)
        semi = d.masked_fill(~farther, inf).min(1).values  # (b,)
        d_neg = torch.where(farther.any(1), semi, masked.min(1).values)  # (b,)
    else:
        d_neg = masked.min(1).values  # (b,)
    losses = (d_pos.squeeze(1) - d_neg + margins).clamp(min=0) * has_neg  # (b,)
    return losses.sum(), has_neg.sum().to(d.dtype), (losses > 0).sum()


def allowed_negatives(anchor_docs: list[str], candidate_docs: list[str], known: dict[str, set[str]]) -> torch.Tensor:
    """(b, m) bool: candidate j is allowed for anchor i unless j's document is known relevant to i's (or is i's)."""
    return torch.tensor(
        [[c != a and c not in known.get(a, ()) for c in candidate_docs] for a in anchor_docs], dtype=torch.bool
    ).reshape(len(anchor_docs), len(candidate_docs))


def contrastive_loss(
    anchors: torch.Tensor,  # (b, d) L2-normalised
    candidates: torch.Tensor,  # (m, d) L2-normalised; holds every anchor's positive
    positive: torch.Tensor,  # (b,) long: column of each anchor's positive in candidates
    allowed: torch.Tensor,  # (b, m) bool: candidate j may serve as a negative of anchor i
    temperature: float = 0.05,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(loss sum, denominator = anchors, anchors with at least one negative); see the module docstring."""
    return contrastive_loss_from_scores(anchors @ candidates.T, positive, allowed, temperature)


def contrastive_loss_from_scores(
    scores: torch.Tensor,  # (b, m) similarities in [-1, 1]: cosines, or late-interaction scores
    positive: torch.Tensor,  # (b,) long
    allowed: torch.Tensor,  # (b, m) bool
    temperature: float = 0.05,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``contrastive_loss`` on a given similarity matrix."""
    logits = scores / temperature  # (b, m)
    rows = torch.arange(len(scores), device=scores.device)
    keep = allowed.clone()
    keep[rows, positive] = True  # the positive is always a class; known relevant others are not negatives
    logits = logits.masked_fill(~keep, float("-inf"))  # (b, m)
    losses = torch.nn.functional.cross_entropy(logits, positive, reduction="none")  # (b,)
    has_neg = allowed.any(1)  # (b,)
    losses = losses * has_neg
    return losses.sum(), has_neg.sum().to(logits.dtype), has_neg.sum()


# --- phrase pairs (graphtx eval phrases): predicted cosine vs. an expert score ----------


def mse_loss(cos: torch.Tensor, gold: torch.Tensor, scale: float = 0.0) -> torch.Tensor:
    """Mean squared error of cosine vs. score (sentence-transformers' CosineSimilarityLoss)."""
    return F.mse_loss(cos, gold)


def cosent_loss(cos: torch.Tensor, gold: torch.Tensor, scale: float = 20.0) -> torch.Tensor:
    """CoSENT: ``log(1 + sum over (i, j) with gold_i > gold_j of exp(scale * (cos_j - cos_i)))``.

    References: Su, J. (2022) "CoSENT"; sentence-transformers ``CoSENTLoss``. Zero-loss floor is
    the ``1 +`` term; a batch where all scores tie gives log(1) = 0.
    """
    diff = scale * (cos[None, :] - cos[:, None])  # (p, p): [i, j] = scale * (cos_j - cos_i)
    ranked = gold[:, None] > gold[None, :]  # (p, p): pair i should score above pair j
    return torch.logsumexp(torch.cat([diff.new_zeros(1), diff[ranked]]), dim=0)
