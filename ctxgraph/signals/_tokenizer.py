"""spaCy's rule-based tokenizer, in Python, from its exported rules.

The same algorithm as ``spacy/tokenizer.pyx`` (spaCy 3.8): the text is cut at
whitespace (a single ``' '`` after a token is that token's trailing space,
any other whitespace run is a token of its own); each piece is a special
case, or loses prefixes and suffixes (``_split_affixes``) until what is left
is a special case, a ``token_match``/``url_match`` or is cut at its infixes
(``_attach_tokens``); then special cases that span several tokens are put
back (``_apply_special_cases``, spaCy's phrase matcher over the tokens).
The rules — the regular expressions, the special cases with their norms,
and which special cases the phrase matcher holds — are read from spaCy's
own loaded tokenizer by :func:`export_rules`, so the tokens are the ones
spaCy gives (``tests/unit/test_signals_snapshot.py`` compares them).

A token is ``(orth, norm, has_space)``; ``norm`` is set only by a special
case (else the lexeme's norm applies, see ``_tagger``).
"""

from __future__ import annotations

import re
import sys
from typing import Any

#: A token: its text, the norm a special case gave it (or None), a space after it.
Token = tuple[str, "str | None", bool]


def export_rules(tokenizer: Any) -> dict[str, Any]:
    """The rules of a loaded spaCy tokenizer as plain data (see the module's doc)."""
    from spacy.attrs import NORM, ORTH

    def pattern(func: Any) -> str | None:
        owner = getattr(func, "__self__", None)
        return None if owner is None else str(owner.pattern)

    specials: dict[str, list[tuple[str, str | None]]] = {}
    for chunk, substrings in tokenizer.rules.items():
        parts = []
        for spec in substrings:
            orth = spec.get(ORTH, spec.get("ORTH"))
            norm = spec.get(NORM, spec.get("NORM"))
            parts.append((str(orth), None if norm is None else str(norm)))
        specials[str(chunk)] = parts
    rules: dict[str, Any] = {
        "prefix": pattern(tokenizer.prefix_search),
        "suffix": pattern(tokenizer.suffix_search),
        "infix": pattern(tokenizer.infix_finditer),
        "token_match": pattern(tokenizer.token_match),
        "url_match": pattern(tokenizer.url_match),
        "faster_heuristics": bool(tokenizer.faster_heuristics),
        "specials": specials,
    }
    rules["patterns"] = RuleTokenizer(rules).patterns(rules["faster_heuristics"])
    rules["compiled"] = compiled_programs(rules)
    for name in ("prefix", "suffix", "infix", "token_match", "url_match"):
        func = getattr(tokenizer, {"prefix": "prefix_search", "suffix": "suffix_search",
                                   "infix": "infix_finditer"}.get(name, name))
        if func is not None and rules[name] is None:
            raise ValueError(f"the tokenizer's {name} is not a compiled regular expression")
    return rules


_REGEXES = ("prefix", "suffix", "infix", "token_match", "url_match")


def _engine() -> str:
    """The regular-expression engine a compiled program belongs to."""
    import _sre  # type: ignore[import-not-found]

    return f"{sys.version}|{_sre.MAGIC}|{_sre.CODESIZE}"


