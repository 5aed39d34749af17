"""From one spaCy ``Doc`` to typed relations between normalised features.

The method, rule by rule (rules live in ``rules/relations.yaml``):

1. **Features** are spaCy noun chunks, normalised: leading determiners and
   quantifiers dropped ("said motor" → "motor"), ordinals and reference numerals
   dropped, plural head lemmatised, lower-cased, at most ``max_feature_words``.
2. **Triggers** are Matcher hits of the relation rules (longest wins on overlap).
3. The text is cut into **segments** at ``;`` ``:`` sentence ends and ``clause``
   triggers (wherein, whereby). A segment's first feature is its *head*.
4. Each trigger owns the features between it and the next trigger of its segment
   (its *region*); its *subject* is the nearest feature before it.
   ``part_of`` / ``example_of``: listed features of the region ("a, b and c")
   become parts / examples of the subject. ``functional``: the snippet from the
   subject to the region's end becomes a relation node, subject → node → each
   feature of the region.
5. A ``part_of`` trigger that ends its segment with ``;`` or ``:`` ("A snowthrower
   comprising:") opens a list: the heads of the following segments become its parts.
6. **Clause link** fallback: features of a segment that no rule linked are joined to
   the segment's head by a functional relation node made of the words between them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from graphtx.graphs.rules import RuleSet

_REF_LABEL = re.compile(r"^[A-Za-z]{0,2}\d+[A-Za-z'’]*$")
_LIST_SEPARATORS = {",", "and", "or", "and/or", ";", "as", "well"}
_SEGMENT_BREAKS = {";", ":"}
# Words allowed between a comma-set feature and the next trigger when that feature is
# the next trigger's subject ("..., the chute being configured to ...").
_SUBJECT_GAP_WORDS = {
    "is",
    "are",
    "being",
    "been",
    "be",
    "which",
    "that",
    "also",
    "further",
    "then",
    "each",
    "both",
    "and",
}


@dataclass(frozen=True)
class Mention:
    start: int  # first token of the normalised phrase
    end: int  # one past its last token
    text: str  # normalised feature text


@dataclass(frozen=True)
class Trigger:
    start: int
    end: int
    rule: str
    type: str  # part_of | example_of | functional | clause


@dataclass
class Extraction:
    """What one text contributes to a graph; positions are token indices in its Doc."""

    mentions: list[Mention] = field(default_factory=list)
    part_of: list[tuple[str, str]] = field(default_factory=list)  # (part, whole)
    example_of: list[tuple[str, str]] = field(default_factory=list)  # (example, general)
    relations: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)  # (snippet, subject, objects)
    rule_hits: dict[str, int] = field(default_factory=dict)


# --- features --------------------------------------------------------------------


def normalise_chunk(tokens, rules: RuleSet) -> tuple[int, int, str] | None:
    """Normalise the tokens of one noun chunk; ``(start, end, text)`` or None if not a feature."""
    norm = rules.normalisation
    kept = [
        t
        for t in tokens
        if not (
            t.like_num or _REF_LABEL.match(t.text) or t.lower_ in norm.ordinal_words or (t.is_punct and t.text != "-")
        )
    ]
    while kept and (
        kept[0].lower_ in norm.leading_words
        or kept[0].pos_ in ("DET", "PRON", "ADP", "CCONJ", "PART")
        or kept[0].text == "-"
    ):
        kept.pop(0)
    while kept and kept[-1].text == "-":
        kept.pop()
    if not kept or kept[-1].pos_ == "PRON":
        return None
    kept = kept[-norm.max_feature_words :]
    words = []
    for i, t in enumerate(kept):
        word = t.lemma_ if (i == len(kept) - 1 and t.tag_ in ("NNS", "NNPS")) else t.text
        words.append(word.lower() + (t.whitespace_ and " "))
    text = re.sub(r"\s+", " ", "".join(words)).strip()
    text = re.sub(r"\s*-\s*", "-", text)
    if len(text) < 2 or not re.search(r"[a-z]{2}", text) or text in norm.stop_features:
        return None
    return kept[0].i, kept[-1].i + 1, text


def _noun_runs(doc, covered: set[int], trigger_tokens: frozenset[int]):
    """Nouns the parser left outside every noun chunk ("the method comprising" parsed as a compound)."""
    i = 0
    while i < len(doc):
        t = doc[i]
        if t.pos_ in ("NOUN", "PROPN") and i not in covered and i not in trigger_tokens:
            start = i
            while (
                start > 0
                and start - 1 not in covered
                and start - 1 not in trigger_tokens
                and doc[start - 1].pos_ in ("ADJ", "NOUN", "PROPN", "DET")
            ):
                start -= 1
            end = i + 1
            while (
                end < len(doc)
                and end not in covered
                and end not in trigger_tokens
                and doc[end].pos_ in ("NOUN", "PROPN")
            ):
                end += 1
            yield list(doc[start:end])
            i = end
        else:
            i += 1


def find_mentions(doc, rules: RuleSet, trigger_tokens: frozenset[int] = frozenset()) -> list[Mention]:
    """Features of a Doc: noun chunks, plus nouns the parser left outside any chunk.

    A chunk that swallowed a trigger word keeps the tokens before it.
    """
    spans, covered = [], set()
    for chunk in doc.noun_chunks:
        tokens = list(chunk)
        cut = next((k for k, t in enumerate(tokens) if t.i in trigger_tokens), None)
        if cut is not None:
            tokens = tokens[:cut] if cut > 0 else [t for t in tokens if t.i not in trigger_tokens]
        spans.append(tokens)
        covered.update(t.i for t in tokens)
    spans.extend(_noun_runs(doc, covered, trigger_tokens))
    mentions = [Mention(*found) for found in (normalise_chunk(tokens, rules) for tokens in spans) if found]
    return sorted(mentions, key=lambda m: m.start)


# --- triggers --------------------------------------------------------------------


def find_triggers(doc, matcher, rules: RuleSet) -> list[Trigger]:
    types = {r.name: (i, r.type) for i, r in enumerate(rules.relations)}
    hits = []
    for match_id, start, end in matcher(doc):
        name = doc.vocab.strings[match_id]
        order, kind = types[name]
        hits.append((start, end, order, name, kind))
    # longest first, then earlier rule; greedy non-overlapping selection
    hits.sort(key=lambda h: (-(h[1] - h[0]), h[2], h[0]))
    taken: set[int] = set()
    chosen = []
    for start, end, _, name, kind in hits:
        if taken.isdisjoint(range(start, end)):
            taken.update(range(start, end))
            chosen.append(Trigger(start, end, name, kind))
    return sorted(chosen, key=lambda t: t.start)


# --- segments --------------------------------------------------------------------


@dataclass
class _Segment:
    start: int
    end: int
    opened_by_clause: bool  # begins with wherein / whereby
    break_token: str  # ";" ":" or "" (sentence end / clause start / text end)


def split_segments(doc, triggers: list[Trigger]) -> list[_Segment]:
    clause_starts = {t.start: t.end for t in triggers if t.type == "clause"}
    sentence_starts = {s.start for s in doc.sents} - {0}
    segments: list[_Segment] = []
    start, opened = 0, False
    i = 0
    while i < len(doc):
        text = doc[i].text
        if text in _SEGMENT_BREAKS:
            segments.append(_Segment(start, i, opened, text))
            start, opened, i = i + 1, False, i + 1
        elif i in clause_starts:
            segments.append(_Segment(start, i, opened, ""))
            start, opened, i = clause_starts[i], True, clause_starts[i]
        elif i in sentence_starts and i > start:
            segments.append(_Segment(start, i, opened, ""))
            start, opened, i = i, False, i + 1
        else:
            i += 1
    segments.append(_Segment(start, len(doc), opened, ""))
    return [s for s in segments if s.end > s.start]


# --- snippets --------------------------------------------------------------------


def snippet_text(doc, start: int, end: int, rules: RuleSet, max_tokens: int) -> str:
    """Lower-cased words of ``doc[start:end]`` without determiners, "said", ordinals, numerals and punctuation."""
    norm = rules.normalisation
    words = []
    for t in doc[start:end]:
        if t.pos_ == "DET" or t.lower_ in ("said",) or t.lower_ in norm.ordinal_words:
            continue
        if t.like_num or _REF_LABEL.match(t.text) or (t.is_punct and t.text not in "-/"):
            continue
        words.append(t.lower_)
    while words and words[-1] in ("and", "or", ",", "-", "/"):
        words.pop()
    return " ".join(words[:max_tokens]).replace(" - ", "-")


def _is_list_item(doc, mention: Mention, region_start: int) -> bool:
    """True when the mention starts a region or follows a list separator ("a, b and c")."""
    j = mention.start - 1
    while j >= region_start and (doc[j].pos_ in ("DET", "ADJ", "NUM") or doc[j].lower_ in ("said", "also")):
        j -= 1
    return j < region_start or doc[j].lower_ in _LIST_SEPARATORS


def _is_next_subject(doc, mention: Mention, next_trigger: Trigger) -> bool:
    """A comma-set feature right before the next trigger is that trigger's subject, not an object."""
    gap = doc[mention.end : next_trigger.start]
    j = mention.start - 1
    while j >= 0 and doc[j].pos_ == "DET":
        j -= 1
    before = doc[j] if j >= 0 else None
    return (
        before is not None
        and before.text == ","
        and all(t.lower_ in _SUBJECT_GAP_WORDS or t.pos_ in ("ADV", "AUX") for t in gap)
    )


