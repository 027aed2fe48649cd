"""The language of a document's text layer, with lingua (accurate on short text; its models ship in
the wheel, so nothing is fetched at run time).

A text whose most likely language has a confidence below `MIN_CONFIDENCE` (numbers and codes, a
sentence that several languages share) is `unknown`, and so is a page without text: guessing would
put a document in a slice it does not belong to.
"""

from __future__ import annotations

import functools
from typing import Any

UNKNOWN = "unknown"
MIN_CONFIDENCE = 0.4
"""lingua's relative confidence of the best language over all 75 it knows (0 to 1)."""
MAX_CHARS = 4000
"""Only the first characters are read: more does not change the answer, and each costs time."""


@functools.cache
def _detector() -> Any:
    """lingua's detector over every language it knows, built once (its models load lazily)."""
    from lingua import LanguageDetectorBuilder  # the import costs a few tens of ms: only when a trait needs it

    return LanguageDetectorBuilder.from_all_languages().build()


def language(text: str) -> str:
    """The ISO 639-1 code of the text's language (`de`, `en`), or `unknown`."""
    text = " ".join(text[:MAX_CHARS].split())
    if not any(char.isalpha() for char in text):
        return UNKNOWN
    values = _detector().compute_language_confidence_values(text)
    if not values or values[0].value < MIN_CONFIDENCE:
        return UNKNOWN
    return str(values[0].language.iso_code_639_1.name.lower())


def known_languages() -> frozenset[str]:
    """Every code `language` can answer, `unknown` included (a mix may name only these)."""
    from lingua import Language

    return frozenset({UNKNOWN, *(lang.iso_code_639_1.name.lower() for lang in Language.all())})
