"""What the index never takes in (issue 40): secret files by name, secret values
redacted before anything is stored, git's whole ignore set, and file names that
are not UTF-8. Real files, a real git repository, detect-secrets itself."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ctxgraph.errors import ConfigurationError
from ctxgraph.memory.scan import SourceFile, candidates, changes, inside, read, walk
from ctxgraph.memory.secrets import DEFAULT, MARKER, SecretFilter
from ctxgraph.settings import load_settings
from tests._git_repo import git
from tests.unit.test_scan_changes import aged

#: Values planted in the files below: none may survive a scan.
SECRETS = {
    "yaml": "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e",
    "yaml_password": "Tr0ub4dor-and-3",
    "ini": "s3cr3t-db-pass-xyz",
    "json": "sk-live-envjson-9f8e7d6c",
    "py": "hunter2-very-secret",
    "url": "pa55word-in-url",
    "github": "ghp_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78",
    "aws": "AKIAQ3EGRJ7VX5TZ2M4P",
    "key_body": "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi",
}
FILES = {
    "config/app.yaml": f"service:\n  name: billing\n  api_key: {SECRETS['yaml']}\n  password: {SECRETS['yaml_password']}\n",
    "settings.ini": f"[database]\nhost = db.internal\npassword = {SECRETS['ini']}\n",
    "deploy/env.json": f'{{"region": "eu", "api_key": "{SECRETS["json"]}"}}\n',
    "src/db.py": (f'PASSWORD = "{SECRETS["py"]}"\nURL = "postgres://admin:{SECRETS["url"]}@db:5432/app"\n'
                  f'TOKEN = "{SECRETS["github"]}"\nAWS = "{SECRETS["aws"]}"\n'),
    "docs/deploy.md": ("# Deploy\n\n```\n-----BEGIN RSA PRIVATE KEY-----\n" + SECRETS["key_body"] + "\n"
                       "AAAAB3NzaC1yc2EAAAADAQABAAABAQC\n-----END RSA PRIVATE KEY-----\n```\n\nthen restart\n"),
}


def test_each_kind_of_secret_value_is_redacted_and_the_lines_stay() -> None:
    for rel, text in FILES.items():
        out, n = DEFAULT.redact(rel, text)
        assert n >= 1, rel
        assert MARKER in out and len(out.splitlines()) == len(text.splitlines()), rel
        assert not [v for v in SECRETS.values() if v in out], (rel, out)
    out, _ = DEFAULT.redact("docs/deploy.md", FILES["docs/deploy.md"])
    assert out.splitlines()[0] == "# Deploy" and out.splitlines()[-1] == "then restart"  # the block only


def test_what_only_looks_like_a_secret_is_kept() -> None:
    """detect-secrets' own filters: a call, a template, a $VARIABLE; code without literals."""
    code = ("def rotate_api_key(client, password):\n"
            "    password = get_password(user)\n"
            "    return client.rotate(password=password, api_key=settings.api_key)\n")
    config = "api_key: ${API_KEY}\npassword: $DB_PASSWORD\nsecret: <your secret here>\n"
    assert DEFAULT.redact("app.py", code) == (code, 0)
    assert DEFAULT.redact("config.yaml", config) == (config, 0)
    assert DEFAULT.redact("notes.txt", "") == ("", 0)


