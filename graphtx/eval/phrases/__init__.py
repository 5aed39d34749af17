"""Patent phrase similarity (``graphtx eval phrases``): how well the SWEM node encoder's phrase vectors agree with experts.

Data: Google's Patent Phrase Similarity dataset (Aslanyan & Wetherbee 2022): pairs of short
phrases (``anchor``, ``target``), an expert ``score`` in {0, .25, .5, .75, 1} and the CPC class
the pair was rated in (``context``, e.g. ``A47``). Scores are Pearson and Spearman correlations
of predicted similarity with ``score`` over all pairs of the split (no per-anchor averaging).

Methods (``graphtx eval phrases`` prints one row each):

* **FastText average** — cosine of the means of the phrases' pre-trained token vectors. Our
  tokens are BPE pieces, not words, so this is close to, not the same as, the published FastText.
* **SWEM mean+max (pre-trained)** — cosine of ``[mean ; max]`` of the token vectors: the SWEM node
  encoder with its projection set to the identity (an untrained SWEM's projection is random).
* **SWEM fine-tuned + CPC context** — :class:`PhraseSimilarityModel` trained on the train split.

Both untrained rows *are* :class:`PhraseSimilarityModel` s (no second pooling code): the
projection starts as ``eye_`` over the pooled ``[mean ; max]`` coordinates, so ``node_dim =
2 * token_dim`` starts as mean+max and ``node_dim = token_dim`` as the plain mean, and the context
starts switched off. Fine-tuning therefore starts exactly at the "SWEM mean+max" row, and that
starting point (epoch 0) takes part in the early selection.

Context (FiLM, Perez et al. 2018): both phrases of a pair are rated in one CPC class ``k`` of
section ``s``; each phrase vector becomes ``h * (1 + a_k + a_s) + b_k + b_s``. The scale ``a``
lets a class decide which phrase dimensions matter (a "bolt" in fasteners vs. in lightning
protection); the shift ``b`` moves both phrases toward a shared class direction, raising every
cosine of that class, which calibrates per-class base rates. A plain ``h + W c`` can only do the
latter. All rows start at zero (the context-free encoder). Row 0 of the class table is "unknown"
(a class not seen in training); it is trained by *context dropout*: a training pair's class is
replaced by "unknown" with probability ``context_dropout``, so it learns the average class, and
the section table (8 letters, all seen) carries the coarse context for it.

Loss: ``"mse"`` = mean squared error of cosine vs. score (sentence-transformers'
CosineSimilarityLoss, as SBERT is trained on STS), or ``"cosent"`` = CoSENT (Su 2022; in
sentence-transformers as CoSENTLoss): ``log(1 + sum_{s_i > s_j} exp(lam * (cos_j - cos_i)))``
over the pairs of a batch, a ranking loss that only asks that higher-rated pairs get higher
cosines — what Spearman measures — and ignores the absolute cosine scale. On the dev split
(64-d small-config tokens) the two tie on the mean of Pearson and Spearman (MSE 0.529 / 0.518,
CoSENT 0.506 / 0.537); MSE is the default because the selection metric is Pearson and it is
the reference objective; CoSENT trades about 0.02 Pearson for 0.02 Spearman.

Early selection: the dev split is a seeded ``dev_fraction`` of the train split's *anchors* (all
pairs of an anchor go to one side), because the official splits share no anchor; a random
pair split would let dev reward memorised anchors. The epoch (0 = untrained) with the best dev
Pearson is kept. The validation split is only scored, never looked at while training.

Example::

    train = read_phrase_pairs("train.csv"); valid = read_phrase_pairs("validation.csv")
    tokenizer, vectors = load_tokens("tokens/")
    model = fine_tune(train, tokenizer, vectors, PhraseConfig(), seed=0)
    pearson_spearman(score(model, valid), valid.score)

Layers (as the citation evaluation's):

==============  =====================================================================================
``config``      :class:`PhraseConfig`
``data``        (graphtx/text/phrase_pairs.py) the pairs CSV reader, :class:`PhrasePairs`, the seeded dev split by anchor
``model``       :class:`PhraseSimilarityModel` (SWEM + CPC FiLM), the untrained scorers, ``score``
``finetune``    ``fine_tune``: AdamW, early selection on dev Pearson (losses: :mod:`graphtx.train.loss`)
``protocol``    ``evaluate_phrases``: the three methods on the validation split + the published rows
``report``      the table, the command's lines, results.json / predictions.csv / scatter.png
==============  =====================================================================================

Metrics (Pearson, Spearman) are :func:`graphtx.metrics.pearson_spearman`. Importing this package
loads torch (the model): the command imports it when it runs, never at start-up.
"""

from graphtx.eval.phrases.config import PhraseConfig
from graphtx.eval.phrases.finetune import LOSSES, fine_tune
from graphtx.eval.phrases.model import (
    PairBatch,
    PhraseSimilarityModel,
    cpc_class,
    distilled_model,
    pretrained_model,
    score,
)
from graphtx.eval.phrases.protocol import PUBLISHED, PhraseEvalReport, evaluate_phrases
from graphtx.eval.phrases.report import format_table, plot_scatter, report_lines, write_results
from graphtx.metrics import pearson_spearman
from graphtx.text.phrase_pairs import PhrasePairs, SkippedRow, read_phrase_pairs, split_by_anchor
from graphtx.train.loss import cosent_loss, mse_loss

__all__ = [
    "LOSSES",
    "PUBLISHED",
    "PairBatch",
    "PhraseConfig",
    "PhraseEvalReport",
    "PhrasePairs",
    "PhraseSimilarityModel",
    "SkippedRow",
    "cosent_loss",
    "cpc_class",
    "distilled_model",
    "evaluate_phrases",
    "fine_tune",
    "format_table",
    "mse_loss",
    "pearson_spearman",
    "plot_scatter",
    "pretrained_model",
    "read_phrase_pairs",
    "report_lines",
    "score",
    "split_by_anchor",
    "write_results",
]
