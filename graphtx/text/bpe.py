"""A byte-pair-encoding tokenizer for patent text (HuggingFace ``tokenizers``).

Pipeline: NFKC + lower-casing → split on whitespace, then every punctuation
character on its own → BPE. Tokens carry no word-boundary marker (no ``##``,
no ``Ġ``): a piece such as ``ing`` is the same token inside a word and alone,
which keeps token strings plain for FastText's character n-grams. Decoding
back to the exact text is therefore not supported (nothing downstream needs it).

Special tokens: ``[PAD]`` = id 0, ``[UNK]`` = id 1 (characters not in the
trained alphabet).

Determinism: ``tokenizers``' BPE trainer breaks ties between equally frequent
pairs by token id, and ids are assigned in a fixed order, so training on the
same texts in the same order gives a byte-identical ``tokenizer.json``
(``tests/text/test_bpe.py`` checks this).

Example::

    tok = train_bpe(texts, vocab_size=8000, min_frequency=2)
    tok.encode("A battery housing comprising a lid")  # [412, 977, ...]
    tok.save("tokens/"); PatentTokenizer.load("tokens/")
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

TOKENIZER_FILE = "tokenizer.json"
PAD, UNK = "[PAD]", "[UNK]"
SPECIAL_TOKENS = (PAD, UNK)  # ids 0 and 1, in this order


def _empty_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token=UNK))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Punctuation()])
    return tok


class PatentTokenizer:
    """Thin wrapper over a trained ``tokenizers.Tokenizer``: ids without special tokens added."""

    def __init__(self, tokenizer: Tokenizer):
        if tokenizer.token_to_id(PAD) != 0 or tokenizer.token_to_id(UNK) != 1:
            raise ValueError(f"a PatentTokenizer needs {PAD} at id 0 and {UNK} at id 1")
        self._tok = tokenizer
        self._id_to_token = [tokenizer.id_to_token(i) for i in range(tokenizer.get_vocab_size())]

    # --- encoding --------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """Ids of many texts at once (Rust threads, no offsets computed)."""
        return [e.ids for e in self._tok.encode_batch_fast(list(texts), add_special_tokens=False)]

    def tokens(self, text: str) -> list[str]:
        return self._tok.encode(text, add_special_tokens=False).tokens

    def tokens_batch(self, texts: list[str]) -> list[list[str]]:
        """Token strings of many texts; the strings are shared objects (one per vocabulary entry)."""
        vocab = self._id_to_token
        return [[vocab[i] for i in ids] for ids in self.encode_batch(texts)]

    def id_to_token(self, i: int) -> str:
        return self._id_to_token[i]

    def token_to_id(self, token: str) -> int | None:
        return self._tok.token_to_id(token)

    # --- properties ------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        return len(self._id_to_token)

    @property
    def pad_id(self) -> int:
        return 0

    @property
    def unk_id(self) -> int:
        return 1

    @property
    def backend(self) -> Tokenizer:
        return self._tok

    # --- files -----------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        self._tok.save(str(path / TOKENIZER_FILE))
        return path / TOKENIZER_FILE

    @classmethod
    def load(cls, directory: str | Path) -> "PatentTokenizer":
        path = Path(directory) / TOKENIZER_FILE
        if not path.exists():
            raise FileNotFoundError(f"{directory} holds no {TOKENIZER_FILE} (run `graphtx pretrain` first)")
        return cls(Tokenizer.from_file(str(path)))

    def __repr__(self) -> str:
        return f"PatentTokenizer(vocab_size={self.vocab_size})"


def train_bpe(
    texts: Iterable[str], vocab_size: int, min_frequency: int, length: int | None = None, show_progress: bool = False
) -> PatentTokenizer:
    """Train BPE on a stream of texts (consumed once, in batches; never held whole).

    The vocabulary can come out smaller than ``vocab_size`` when the texts
    offer fewer merges that reach ``min_frequency``.
    """
    tok = _empty_tokenizer()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(SPECIAL_TOKENS),
        show_progress=show_progress,
    )
    tok.train_from_iterator(texts, trainer=trainer, length=length)
    return PatentTokenizer(tok)
