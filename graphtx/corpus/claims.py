"""Claims: splitting a claims text into numbered claims, and reading which claims each refers to.

Readers whose input has no claim markup (a text blob, MAREC's plain claims, JSON lines) and query
parsing (``graphtx.index.query``: a pasted claim set -> its first independent claim) split with
the same rules, so a query is cut the way the documents it is matched against were.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from graphtx.corpus.base import clean_text
from graphtx.corpus.schema import Claim

_CLAIM_NUMBER_PREFIX = re.compile(r"^\s*\d{1,3}\s*[.)]\s*")


def strip_claim_number(text: str) -> str:
    """``"1. A method ..." -> "A method ..."``."""
    return _CLAIM_NUMBER_PREFIX.sub("", text, count=1)


_CLAIM_WORD = r"(?:claims?|(?:patent)?anspr(?:uch|uchs|üche|üchen)|revendications?)"
_NUMBER_LIST = r"\d{1,3}(?:\s*(?:,|-|–|to|through|bis|à|and|or|und|oder|et|ou)\s*\d{1,3})*"
_CLAIM_REF = re.compile(rf"\b{_CLAIM_WORD}\s+(?:nos?\.?\s*)?({_NUMBER_LIST})", re.I)
_RANGE_WORDS = {"-", "–", "to", "through", "bis", "à"}
_PRECEDING = re.compile(
    r"\b(?:preceding|previous|foregoing|above|vorhergehenden|vorangehenden|vorgehenden|vorherigen|vorstehenden)\s+"
    + _CLAIM_WORD
    + r"|\brevendications?\s+précédentes?",
    re.I,
)
_ORDINALS = {
    word: n
    for n, word in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth"
        " fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split(),
        1,
    )
}
_ORDINAL = "(?:" + "|".join(_ORDINALS) + ")"
# "according to the first or second claim" (translations, mostly from Spanish)
_ORDINAL_REF = re.compile(rf"\bthe\s+({_ORDINAL}(?:\s*(?:,|or|and)\s*{_ORDINAL})*)\s+claims?\b", re.I)
_CLAIM_ONE_OCR = re.compile(r"\b((?i:claims?)\s+)[Il]\b")  # "as claimed in claim I" (OCR)
_MAX_RANGE = 500  # "claims 1 to 100000" in a garbled text must not allocate a huge tuple


def claim_references(text: str, num: int) -> tuple[int, ...]:
    """Numbers of the earlier claims that claim ``num`` refers to, sorted.

    ``"The method of any one of claims 1 to 3 or 5"`` -> ``(1, 2, 3, 5)``; "any preceding
    claim" refers to all claims before ``num``. English, German and French wording.
    """
    refs: set[int] = set()
    text = _CLAIM_ONE_OCR.sub(r"\g<1>1", text)
    for m in _CLAIM_REF.finditer(text):
        tokens = re.findall(r"\d+|[^\d\s,]+", m.group(1))
        prev, ranging = None, False
        for token in tokens:
            if token.isdigit():
                n = int(token)
                if ranging and prev is not None and 0 <= n - prev <= _MAX_RANGE:
                    refs.update(range(prev, n + 1))
                refs.add(n)
                prev, ranging = n, False
            else:
                ranging = token.lower() in _RANGE_WORDS
    for m in _ORDINAL_REF.finditer(text):
        refs.update(_ORDINALS[w.lower()] for w in re.findall(r"[a-z]+", m.group(1), re.I) if w.lower() in _ORDINALS)
    if _PRECEDING.search(text):
        refs.update(range(1, num))
    # a claim can only refer back; a larger number is a misread quantity ("and 90-0% by weight")
    return tuple(sorted(n for n in refs if 0 < n < num))


_OWN_NUMBER = re.compile(r"^\s*(\d{1,3})\s*[.)]{1,2}(?!\d)\s*")  # "3.", "3)", "3.)"


def strip_own_number(text: str, num: int) -> str:
    """Remove a leading ``"3."`` from claim 3's text, but not a ``"2."`` that starts a
    chemical name or any number other than the claim's own."""
    m = _OWN_NUMBER.match(text)
    return text[m.end() :] if m and int(m.group(1)) == num else text


_NUMBERED = re.compile(r"(?<![\w.,/-])(\d{1,3})\s?[.)]\s+(?=[\"'(\[]?([A-Z]\w*))")
_CLAIM_OPENERS = {"A", "An", "The"}


def split_claims(text: str) -> list[tuple[int, str]]:
    """Split a claims text blob into ``(number, text)``: ``"1. A ... 2. The ... of claim 1"``.

    Markers are read in order. The next number counts where it starts a line, follows
    the end of a sentence (``.;:``) or opens with "A"/"An"/"The"; a jump of one or two
    (a number lost in OCR) counts after a sentence end only. So "heated to 2 mm" never
    cuts. Text before claim 1 ("What is claimed is:") is dropped; without numbering the
    whole text is claim 1.
    """
    cuts: list[tuple[int, int, int]] = []  # (number, marker start, text start)
    for m in _NUMBERED.finditer(text):
        n, expected = int(m.group(1)), (cuts[-1][0] + 1 if cuts else 1)
        if not expected <= n <= expected + 2:
            continue
        before = text[max(0, m.start() - 40) : m.start()]
        stripped = before.rstrip()
        sentence_end = (
            m.start() < 40 and not stripped or stripped[-1:] in (".", ";", ":") or "\n" in before[len(stripped) :]
        )
        if sentence_end or (n == expected and m.group(2) in _CLAIM_OPENERS):
            cuts.append((n, m.start(), m.end()))
    if not cuts:
        body = clean_text(text)
        return [(1, body)] if body else []
    ends = [start for _, start, _ in cuts[1:]] + [len(text)]
    pieces = [(n, clean_text(text[begin:end])) for (n, _, begin), end in zip(cuts, ends)]
    return [(n, body) for n, body in pieces if body]


def make_claims(numbered: Iterable[tuple[int, str]]) -> tuple[Claim, ...]:
    """Claims from ``(number, text)`` pairs; dependency read from the wording (no markup)."""
    claims = []
    for num, text in numbered:
        text = strip_own_number(clean_text(text), num)
        if text:
            refs = claim_references(text, num)
            claims.append(Claim(num, text, not refs, refs))
    return tuple(claims)


MAX_CLAIM_NUMBER = (
    9_999  # no patent has that many claims: a larger "num" is damage (and "any preceding claim" would list them all)
)


def claim_number(value: object, default: int) -> int:
    """``"00003" -> 3``; ``default`` when the value is missing, not a number, or no claim's (0, over ``MAX_CLAIM_NUMBER``)."""
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):  # ValueError also for over 4,300 digits
        return default
    return n if 0 < n <= MAX_CLAIM_NUMBER else default
