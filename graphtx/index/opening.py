"""Opening an index directory for searching: its manifest and files read (and checked) as one snapshot, the model
loaded and matched to the index's fingerprint, FAISS shards (on a GPU when asked), the fitted ranker found. What
:meth:`graphtx.index.search.Index.open` assembles its parts from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graphtx import integrity
from graphtx.errors import IntegrityError
from graphtx.index import faiss_index
from graphtx.index.faiss_index import IndexSpec
from graphtx.index.idmap import IdMap
from graphtx.index.store import BM25_DIR, IndexStore, index_mend


@dataclass(frozen=True)
class OpenedIndex:
    store: IndexStore
    manifest: dict
    encoder: object  # GraphEncoder, in eval mode
    tokenizer: object
    ids: IdMap
    shards: list  # FAISS indexes, one a shard (on the GPU where moved)
    spec: IndexSpec
    on_gpu: bool
    ranker: object  # graphtx.rank.store.Ranker, or None
    model_profile: object = None  # graphtx.text.field.FieldProfile of the corpus the model learned on, or None


def open_index_files(
    directory: str | Path,
    model=None,
    mmap: bool = True,
    use_gpu: str = "auto",
    nprobe: int | None = None,
    ef_search: int | None = None,
    device: str = "cpu",
    ranker_dir: str | Path | None = None,
) -> OpenedIndex:
    """See :meth:`graphtx.index.search.Index.open` for the parameters."""
    from graphtx.model.io import MODEL_MEND, fingerprint, load_model

    store = IndexStore(directory)
    for attempt in range(3):  # a writer may finish between reading the manifest and its files: read the new snapshot
        manifest = store.require_manifest()
        try:
            store.verify(manifest, skip=(BM25_DIR + "/",))  # sizes of all files, hashes of the small ones
            shards = [
                store.read_shard(s["file"], spec_of(manifest, nprobe, ef_search), mmap) for s in manifest["shards"]
            ]
            ids = store.read_id_map(manifest["ids_file"])
            break
        except (FileNotFoundError, IntegrityError):
            if attempt == 2 or store.manifest_seal() == manifest.get(integrity.SEAL_KEY, ""):
                raise
    spec = spec_of(manifest, nprobe, ef_search)
    if len(ids) != manifest["count"] or sum(s["count"] for s in manifest["shards"]) != manifest["count"]:
        raise IntegrityError(
            f"index {store.dir}: the id map holds {len(ids)} documents, the manifest says {manifest['count']}. {index_mend(store.dir, [manifest['ids_file']])}"
        )
    mend = f"Rebuild the index with the model: `graphtx index --model MODEL --graphs GRAPHS --out {store.dir}`."
    if model is None:
        named = manifest.get("model_dir")
        if not named:
            raise ValueError(f"index {store.dir} names no model directory: pass one (--model)")
        model = store.dir / named if not Path(named).is_absolute() else Path(named)
    else:
        mend = MODEL_MEND
    if isinstance(model, (str, Path)):
        model_dir = Path(model)
        from graphtx.model.chunks import resolve_device

        loaded = load_model(model_dir, map_location=resolve_device(device), mend=mend)
        encoder, tokenizer = loaded.model, loaded.tokenizer
    else:
        encoder, tokenizer = model
    fp = fingerprint(encoder, tokenizer=tokenizer)
    legacy = (
        integrity.CHECKSUMS_KEY not in manifest and fingerprint(encoder) == manifest["model_fingerprint"]
    )  # built before tokenizers were fingerprinted
    if fp != manifest["model_fingerprint"] and not legacy:
        raise ValueError(
            f"the query model (fingerprint {fp[:12]}…) is not the model index {store.dir} was built with "
            f"({manifest['model_fingerprint'][:12]}…; the fingerprint covers config, weights and tokenizer): "
            "its vectors would not be comparable; search with that model, or rebuild the index"
        )
    store.checksums = manifest.get(integrity.CHECKSUMS_KEY) or {}  # document parts: hashed on first read
    gpu = [faiss_index.to_gpu(s, spec, use_gpu) for s in shards]
    on_gpu = any(g is not s for g, s in zip(gpu, shards))
    encoder.eval()
    ranker = _open_ranker(store.dir, manifest, model, ranker_dir, manifest["model_fingerprint"])
    return OpenedIndex(
        store, manifest, encoder, tokenizer, ids, gpu, spec, on_gpu, ranker, _model_profile(store, manifest, model)
    )


def _model_profile(store: IndexStore, manifest: dict, model):
    """The term profile of the corpus the model learned on (MODEL/corpus_profile.json of train and adapt): the model
    directory given, else the index's copy of it (the same model: its fingerprint matched); None without one."""
    from graphtx.text.field import read_model_profile

    if isinstance(model, (str, Path)):
        return read_model_profile(model)
    named = manifest.get("model_dir")
    return read_model_profile(store.dir / named if named else None)


def _open_ranker(index_dir: Path, manifest: dict, model, ranker_dir, model_fingerprint: str):
    """The ranker for an index: ``ranker_dir``, else INDEX/ranker, else the model directory's ranker/; None when there is none."""
    from graphtx.rank.store import RANKER_DIR, has_ranker, load_ranker

    if ranker_dir is not None:
        return load_ranker(ranker_dir, model_fingerprint)
    places = [Path(index_dir) / RANKER_DIR] + ([Path(model) / RANKER_DIR] if isinstance(model, (str, Path)) else [])
    if manifest.get("model_dir"):
        places.append(Path(index_dir) / manifest["model_dir"] / RANKER_DIR)
    found = next((p for p in places if has_ranker(p)), None)
    return load_ranker(found, model_fingerprint) if found else None


def spec_of(manifest: dict, nprobe: int | None, ef_search: int | None) -> IndexSpec:
    spec = IndexSpec.from_dict(manifest["spec"])
    changes = {k: v for k, v in (("nprobe", nprobe), ("ef_search", ef_search)) if v is not None}
    return IndexSpec(**{**spec.__dict__, **changes}) if changes else spec