def compiled_programs(rules: dict[str, Any]) -> dict[str, Any]:
    """The rules' regular expressions compiled to the engine's program (what
    ``re.compile`` spends most of a tokenizer's load on: ~45 ms of CPU for
    these character classes), for :func:`_load_regex` to skip the compiler.
    Only for the same Python build (:func:`_engine`)."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    programs = {}
    for name in _REGEXES:
        text = rules[name]
        if text is None:
            continue
        parsed = _parser.parse(text, 0)
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for key, index in groupindex.items():
            indexgroup[index] = key
        programs[name] = (int(parsed.state.flags), [int(c) for c in _compiler._code(parsed, 0)],
                          int(parsed.state.groups - 1), {str(k): int(v) for k, v in groupindex.items()},
                          tuple(indexgroup))
    return {"engine": _engine(), "programs": programs}


def _load_regex(text: str, program: Any) -> re.Pattern[str]:
    """``re.compile(text)``, from its compiled program when one is given and
    it is of this engine and pattern (checked), else compiled."""
    if program is not None:
        try:
            import _sre

            flags, code, groups, groupindex, indexgroup = program
            pattern: re.Pattern[str] = _sre.compile(text, flags, code, groups, groupindex, indexgroup)
            if pattern.pattern == text:
                return pattern
        except Exception:  # another engine's program: compiled below
            pass
    return re.compile(text)


class RuleTokenizer:
    """spaCy's tokenizer algorithm over exported rules (:func:`export_rules`)."""

    def __init__(self, rules: dict[str, Any]) -> None:
        cache = rules.get("compiled") or {}
        programs = cache.get("programs", {}) if cache.get("engine") == _engine() else {}

        def compiled(name: str) -> Any:
            text = rules[name]
            return None if text is None else _load_regex(text, programs.get(name))

        prefix, suffix, infix = compiled("prefix"), compiled("suffix"), compiled("infix")
        self._prefix = prefix.search if prefix is not None else None
        self._suffix = suffix.search if suffix is not None else None
        self._infix = infix.finditer if infix is not None else None
        token_match, url_match = compiled("token_match"), compiled("url_match")
        self._token_match = token_match.match if token_match is not None else None
        self._url_match = url_match.match if url_match is not None else None
        # (chunk -> [(orth, norm), ...]: used as given, read-only)
        self._specials: dict[str, list[tuple[str, str | None]]] = rules["specials"]
        self._cache: dict[str, list[Token]] = {}
        self._patterns: dict[str, list[tuple[str, ...]]] = {}
        for orths in rules.get("patterns") or self.patterns(rules["faster_heuristics"]):
            self._patterns.setdefault(orths[0], []).append(tuple(orths))

    def patterns(self, faster_heuristics: bool) -> list[list[str]]:
        """The phrase matcher's patterns: special cases whose text the affix
        rules would split, as the tokens those rules give (spaCy adds a special
        case to its matcher under the same condition, in ``add_special_case``).
        Computed once, at the export (``rules["patterns"]``)."""
        found = []
        for chunk in sorted(self._specials):
            if (not faster_heuristics or self._find_prefix(chunk) or self._find_infix(chunk)
                    or self._find_suffix(chunk) or " " in chunk):
                orths = [orth for orth, _, _ in self._tokenize_affixes(chunk, False)]
                if orths:
                    found.append(orths)
        return found

    # ------------------------------------------------------------ the rules

    def _find_prefix(self, text: str) -> int:
        if self._prefix is None:
            return 0
        match = self._prefix(text)
        return (match.end() - match.start()) if match is not None else 0

    def _find_suffix(self, text: str) -> int:
        if self._suffix is None:
            return 0
        match = self._suffix(text)
        return (match.end() - match.start()) if match is not None else 0

    def _find_infix(self, text: str) -> list[Any]:
        return [] if self._infix is None else list(self._infix(text))

    # ------------------------------------------------------------ tokenizing

    def __call__(self, text: str) -> list[Token]:
        tokens = self._tokenize_affixes(text, True)
        return self._apply_special_cases(tokens) if self._patterns else tokens

    def _tokenize_affixes(self, text: str, with_specials: bool) -> list[Token]:
        tokens: list[Token] = []
        if not text:
            return tokens
        start = 0
        in_ws = text[0].isspace()
        i = 0
        for char in text:
            if char.isspace() != in_ws:
                if start < i:
                    self._span(text[start:i], tokens, with_specials)
                if char == " ":
                    orth, norm, _ = tokens[-1]
                    tokens[-1] = (orth, norm, True)
                    start = i + 1
                else:
                    start = i
                in_ws = not in_ws
            i += 1
        if start < i:
            self._span(text[start:], tokens, with_specials)
            orth, norm, _ = tokens[-1]
            tokens[-1] = (orth, norm, text[-1] == " " and not in_ws)
        return tokens

    def _span(self, span: str, tokens: list[Token], with_specials: bool) -> None:
        """One piece between spaces (``_try_specials_and_cache`` and ``_tokenize``)."""
        if with_specials:
            special = self._specials.get(span)
            if special is not None:
                tokens.extend((orth, norm, False) for orth, norm in special)
                return
            cached = self._cache.get(span)
            if cached is not None:
                tokens.extend(cached)
                return
        out: list[Token] = []
        has_special = self._tokenize(span, out, with_specials)
        if with_specials and not has_special and len(self._cache) < 10_000:
            self._cache[span] = out
        tokens.extend(out)

    def _tokenize(self, span: str, out: list[Token], with_specials: bool) -> bool:
        prefixes: list[str] = []
        suffixes: list[str] = []
        rest = self._split_affixes(span, prefixes, suffixes, with_specials)
        out.extend((p, None, False) for p in prefixes)
        has_special = False
        if rest:
            special = self._specials.get(rest) if with_specials else None
            if special is not None:
                out.extend((orth, norm, False) for orth, norm in special)
                has_special = True
            elif with_specials and rest in self._cache:
                out.extend(self._cache[rest])
            elif ((self._token_match is not None and self._token_match(rest))
                  or (self._url_match is not None and self._url_match(rest))):
                out.append((rest, None, False))
            else:
                matches = self._find_infix(rest)
                if not matches:
                    out.append((rest, None, False))
                else:
                    start = 0
                    for match in matches:
                        infix_start, infix_end = match.start(), match.end()
                        if infix_start == 0:
                            continue
                        if infix_start != start:
                            out.append((rest[start:infix_start], None, False))
                        if infix_start != infix_end:
                            out.append((rest[infix_start:infix_end], None, False))
                        start = infix_end
                    if rest[start:]:
                        out.append((rest[start:], None, False))
        out.extend((s, None, False) for s in reversed(suffixes))
        return has_special

    def _split_affixes(self, text: str, prefixes: list[str], suffixes: list[str], with_specials: bool) -> str:
        last_size = 0
        specials = self._specials if with_specials else {}
        while text and len(text) != last_size:
            if self._token_match is not None and self._token_match(text):
                break
            if text in specials:
                break
            last_size = len(text)
            pre_len = self._find_prefix(text)
            prefix = minus_pre = ""
            if pre_len != 0:
                prefix = text[:pre_len]
                minus_pre = text[pre_len:]
                if minus_pre and minus_pre in specials:
                    text = minus_pre
                    prefixes.append(prefix)
                    break
            suf_len = self._find_suffix(text[pre_len:])
            suffix = minus_suf = ""
            if suf_len != 0:
                suffix = text[-suf_len:]
                minus_suf = text[:-suf_len]
                if minus_suf and minus_suf in specials:
                    text = minus_suf
                    suffixes.append(suffix)
                    break
            if pre_len and suf_len and (pre_len + suf_len) <= len(text):
                text = text[pre_len:-suf_len]
                prefixes.append(prefix)
                suffixes.append(suffix)
            elif pre_len:
                text = minus_pre
                prefixes.append(prefix)
            elif suf_len:
                text = minus_suf
                suffixes.append(suffix)
        return text

    def _apply_special_cases(self, tokens: list[Token]) -> list[Token]:
        """Special cases matched across tokens, longest first (spaCy's
        ``_filter_special_spans``), replaced by their own tokens."""
        matches: list[tuple[int, int]] = []
        orths = [orth for orth, _, _ in tokens]
        for i, orth in enumerate(orths):
            for pattern in self._patterns.get(orth, ()):
                end = i + len(pattern)
                if end <= len(orths) and tuple(orths[i:end]) == pattern:
                    matches.append((i, end))
        if not matches:
            return tokens
        # Longest first; of equal length, the earliest first.
        matches.sort(key=lambda m: (-(m[1] - m[0]), m[0]))
        seen: set[int] = set()
        kept: list[tuple[int, int]] = []
        for start, end in matches:
            if start not in seen and end - 1 not in seen:
                kept.append((start, end))
            seen.update(range(start, end))
        kept.sort()
        out: list[Token] = []
        i = 0
        for start, end in kept:
            out.extend(tokens[i:start])
            text = "".join(orth + (" " if space else "") for orth, _, space in tokens[start:end - 1]) + orths[end - 1]
            special = self._specials.get(text)
            if special is None:
                out.extend(tokens[start:end])
            else:
                out.extend((orth, norm, False) for orth, norm in special)
                orth, norm, _ = out[-1]
                out[-1] = (orth, norm, tokens[end - 1][2])
            i = end
        out.extend(tokens[i:])
        return out