def test_secret_files_are_left_out_by_name_and_code_named_so_is_read(tmp_path: Path) -> None:
    root = tmp_path / "p"
    files = {
        ".env": "A=1\n", ".env.json": "{}\n", "prod.env": "A=1\n", "config/secrets.yaml": "a: 1\n",
        ".secrets.yaml": "a: 1\n", "credentials.json": "{}\n", "id_rsa": "x\n", "certs/server.pem": "x\n",
        "tls/site.key": "x\n", ".npmrc": "x\n", ".netrc": "x\n", "infra/terraform.tfstate": "{}\n",
        "infra/prod.tfvars": "a = 1\n", "db_password.txt": "x\n",
        # read: source and docs named so (values redacted like any file's), and a hidden file
        "src/secrets.py": "def load():\n    return 1\n", "docs/credentials.md": "# How we keep them\n",
        ".pre-commit-config.yaml": "repos: []\n", "app.py": "x = 1\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    found = changes(root, {})
    assert sorted(f.path for f in found.added) == [".pre-commit-config.yaml", "app.py", "docs/credentials.md",
                                                   "src/secrets.py"]
    left = {s.path: s.reason for s in found.skipped}
    assert set(left) == set(files) - {f.path for f in found.added}
    assert all(r.startswith("secret file (by name): ") for r in left.values()), left
    assert left[".env.json"].endswith(".env.*") and left["config/secrets.yaml"].endswith("*secret*")
    # a hit on a file now secret by name is refused at context time too
    assert read(root / ".env", ".env").reason.startswith("secret file")  # type: ignore[union-attr]


def test_the_settings_add_names_and_patterns_never_remove(tmp_path: Path) -> None:
    rules = SecretFilter(files=("private/", "*.vault.yml"), patterns=(r"internal-[0-9a-f]{8}", r"tok=(\w+)"))
    assert rules.secret_file("a/private/x.py") == "private/" and rules.secret_file("ci.vault.yml") == "*.vault.yml"
    assert rules.secret_file(".env") is not None  # the defaults still apply
    assert rules.redact("a.txt", "use internal-deadbeef and tok=abc123 ok\n") == (
        f"use {MARKER} and tok={MARKER} ok\n", 2)
    assert rules.tag != DEFAULT.tag
    for bad in ({"files": ("!.env",)}, {"patterns": ("(unclosed",)}):
        with pytest.raises(ConfigurationError):
            SecretFilter(**bad)  # type: ignore[arg-type]
    (tmp_path / "ctxgraph.toml").write_text('[index]\nsecret_files = ["private/"]\n'
                                            "secret_patterns = ['tok=(\\w+)']\n", encoding="utf-8")
    settings = load_settings(tmp_path / "ctxgraph.toml")
    assert settings.secret_files == ("private/",) and settings.secret_patterns == (r"tok=(\w+)",)
    for text in ('[index]\nsecret_files = ["!.env"]\n', "[index]\nsecret_patterns = ['(']\n",
                 '[index]\nsecret_files = "x"\n', "[index]\nkeep_env = true\n"):
        (tmp_path / "ctxgraph.toml").write_text(text, encoding="utf-8")
        with pytest.raises(ConfigurationError, match="index"):
            load_settings(tmp_path / "ctxgraph.toml")


def test_no_planted_value_reaches_a_scanned_file(tmp_path: Path) -> None:
    root = tmp_path / "p"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
        aged(root / name)
    found = changes(root, {})
    assert sorted(f.path for f in found.added) == sorted(FILES)
    assert set(found.redacted) == set(FILES) and found.redacted["config/app.yaml"] == 2
    for f in found.added:
        assert not [v for v in SECRETS.values() if v in f.text or v in f.sha256], f.path
    # the same files under other rules are read again once, whatever their stat
    stricter = SecretFilter(patterns=("billing",))
    again = changes(root, found.stats, secrets=stricter)
    assert again.read == len(again.changed) == len(FILES) and again.redacted["config/app.yaml"] == 3
    assert "name: [redacted]" in next(f.text for f in again.changed if f.path == "config/app.yaml")
    assert changes(root, again.stats, secrets=stricter).read == 0


def test_git_decides_what_is_ignored(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    names = ["app.py", "local.py", "global.py", "pkg/mod.py", "pkg/gen.py", "tracked.log.txt", "new.py"]
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x = 1\n", encoding="utf-8")
    git(root, "init", "-q")
    (root / "pkg" / ".gitignore").write_text("gen.py\n", encoding="utf-8")
    (root / ".git" / "info" / "exclude").write_text("local.py\n", encoding="utf-8")
    (tmp_path / "global-ignore").write_text("global.py\n*.log.txt\n", encoding="utf-8")
    git(root, "config", "core.excludesFile", str(tmp_path / "global-ignore"))
    git(root, "add", "-f", "tracked.log.txt")  # tracked: listed though a pattern matches it
    assert sorted(rel for _, rel in candidates(root)) == ["app.py", "new.py", "pkg/mod.py", "tracked.log.txt"]
    # a subfolder of the work tree: paths relative to it
    assert [rel for _, rel in candidates(root / "pkg")] == ["mod.py"]
    # a folder the work tree ignores whole: git lists nothing, the walk reads it (its own .gitignore applied)
    (root / ".gitignore").write_text("scratch/\n", encoding="utf-8")
    (root / "scratch").mkdir()
    (root / "scratch" / "try.py").write_text("x = 1\n", encoding="utf-8")
    (root / "scratch" / "out.txt").write_text("x\n", encoding="utf-8")
    (root / "scratch" / ".gitignore").write_text("out.txt\n", encoding="utf-8")
    assert [rel for _, rel in candidates(root / "scratch")] == ["try.py"]
    assert "scratch/try.py" not in {rel for _, rel in candidates(root)}


def _odd_file(folder: Path, name: bytes, text: str = "def cafe():\n    return 1\n") -> None:
    try:
        with open(os.path.join(os.fsencode(folder), name), "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:  # a file system that takes UTF-8 names only
        pytest.skip(f"no name that is not UTF-8 here: {exc}")


@pytest.mark.parametrize("in_git", [False, True])
def test_a_name_that_is_not_utf8_is_escaped_and_read_by_its_bytes(tmp_path: Path, in_git: bool) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "ok.py").write_text("x = 1\n", encoding="utf-8")
    _odd_file(root, b"caf\xe9.py")
    if in_git:
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "odd name")
    found = changes(root, {})
    assert [f.path for f in found.added] == ["caf%E9.py", "ok.py"] and not found.skipped
    odd = next(f for f in found.added if f.path.startswith("caf"))
    assert odd.text.startswith("def cafe") and odd.path.encode("utf-8")  # a key any store takes
    target = inside(root, "caf%E9.py")
    assert target is not None and os.fsencode(target.name) == b"caf\xe9.py"
    assert isinstance(read(target, odd.path), SourceFile)
    assert [f.path for f in walk(root) if isinstance(f, SourceFile)] == ["caf%E9.py", "ok.py"]


def test_git_output_is_split_on_nul_bytes(tmp_path: Path) -> None:
    """A name with a newline and spaces comes through whole (``-z``), not quoted."""
    root = tmp_path / "p"
    root.mkdir()
    (root / "two\nlines `x`.py").write_text("x = 1\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    assert [rel for _, rel in candidates(root)] == ["two\nlines `x`.py"]
