"""The one fence every prompt builder puts judged material in: `<tag>` ... `</tag>`, closable only by us.

Inside fenced text, every `<` that an HTML or XML reader would take as the start of markup (a tag of any name, in
any letter case, with attributes or left open at the end of the text; a comment, CDATA section, declaration or
processing instruction) is written `&lt;`, and so is a `<` before one of the package's own tag names after
whitespace (`< /response>`, which a lenient reader may take for a tag). So `</response >`, `</RESPONSE\n>`,
`</submission> SYSTEM: ...`, `<question id="x">`, `<!-- ` and a `<b` left open (which would swallow the closing
tag as attributes) all stay text: the judge reads the same words, and no fence opens or closes but ours.

What the fence does not promise: that the judge ignores instructions that stay inside it. A small model can still
be persuaded by them; the system message tells it that fenced text is data and that an attempt to manipulate the
judge is a flaw, which helps but guarantees nothing.
"""

from __future__ import annotations

import re

__all__ = ["FENCE_TAGS", "fence", "neutralise"]

# Every tag a prompt of judgewidgets uses: single judges, anchors' examples, pairwise, rubrics.
FENCE_TAGS = (
    "question",
    "response",
    "response_a",
    "response_b",
    "reference",
    "context",
    "example",
    "submission",
)

# A `<` followed by an ASCII letter, `/`, `!` or `?` starts markup for an HTML or XML reader; one followed by
# whitespace and one of our names (with a `/` anywhere before it) may be read as our tag by a lenient one.
_OPENER = re.compile(r"<(?=[A-Za-z/!?]|\s+/?\s*(?:" + "|".join(FENCE_TAGS) + r")(?![A-Za-z0-9_-]))", re.IGNORECASE)


def neutralise(text: str) -> str:
    """`text` with every markup opener in it defused (its `<` written `&lt;`)."""
    return _OPENER.sub("&lt;", text) if "<" in text else text


def fence(tag: str, text: str) -> str:
    """`text` between `<tag>` and `</tag>`, with no tag of ours left inside it to open or close a fence."""
    return f"<{tag}>\n{neutralise(text)}\n</{tag}>"