# --- extraction ------------------------------------------------------------------


def extract(doc, matcher, rules: RuleSet, max_snippet_tokens: int = 16) -> Extraction:
    triggers = find_triggers(doc, matcher, rules)
    trigger_tokens = frozenset(i for t in triggers for i in range(t.start, t.end))
    mentions = find_mentions(doc, rules, trigger_tokens)
    out = Extraction(mentions=mentions)
    for t in triggers:
        out.rule_hits[t.rule] = out.rule_hits.get(t.rule, 0) + 1

    sentence_of = {}
    for k, sent in enumerate(doc.sents):
        for i in range(sent.start, sent.end):
            sentence_of[i] = k

    open_whole: Mention | None = None  # set by "X comprising:" — following heads are its parts
    open_sentence = -1
    for seg in split_segments(doc, triggers):
        seg_mentions = [m for m in mentions if seg.start <= m.start and m.end <= seg.end]
        seg_triggers = [t for t in triggers if seg.start <= t.start < seg.end and t.type != "clause"]
        head = seg_mentions[0] if seg_mentions else None
        linked: set[Mention] = set()
        object_of: dict[Mention, Mention] = {}  # feature -> subject of the functional relation it is an object of
        if open_whole is not None and sentence_of.get(seg.start, -2) != open_sentence:
            open_whole = None
        if head is not None and open_whole is not None and not seg.opened_by_clause and head.text != open_whole.text:
            if not seg_triggers or head.end <= seg_triggers[0].start:
                out.part_of.append((head.text, open_whole.text))
                linked.add(head)

        for k, trig in enumerate(seg_triggers):
            nxt = seg_triggers[k + 1] if k + 1 < len(seg_triggers) else None
            region_end = nxt.start if nxt else seg.end
            owned = [m for m in seg_mentions if trig.end <= m.start and m.end <= region_end]
            if trig.type == "functional" and nxt is not None and owned and _is_next_subject(doc, owned[-1], nxt):
                region_end = owned[-1].start
                owned.pop()
            before = [m for m in seg_mentions if m.end <= trig.start]
            subject = before[-1] if before else None
            if subject is None:
                continue
            if trig.type == "part_of":
                # "A device for a wheel comprising": the whole is the device, not the object of "for"
                subject = _climb_prepositions(doc, object_of.get(subject, subject), seg_mentions)
            if trig.type == "functional" and not owned and nxt is not None and nxt.type == "functional":
                continue  # "adapted to be located inside X": one relation, made by the next trigger
            if trig.type in ("part_of", "example_of"):
                _link_list(doc, trig, subject, owned, out, rules, max_snippet_tokens)
                linked.update(owned)
                linked.add(subject)
                if not owned and nxt is None and seg.break_token in _SEGMENT_BREAKS and trig.type == "part_of":
                    open_whole, open_sentence = subject, sentence_of.get(trig.start, -1)
            elif _link_functional(doc, trig, subject, owned, region_end, out, rules, max_snippet_tokens):
                linked.add(subject)
                linked.update(owned)
                object_of.update((m, subject) for m in owned)

        orphans = [
            m for m in seg_mentions if m not in linked and head is not None and m is not head and m.text != head.text
        ]
        if head is not None and head not in linked and not orphans:
            # the head itself is unlinked ("the channel is filled with a coolant such as ..."): join it to the
            # next feature of its segment
            orphans = [m for m in seg_mentions if m.start > head.start and m.text != head.text][:1]
        if orphans:
            snippet = snippet_text(doc, head.start, orphans[-1].end, rules, max_snippet_tokens)
            out.relations.append((snippet, head.text, tuple(dict.fromkeys(m.text for m in orphans))))
            out.rule_hits["clause_link"] = out.rule_hits.get("clause_link", 0) + 1
    return out


