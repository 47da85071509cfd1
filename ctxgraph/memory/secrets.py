"""What the associative memory never takes in: secret files, by their name,
and secret values, in the text of the files it reads.

**Files by name.** :data:`SECRET_FILES` (gitignore syntax, matched without
regard to case against the path relative to the root): dotenv files, keys and
certificates, credential stores, cloud command-line configurations, Terraform
state and variables. :data:`SECRET_WORDS` (a name holding "secret",
"credential" or "password") leave out every file but source code and
documentation (:data:`CODE_SUFFIXES`): ``config/secrets.yaml`` is left out,
a ``secrets.py`` module is read, its values redacted as any file's. A file
left out by name is never opened; the scan reports it as skipped, ``secret
file (by name): RULE``. Hidden files follow the same rules as the others
(hidden folders are not entered at all: :mod:`.scan`).

**Values.** Every line of a file read goes through the plugins of
detect-secrets (:data:`PLUGINS`: its keyword detector — ``api_key:``,
``password =`` and the like, by file type —, private keys, cloud and
service tokens, credentials in URLs, JSON web tokens, and its two
high-entropy detectors for quoted strings); a value its keyword or entropy
detectors find is kept unless detect-secrets' own heuristic filters call it
a false positive (a template, a ``$VARIABLE``, a function call, a UUID, a
sequence). Each value found is replaced in its line by :data:`MARKER`; a
private key's block, from its ``BEGIN`` line to its ``END`` line, is
replaced whole (:data:`MAX_KEY_LINES` at most). The text keeps its lines
where they are, so line numbers stay true. The rules are detect-secrets',
not rewritten here: a plugin runs on a file's lines only when one of its own
patterns matches somewhere in the file (a test of the whole text, for speed).

**Settings add, never remove.** ``[index]`` in the settings file:
``secret_files`` (more names, gitignore syntax) and ``secret_patterns``
(regular expressions: the first group, else the whole match, is redacted);
nothing turns a default off.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from importlib import metadata
from pathlib import PurePosixPath
from typing import Any

from ctxgraph.errors import ConfigurationError

#: What a redacted value becomes in the stored text.
MARKER = "[redacted]"
#: Raised when these rules change, so that every file is read again once.
RULES_VERSION = "1"
#: Lines of a private key's block redacted at most after its BEGIN line.
MAX_KEY_LINES = 400

#: Never indexed, by name (gitignore syntax; compared in lower case).
SECRET_FILES: tuple[str, ...] = (
    # dotenv
    "*.env", ".env", ".env.*", ".envrc",
    # keys and certificates
    "*.pem", "*.key", "*.crt", "*.cer", "*.der", "*.p12", "*.pfx", "*.p8", "*.jks", "*.keystore",
    "*.truststore", "*.ppk", "*.asc", "*.gpg", "*.pgp", "*.kdbx", "*.keytab", "*.ovpn",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    # credential stores
    ".netrc", "_netrc", ".pgpass", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", ".htpasswd",
    ".git-credentials", ".dockercfg", "**/.docker/config.json", ".boto", ".s3cfg", ".vault-token", ".my.cnf",
    # Terraform state and variables
    "*.tfstate", "*.tfstate.*", "*.tfvars", "*.tfvars.json", ".terraformrc", "terraform.rc",
    # cloud command-line configurations
    ".aws/", ".azure/", ".kube/", "kubeconfig", "*.kubeconfig", "**/.config/gcloud/", ".ssh/", ".gnupg/",
)
#: Never indexed unless source code or documentation (:data:`CODE_SUFFIXES`).
SECRET_WORDS: tuple[str, ...] = ("*secret*", "*credential*", "*password*", "*passwd*")
#: Source code and documentation: a name with a :data:`SECRET_WORDS` word is read (values redacted).
CODE_SUFFIXES = frozenset({
    ".py", ".pyi", ".md", ".rst", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".go", ".rs", ".java", ".kt",
    ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".rb", ".php", ".swift", ".scala", ".lua", ".r", ".jl", ".ex",
    ".exs", ".erl", ".hs", ".ml", ".html", ".css", ".scss", ".vue", ".svelte", ".sql", ".proto", ".graphql",
    ".cypher",
})
#: detect-secrets' plugins run on every line (by class name). Left out: its public IP
#: detector (an address is no credential), and its four IBM ones (Cloudant, Cloud IAM,
#: COS HMAC, SoftLayer): key-name assignments the keyword detector covers (``password``,
#: ``api_key``, ``secret``), whose patterns cost 60 % of the scan of this project's source
#: (measured: benchmarks/secrets.py).
PLUGINS: tuple[str, ...] = (
    "KeywordDetector", "PrivateKeyDetector", "AWSKeyDetector", "AzureStorageKeyDetector", "BasicAuthDetector",
    "GitHubTokenDetector", "GitLabTokenDetector", "SlackDetector", "StripeDetector", "JwtTokenDetector",
    "OpenAIDetector", "NpmDetector", "PypiTokenDetector", "SendGridDetector", "TwilioKeyDetector",
    "MailchimpDetector", "SquareOAuthDetector", "DiscordBotTokenDetector", "TelegramBotTokenDetector",
    "ArtifactoryDetector", "Base64HighEntropyString", "HexHighEntropyString",
)
#: Plugins that guess (by a word, by entropy): their values go through detect-secrets'
#: heuristic filters of false positives; the others match a format.
GUESSING = frozenset({"KeywordDetector", "Base64HighEntropyString", "HexHighEntropyString"})
#: A format plugin's group this long is the value; a shorter one stands for its whole match.
MIN_VALUE = 8
#: Redacted texts kept for a file read again (at context time): characters at most.
MEMO_CHARS = 4_000_000


def _spec(patterns: tuple[str, ...]) -> Any:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([p.lower() for p in patterns])


@dataclass(frozen=True)
class SecretFilter:
    """The rules in force: the defaults and, from the settings, ``files``
    (more names never indexed, gitignore syntax) and ``patterns`` (more
    values redacted, regular expressions). Raises ConfigurationError for a
    pattern that does not compile or would bring a file back (``!...``)."""

    files: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    _compiled: tuple[re.Pattern[str], ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in self.files:
            if not name.strip() or name.lstrip().startswith(("!", "#")):
                raise ConfigurationError(f"index.secret_files: {name!r}: give a pattern of files to leave out "
                                         "(the defaults cannot be turned off)")
        try:
            _spec(self.files)
        except ValueError as exc:
            raise ConfigurationError(f"index.secret_files: {exc}") from None
        compiled = []
        for pattern in self.patterns:
            try:
                compiled.append(re.compile(pattern))
            except re.error as exc:
                raise ConfigurationError(f"index.secret_patterns: {pattern!r}: not a regular expression: {exc}") \
                    from None
        object.__setattr__(self, "_compiled", tuple(compiled))

    @cached_property
    def tag(self) -> str:
        """Names these rules (and detect-secrets' version): a file indexed under
        other rules is read again (see :func:`ctxgraph.memory.scan.changes`)."""
        try:
            version = metadata.version("detect-secrets")
        except metadata.PackageNotFoundError:
            version = "?"
        digest = hashlib.sha256(repr((RULES_VERSION, version, self.files, self.patterns)).encode()).hexdigest()
        return f"r{RULES_VERSION}.{digest[:10]}:"

    @cached_property
    def _names(self) -> tuple[Any, Any, Any]:
        return _spec(SECRET_FILES), _spec(SECRET_WORDS), _spec(self.files)

    def secret_file(self, rel: str) -> str | None:
        """The rule that leaves ``rel`` (relative to the root) out, or None."""
        path = rel.lower()
        files, words, extra = self._names
        for spec, rules in ((files, SECRET_FILES), (extra, self.files)):
            hit = spec.check_file(path)
            if hit.include and hit.index is not None:
                return str(rules[hit.index])
        if PurePosixPath(path).suffix not in CODE_SUFFIXES:
            hit = words.check_file(path)
            if hit.include and hit.index is not None:
                return str(SECRET_WORDS[hit.index])
        return None

    def redact(self, rel: str, text: str) -> tuple[str, int]:
        """``text`` (of the file ``rel``) with its secret values replaced by
        :data:`MARKER`, and how many were; the same lines, in the same places."""
        key = (self.tag, PurePosixPath(rel).suffix.lower(), text)
        done = _memo.get(key)
        if done is None:
            done = _redact(_detectors(), self._compiled, rel, text)
            _memo.put(key, done, len(text))
        return done


DEFAULT = SecretFilter()


class _Memo:
    """The last redacted texts, up to :data:`MEMO_CHARS` characters of input:
    a file read again unchanged (a hit checked at context time) is not scanned again."""

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[str, str, str], tuple[tuple[str, int], int]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, str]) -> tuple[str, int] | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            self._items.move_to_end(key)
            return found[0]

    def put(self, key: tuple[str, str, str], value: tuple[str, int], chars: int) -> None:
        if chars > MEMO_CHARS // 4:
            return
        with self._lock:
            if key in self._items:
                return
            self._items[key] = (value, chars)
            self._chars += chars
            while self._chars > MEMO_CHARS:
                _, (_, gone) = self._items.popitem(last=False)
                self._chars -= gone


_memo = _Memo()


class _Detectors:
    """detect-secrets' plugins of :data:`PLUGINS`, each with the patterns of its
    own that a file must match somewhere for its lines to be worth scanning:
    a format plugin's own patterns; an entropy plugin's quoted string; for the
    keyword detector, one of its keywords (its list, matched in the case-folded
    text: nine times faster than its case-blind pattern)."""

    def __init__(self) -> None:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.filters import heuristic
        from detect_secrets.plugins import keyword
        from detect_secrets.plugins.base import RegexBasedDetector
        from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin

        mapping: dict[Any, Any] = get_mapping_from_secret_type_to_class()
        classes: dict[str, Any] = {plugin.__name__: plugin for plugin in mapping.values()}
        self.plugins: list[tuple[str, Any, tuple[re.Pattern[str], ...]]] = []
        #: every pattern of the keyword detector holds one of its keywords (searched case-folded)
        self.keyword_gate = re.compile(keyword.DENYLIST_REGEX)
        for name in PLUGINS:
            plugin = classes[name]()
            if isinstance(plugin, RegexBasedDetector):
                own = tuple(plugin.denylist)
            elif isinstance(plugin, HighEntropyStringsPlugin):
                own = (plugin.regex,)
            else:
                own = ()
            self.plugins.append((name, plugin, tuple(re.compile(p.pattern, p.flags | re.MULTILINE) for p in own)))
        self.heuristic = heuristic

    def false_positive(self, name: str, plugin: Any, secret: str, line: str) -> bool:
        """detect-secrets' default heuristic filters, for the guessing plugins."""
        if name not in GUESSING:
            return False
        h = self.heuristic
        return bool(h.is_sequential_string(secret) or h.is_potential_uuid(secret)
                    or h.is_likely_id_string(secret, line, plugin) or h.is_templated_secret(secret)
                    or h.is_prefixed_with_dollar_sign(secret) or h.is_indirect_reference(line)
                    or h.is_not_alphanumeric_string(secret))


_built: _Detectors | None = None
_build_lock = threading.Lock()


def _detectors() -> _Detectors:
    global _built
    with _build_lock:
        if _built is None:
            _built = _Detectors()
        return _built


def _redact(found: _Detectors, extra: tuple[re.Pattern[str], ...], rel: str, text: str) -> tuple[str, int]:
    lines = text.splitlines(keepends=True)
    bodies = [line.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029") for line in lines]
    whole = "\n".join(bodies)
    keywords = found.keyword_gate.search(whole.casefold()) is not None
    active = [(name, plugin) for name, plugin, gates in found.plugins
              if (keywords if name == "KeywordDetector" else any(g.search(whole) for g in gates))]
    extras = tuple(p for p in extra if p.search(whole))
    if not active and not extras:
        return text, 0
    count = 0
    key_lines = 0  # lines of a private key's block still to redact
    out: list[str] = []
    for number, (line, body) in enumerate(zip(lines, bodies, strict=True), start=1):
        end = line[len(body):]
        if key_lines:
            out.append(MARKER + end if body.strip() else line)
            key_lines = 0 if "-----END" in body else key_lines - 1
            continue
        values, key_at = _values(found, active, extras, rel, body, number)
        if key_at is not None:  # a private key: the rest of the line, and its block
            count += 1
            head = _replace(body[:key_at], values)
            out.append(head + MARKER + end)
            key_lines = 0 if "-----END" in body[key_at:] else MAX_KEY_LINES
            continue
        count += len(values)
        out.append((_replace(body, values) if values else body) + end)
    return "".join(out), count


def _values(found: _Detectors, active: list[tuple[str, Any]], extras: tuple[re.Pattern[str], ...], rel: str,
            body: str, number: int) -> tuple[set[str], int | None]:
    """The secret values in one line, and where a private key begins in it (or None)."""
    values: set[str] = set()
    key_at: int | None = None
    for name, plugin in active:
        if name in GUESSING:
            if not (found.keyword_gate.search(body.casefold()) if name == "KeywordDetector"
                    else "'" in body or '"' in body):  # what its patterns need in the line
                continue
            for secret in plugin.analyze_line(filename=rel.lower(), line=body, line_number=number):
                value = secret.secret_value
                if value and not found.false_positive(name, plugin, value, body):
                    values.add(value)
            continue
        for pattern in plugin.denylist:  # what its analyze_line finds, with where
            for match in pattern.finditer(body):
                if name == "PrivateKeyDetector":
                    start = body.rfind("-----", 0, match.start())
                    key_at = min(key_at if key_at is not None else len(body), start if start >= 0 else match.start())
                else:
                    values.update(_matched(match))
    for pattern in extras:
        for match in pattern.finditer(body):
            value = match.group(1) if pattern.groups else match.group(0)
            if value:
                values.add(value)
    return values, key_at


def _matched(match: re.Match[str]) -> list[str]:
    """What a format plugin's match redacts: its groups of :data:`MIN_VALUE` characters
    or more (the value, as the plugin reports it), else the whole match (GitHub's
    detector reports only a token's prefix)."""
    groups = [g for g in match.groups() if g and len(g) >= MIN_VALUE]
    return groups or [match.group(0)]


def _replace(body: str, values: set[str]) -> str:
    """Every value replaced by the marker, the longest first, in one pass; a value
    not found as such (a plugin's normalized form) costs the whole line."""
    present = sorted((v for v in values if v in body), key=len, reverse=True)
    if len(present) < len(values):
        return MARKER
    if not present:
        return body
    return re.sub("|".join(re.escape(v) for v in present), MARKER, body)


__all__ = ["CODE_SUFFIXES", "DEFAULT", "MARKER", "PLUGINS", "SECRET_FILES", "SECRET_WORDS", "SecretFilter"]
