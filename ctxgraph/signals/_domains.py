"""The default domain mapping: domain name -> trigger lemmas (lower-case).

The first five domains are the original specification's, with exactly its
trigger words; the rest are additions, kept to words that rarely mean
anything else in task text (no "file", "path", "memory", "pipeline"). A domain is switched on when one of
its triggers, or its own name, is among a text's keywords (see
:class:`ctxgraph.signals.SignalExtractor`). Triggers are single tokens: a
lemma (``token``, not ``tokens``) or a technical word as written, lower-case.
"""

from __future__ import annotations

DEFAULT_DOMAINS: dict[str, tuple[str, ...]] = {
    # --- the five specified first, unchanged
    "api": ("endpoint", "rest", "graphql", "route", "request"),
    "auth": ("login", "token", "jwt", "session", "password"),
    "database": ("query", "schema", "migration", "model", "record"),
    "ui": ("component", "button", "form", "page", "style"),
    "testing": ("test", "spec", "mock", "assert", "coverage"),
    # --- additions
    "security": (
        "security", "vulnerability", "xss", "csrf", "injection", "sanitization",
        "encryption", "secret", "permission", "cve", "tls", "ssl", "certificate",
        "oauth", "authentication", "authorization", "rbac",
    ),
    "cli": (
        "cli", "command", "subcommand", "flag", "argv", "argparse", "typer",
        "terminal", "shell", "prompt", "stdin", "stdout", "stderr",
    ),
    "config": (
        "config", "configuration", "setting", "env", "environment", "dotenv",
        "yaml", "toml", "ini",
    ),
    "performance": (
        "performance", "latency", "throughput", "speed", "cache", "caching",
        "benchmark", "profiling", "optimization", "p50", "p95", "p99",
    ),
    "concurrency": (
        "concurrency", "thread", "threading", "lock", "mutex", "race", "deadlock",
        "semaphore", "parallelism", "worker", "multiprocessing",
    ),
    "async": (
        "async", "await", "asyncio", "coroutine", "promise", "callback", "eventloop",
    ),
    "errors": (
        "error", "exception", "traceback", "stacktrace", "retry", "failure",
        "crash", "panic", "timeout",
    ),
    "logging": (
        "log", "logger", "logging", "tracing", "telemetry", "metric", "monitoring",
        "observability",
    ),
    "parsing": (
        "parser", "parsing", "tokenizer", "lexer", "grammar", "ast", "regex",
        "serialization", "deserialization", "json", "xml", "csv",
    ),
    "http": (
        "http", "https", "url", "header", "cookie", "cors", "socket", "websocket",
        "tcp", "dns", "proxy", "webhook", "grpc", "response",
    ),
    "filesystem": (
        "filesystem", "directory", "folder", "disk", "upload", "download",
        "pathlib", "symlink",
    ),
    "deps": (
        "dependency", "package", "packaging", "pip", "npm", "poetry", "wheel",
        "requirement", "lockfile", "pyproject", "setuptools", "version",
    ),
    "ci": (
        "ci", "build", "github", "docker", "dockerfile", "container", "makefile",
        "deploy", "deployment", "release",
    ),
    "docs": (
        "doc", "docs", "documentation", "readme", "docstring", "changelog",
        "guide", "tutorial",
    ),
    "graph": (
        "graph", "neo4j", "cypher", "relationship", "traversal", "networkx",
    ),
    "vcs": ("git", "commit", "branch", "merge", "rebase", "diff"),
}