def _link_list(
    doc, trig: Trigger, subject: Mention, owned: list[Mention], out: Extraction, rules: RuleSet, max_tokens: int
) -> None:
    """part_of / example_of: listed features become parts / examples of the subject."""
    pairs = out.part_of if trig.type == "part_of" else out.example_of
    groups: list[tuple[Mention, list[Mention]]] = []  # list item, features hanging off it
    for m in owned:
        if not groups or _is_list_item(doc, m, trig.end):
            groups.append((m, []))
        else:  # "a cover of the compartment": attach to the list item before it
            groups[-1][1].append(m)
    for item, attached in groups:
        if item.text != subject.text:
            pairs.append((item.text, subject.text))
        if attached:
            snippet = snippet_text(doc, item.start, attached[-1].end, rules, max_tokens)
            out.relations.append((snippet, item.text, tuple(dict.fromkeys(a.text for a in attached))))


def _link_functional(
    doc,
    trig: Trigger,
    subject: Mention,
    owned: list[Mention],
    region_end: int,
    out: Extraction,
    rules: RuleSet,
    max_tokens: int,
) -> bool:
    """functional: the snippet from the subject to the region's end becomes a relation node."""
    end = max([m.end for m in owned] + [trig.end, _trim_end(doc, trig.end, region_end)])
    snippet = snippet_text(doc, subject.start, end, rules, max_tokens)
    if not snippet or snippet == subject.text:
        return False
    out.relations.append((snippet, subject.text, tuple(m.text for m in owned if m.text != subject.text)))
    return True


def _climb_prepositions(doc, mention: Mention, candidates: list[Mention]) -> Mention:
    """From the object of a preposition to the feature the phrase hangs off ("device for a wheel" -> device)."""
    by_end = {m.end: m for m in candidates}
    while True:
        j = mention.start - 1
        while j >= 0 and doc[j].pos_ == "DET":
            j -= 1
        if j < 1 or doc[j].pos_ != "ADP" or j not in by_end:
            return mention
        mention = by_end[j]


def _trim_end(doc, start: int, end: int) -> int:
    """End of a region without trailing punctuation and conjunctions."""
    while end > start and (doc[end - 1].is_punct or doc[end - 1].lower_ in ("and", "or", "the", "a", "an")):
        end -= 1
    return end
