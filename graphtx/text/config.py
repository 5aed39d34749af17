"""PretrainConfig: ``graphtx pretrain``, BPE tokenizer and FastText token vectors (the ``pretrain:`` section)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PretrainConfig:
    vocab_size: int = 16_000  # BPE vocabulary incl. [PAD] and [UNK]; = rows of the token embedding matrix
    min_frequency: int = 2  # a BPE merge needs a pair seen at least this often
    dim: int = 128  # FastText vector size = the model's token embedding size
    epochs: int = 5  # FastText passes over the token sequences
    window: int = 5  # FastText skip-gram context window (tokens either side)
    min_count: int = 2  # a token seen fewer times gets no FastText word vector (subword n-grams may still give one)
    workers: int = 1  # FastText threads; only workers=1 is reproducible run to run
    buckets: int = (
        200_000  # FastText n-gram hash buckets; gensim's 2M would cost 2M x dim floats for a few-thousand-token vocab
    )
    max_documents: int = 0  # documents read over all corpora, in order; 0 = all
    max_chars_per_document: int = (
        20_000  # text read per document (cut at a paragraph end): long descriptions do not dominate
    )
    max_fasttext_sentences: int = 2_000_000  # texts kept in memory for FastText (the first ones, in corpus order)

    def __post_init__(self) -> None:
        if self.vocab_size < 16:
            raise ValueError("pretrain.vocab_size must be >= 16 (it holds [PAD], [UNK] and the alphabet)")
        if min(self.min_frequency, self.dim, self.epochs, self.window, self.min_count, self.workers, self.buckets) < 1:
            raise ValueError("pretrain.min_frequency, dim, epochs, window, min_count, workers and buckets must be >= 1")
        if self.max_documents < 0:
            raise ValueError("pretrain.max_documents must be >= 0 (0 = all)")
        if self.max_chars_per_document < 1 or self.max_fasttext_sentences < 1:
            raise ValueError("pretrain.max_chars_per_document and max_fasttext_sentences must be >= 1")
