"""A short reference answer's words found in a response, in code, for reference-grounded verdicts.

Given the reference "Ottawa", the embedded judge says the response "Canada's capital city is Ottawa, in the province
of Ontario." does not give the reference's answer (`matches_reference: "no"`, then a likert 1 of 5): a response with
more words than the reference reads to a 1.5B judge as another answer. When every word of a short reference that is
not a number (a name, a place, a term: "Ottawa", "Marie Curie", "carbon dioxide"; the question's own words aside)
stands in the response, the response does name it; the check says so, as `_numbers` does for a number. A person's
name counts as named by its last word ("Orwell" for "George Orwell"). The check speaks only then: a response that
names the answer otherwise ("CO2" for "carbon dioxide") or not at all is left to the judge, and so is one with a
negation ("not Ottawa but Toronto"), where naming is not giving.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A reference longer than this is a sentence, not a name or a term: the check leaves it to the judge.
REFERENCE_WORDS = 5
_WORD = re.compile(r"[^\W_]+")
_ARTICLES = frozenset({"the", "a", "an"})
# Words of letters only, apart by spaces, hyphens or apostrophes ("Jean-Paul Sartre", "O'Keeffe", "Brasília"): a
# number, a formula ("cos(x)": "-cos(x)" holds its word) or a symbol is not a name or a term.
_PLAIN = re.compile(r"[^\W\d_]+(?:[\s'’.-]+[^\W\d_]+)*\.?")
_NEGATION = re.compile(r"\b(not|no|never|neither|nor|isn't|wasn't|aren't|weren't|didn't|doesn't)\b|n't\b", re.I)


@dataclass(frozen=True)
class WordCheck:
    """The reference's words, every one of which the response states."""

    reference: str

    def note(self) -> str:
        """The sentence telling the judge what the check found."""
        return f"Checked exactly: the response names the reference's answer, {self.reference!r}, so it gives it."


def check_words(question: str, reference: str, response: str) -> WordCheck | None:
    """The check of a short reference of plain words whose every word (articles and the question's own words
    aside: "the Pacific Ocean" asked "What is the largest ocean?" wants "Pacific") `response` states, with no
    negation; None when it does not apply or does not find them all."""
    if not _PLAIN.fullmatch(reference.strip()) or _NEGATION.search(response):
        return None
    asked = set(words(question))
    wanted = [w for w in words(reference) if w not in _ARTICLES and w not in asked]
    if not wanted or len(wanted) > REFERENCE_WORDS:
        return None
    stated = set(words(response))
    if _is_name(reference) and wanted[-1] in stated:  # "Orwell" names "George Orwell", "Einstein" "Albert Einstein"
        return WordCheck(reference.strip().rstrip("."))
    return WordCheck(reference.strip().rstrip(".")) if all(w in stated for w in wanted) else None


def _is_name(reference: str) -> bool:
    """A person's name as a reference gives it: two to four words, each capitalised ("Ludwig van Beethoven")."""
    words = reference.strip().rstrip(".").split()
    capitalised = [w for w in words if w[:1].isupper()]
    return 2 <= len(words) <= 4 and len(capitalised) >= len(words) - 1 and words[-1][:1].isupper()


def words(text: str) -> list[str]:
    """The words of `text` (letters and digits, casefolded): what the checks of short answers compare."""
    return [w.casefold() for w in _WORD.findall(text)]
