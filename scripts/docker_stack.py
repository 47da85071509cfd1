#!/usr/bin/env python3
"""Build the image and run the compose stack with two ctxgraph replicas on one
Neo4j, then put it under load and faults (docs/deploy.md, "What is tested").

Steps, each bounded in time; any failure tears the stack down and exits 1:

1. A Docker engine: Debian's docker.io, docker-compose and debootstrap are
   installed with apt-get when missing (root); dockerd is started without a
   bridge network when none answers (and stopped at the end).
2. Base images, each only when no image of that name exists (so they are
   kept between runs): ``local/debian:bookworm`` from debootstrap, and
   stand-ins built on it under the official names the project's files use,
   ``python:3.11-slim-bookworm`` and ``neo4j:5.26-community``
   (scripts/docker_standins/). On a machine that can pull the official
   images, pull them first and they are used as they are.
3. The repository's Dockerfile, built as ``ctxgraph:local`` (BuildKit; the
   machine's CA bundle handed to pip as the build secret ``ca``).
4. docker-compose.yml with docker-compose.host.yml (host networking) and the
   ``replicas`` profile, on a small git project; /readyz 200 on both
   replicas; compute_context and ingest_handoff through each with the token;
   /metrics counts the calls.
5. The load run (scripts/docker_load.py): 16 clients for 60 s across the
   replicas, one replica's process killed with SIGKILL at 10 s (its restart
   policy brings it back), Neo4j restarted at 25 s. Then: every acknowledged
   handoff is in the graph (``graph_stats`` and ``ctxgraph export``), errors
   fell only while a replica or Neo4j was down, /readyz said 503 while Neo4j
   was away and 200 after without a restart of ctxgraph; p50/p95 printed.

Run as root: ``python scripts/docker_stack.py`` (``--keep`` leaves the stack
up; ``--no-load`` stops after step 4).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docker_load as dl
from docker_images import DOCKER, REPO, Failed, build, check_image, ensure_engine, out, run, say, stand_ins

#: docker-compose on the stack's file (host_compose_file writes it), with the replicas' profile.
COMPOSE: list[str] = []
BOLT_PORT, HTTP_PORT = 7720, 7420
BASES = ["http://127.0.0.1:8765", "http://127.0.0.1:8766"]
SERVICES = ["ctxgraph", "ctxgraph-2"]
#: Errors are allowed this long after a down window ends (a call in flight, a client's back-off).
GRACE_S = 5.0


# ------------------------------------------------------------------ the stack


def sample_project(folder: Path) -> None:
    """A small git project for the memory to index (the repository itself would keep two cores busy)."""
    (folder / "src").mkdir(parents=True)
    os.chmod(folder.parent, 0o755)
    (folder / "src" / "auth.py").write_text('def verify(token: str) -> str:\n    """Check a JWT\'s signature '
                                            'and expiry."""\n    return token\n')
    (folder / "README.md").write_text("# Sample\nA login service: JWT verification and key rotation.\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "stack", "GIT_AUTHOR_EMAIL": "stack@example.invalid",
           "GIT_COMMITTER_NAME": "stack", "GIT_COMMITTER_EMAIL": "stack@example.invalid"}
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "sample"]):
        run(["git", "-C", str(folder), *cmd], timeout=60, env=env)
    os.chmod(folder, 0o755)


def merged(base: Any, override: Any) -> Any:
    """``override`` on ``base`` as Compose merges a second file: mappings key by key, anything else replaced."""
    if isinstance(base, dict) and isinstance(override, dict):
        return {**base, **{k: merged(base.get(k), v) for k, v in override.items()}}
    return override


