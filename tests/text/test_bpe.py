"""The BPE tokenizer: normalisation, special ids, round trip, determinism."""

from __future__ import annotations

import pytest

from graphtx.text.bpe import TOKENIZER_FILE, PatentTokenizer, train_bpe
from tests.text import patent_sentences

TEXTS = patent_sentences(600) + ["The housing (10) has a lid; the lid is sealed."] * 20


@pytest.fixture(scope="module")
def tok() -> PatentTokenizer:
    return train_bpe(iter(TEXTS), vocab_size=300, min_frequency=2)


def test_special_tokens_have_fixed_ids(tok):
    assert (tok.pad_id, tok.unk_id) == (0, 1)
    assert (tok.id_to_token(0), tok.id_to_token(1)) == ("[PAD]", "[UNK]")
    assert tok.encode("Ω") == [tok.unk_id]  # a character never seen in training
    assert 16 < tok.vocab_size <= 300


def test_frequent_patent_words_become_one_token(tok):
    assert tok.tokens("Comprising") == ["comprising"]  # lower-cased, one token
    assert tok.tokens("wherein said battery") == ["wherein", "said", "battery"]
    assert len(tok.tokens("xylophone")) > 3  # a word the corpus never had falls apart


def test_normalisation_and_punctuation(tok):
    assert tok.tokens("ＨＯＵＳＩＮＧ") == tok.tokens("housing")  # NFKC folds full-width letters
    assert tok.tokens("housing(10);") == ["housing", "(", "10", ")", ";"]  # punctuation split off, one char each


def test_encode_batch_equals_encode(tok):
    texts = TEXTS[:20] + ["", "a valve seat"]
    assert tok.encode_batch(texts) == [tok.encode(t) for t in texts]
    assert tok.tokens_batch(texts) == [tok.tokens(t) for t in texts]


def test_save_load_round_trip(tok, tmp_path):
    path = tok.save(tmp_path / "a")
    assert path.name == TOKENIZER_FILE
    loaded = PatentTokenizer.load(tmp_path / "a")
    assert loaded.vocab_size == tok.vocab_size
    assert loaded.encode_batch(TEXTS[:50]) == tok.encode_batch(TEXTS[:50])
    loaded.save(tmp_path / "b")
    assert (tmp_path / "b" / TOKENIZER_FILE).read_bytes() == path.read_bytes()


def test_training_is_deterministic(tok, tmp_path):
    again = train_bpe(iter(TEXTS), vocab_size=300, min_frequency=2)
    assert again.save(tmp_path / "b").read_bytes() == tok.save(tmp_path / "a").read_bytes()


def test_load_of_a_missing_tokenizer_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="run `graphtx pretrain` first"):
        PatentTokenizer.load(tmp_path)
