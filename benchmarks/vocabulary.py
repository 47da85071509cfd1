"""The words of the benchmark generator: a vocabulary of real technical nouns
followed by made-up ones, and the Zipf draw that picks from it (part of
``benchmarks.generator``; changing either changes the generated documents, so
bump ``GENERATOR_VERSION`` with it)."""

from __future__ import annotations

import bisect
import itertools
import random

#: Zipf exponent of the tag (word) distribution.
ZIPF_S = 1.0

#: The head of the vocabulary: real words of software projects, most common first.
HEAD_WORDS = (
    "api",
    "cache",
    "user",
    "database",
    "config",
    "test",
    "token",
    "session",
    "queue",
    "schema",
    "migration",
    "endpoint",
    "handler",
    "service",
    "client",
    "request",
    "response",
    "error",
    "logging",
    "route",
    "model",
    "payment",
    "order",
    "invoice",
    "search",
    "index",
    "worker",
    "job",
    "retry",
    "timeout",
    "upload",
    "storage",
    "bucket",
    "email",
    "notification",
    "webhook",
    "auth",
    "permission",
    "role",
    "audit",
    "metric",
    "dashboard",
    "report",
    "export",
    "import",
    "parser",
    "template",
    "render",
    "component",
    "form",
    "validation",
    "middleware",
    "router",
    "socket",
    "stream",
    "buffer",
    "batch",
    "scheduler",
    "cron",
    "deploy",
    "container",
    "cluster",
    "replica",
    "shard",
    "lock",
    "transaction",
    "ledger",
    "account",
    "profile",
    "avatar",
    "image",
    "thumbnail",
    "video",
    "feed",
    "comment",
    "like",
    "tag",
    "category",
    "product",
    "cart",
    "checkout",
    "coupon",
    "discount",
    "shipping",
    "address",
    "inventory",
    "warehouse",
    "supplier",
    "refund",
    "subscription",
    "plan",
    "quota",
    "limit",
    "throttle",
    "proxy",
    "gateway",
    "certificate",
    "secret",
    "vault",
    "key",
    "signature",
    "hash",
    "checksum",
    "snapshot",
    "backup",
    "restore",
    "replication",
    "partition",
    "cursor",
    "pagination",
    "filter",
    "sort",
    "query",
    "resolver",
    "mutation",
    "fixture",
    "mock",
    "benchmark",
    "profiler",
    "trace",
    "span",
    "alert",
    "incident",
    "runbook",
    "feature",
    "flag",
    "experiment",
    "variant",
    "locale",
    "translation",
    "currency",
    "timezone",
    "calendar",
    "reminder",
    "message",
    "thread",
    "channel",
    "room",
    "presence",
    "heartbeat",
    "registry",
    "plugin",
    "extension",
    "theme",
    "layout",
    "widget",
    "modal",
    "tooltip",
)
_ONSETS = (
    "b",
    "d",
    "f",
    "g",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "t",
    "v",
    "z",
    "br",
    "dr",
    "gl",
    "kr",
    "pl",
    "tr",
    "vr",
    "qu",
    "sk",
    "st",
    "th",
    "ch",
)
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ei", "ou")
_CODAS = ("", "n", "r", "l", "m", "x", "k", "t", "nd", "rk", "lt")


def vocabulary(size: int, seed: int) -> list[str]:
    """``size`` distinct words: :data:`HEAD_WORDS` first, then made-up ones
    (never ending in ``s``, so no lemmatizer turns them into another word)."""
    rng = random.Random(f"vocabulary:{seed}")
    words = list(HEAD_WORDS[:size])
    seen = set(words)
    while len(words) < size:
        syllables = rng.choice((2, 2, 3))
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables)) + rng.choice(_CODAS)
        if word not in seen and len(word) >= 5 and not word.endswith("s"):
            seen.add(word)
            words.append(word)
    return words


class Zipf:
    """Draws ranks 0..n-1 with P(rank r) proportional to 1 / (r + 1) ** s."""

    def __init__(self, n: int, s: float = ZIPF_S) -> None:
        self.cum = list(itertools.accumulate(1.0 / (r + 1) ** s for r in range(n)))

    def draw(self, rng: random.Random) -> int:
        return bisect.bisect_left(self.cum, rng.random() * self.cum[-1])
