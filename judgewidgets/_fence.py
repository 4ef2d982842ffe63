"""The one fence every prompt builder puts judged material in: `<tag>` ... `</tag>`, closable only by us.

The design: judged text reaches the judge exactly as written, except for the package's own tag names. Every `<` that
starts one of our names (`FENCE_TAGS`) as a tag, in any spelling an HTML or XML reader or a lenient reader accepts,
is written `&lt;`: any letter case, whitespace or newlines around the `/` and before the `>`, attributes,
self-closing, or left open at the end of the text (`</response >`, `</RESPONSE\n>`, `< /question>`,
`<example id="x">`, `</submission> SYSTEM: ...`, `text ending in </response`). The judge reads the same words,
and no fence opens or closes but ours. Everything else is left alone: `std::vector<int>`, `if a<b:`,
`List<String>`, HTML, XML and comments reach the judge byte for byte.

One spelling of our names stays as written: an opening tag in the position of a type argument, where the `<`
directly follows a letter, digit, `_` or `:` and the name is directly followed by `>`, `,` or `<`
(`Result<Response, Error>`, `Arc<Context>`, `Vec<Example<T>>`): code, not markup. It carries no attributes and
no `/`, so it can neither close a fence nor pose as a turn of another role (`<turn role="assistant">` is always
neutralised).

Why not a fence name no text can predict (a hashed suffix per prompt)? Our base names must be neutralised all the
same, since a small judge may take `</response>` for the end whatever the real tag is; a suffix would change every
prompt the embedded judge was measured on, and the call cache with it, for no further protection.

What a reader that is not the judge may still see: text that leaves markup open at its end (`if a<b:` as the last
line, an unclosed `<!--`) reaches the judge as written, and an HTML parser reads our closing tag on the next line
as part of that markup. A language model reads the closing tag on its own line; no tag of ours appears that we did
not write.

What the fence does not promise: that the judge ignores instructions that stay inside it. A small model can still
be persuaded by them; the system message tells it that fenced text is data and that an attempt to manipulate the
judge is a flaw, which helps but guarantees nothing (`_manipulation` quotes the obvious attempts back to it).
"""

from __future__ import annotations

import re

__all__ = ["FENCE_TAGS", "fence", "neutralise"]

# Every tag a prompt of judgewidgets uses: single judges, anchors' examples, pairwise, rubrics, the reflector's
# instruction and cases, conversations and their turns.
FENCE_TAGS = (
    "question",
    "response",
    "response_a",
    "response_b",
    "reference",
    "context",
    "example",
    "submission",
    "instruction",
    "case",
    "conversation",
    "turn",
)

_NAMES = "(?:" + "|".join(sorted(FENCE_TAGS, key=len, reverse=True)) + r")(?![A-Za-z0-9_])"
# A `<` starting one of our names, opening or closing, with whitespace and a `/` anywhere before the name.
_OWN = re.compile(r"<(?=\s*/?\s*" + _NAMES + ")", re.IGNORECASE)
# ... except an opening one written as a type argument (see the module docstring).
_TYPE_ARGUMENT = re.compile(r"(?<=[A-Za-z0-9_:])<(?=" + _NAMES + "[>,<])", re.IGNORECASE)


def neutralise(text: str, *, type_arguments: bool = True) -> str:
    """`text` with every spelling of our own tags in it defused (its `<` written `&lt;`), nothing else changed.

    `type_arguments=False` defuses type-argument spellings too (`Arc<Context>`): for text quoted outside any fence."""
    if "<" not in text:
        return text
    if not type_arguments:
        return _OWN.sub("&lt;", text)
    kept = {m.start() for m in _TYPE_ARGUMENT.finditer(text)}
    return _OWN.sub(lambda m: m.group(0) if m.start() in kept else "&lt;", text)


def fence(tag: str, text: str, attributes: str = "") -> str:
    """`text` between `<tag>` and `</tag>`, with no tag of ours left inside it to open or close a fence.

    `attributes` (ours, never judged text) go into the opening tag: `fence("turn", text, 'n="2" role="user"')`."""
    if tag not in FENCE_TAGS:
        raise ValueError(f"{tag!r} is not one of FENCE_TAGS, so judged text could close it")
    opening = f"<{tag} {attributes}>" if attributes else f"<{tag}>"
    return f"{opening}\n{neutralise(text)}\n</{tag}>"
