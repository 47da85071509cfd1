"""Secrets: no default or hard-coded password anywhere in the shipped code,
scripts or compose file; the Neo4j password comes from NEO4J_PASSWORD,
NEO4J_PASSWORD_FILE, --password-stdin or a hidden prompt, and never shows in
a repr, an error message, --debug or --verbose output. TLS URIs are accepted;
docker-compose publishes Bolt and Browser on 127.0.0.1 only."""

from __future__ import annotations

import dataclasses
import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from _faults import REPO, assert_one_error_line, cli_env, ctxgraph

from ctxgraph.errors import AuthenticationError, ConfigurationError, StoreUnavailableError
from ctxgraph.graph.neo4j_store import Neo4jSettings, Neo4jStore, make_driver

# ------------------------------------------------------------------ hard-coded secrets

SCANNED = ["ctxgraph", "scripts", ".ci", "docker-compose.yml", "pyproject.toml"]

SECRET_PATTERNS = [
    # password = "x", PASSWORD: 'x', api_token="x" (a quoted literal, not an env reference)
    re.compile(
        r"""(?i)\b(?!\w*(pattern|regex|_re\b|count|estimate|kind|type|label|name|env|file|path|prompt))"""
        r"""\w*(pass(word|wd)?|pwd|secret|token|api_?key)\w*["']?\s*[:=]\s*[rbf]?["'](?![$]\{)[^"'\s]{3,}["']"""
    ),
    # auth=("neo4j", "neo4j") and basic_auth("neo4j", "x")
    re.compile(r"""(?i)\b(auth\s*=\s*\(|basic_auth\s*\()\s*["'][^"']*["']\s*,\s*["'][^"']+["']"""),
    # NEO4J_AUTH=neo4j/secret, NEO4J_AUTH: "neo4j/secret" (only ${...} substitution allowed)
    re.compile(r"""(?i)NEO4J_AUTH["']?\s*[:=]\s*["']?[^"'\s/]+/(?![$]\{)\S"""),
    # credentials inside a URI: bolt://user:secret@host
    re.compile(r"""(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@'"]+:[^/\s@'"]+@"""),
    # a shell or .env assignment of a literal password
    re.compile(r"""(?m)^\s*(export\s+)?NEO4J_PASSWORD=(?![$"'])\S"""),
]

#: (file, text on the line) -> why it is not a secret.
ALLOWED = {
    (
        "scripts/_neo4j_local/common.py",
        'INITIAL_PASSWORD = "neo4j"',
    ): "Neo4j's own factory password of a fresh home; the script logs in with it once to "
    "replace it by a random one (or NEO4J_PASSWORD), which it never prints",
}


def find_secrets(text: str) -> list[tuple[int, str]]:
    hits = []
    for number, line in enumerate(text.splitlines(), 1):
        if any(p.search(line) for p in SECRET_PATTERNS):
            hits.append((number, line.strip()))
    return hits


def test_the_secret_patterns_catch_what_they_are_for() -> None:
    planted = [
        'password="neo4j"',
        "PASSWORD = 'letmein'",
        'auth=("neo4j", "neo4j")',
        "basic_auth('neo4j', 'pw')",
        "NEO4J_AUTH: neo4j/secret123",
        'NEO4J_AUTH: "neo4j/neo4j"',
        "uri = 'bolt://neo4j:hunter2@db:7687'",
        "NEO4J_PASSWORD=hunter22",
        "export NEO4J_PASSWORD=hunter22",
        '{"password": "hunter22"}',
        'api_token = "abcdef123456"',
        "neo4j_password: 'x1y2z3'",
    ]
    for line in planted:
        assert find_secrets(line), line
    harmless = [
        "password: str | None = field(default=None, repr=False)",
        'password = env.get("NEO4J_PASSWORD")',
        'NEO4J_AUTH: "neo4j/${NEO4J_PASSWORD:?set NEO4J_PASSWORD in .env}"',
        'password = ""',
        "export NEO4J_PASSWORD_FILE=/run/secrets/neo4j",
        'help="Read the Neo4j password from stdin."',
        "auth = (settings.user, settings.password)",
        "bolt://127.0.0.1:7687",
        'TOKEN_PATTERN = r"(?u)[^\\W_]{2,}"',
        "neo4j_password=_neo4j_password(params),",
    ]
    for line in harmless:
        assert not find_secrets(line), line