def host_compose_file(folder: Path) -> None:
    """docker-compose.yml with docker-compose.host.yml, without the published ports
    of services on the host's network (see docker-compose.host.yml), into ``folder``;
    it becomes :data:`COMPOSE`'s file. Variables stay unresolved (no secret in it)."""
    import yaml

    config = merged(yaml.safe_load((REPO / "docker-compose.yml").read_text()),
                    yaml.safe_load((REPO / "docker-compose.host.yml").read_text()))
    for service in config["services"].values():
        if service.get("network_mode") == "host":
            service.pop("ports", None)
        if "build" in service:
            service["build"] = str(REPO)
    target = folder / "docker-compose.yml"
    target.write_text(yaml.safe_dump(config, sort_keys=False))
    COMPOSE[:] = ["docker-compose", "-p", "ctxgraph-stack", "-f", str(target), "--profile", "replicas"]


def container(env: dict[str, str], service: str) -> str:
    return out([*COMPOSE, "ps", "-q", service], env=env)


def status(url: str) -> tuple[int, str]:
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(url, timeout=3) as answer:
            return answer.status, answer.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except OSError as exc:
        return 0, str(exc)


def wait_ready(urls: list[str], timeout: float) -> float:
    """Seconds until every ``url`` answers 200."""
    began = time.monotonic()
    pending = list(urls)
    while pending:
        pending = [u for u in pending if status(u)[0] != 200]
        if pending and time.monotonic() - began > timeout:
            raise Failed(f"not 200 within {timeout:.0f} s: {', '.join(pending)} ({status(pending[0])})")
        time.sleep(0.2)
    return time.monotonic() - began


def started_at(container_id: str) -> float:
    """When the container last started, as time.time() seconds."""
    from datetime import datetime

    text = out([DOCKER, "inspect", "-f", "{{.State.StartedAt}}", container_id])
    whole, _, fraction = text.rstrip("Z").partition(".")
    return datetime.fromisoformat(whole + "+00:00").timestamp() + float("0." + (fraction or "0")[:6])


def time_to_serve(env: dict[str, str]) -> list[float]:
    """Per replica: seconds from its container's start to /healthz 200."""
    wait_ready([f"{b}/healthz" for b in BASES], 180)
    found = []
    for service, base in zip(SERVICES, BASES, strict=True):
        began = started_at(container(env, service))
        while status(f"{base}/healthz")[0] != 200:
            time.sleep(0.1)
        found.append(time.time() - began)
    return found


