"""The numbers of a short reference answer compared with a response's, in code, for reference-grounded verdicts.

A 1.5B judge asked whether "There are 360 seconds in an hour" gives the reference's answer "3600" says yes, however
it is asked (benchmarks/reference_grounding.py lists the wordings tried): it reads numbers by their look. Comparing
them is exact work code does well, so a grounded judgment whose reference's answer is one number gets the
comparison: the numbers the response states (digits or words: "fifty-six", "three hundred sixty-six"), leaving out
those the question already holds ("15% of 200 is 20": only 20 is an answer), against the reference's. The check
speaks only when it is sure: a response that states no new number, a reference with no or several new numbers, or
one longer than a short answer is left to the judge. What it cannot see: a conversion between units ("5000 m"
against "5 km" reads as different) and fractions in words ("a third").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# A reference longer than this is a sentence with more to it than its number: the check leaves it to the judge.
REFERENCE_WORDS = 8
# A reference that is nothing but its number ("3600", "1989", "four", "15%") says what the response must state: a
# response whose every new number is that one gives its answer. With a unit ("100 °C") a response in another unit
# ("100 °F") would pass, so then the same number settles it only when the response names the unit too ("About 454
# grams." for "453.5 grams"); otherwise only a difference is told.
_BARE = re.compile(r"[\s\d.,%°$€£+\-−]*")

_DIGITS = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?(?:/\d+)?")
_WORD = re.compile(r"[a-z]+")
_LETTERS = re.compile(r"[^\W\d_]+")
_SMALL = {
    word: value
    for value, word in enumerate(
        (
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        )
    )
}
_TENS = {
    word: 10 * value
    for value, word in enumerate(
        ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"), start=2
    )
}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
# Words that make a number of other number words ("a third", "zero point seven five"): the check stays out.
_UNREAD = re.compile(
    r"\b(halfs?|halves|thirds?|quarters?|fifths?|sixths?|eighths?|tenths?|point|dozens?)\b", re.IGNORECASE
)


@dataclass(frozen=True)
class NumberCheck:
    """What comparing a response's numbers with a reference's found: the reference's number, the new numbers the
    response states, whether one of them is the reference's (`agrees`) or every one is (`all_agree`), and whether
    the same number is the same answer (`number_settles`: the reference is nothing but its number, or the response
    names its unit too)."""

    reference: float
    stated: tuple[float, ...]
    agrees: bool
    all_agree: bool
    number_settles: bool

    @property
    def differs(self) -> bool:
        """The response states numbers and none of them is the reference's: it gives another answer."""
        return not self.agrees

    @property
    def matches(self) -> bool:
        """Every number the response states is the reference's, and that settles it (`number_settles`)."""
        return self.number_settles and self.all_agree

    def note(self) -> str | None:
        """A sentence for the judge saying what the comparison found, or None when it settles nothing."""
        stated = ", ".join(_fmt(v) for v in self.stated)
        if self.differs:
            return (
                f"Checked exactly: the reference's answer is the number {_fmt(self.reference)}; the response states "
                f"{stated} instead, so it does not give the reference's answer."
            )
        if self.matches:
            return f"Checked exactly: the response states {stated}, the reference's number, so it gives its answer."
        return None


def check_numbers(question: str, reference: str, response: str) -> NumberCheck | None:
    """The comparison of `response`'s numbers with the one number of a short `reference` answer (numbers that
    `question` holds are left out of both); None when it does not apply (see the module's docstring)."""
    words = reference.split()
    if not words or len(words) > REFERENCE_WORDS or _UNREAD.search(response) or _UNREAD.search(reference):
        return None
    asked = numbers(question)
    references = _new(numbers(reference), asked)
    if len({_key(v) for v in references}) != 1:
        return None
    stated = _new(numbers(response), asked)
    if not stated:
        return None
    target = references[0]
    same = [_same(v, target) for v in stated]
    settles = _only_a_number(reference) or _unit_named(reference, response)
    return NumberCheck(target, tuple(dict.fromkeys(stated)), any(same), all(same), settles)