def test_no_default_or_hard_coded_password_in_code_scripts_or_compose() -> None:
    files: list[Path] = []
    for name in SCANNED:
        path = REPO / name
        files.extend(sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path])
    files = [f for f in files if "__pycache__" not in f.parts and f.suffix not in {".pyc", ".jar"}]
    assert len(files) > 40
    found = []
    for path in files:
        rel = path.relative_to(REPO).as_posix()
        for number, line in find_secrets(path.read_text(encoding="utf-8", errors="replace")):
            if not any(rel == where and text in line for where, text in ALLOWED):
                found.append(f"{rel}:{number}: {line}")
    assert not found, "hard-coded secrets:\n" + "\n".join(found)
    for (rel, line), _why in ALLOWED.items():  # the allowances are still needed (and still true)
        assert line in (REPO / rel).read_text()


# ------------------------------------------------------------------ settings

SECRET = "s3cret-" + os.urandom(6).hex()


def test_password_comes_from_the_environment_or_a_file_and_never_from_a_default(tmp_path: Path) -> None:
    uri = "bolt://127.0.0.1:7687"
    assert Neo4jSettings.from_env(uri, env={}).password is None
    assert Neo4jSettings.from_env(uri, env={"NEO4J_PASSWORD": ""}).password is None
    assert Neo4jSettings.from_env(uri, env={"NEO4J_PASSWORD": SECRET}).password == SECRET
    file = tmp_path / "pw"
    file.write_text(SECRET + "\n")
    assert Neo4jSettings.from_env(uri, env={"NEO4J_PASSWORD_FILE": str(file)}).password == SECRET
    assert Neo4jSettings.from_env(uri, password="given", env={"NEO4J_PASSWORD": SECRET}).password == "given"
    file.write_text("\n")
    with pytest.raises(ConfigurationError, match="is empty"):
        Neo4jSettings.from_env(uri, env={"NEO4J_PASSWORD_FILE": str(file)})
    with pytest.raises(ConfigurationError, match="cannot read NEO4J_PASSWORD_FILE"):
        Neo4jSettings.from_env(uri, env={"NEO4J_PASSWORD_FILE": str(tmp_path / "missing")})
    with pytest.raises(ConfigurationError) as refused:
        Neo4jSettings.from_env(f"neo4j+s://neo4j:{SECRET}@db.example.com", env={})
    assert SECRET not in str(refused.value) and "must not contain credentials" in str(refused.value)


def test_settings_never_show_the_password() -> None:
    settings = Neo4jSettings(uri="neo4j+s://db.example.com", user="neo4j", password=SECRET)
    for text in (
        repr(settings),
        str(settings),
        f"{settings}",
        f"{settings!r}",
        repr([settings]),
        repr(dataclasses.replace(settings, database="x")),
    ):
        assert SECRET not in text and "db.example.com" in text


@pytest.mark.parametrize(
    ("uri", "encrypted"),
    [
        ("neo4j+s://db.example.invalid:7687", True),
        ("neo4j+ssc://db.example.invalid:7687", True),
        ("bolt+s://db.example.invalid:7687", True),
        ("bolt+ssc://db.example.invalid:7687", True),
        ("neo4j://db.example.invalid:7687", False),
        ("bolt://db.example.invalid:7687", False),
    ],
)
def test_tls_uris_make_an_encrypted_driver_without_connecting(uri: str, encrypted: bool) -> None:
    driver = make_driver(Neo4jSettings(uri=uri, password=SECRET))
    try:
        assert driver.encrypted is encrypted
    finally:
        driver.close()