def metrics_count(text: str, tool: str) -> float:
    """The sum of the samples of lines that name ``tool`` and count calls."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith("#") or f'"{tool}"' not in line or "_calls" not in line.split("{")[0]:
            continue
        try:
            total += float(line.rsplit(" ", 1)[1])
        except (IndexError, ValueError):
            continue
    return total


def smoke(token: str) -> None:
    for n, base in enumerate(BASES):
        problems = asyncio.run(dl.smoke(base, token, f"r{n + 1}"))
        if problems:
            raise Failed("; ".join(problems))
        code, text = status(f"{base}/metrics")
        counts = {tool: metrics_count(text, tool) for tool in ("compute_context", "ingest_handoff", "add_task")}
        if code != 200 or min(counts.values()) < 1:
            raise Failed(f"{base}/metrics: status {code}, calls counted {counts}")
        say(f"{base}: compute_context, add_task and ingest_handoff answered; /metrics counts {counts}")


# ------------------------------------------------------------------ load and faults


def restart_count(container_id: str) -> int:
    return int(out([DOCKER, "inspect", "-f", "{{.RestartCount}}", container_id]))


def load_run(env: dict[str, str], token: str, clients: int, duration: float) -> dl.Run:
    replica2, neo4j = container(env, "ctxgraph-2"), container(env, "neo4j")

    async def kill_replica() -> None:
        pid = int(out([DOCKER, "inspect", "-f", "{{.State.Pid}}", replica2]))
        os.kill(pid, signal.SIGKILL)  # a crash: the restart policy brings the container back

    async def restart_neo4j() -> None:
        await asyncio.to_thread(run, [DOCKER, "restart", "-t", "30", neo4j], timeout=180)

    state = dl.Run(bases=BASES, token=token, clients=clients, duration=duration)
    faults = [(duration * 2 / 15, "SIGKILL replica 2", kill_replica), (duration / 3, "restart Neo4j", restart_neo4j)]
    asyncio.run(dl.load(state, faults, settle=90.0))
    return state


def first(probes: list[tuple[float, int, str, int]], after: float, replica: int, path: str,
          code: int | None = None, not_code: int | None = None) -> float | None:
    for at, rep, what, got in probes:
        if at >= after and rep == replica and what == path and (code is None or got == code) \
                and (not_code is None or got != not_code):
            return at
    return None


def down_windows(state: dl.Run) -> tuple[tuple[float, float], tuple[float, float], list[str]]:
    """The window replica 2 was down, the window Neo4j was, and what /readyz failed to show."""
    events = dict((what, at) for at, what in state.events)
    problems: list[str] = []
    killed, restarting = events["SIGKILL replica 2 ..."], events["restart Neo4j ..."]
    back = first(state.probes, killed, 1, "healthz", code=200)
    back = first(state.probes, back, 1, "readyz", code=200) if back is not None else None
    if back is None:
        problems.append("replica 2 did not serve again after its SIGKILL")
    absent = [first(state.probes, restarting, r, "readyz", code=503) for r in range(len(BASES))]
    if absent[0] is None:
        problems.append("replica 1's /readyz never said 503 while Neo4j restarted")
    recovered = [first(state.probes, a, r, "readyz", code=200) if a is not None else None
                 for r, a in enumerate(absent)]
    if recovered[0] is None:
        problems.append("replica 1's /readyz did not turn 200 again after Neo4j's restart")
    neo_end = max((r for r in recovered if r is not None), default=state.now())
    return (killed, back or state.now()), (restarting, neo_end), problems


def check_errors(state: dl.Run, replica_down: tuple[float, float], neo_down: tuple[float, float]) -> list[str]:
    def overlaps(o: dl.Outcome, window: tuple[float, float]) -> bool:
        return o.at <= window[1] + GRACE_S and o.end >= window[0]

    stray = [o for o in state.outcomes if not o.ok and not overlaps(o, neo_down)
             and not (o.replica == 1 and overlaps(o, replica_down))]
    return [f"client {o.client} (replica {o.replica + 1}), a call from {o.at:.1f} s to {o.end:.1f} s: {o.error}"
            for o in stray[:10]]


def graph_handoffs(env: dict[str, str], token: str) -> tuple[int, set[str]]:
    """Handoff nodes: their count by graph_stats, their ids by `ctxgraph export` in the image."""

    async def stats() -> dict[str, Any]:
        async with dl.session(BASES[0], token) as client:
            return await dl.call(client, "graph_stats", {})

    counted = int(asyncio.run(stats())["labels"].get("Handoff", 0))
    exported = run([DOCKER, "run", "--rm", "--network", "host", "-e", f"NEO4J_URI=neo4j://127.0.0.1:{BOLT_PORT}",
                    "-e", "NEO4J_PASSWORD", "ctxgraph:local", "ctxgraph", "export", "-"], timeout=300, env=env)
    ids, links = set(), dict[str, int]()
    for line in exported.stdout.decode().splitlines():
        row = json.loads(line)
        if row.get("kind") == "node" and row.get("label") == "Handoff":
            ids.add(str(row["id"]).removeprefix("handoff:"))
        elif row.get("kind") == "rel" and row.get("type") == "DISCOVERED" and row["src"][0] == "Handoff":
            name = str(row["src"][1]).removeprefix("handoff:")
            links[name] = links.get(name, 0) + 1
    # every handoff of the load run holds one pattern and one gotcha: fewer is a half-written one
    half = sorted(i for i in ids if i.startswith("load-") and links.get(i, 0) != 2)
    if half:
        raise Failed(f"handoffs written in part (knowledge links other than 2): {half[:10]}")
    return counted, ids


def baseline(token: str, seconds: float) -> None:
    """p50/p95 with one client a replica (one ingesting, one asking contexts), before the load."""
    state = dl.Run(bases=BASES, token=token, clients=2, duration=seconds)
    say(f"light load: 2 clients for {seconds:.0f} s (one a replica)")
    asyncio.run(dl.load(state, [], settle=0.0))
    failed = [o for o in state.outcomes if not o.ok]
    if failed:
        raise Failed(f"errors without any fault: {failed[0].error}")
    report(state, faults=False)


def report(state: dl.Run, faults: bool = True) -> None:
    for op in ("context", "ingest"):
        done = [o.ms for o in state.outcomes if o.ok and o.op == op]
        p50, p95 = dl.percentiles(done)
        failed = sum(1 for o in state.outcomes if not o.ok and o.op == op)
        say(f"{op}: {len(done)} calls ok ({len(done) / state.duration:.1f}/s), {failed} failed; "
            f"p50 {p50:.0f} ms, p95 {p95:.0f} ms")
    if not faults:
        return
    quiet = [o.ms for o in state.outcomes if o.ok and o.op == "context" and o.end < state.duration * 2 / 15]
    p50, p95 = dl.percentiles(quiet)
    say(f"context before the first fault: p50 {p50:.0f} ms, p95 {p95:.0f} ms ({len(quiet)} calls)")


def load_and_faults(env: dict[str, str], token: str, clients: int, duration: float) -> None:
    before = {s: (container(env, s), restart_count(container(env, s))) for s in SERVICES}
    say(f"load: {clients} clients for {duration:.0f} s; SIGKILL of replica 2 at {duration * 2 / 15:.0f} s, "
        f"Neo4j restarted at {duration / 3:.0f} s")
    state = load_run(env, token, clients, duration)
    report(state)
    replica_down, neo_down, problems = down_windows(state)
    say(f"replica 2 down {replica_down[0]:.1f}-{replica_down[1]:.1f} s; Neo4j away "
        f"{neo_down[0]:.1f}-{neo_down[1]:.1f} s (by /readyz)")
    problems += check_errors(state, replica_down, neo_down)
    first_id, restarts = before["ctxgraph"]
    if container(env, "ctxgraph") != first_id or restart_count(first_id) != restarts:
        problems.append("replica 1 was restarted (it should have recovered from Neo4j's restart by itself)")
    wait_ready([f"{b}/readyz" for b in BASES], 60)
    for n, base in enumerate(BASES):  # both serve again, replica 1 never restarted
        again = asyncio.run(dl.smoke(base, token, f"after-r{n + 1}"))
        problems += [f"after the faults: {p}" for p in again]
    counted, exported = graph_handoffs(env, token)
    missing = sorted(state.acknowledged - exported)
    say(f"{len(state.acknowledged)} handoffs acknowledged; the graph holds {counted} handoffs "
        f"(graph_stats), {len(exported)} in the export; missing: {len(missing)}")
    if missing or counted < len(state.acknowledged):
        problems.append(f"acknowledged handoffs missing from the graph: {missing[:10]}")
    if not state.acknowledged:
        problems.append("no handoff was acknowledged")
    if problems:
        raise Failed("; ".join(problems))


def sigterm_under_load(env: dict[str, str], token: str) -> None:
    """4 clients on replica 2 (two ingesting); `docker stop` (SIGTERM) at 3 s: the server drains
    and exits 0 within its bound, and every handoff acknowledged is in the graph, whole."""
    replica2 = container(env, "ctxgraph-2")
    stopped: list[float] = []

    async def stop() -> None:
        began = time.monotonic()
        await asyncio.to_thread(run, [DOCKER, "stop", "-t", "15", replica2], timeout=60)
        stopped.append(time.monotonic() - began)

    state = dl.Run(bases=[BASES[1]], token=token, clients=4, duration=8.0)
    say("SIGTERM: 4 clients on replica 2, `docker stop` at 3 s")
    asyncio.run(dl.load(state, [(3.0, "docker stop replica 2", stop)], settle=0.0))
    code = out([DOCKER, "inspect", "-f", "{{.State.ExitCode}}", replica2])
    errors = sorted({o.error.split(":")[0] for o in state.outcomes if not o.ok})
    _, exported = graph_handoffs(env, token)
    missing = sorted(state.acknowledged - exported)
    say(f"replica 2 stopped in {stopped[0]:.1f} s with exit code {code}; "
        f"{sum(o.ok for o in state.outcomes)} calls answered, errors after: {errors or 'none'}; "
        f"{len(state.acknowledged)} handoffs acknowledged, missing: {len(missing)}")
    if code != "0" or missing or stopped[0] > 15:
        raise Failed(f"SIGTERM: exit code {code}, stop took {stopped[0]:.1f} s, acknowledged but missing: "
                     f"{missing[:10]}")


# ------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="docker_stack", description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="leave the stack up at the end")
    parser.add_argument("--no-load", action="store_true", help="stop after the replicas' first calls")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--timeout", type=float, default=1500.0, help="the whole run's bound, in seconds")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("docker_stack: error: run as root (it installs packages and starts dockerd)", file=sys.stderr)
        return 2
    began = time.monotonic()
    def over(*_: object) -> None:
        raise Failed(f"not done within --timeout {args.timeout:.0f} s")

    signal.signal(signal.SIGALRM, over)
    signal.alarm(int(args.timeout))
    # (a password starting with "-" would be read as an option by the stand-in's neo4j-admin: a letter first)
    token, password = secrets.token_urlsafe(32), "p" + secrets.token_urlsafe(24)
    daemon: subprocess.Popen[bytes] | None = None
    project = Path(tempfile.mkdtemp(prefix="docker_stack-project-"))
    env = {**os.environ, "NEO4J_PASSWORD": password, "CTXGRAPH_MCP_TOKEN": token,
           "CTXGRAPH_PROJECT_DIR": str(project / "code"), "CTXGRAPH_HOST_BOLT_PORT": str(BOLT_PORT),
           "CTXGRAPH_HOST_HTTP_PORT": str(HTTP_PORT)}
    up = False
    try:
        daemon = ensure_engine()
        stand_ins()
        say(f"base images ready after {time.monotonic() - began:.0f} s")
        build("ctxgraph:local", REPO)
        size = int(out([DOCKER, "image", "inspect", "-f", "{{.Size}}", "ctxgraph:local"]))
        say(f"image ctxgraph:local: {size / 1e6:.0f} MB")
        check_image("ctxgraph:local")
        sample_project(project / "code")
        host_compose_file(project)
        run([*COMPOSE, "down", "-v", "--remove-orphans"], timeout=120, env=env, check=False)
        up = True
        run([*COMPOSE, "up", "-d", "--no-build"], timeout=300, env=env)
        serve = time_to_serve(env)
        say("time to serve (container start to /healthz 200): "
            + ", ".join(f"{s:.1f} s" for s in serve))
        wait_ready([f"{b}/readyz" for b in BASES], 120)
        smoke(token)
        if not args.no_load:
            baseline(token, 20.0)
            load_and_faults(env, token, args.clients, args.duration)
            sigterm_under_load(env, token)
        say(f"passed in {time.monotonic() - began:.0f} s")
        return 0
    except (Failed, subprocess.TimeoutExpired) as exc:
        print(f"docker_stack: error: {exc}", file=sys.stderr)
        if up:
            logs = run([*COMPOSE, "logs", "--tail", "30"], timeout=60, env=env, check=False)
            print(logs.stdout.decode(errors="replace")[-6000:], file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
        if up and args.keep:
            say(f"left up: {' '.join(COMPOSE)} (with NEO4J_PASSWORD, CTXGRAPH_MCP_TOKEN and "
                f"CTXGRAPH_PROJECT_DIR={project / 'code'} set) down -v")
        elif up:
            run([*COMPOSE, "down", "-v", "--remove-orphans"], timeout=180, env=env, check=False)
        if not (up and args.keep):
            shutil.rmtree(project, ignore_errors=True)
        if daemon is not None and not args.keep:
            daemon.terminate()
            daemon.wait(timeout=60)


if __name__ == "__main__":
    sys.exit(main())
