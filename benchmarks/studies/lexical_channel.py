"""Add the lexical channel (graphtx/model/lexical.py) to a trained model directory, without retraining.

The channel has no trained weights (a count sketch of IDF-weighted tokens), so the effect of adding it to
an existing model can be measured on exactly that model: benchmarks/results/lexical-channel-rankers.md, "Lexical channel".

    python benchmarks/studies/lexical_channel.py --model RUN/model --tokens TOKENS --out MODEL_WITH_CHANNEL [--dim 1024 --weight 0.4]
"""

from __future__ import annotations

import argparse

from graphtx.model.io import load_model, save_model
from graphtx.text.pretrain import load_token_idf


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="trained model directory")
    p.add_argument(
        "--tokens", required=True, help="the tokens directory the model was initialised from (its token_idf.npy)"
    )
    p.add_argument("--out", required=True, help="model directory to write")
    p.add_argument("--dim", type=int, default=1024, help="count-sketch buckets (model.lexical_dim)")
    p.add_argument("--weight", type=float, default=0.4, help="the channel's share of the cosine (model.lexical_weight)")
    args = p.parse_args()
    src = load_model(args.model)
    model = src.model.with_lexical_channel(args.dim, args.weight, load_token_idf(args.tokens))
    save_model(args.out, model, tokenizer=src.tokenizer)
    print(
        f"wrote {args.out}: {model.out_dim}-d vectors ({model.config.out_dim} graph + {args.dim} lexical, weight {args.weight:g})"
    )


if __name__ == "__main__":
    main()
