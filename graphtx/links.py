"""A link for each hit, built from a template (``search.link_template``, ``--link-template``).

Placeholders (each value URL-quoted; a template naming one the hit lacks gives that hit no link):

===============  ======================================================================
``{id}``         the id as indexed: ``US-7315346-B2``
``{id_compact}`` the id without separators: ``US7315346B2`` (Google Patents' form)
``{country}``    the office: ``US`` (the corpus's country, else the id's first part)
``{number}``     the number: ``7315346`` (from a ``CC-NUMBER-KIND`` id)
``{kind}``       the kind code: ``B2`` (the corpus's kind, else the id's last part)
``{family_id}``  the family id, where the corpus has one
===============  ======================================================================

Examples::

    "https://patents.google.com/patent/{id_compact}"
    "https://register.epo.org/application?number={country}{number}"
    ""                                   # no links (the default)

    hit_link("https://patents.google.com/patent/{id_compact}", "US-7315346-B2")  # .../US7315346B2
"""

from __future__ import annotations

import re
import string
from urllib.parse import quote

PLACEHOLDERS = ("id", "id_compact", "country", "number", "kind", "family_id")
_UCID = re.compile(r"^([A-Z]{2})-([A-Z0-9]+)(?:-([A-Z][0-9]?))?$")


def check_template(template: str, where: str = "search.link_template") -> None:
    """ValueError naming the placeholder when ``template`` uses one not in PLACEHOLDERS, or is not a format string."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as err:
        raise ValueError(
            f"{where} {template!r} is not a link template ({err}); write placeholders as {{id}}, and a brace as {{{{ or }}}}"
        ) from None
    for _, name, spec, conversion in fields:
        if name is None:
            continue
        if name not in PLACEHOLDERS or spec or conversion:
            raise ValueError(
                f"{where} {template!r}: unknown placeholder {{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}; "
                f"known: {', '.join('{' + p + '}' for p in PLACEHOLDERS)}"
            )


def id_parts(doc_id: str, country: str = "", kind: str = "", family_id: str = "") -> dict[str, str]:
    """Placeholder values of a document (empty where unknown)."""
    m = _UCID.match(doc_id)
    return {
        "id": doc_id,
        "id_compact": re.sub(r"[\s\-/,.]", "", doc_id),
        "country": country or (m.group(1) if m else ""),
        "number": m.group(2) if m else "",
        "kind": kind or (m.group(3) or "" if m else ""),
        "family_id": family_id,
    }


def hit_link(template: str, doc_id: str, *, country: str = "", kind: str = "", family_id: str = "") -> str:
    """The link of one document ("" without a template, or when a placeholder it names is unknown for it)."""
    if not template:
        return ""
    values = id_parts(doc_id, country, kind, family_id)
    used = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    if any(not values.get(name) for name in used):
        return ""
    return template.format(**{k: quote(v, safe="") for k, v in values.items()})
