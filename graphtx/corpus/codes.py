"""Patent numbers and classification codes: one spelling for each publication and each code.

Ids
---
Documents from patent XML get ids of the form ``CC-NUMBER-KIND``
(``US-7315346-B2``, ``EP-1000000-B1``), the "ucid" convention of MAREC and
CLEF-IP (:func:`make_id`; :func:`publication_id` brings office-specific number forms to it).
Cited documents are written the same way. Because citations often
name another publication of the same patent (``A1`` cites, ``B1`` is in the
corpus), :func:`id_key` drops the kind code so later stages can match
``US-6915749-B2`` with ``US-6915749-A``. Ids from JSONL/Parquet/TSV inputs are
kept as given (they are opaque strings such as ``2004281796``). Ids as people type them
are matched in :mod:`graphtx.corpus.ids`.

Classification codes
--------------------
IPC and CPC symbols are brought to ``"H01F 27/14"`` by one normaliser; CPC also has
section Y (``"Y02T 10/70"``), which IPC lacks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# --- ids -------------------------------------------------------------------------

_UCID = re.compile(r"^([A-Z]{2})-([A-Z0-9]+)(?:-([A-Z][0-9]?))?$")


def make_id(country: str, number: str, kind: str = "") -> str:
    """``make_id("US", "07315346", "B2") -> "US-7315346-B2"``.

    Spaces are removed and purely numeric numbers lose leading zeros, so the
    same patent written two ways gets one id.
    """
    country = country.strip().upper()
    number = re.sub(r"[\s/,.-]", "", number.strip().upper())
    if number.isdigit():
        number = number.lstrip("0") or "0"
    kind = kind.strip().upper()
    return f"{country}-{number}-{kind}" if kind else f"{country}-{number}"


def country_of(doc_id: str) -> str:
    """The office of a ``CC-NUMBER-KIND`` id (``"US-7315346-B2" -> "US"``); "" for other ids."""
    m = _UCID.match(doc_id)
    return m.group(1) if m else ""


def kind_of(doc_id: str) -> str:
    """The kind code of a ``CC-NUMBER-KIND`` id (``"US-7315346-B2" -> "B2"``); "" for other ids."""
    m = _UCID.match(doc_id)
    return (m.group(3) or "") if m else ""


def id_key(doc_id: str) -> str:
    """Id without the kind code, for matching publications of one patent."""
    m = _UCID.match(doc_id)
    return f"{m.group(1)}-{m.group(2)}" if m else doc_id


_US_LETTER_NUMBER = re.compile(r"^(D|RE|PP|H|T)0*(\d+)$")  # design, reissue, plant, SIR, defensive


def publication_id(country: str, number: str, kind: str = "") -> str:
    """:func:`make_id` after bringing ``number`` to the MAREC/CLEF-IP ucid convention.

    So that one publication written by different offices gets one id:
    ``("WO", "03/008444") -> "WO-2003008444"`` (year + 6-digit serial),
    ``("US", "2008 197 955", "A1") -> "US-20080197955-A1"`` (EPO drops the serial's zero),
    ``("US", "D0607542", "S1") -> "US-D607542-S1"``, ``("WO", "WO 98/51827")`` -> the country
    prefix is dropped.
    """
    country = country.strip().upper()
    number = re.sub(r"\s+", "", number.upper())
    number = re.sub(rf"^{re.escape(country)}-?(?=\d)", "", number) if country else number
    if country == "WO":
        number = _wo_number(number)
    elif country == "US":
        if m := _US_LETTER_NUMBER.match(number):
            number = m.group(1) + m.group(2)
        elif len(number) == 10 and number.isdigit() and number[:2] in ("19", "20"):
            number = f"{number[:4]}0{number[4:]}"
    return make_id(country, number, kind)


def _wo_number(number: str) -> str:
    """``"95/34526" -> "1995034526"``, ``"9106571" -> "1991006571"``; anything else unchanged."""
    if m := re.fullmatch(r"(\d{2}|\d{4})/(\d{1,6})", number):
        year, serial = m.groups()
    elif number.isdigit() and len(number) in (7, 8):  # YY + 5-digit (to 2001) or 6-digit serial
        year, serial = number[:2], number[2:]
    else:
        return number
    if len(year) == 2:
        year = ("19" if year >= "78" else "20") + year  # PCT publications began in 1978
    return f"{year}{int(serial):06d}"


# --- classification codes --------------------------------------------------------

_CODE = re.compile(r"^\s*([A-HY])\s*(\d{2})\s*([A-Z])\s*(\d{1,4})\s*/\s*(\d{1,6})")
IPC_SECTIONS, CPC_SECTIONS = "ABCDEFGH", "ABCDEFGHY"


def normalise_code(code: str, sections: str) -> str | None:
    """``"H01F  27/14  20060101AFI..." -> "H01F 27/14"`` (group without leading zeros); None when
    ``code`` does not start with a classification symbol of one of ``sections``."""
    m = _CODE.match(code.upper())
    if not m or m.group(1) not in sections:
        return None
    section, cls, sub, group, subgroup = m.groups()
    return f"{section}{cls}{sub} {int(group)}/{subgroup}"


def normalise_ipc(code: str) -> str | None:
    """``"H01F  27/14  20060101AFI..." -> "H01F 27/14"``; None if not an IPC symbol (sections A-H)."""
    return normalise_code(code, IPC_SECTIONS)


def normalise_cpc(code: str) -> str | None:
    """Like :func:`normalise_ipc`, but also accepts CPC section Y (``"Y02T10/70" -> "Y02T 10/70"``)."""
    return normalise_code(code, CPC_SECTIONS)


def unique_codes(codes: Iterable[str | None]) -> tuple[str, ...]:
    """Normalised classification codes in first-seen order, each once, Nones dropped."""
    return tuple(dict.fromkeys(c for c in codes if c))