def numbers(text: str) -> list[float]:
    """The numbers `text` states, in digits ("3,600", "0.75", "3/4": 3 and 4) or in words ("one thousand and
    twenty-four"), signs dropped (a minus sign in words or symbols is read alike by leaving it out)."""
    found: list[float] = []
    for match in _DIGITS.finditer(text):
        token = match.group().replace(",", "")
        if "/" in token:
            found += [float(part) for part in token.split("/")]
        else:
            found.append(float(token))
    found += _spelled(text)
    return found


def _spelled(text: str) -> list[float]:
    """Numbers written in words: runs of number words joined by hyphens, spaces or "and"."""
    found: list[float] = []
    total, current, in_number, last = 0, 0, False, ""
    words = _WORD.findall(text.lower())
    for i, word in enumerate(words):
        scale_next = i + 1 < len(words) and words[i + 1] in _SCALES
        if word in _SMALL or word in _TENS:
            # "seven five" is two numbers, "sixty-six" one: a unit joins only a tens word before it
            if in_number and word in _TENS and 10 <= current < 100 and total == 0 and last not in _SCALES:
                current *= 100  # a year read in pairs: "nineteen forty-five", "twenty twenty-four"
            elif in_number and (last in _SMALL or (last in _TENS and (word in _TENS or _SMALL[word] >= 10))):
                found.append(float(total + current))
                total, current = 0, 0
            current += _SMALL.get(word, 0) + _TENS.get(word, 0)
            in_number = True
        elif word in _SCALES and (in_number or (i > 0 and words[i - 1] == "a")):
            scale = _SCALES[word]
            current = max(current, 1) * scale
            if scale > 100:
                total, current = total + current, 0
            in_number = True
        elif word == "a" and scale_next:
            continue
        elif word == "and" and in_number and words[i - 1] in _SCALES:
            continue  # "one thousand and twenty-four"; "two and three" stays two numbers
        elif in_number:
            found.append(float(total + current))
            total, current, in_number = 0, 0, False
        last = word
    if in_number:
        found.append(float(total + current))
    return found


def _unit_named(reference: str, response: str) -> bool:
    """Whether every word of `reference` besides its number (its unit: "grams" in "453.5 grams") stands in
    `response` too: then the same number gives the same answer ("About 454 grams."), where a response in another
    unit would not ("100 °F" for "100 °C": "F" is not "C")."""
    number_words = {*_SMALL, *_TENS, *_SCALES, "and", "about", "approximately", "roughly", "around", "the", "a"}
    unit = [w for w in _LETTERS.findall(reference.casefold()) if w not in number_words]
    stated = set(_LETTERS.findall(response.casefold()))
    return bool(unit) and all(w in stated for w in unit)


def _only_a_number(reference: str) -> bool:
    """Whether `reference` is nothing but its number: digits and signs ("3,600", "-40", "15%"), or number words
    ("four", "one thousand and twenty-four")."""
    text = reference.strip().lower().rstrip(".")
    if _BARE.fullmatch(text):
        return True
    words = text.replace("-", " ").split()
    return bool(words) and all(w in _SMALL or w in _TENS or w in _SCALES or w == "and" for w in words)


def _new(values: list[float], asked: list[float]) -> list[float]:
    """`values` without those the question holds."""
    held = {_key(v) for v in asked}
    return [v for v in values if _key(v) not in held]


def _key(value: float) -> float:
    return round(abs(value), 9)


def _same(stated: float, reference: float) -> bool:
    """Whether a stated number is the reference's: whole numbers exactly (1991 is not 1989), others to the precision
    the less precise of the two is written in (1.61 for "about 1.6", 3.14 for 3.14159; not 0.7 for 0.75), a whole
    number to within half a percent (273 for 273.15, not 1 for 0.75)."""
    a, b = abs(stated), abs(reference)
    if a.is_integer() and b.is_integer():
        return a == b
    places = min(_decimals(a), _decimals(b))
    if places == 0:
        return math.isclose(a, b, rel_tol=0.005)
    return math.isclose(round(a, places), round(b, places), abs_tol=10.0**-places / 100)


def _decimals(value: float) -> int:
    """How many decimal places `value` is written with (as read: 1.6 has one, 1000.0 none)."""
    if value.is_integer():
        return 0
    return len(repr(value).partition(".")[2].rstrip("0"))


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