def test_unsupported_scheme_is_refused_and_tls_to_a_dead_port_is_unavailable() -> None:
    with pytest.raises(ConfigurationError, match="unsupported Neo4j URI scheme 'https'"):
        make_driver(Neo4jSettings(uri="https://db.example.invalid"))
    with pytest.raises(StoreUnavailableError, match=r"cannot reach Neo4j at neo4j\+s://127\.0\.0\.1:9") as down:
        Neo4jStore.connect(Neo4jSettings(uri="neo4j+s://127.0.0.1:9", password=SECRET))
    assert SECRET not in str(down.value)


def test_compose_binds_every_port_to_localhost_and_has_no_default_password() -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    published = []
    for name, service in compose["services"].items():
        for port in service.get("ports", []):
            text = port if isinstance(port, str) else f"{port.get('host_ip', '')}:{port.get('published')}"
            assert text.startswith("127.0.0.1:"), (name, port)
            published.append(text.split(":")[1])
    assert sorted(published) == ["7474", "7687", "8765", "8766"]  # Neo4j; the two ctxgraph servers
    auth = compose["services"]["neo4j"]["environment"]["NEO4J_AUTH"]
    assert auth.startswith("neo4j/${NEO4J_PASSWORD:?") and ":-" not in auth  # required, no fallback value


# ------------------------------------------------------------------ the CLI on a real server


def _neo4j(settings: object) -> Neo4jSettings:
    assert isinstance(settings, Neo4jSettings)
    assert settings.password
    return settings


def _log_in_again(settings: Neo4jSettings) -> None:
    """After a wrong password: log in with the right one (this resets Neo4j's
    failed-attempt count; after 3 in a row it locks the user for 5 s, which
    would fail the tests that come next). Waits out such a lock."""
    deadline = time.monotonic() + 30
    while True:
        try:
            Neo4jStore.connect(settings, read_only=True).close()
            return
        except AuthenticationError as exc:
            if "too many wrong passwords" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@pytest.mark.neo4j
