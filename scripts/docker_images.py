"""The Docker side of scripts/docker_stack.py: commands, the engine, and the images.

The engine: Debian's docker.io, docker-compose and debootstrap, installed with
apt-get when missing; dockerd started without a bridge network when none
answers. The images: ``local/debian:bookworm`` from debootstrap, and on it the
stand-ins scripts/docker_standins/ describes, under the official names the
project's files use, each built only when no image of that name exists (so
they are kept between runs); the repository's Dockerfile built with BuildKit,
the machine's CA bundle handed to pip as the build secret ``ca``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STANDINS = REPO / "scripts" / "docker_standins"
DOCKER = "/usr/bin/docker"  # Debian's client: BuildKit built in (the other one on PATH wants buildx)
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


class Failed(Exception):
    """A step failed: one line, exit 1."""


def say(text: str) -> None:
    print(f"docker_stack: {text}", flush=True)


def run(cmd: list[str], *, timeout: float, env: dict[str, str] | None = None, check: bool = True,
        quiet: bool = False, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(cmd, env=env, timeout=timeout, capture_output=True, input=stdin, check=False)
    if check and done.returncode != 0:
        tail = (done.stdout + done.stderr).decode(errors="replace").strip().splitlines()[-25:]
        if not quiet:
            print("\n".join(tail), file=sys.stderr)
        raise Failed(f"{' '.join(cmd[:4])} ... exited {done.returncode}")
    return done


def out(cmd: list[str], timeout: float = 60, env: dict[str, str] | None = None) -> str:
    return run(cmd, timeout=timeout, env=env).stdout.decode().strip()


# ------------------------------------------------------------------ engine and images


def ensure_engine() -> subprocess.Popen[bytes] | None:
    """A Docker engine that answers; the dockerd started here, if any."""
    missing = [p for p in (DOCKER, "/usr/bin/docker-compose", "/usr/sbin/debootstrap") if not os.path.exists(p)]
    if missing:
        say(f"installing docker.io docker-compose debootstrap ({', '.join(missing)} missing)")
        run(["apt-get", "update", "-qq"], timeout=300)
        run(["apt-get", "install", "-y", "-q", "docker.io", "docker-compose", "debootstrap"], timeout=600)
    if run([DOCKER, "info"], timeout=30, check=False).returncode == 0:
        return None
    say("starting dockerd (no bridge network: containers use the host's)")
    log = open(tempfile.gettempdir() + "/docker_stack-dockerd.log", "wb")  # noqa: SIM115
    daemon = subprocess.Popen(["dockerd", "--bridge=none", "--iptables=false", "--ip-forward=false",
                               "--ip-masq=false"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while run([DOCKER, "info"], timeout=30, check=False).returncode != 0:
        if daemon.poll() is not None or time.monotonic() > deadline:
            raise Failed("dockerd did not answer within 60 s (see /tmp/docker_stack-dockerd.log)")
        time.sleep(0.5)
    return daemon


def has_image(name: str) -> bool:
    return run([DOCKER, "image", "inspect", name], timeout=30, check=False).returncode == 0


def build(tag: str, context: Path, dockerfile: Path | None = None, timeout: float = 900) -> None:
    cmd = [DOCKER, "build", "--network", "host", "-t", tag]
    if CA_BUNDLE.is_file():
        cmd += ["--secret", f"id=ca,src={CA_BUNDLE}"]
    if dockerfile is not None:
        cmd += ["-f", str(dockerfile)]
    began = time.monotonic()
    run([*cmd, str(context)], timeout=timeout, env={**os.environ, "DOCKER_BUILDKIT": "1"})
    say(f"built {tag} in {time.monotonic() - began:.0f} s")


def debian_base() -> None:
    if has_image("local/debian:bookworm"):
        return
    mirror = "http://deb.debian.org/debian"
    for sources in Path("/etc/apt/sources.list.d").glob("*.sources"):
        for line in sources.read_text().splitlines():
            if line.startswith("URIs:"):
                mirror = line.split()[1]
                break
    with tempfile.TemporaryDirectory(prefix="docker_stack-rootfs-") as rootfs:
        say(f"debootstrap --variant=minbase bookworm from {mirror}")
        run(["debootstrap", "--variant=minbase", "bookworm", rootfs, mirror], timeout=900)
        tar = subprocess.Popen(["tar", "-C", rootfs, "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run([DOCKER, "import", "-", "local/debian:bookworm"], stdin=tar.stdout,
                                  capture_output=True, timeout=300, check=False)
        tar.wait(timeout=60)
        if imported.returncode != 0 or tar.returncode != 0:
            raise Failed(f"docker import of the root file system failed: {imported.stderr.decode()[-300:]}")


def neo4j_jars(folder: Path) -> Path:
    """Neo4j's jars as scripts/neo4j_local.py fetches them: its folder when fetched,
    else fetched by Maven into ``folder`` (not into neo4j_local's own folder, which
    scripts/check.sh may be filling at the same time)."""
    sys.path.insert(0, str(REPO / "scripts"))
    from _neo4j_local.common import LIB
    from _neo4j_local.fetch import is_fetched, pom_xml

    if is_fetched():
        return Path(LIB)
    (folder / "pom.xml").write_text(pom_xml())
    say("fetching Neo4j's jars with Maven")
    run(["mvn", "-q", "-B", "-f", str(folder / "pom.xml"), "dependency:copy-dependencies",
         "-DincludeScope=runtime", f"-DoutputDirectory={folder / 'lib'}"], timeout=900)
    return folder / "lib"


def stand_ins() -> None:
    debian_base()
    if not has_image("python:3.11-slim-bookworm"):
        build("python:3.11-slim-bookworm", STANDINS, STANDINS / "python.Dockerfile")
    if not has_image("neo4j:5.26-community"):
        with tempfile.TemporaryDirectory(prefix="docker_stack-neo4j-") as tmp:
            context = Path(tmp) / "context"
            (Path(tmp) / "fetch").mkdir()
            shutil.copytree(neo4j_jars(Path(tmp) / "fetch"), context / "lib", copy_function=os.link)
            shutil.copy(STANDINS / "neo4j-entrypoint.sh", context)
            build("neo4j:5.26-community", context, STANDINS / "neo4j.Dockerfile")


def check_image(tag: str) -> None:
    """Runs as a user without privileges; no secret in its configuration or files."""
    user = out([DOCKER, "image", "inspect", "-f", "{{.Config.User}}", tag])
    uid = out([DOCKER, "run", "--rm", "--network", "host", tag, "id", "-u"])
    env = out([DOCKER, "image", "inspect", "-f", "{{range .Config.Env}}{{println .}}{{end}}", tag])
    secret_names = [line.split("=")[0] for line in env.splitlines() if any(
        word in line.split("=")[0] for word in ("TOKEN", "PASSWORD", "SECRET", "CERT"))]
    left = run([DOCKER, "run", "--rm", "--network", "host", tag, "test", "-e", "/run/secrets/ca"], timeout=60,
               check=False).returncode
    if user != "ctxgraph" or uid == "0" or secret_names or left == 0:
        raise Failed(f"image {tag}: user {user!r} (uid {uid}), secret-like variables {secret_names}, "
                     f"build secret left in it: {left == 0}")
    say(f"image {tag}: runs as {user} (uid {uid}), no secret in its variables or at the build secret's path")
