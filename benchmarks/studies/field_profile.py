"""Which field is an index of? The term-profile cosine of graphtx.text.field between corpora of the sets here.

    python benchmarks/studies/field_profile.py --data ../shared/data

search's ``auto`` ranks with ``learned-lexical`` when an index's documents are below ``search.same_field`` (0.85) to
the corpus its ranker was fitted on. This prints what the cosine is within a field and between fields, with the
product's own profile (graphtx.text.field.FieldProfile over graphtx.text.bm25.Bm25, stemmed, stop words out):

- random samples of a corpus against the other half of it, at 10-1,000 documents (20 draws each: min and mean);
- the same field years apart (EV abstracts 2005 and before against 2009-2010; software full texts' abstracts before
  2010 against 2012 and after);
- CPC subclasses of the 10,000 random US abstracts against each other and against EV and the software texts;
- abstracts against full texts of the same field.

The machine, the load and the seconds are printed with the tables (light: 13 s of CPU; 143 s beside a parse).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from machine import basics  # noqa: E402

from graphtx.text.bm25 import Bm25, LexicalTokens  # noqa: E402
from graphtx.text.field import FieldProfile  # noqa: E402

SUBCLASSES = ("G06F", "H04L", "H01L", "A61K", "A61B", "H01M")


def profile_of(texts: list[str]) -> FieldProfile:
    return FieldProfile.from_bm25s(Bm25.build(texts).retriever)


def profile_of_tokens(token_lists: list[list[str]]) -> FieldProfile:
    return FieldProfile.from_bm25s(Bm25.build(tokens=LexicalTokens(), token_lists=token_lists).retriever)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="../shared/data", help="the shared data folder")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    try:
        import pandas as pd
    except ImportError:
        p.error("this study reads its samples with pandas, which graphtx does not install: pip install pandas")

    t0 = time.time()
    data = Path(args.data)
    rng = np.random.default_rng(args.seed)
    ev = [json.loads(line) for line in (data / "citations-ev-battery" / "docs.jsonl").open()]
    ft = pd.read_parquet(data / "uspto-fulltext-software" / "descriptions.parquet").sample(4000, random_state=args.seed)
    cpc = pd.read_parquet(data / "uspto-abstracts-cpc" / "uspto_random_10000.parquet")
    cpc_col = next(c for c in cpc.columns if "cpc" in c.lower())
    cpc["subclass"] = cpc[cpc_col].map(lambda v: (v if isinstance(v, str) else (list(v)[0] if len(v) else ""))[:4])
    ft_abstracts = (ft.title + " " + ft.abstract).tolist()
    ev_abstracts = [d["abstract"] for d in ev]
    print(f"machine: {basics()}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    print("\n## random samples against the other half of their corpus (20 draws: min / mean)\n")
    print("| corpus | documents | same corpus | the other corpus (mean / max) |\n|---|---|---|---|")
    tokens = LexicalTokens()
    for name, docs, other in (
        ("EV abstracts", ev_abstracts, ft_abstracts),
        ("software abstracts", ft_abstracts, ev_abstracts),
    ):
        toks, other_toks = tokens(docs), tokens(other)
        perm = rng.permutation(len(toks))
        half = profile_of_tokens([toks[i] for i in perm[: len(toks) // 2]])
        rest = [toks[i] for i in perm[len(toks) // 2 :]]
        for n in (10, 30, 100, 300, 1000):
            draw = lambda pool: profile_of_tokens([pool[i] for i in rng.choice(len(pool), n, replace=False)])  # noqa: E731
            same = [half.similarity(draw(rest)) for _ in range(20)]
            diff = [half.similarity(draw(other_toks)) for _ in range(20)]
            print(f"| {name} | {n:,} | {min(same):.3f} / {np.mean(same):.3f} | {np.mean(diff):.3f} / {max(diff):.3f} |")

    sets = {
        "EV <= 2005": [d["abstract"] for d in ev if d["year"] <= 2005],
        "EV 2009-2010": [d["abstract"] for d in ev if d["year"] >= 2009],
        "software < 2010": (ft[ft.date < "2010"].title + " " + ft[ft.date < "2010"].abstract).tolist(),
        "software >= 2012": (ft[ft.date >= "2012"].title + " " + ft[ft.date >= "2012"].abstract).tolist(),
        **{f"CPC {s}": cpc[cpc.subclass == s].abstract.tolist() for s in SUBCLASSES},
        "CPC random": cpc.sample(1000, random_state=args.seed).abstract.tolist(),
        "software full texts": (ft.title + " " + ft.abstract + " " + ft.description).tolist()[2000:],
    }
    profiles = {name: profile_of(texts) for name, texts in sets.items()}
    print("\n## corpora against each other (documents in brackets)\n")
    print("| a | b | cosine |\n|---|---|---|")
    for a, b in itertools.combinations(sets, 2):
        print(f"| {a} ({len(sets[a]):,}) | {b} ({len(sets[b]):,}) | {profiles[a].similarity(profiles[b]):.3f} |")
    print(f"\n{time.time() - t0:.0f} s; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
