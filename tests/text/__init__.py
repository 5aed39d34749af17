"""Tests of graphtx.text, and the seeded synthetic patent text they share."""

from __future__ import annotations

import random

# Three technical fields; a sentence draws its nouns from one field only, so words of one
# field co-occur ("battery" with "cell") and words of different fields never do ("auger").
FIELDS = {
    "battery": [
        "battery",
        "cell",
        "electrode",
        "electrolyte",
        "separator",
        "anode",
        "cathode",
        "busbar",
        "module",
        "pack",
    ],
    "snow": ["auger", "chute", "snowthrower", "impeller", "scraper", "engine", "handle", "deflector", "track", "blade"],
    "valve": ["valve", "seat", "stem", "spring", "actuator", "bore", "piston", "diaphragm", "inlet", "outlet"],
}
CLAIM_WORDS = ["comprising", "wherein", "the", "a", "said", "having", "configured", "to", "and", "of"]


def patent_sentence(rng: random.Random, field: str | None = None) -> str:
    nouns = FIELDS[field or rng.choice(sorted(FIELDS))]
    words = [w for _ in range(6) for w in (rng.choice(nouns), rng.choice(CLAIM_WORDS))]
    return f"A {rng.choice(nouns)} {' '.join(words)}."


def patent_sentences(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [patent_sentence(rng) for _ in range(n)]
