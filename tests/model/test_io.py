from __future__ import annotations

import pytest
import torch

from graphtx.model import GraphEncoder, fingerprint, load_model, save_model
from graphtx.model.batch import collate
from graphtx.model.io import load_config_file
from tests.model import HashTokenizer, lamp, no_nodes, snowthrower, tiny_config


def _trained_looking_model() -> GraphEncoder:
    model = GraphEncoder(tiny_config(), seed=0)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    return model.eval()


def test_save_load_round_trip_gives_identical_vectors_and_fingerprint(tmp_path):
    model, tok = _trained_looking_model(), HashTokenizer()
    out = save_model(tmp_path / "m", model, model.config, tokenizer=tok)
    assert sorted(p.name for p in out.iterdir()) == [
        "checksums.json",
        "config.yaml",
        "fingerprint.txt",
        "hash_tokenizer.txt",
        "model.pt",
    ]
    loaded_dir = load_model(out)
    loaded, config = loaded_dir.model, loaded_dir.config
    assert config == model.config == load_config_file(out) and not loaded.training
    b = collate([snowthrower(), no_nodes(), lamp()], tok, config.max_tokens_per_node)
    assert torch.equal(model(b), loaded(b))
    fp = fingerprint(loaded, config)
    assert fp == fingerprint(model) == (out / "fingerprint.txt").read_text().strip() and len(fp) == 64
    assert all(p.requires_grad for p in loaded.parameters())
    # saving twice writes the same bytes-derived fingerprint
    save_model(tmp_path / "again", loaded)
    assert (tmp_path / "again" / "fingerprint.txt").read_text() == (out / "fingerprint.txt").read_text()


def test_fingerprint_changes_when_a_weight_or_the_config_changes():
    model = _trained_looking_model()
    before = fingerprint(model)
    with torch.no_grad():
        model.blocks[1].attn.q.weight[0, 0] += 1e-6
    assert fingerprint(model) != before
    other = GraphEncoder(tiny_config(dropout=0.2), seed=0)
    other.load_state_dict(model.state_dict())
    assert fingerprint(other) != fingerprint(model)  # same weights, different config


def test_loading_tampered_weights_is_a_clear_error(tmp_path):
    model = _trained_looking_model()
    save_model(tmp_path, model)
    state = torch.load(tmp_path / "model.pt", weights_only=True)
    state["pool.score.bias"] += 1.0
    torch.save(state, tmp_path / "model.pt")
    with pytest.raises(ValueError, match="model.pt .contents changed"):  # checksums.json names the file
        load_model(tmp_path)
    (tmp_path / "checksums.json").unlink()  # without it, the fingerprint still refuses the weights
    with pytest.raises(ValueError, match="fingerprint mismatch"):
        load_model(tmp_path)
    with pytest.raises(FileNotFoundError, match="not a model directory"):
        load_model(tmp_path / "nowhere")


def test_tokenizer_given_as_a_path_is_copied_in(tmp_path):
    tok_dir = tmp_path / "tokens"
    tok_dir.mkdir()
    (tok_dir / "tokenizer.json").write_text("{}")
    save_model(tmp_path / "m", _trained_looking_model(), tokenizer=tok_dir)
    assert (tmp_path / "m" / "tokenizer.json").read_text() == "{}"
    with pytest.raises(ValueError, match="config differs"):
        save_model(tmp_path / "x", _trained_looking_model(), tiny_config(layers=1))


def test_round_trip_with_the_real_bpe_tokenizer(tmp_path):
    pytest.importorskip("tokenizers")
    from graphtx.text.bpe import PatentTokenizer, train_bpe

    graphs = [snowthrower(), lamp()]
    tok = train_bpe([t for g in graphs for t in g.node_text] * 3, vocab_size=80, min_frequency=1)
    model = GraphEncoder(tiny_config(vocab_size=tok.vocab_size), seed=0).eval()
    save_model(tmp_path, model, tokenizer=tok)
    loaded_dir = load_model(tmp_path)
    loaded, config = loaded_dir.model, loaded_dir.config
    vectors = loaded.encode(graphs, PatentTokenizer.load(tmp_path))
    assert torch.equal(vectors, model.encode(graphs, tok))
    # the model directory object: model, tokenizer and config of one directory in one call
    assert torch.equal(loaded_dir.model.encode(graphs, loaded_dir.tokenizer), vectors)
    assert (
        loaded_dir.tokenizer is loaded_dir.tokenizer and loaded_dir.tokenizer.vocab_size == tok.vocab_size
    )  # read once
    assert config == model.config and loaded_dir.path == tmp_path and str(tmp_path) in repr(loaded_dir)


def test_model_dir_without_a_tokenizer_loads_and_says_so_when_one_is_asked_for(tmp_path):
    """A directory saved without a tokenizer still gives its model and config; its tokenizer is a clear error naming it."""
    model = _trained_looking_model()
    save_model(tmp_path / "m", model)
    loaded_dir = load_model(tmp_path / "m")
    assert loaded_dir.config == model.config and fingerprint(loaded_dir.model) == fingerprint(model)
    with pytest.raises(FileNotFoundError, match=r"m holds no tokenizer\.json"):
        loaded_dir.tokenizer