def test_password_never_appears_in_errors_debug_or_verbose_output(neo4j_settings: object, tmp_path: Path) -> None:
    settings = _neo4j(neo4j_settings)
    (tmp_path / "task.yaml").write_text("id: adhoc\nname: Add JWT login\n")
    (tmp_path / "h.yaml").write_text("task_id: nope\nsummary: s\n")
    uri_env = {"NEO4J_URI": settings.uri, "NEO4J_USER": settings.user}
    wrong = cli_env({**uri_env, "NEO4J_PASSWORD": SECRET})
    for args in (
        ["stats"],
        ["ingest", "handoff", "h.yaml"],
        ["task", "list"],
        ["context", "--task-file", "task.yaml", "--debug", "--explain"],
    ):
        proc = subprocess.run(ctxgraph(*args), env=wrong, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        _log_in_again(settings)
        if args[0] == "context":  # degrades: the context, with one warning saying why
            assert proc.returncode == 0 and "refused the credentials" in proc.stderr, proc.stderr
        else:
            assert "refused the credentials" in assert_one_error_line(proc, 5)
        assert SECRET not in proc.stdout + proc.stderr, args
    verbose = subprocess.run(
        ctxgraph("--verbose", "stats"), env=wrong, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    _log_in_again(settings)
    assert verbose.returncode != 0 and SECRET not in verbose.stdout + verbose.stderr

    right = cli_env({**uri_env, "NEO4J_PASSWORD": settings.password or ""})
    proc = subprocess.run(
        ctxgraph("--verbose", "context", "--task-file", "task.yaml", "--debug", "--explain"),
        env=right,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "## Context Debug" in proc.stdout or "Context Debug" in proc.stdout
    assert (settings.password or "") not in proc.stdout + proc.stderr
    down = cli_env({"NEO4J_URI": "bolt://127.0.0.1:9", "NEO4J_PASSWORD": SECRET})
    proc = subprocess.run(
        ctxgraph("--verbose", "context", "--task-file", "task.yaml", "--debug"),
        env=down,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and SECRET not in proc.stdout + proc.stderr, proc.stderr


@pytest.mark.neo4j
def test_password_from_stdin_and_a_missing_password(neo4j_settings: object, tmp_path: Path) -> None:
    settings = _neo4j(neo4j_settings)
    env = cli_env({"NEO4J_URI": settings.uri, "NEO4J_USER": settings.user})
    proc = subprocess.run(
        ctxgraph("stats", "--format", "json", "--password-stdin"),
        env=env,
        cwd=tmp_path,
        input=f"{settings.password}\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("{"), proc.stderr
    proc = subprocess.run(
        ctxgraph("ingest", "handoff", "-", "--password-stdin"),
        env=env,
        cwd=tmp_path,
        input="task_id: t\nsummary: s\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "--password-stdin cannot be used" in assert_one_error_line(proc, 2)
    proc = subprocess.run(
        ctxgraph("stats", "--password-stdin"),
        env=env,
        cwd=tmp_path,
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "no password" in assert_one_error_line(proc, 2)
    proc = subprocess.run(
        ctxgraph("stats"), env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )
    _log_in_again(settings)
    line = assert_one_error_line(proc, 5)
    assert "needs a password" in line and "NEO4J_PASSWORD" in line


def _prompted(args: list[str], env: dict[str, str], cwd: Path, answer: str) -> tuple[int, str, str, bytes]:
    """Run the CLI with a terminal on stdin (and no controlling terminal, so the
    hidden prompt reads that terminal); type ``answer`` at the prompt."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            args,
            env=env,
            cwd=cwd,
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        os.close(slave)
        echoed = b""
        deadline = time.monotonic() + 60
        time.sleep(0.5)
        while time.monotonic() < deadline:  # the prompt turns echo off before reading
            import termios

            if not termios.tcgetattr(master)[3] & termios.ECHO:
                break
            time.sleep(0.05)
        os.write(master, answer.encode() + b"\n")
        out, err = proc.communicate(timeout=120)
        while select.select([master], [], [], 0.1)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            echoed += chunk
        return proc.returncode, out, err, echoed
    finally:
        os.close(master)


@pytest.mark.neo4j
def test_a_terminal_gets_a_hidden_password_prompt(neo4j_settings: object, tmp_path: Path) -> None:
    settings = _neo4j(neo4j_settings)
    env = cli_env({"NEO4J_URI": settings.uri, "NEO4J_USER": settings.user})
    code, out, err, echoed = _prompted(ctxgraph("stats", "--format", "json"), env, tmp_path, settings.password or "")
    assert code == 0, err
    assert f"Neo4j password for {settings.user} at {settings.uri}" in err
    assert out.startswith("{")
    assert (settings.password or "") not in out + err + echoed.decode(errors="replace")
    code, out, err, echoed = _prompted(ctxgraph("stats"), env, tmp_path, SECRET)
    _log_in_again(settings)
    assert code == 5 and "refused the credentials" in err and "Traceback" not in err
    assert SECRET not in out + err + echoed.decode(errors="replace")


@pytest.mark.neo4j
def test_too_many_wrong_passwords_is_one_clear_message(neo4j_settings: object) -> None:
    settings = _neo4j(neo4j_settings)
    wrong = dataclasses.replace(settings, password=SECRET)
    messages = []
    try:
        for _ in range(4):  # Neo4j locks the user after 3 failed attempts in a row
            with pytest.raises(AuthenticationError) as refused:
                Neo4jStore.connect(wrong)
            messages.append(str(refused.value))
    finally:
        _log_in_again(settings)
    assert "refused the credentials" in messages[0]
    assert "too many wrong passwords" in messages[-1]
    assert not any(SECRET in m for m in messages)
