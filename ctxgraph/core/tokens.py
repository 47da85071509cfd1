"""The token estimator: one function used everywhere text is measured.

Latin-script text averages about four characters a token in common BPE
tokenizers; CJK text averages closer to one token per one to two characters.
So: when at least a third of the non-space characters are CJK, a token is
counted for every three characters (runes); otherwise for every four.

Where an exact tokenizer is installed it can be plugged in with
:func:`use_tokenizer` (any ``str -> int`` callable, e.g. a ``tokenizers``
tokenizer loaded from a local ``tokenizer.json``); stored estimates and the
budget then use it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

_CJK_RANGES = (
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x2FA1F),  # Extensions B..F, compatibility supplement
)


_CJK = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES) + "]")
_SPACE = re.compile(r"\s")


_exact: Callable[[str], int] | None = None


def use_tokenizer(count: Callable[[str], int] | None) -> None:
    """Count tokens with ``count`` from now on (``None``: back to the heuristic)."""
    global _exact
    _exact = count


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text`` (0 for empty text)."""
    if not text:
        return 0
    if _exact is not None:
        return _exact(text)
    if text.isascii():  # no CJK in it: the common case, without scanning the text twice
        return math.ceil(len(text) / 4)
    cjk = len(_CJK.findall(text))
    if cjk and cjk * 3 >= len(text) - len(_SPACE.findall(text)):
        return math.ceil(len(text) / 3)
    return math.ceil(len(text) / 4)
