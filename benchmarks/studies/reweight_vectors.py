"""Re-mix the two parts of encoded vectors at another lexical weight, without encoding again.

    python benchmarks/studies/reweight_vectors.py VECTORS MODEL --weight B --out OUT
    python benchmarks/studies/reweight_vectors.py VECTORS MODEL --equal-mix --out OUT   # b from the vectors' own spreads

``graphtx encode`` writes [sqrt(1 - b0) g ; sqrt(b0) l] (graphtx/model/lexical.py) with b0 = MODEL's
``lexical_weight``; both parts are unit vectors, so each is recovered exactly and joined again at ``--weight``.
``--equal-mix`` sets b = sd_g / (sd_g + sd_l) from the pair-cosine spreads of up to ``--docs`` seeded vectors of the
file itself (benchmarks/studies/cosine_spread.py): both parts then carry the fused cosine's spread alike. It reads the
corpus only, never a citation. A vectors file of the evaluated corpus then goes to
``graphtx eval citations --vectors OUT``: one encode serves every weight (benchmarks/results/full-text-dev-set.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np


def split_parts(vectors: np.ndarray, graph_dim: int, weight: float) -> tuple[np.ndarray, np.ndarray]:
    """(n, graph_dim + L) joined at ``weight`` -> unit graph part (n, graph_dim), unit lexical part (n, L)."""
    if not 0 < graph_dim < vectors.shape[1] or not 0.0 < weight < 1.0:
        raise ValueError(
            f"need a graph part and a lexical part and a weight in (0, 1), got shape {vectors.shape}, graph_dim {graph_dim}, weight {weight}"
        )
    graph, lexical = vectors[:, :graph_dim] / (1 - weight) ** 0.5, vectors[:, graph_dim:] / weight**0.5
    return graph, lexical


def check_written_by(meta: dict, model_dir: str | Path, what: str) -> None:
    """Refuse vectors that ``model_dir`` did not write (another model's, or a file already re-mixed or re-sketched): the
    parts are split at that model's own weight, so another weight would split them wrongly. ``meta``: read_vectors'."""
    from graphtx.model.io import FINGERPRINT_FILE

    expected = (Path(model_dir) / FINGERPRINT_FILE).read_text().strip()
    written = str(meta.get("model_fingerprint", ""))
    if written == expected:
        return
    if written.startswith(expected):  # re-mixed or re-sketched: the suffix says how
        raise SystemExit(
            f"{what} is not as {model_dir} wrote it ({written[len(expected) :]}): its parts cannot be split at that model's weight again"
        )
    raise SystemExit(
        f"{what} was written by model {written[:16] or '(none recorded)'}, not by {model_dir} ({expected[:16]}): give the model that encoded it"
    )


def join_parts(graph: np.ndarray, lexical: np.ndarray, weight: float) -> np.ndarray:
    """Unit parts (n, D), (n, L) -> (n, D + L) float32, joined by the encoder's own ``graphtx.model.lexical.join``."""
    import torch

    from graphtx.model.lexical import join

    if not 0.0 < weight < 1.0:
        raise ValueError(f"weight must be in (0, 1), got {weight}")
    return join(torch.from_numpy(graph), torch.from_numpy(lexical), weight).numpy().astype(np.float32)


def equal_mix_weight(vectors: np.ndarray, graph_dim: int, docs: int = 400, seed: int = 0) -> tuple[float, float, float]:
    """(b, sd_g, sd_l): the weight at which (1 - b) sd_g = b sd_l over the pairs of up to ``docs`` seeded rows of
    ``vectors`` (n, graph_dim + L), their spreads as benchmarks/studies/cosine_spread.py takes them (each part normalised)."""
    from cosine_spread import part_spreads

    pick = np.random.default_rng(seed).permutation(len(vectors))[:docs]
    stats = part_spreads(vectors[pick], graph_dim, lexical_weight=0.5)
    sd_g, sd_l = stats["graph_std"], stats["lexical_std"]
    if sd_g + sd_l <= 0:
        raise ValueError("both parts' cosines are constant: no mix balances them")
    return sd_g / (sd_g + sd_l), sd_g, sd_l


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("vectors", help="vectors.parquet of `graphtx encode`")
    p.add_argument("model", help="the model directory that wrote them (its lexical_dim and lexical_weight)")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--weight", type=float, help="the new lexical weight b, in (0, 1)")
    how.add_argument("--equal-mix", action="store_true", help="b from the file's own cosine spreads")
    p.add_argument("--docs", type=int, default=400, help="vectors drawn for --equal-mix (default: 400)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="vectors.parquet to write")
    args = p.parse_args(argv)
    import pyarrow as pa
    import pyarrow.parquet as pq

    from graphtx.atomic import replacing
    from graphtx.model.embed import table_vectors
    from graphtx.model.io import load_model

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # machine.py: in benchmarks/, above studies/
    from machine import basics

    print(f"machine: {basics()}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    config = load_model(args.model).model.config
    if not config.lexical_dim:
        raise SystemExit(f"{args.model} has no lexical channel: nothing to re-mix")
    table = pq.read_table(args.vectors)
    ids, vectors, meta = table_vectors(table)
    check_written_by(meta, args.model, args.vectors)
    if vectors.shape[1] != config.out_dim + config.lexical_dim:
        raise SystemExit(
            f"{args.vectors} holds {vectors.shape[1]}-d vectors, {args.model} writes {config.out_dim + config.lexical_dim}-d"
        )
    weight = args.weight
    if args.equal_mix:
        weight, sd_g, sd_l = equal_mix_weight(vectors, config.out_dim, args.docs, args.seed)
        print(
            f"spreads over {min(args.docs, len(ids))} vectors: graph {sd_g:.4f}, lexical {sd_l:.4f} -> equal-mix weight {weight:.3f}"
        )
    out = join_parts(*split_parts(vectors, config.out_dim, config.lexical_weight), weight)  # (n, D + L)
    vector = pa.FixedSizeListArray.from_arrays(pa.array(out.reshape(-1), pa.float32()), out.shape[1])
    table = table.set_column(table.schema.get_field_index("vector"), table.schema.field("vector"), vector)
    metadata = dict(table.schema.metadata or {})
    # no longer the model's own vectors: the fingerprint says so (an index built from them matches no model)
    metadata[b"model_fingerprint"] = metadata.get(b"model_fingerprint", b"") + f"+lexical_weight={weight:.6g}".encode()
    with replacing(Path(args.out)) as tmp:
        pq.write_table(table.replace_schema_metadata(metadata), tmp, compression="zstd")
    print(f"wrote {args.out}: {len(ids)} vectors re-mixed from weight {config.lexical_weight:g} to {weight:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
