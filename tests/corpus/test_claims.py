"""Claim splitting and claim references, as readers and query parsing use them."""

from graphtx.corpus.claims import claim_number, claim_references, make_claims, split_claims, strip_own_number
from graphtx.corpus.schema import Claim

TEXT = (
    "What is claimed is: 1. A snowthrower comprising a chute. 2. The snowthrower of claim 1, wherein the chute is heated to 2 mm. "
    "3. The snowthrower of any preceding claim. 4) A method of clearing snow, using the snowthrower according to claims 1 to 3."
)


def test_split_and_make_claims():
    assert split_claims(TEXT) == [
        (1, "A snowthrower comprising a chute."),
        (2, "The snowthrower of claim 1, wherein the chute is heated to 2 mm."),  # "2 mm" does not cut
        (3, "The snowthrower of any preceding claim."),
        (4, "A method of clearing snow, using the snowthrower according to claims 1 to 3."),
    ]
    assert make_claims(split_claims(TEXT)) == (
        Claim(1, "A snowthrower comprising a chute.", True, ()),
        Claim(2, "The snowthrower of claim 1, wherein the chute is heated to 2 mm.", False, (1,)),
        Claim(3, "The snowthrower of any preceding claim.", False, (1, 2)),
        Claim(4, "A method of clearing snow, using the snowthrower according to claims 1 to 3.", False, (1, 2, 3)),
    )
    assert split_claims("a paragraph without numbering") == [(1, "a paragraph without numbering")]


def test_references_and_numbers():
    assert claim_references("The method of any one of claims 1 to 3 or 5", 7) == (1, 2, 3, 5)
    assert claim_references("according to the first or second claim", 4) == (1, 2)
    assert claim_references("as claimed in claim I", 3) == (1,)
    assert (claim_number("00003", 9), claim_number("x", 9), claim_number(None, 2)) == (3, 9, 2)
    assert (strip_own_number("3. 2.5-dimethyl", 3), strip_own_number("2. A", 3)) == ("2.5-dimethyl", "2. A")
