"""Untrusted text made safe for each place it goes: one terminal or XML line (``plain``), lines
of it (``block``), inline GitHub Markdown (``md``), XML text (``xml_text``).

Model names, variants, messages and tracebacks come from user code. Every renderer passes
them through one of these before they reach a report.
"""

from __future__ import annotations

import functools
import re

# The complement of XML 1.0's Char production.
_XML_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_BREAKS = re.compile("[\t\n\v\f\r\x85\u2028\u2029]+")
_LINES = re.compile("\r\n|[\n\v\f\r\x85\u2028\u2029]")
# Control characters (C0, DEL, C1), lone surrogates, U+FFFE/U+FFFF, and the bidirectional
# overrides that can make text display in a different order from how it reads.
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]")
# Characters with an inline meaning in GitHub Markdown (``$`` starts math).
_MD_SPECIAL = re.compile(r"([\\`*_\[\]()!|~$])")
_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def plain(text: object) -> str:
    """One line of printable text: line breaks become spaces, control characters are dropped.

    The result is also valid XML 1.0 and safe to print on a terminal.
    """
    text = str(text)
    if text.isprintable():  # most text: no line break and no character either pattern finds
        return text.strip()
    return _INVISIBLE.sub("", _BREAKS.sub(" ", text)).strip()


def block(text: object) -> str:
    """Lines of printable text (a traceback), safe on a terminal and in XML: each line's control
    characters dropped, its indentation kept."""
    return "\n".join(_INVISIBLE.sub("", line.expandtabs(4)).rstrip()
                     for line in _LINES.split(str(text)))


def md(text: object) -> str:
    """Inline GitHub Markdown that shows ``text`` literally, also inside a table cell.

    Block syntax (``#``, ``-``, ``>``) only acts at the start of a line, so callers never
    start a line with the result.
    """
    return _md(str(text))


@functools.lru_cache(maxsize=1 << 16)  # a big report escapes the same ids and names many times
def _md(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", plain(text).translate(_HTML))


def xml_text(text: object) -> str:
    """``text`` without the characters XML 1.0 forbids; the JUnit writer escapes ``&<>"`` itself."""
    text = str(text)
    if text.replace("\n", "").isprintable():  # every character XML forbids is unprintable
        return text
    return _XML_ILLEGAL.sub("", text)
