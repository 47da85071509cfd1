"""``ctxgraph view`` opened in a real headless browser (Debian's chromium): the
page of task-015 on the demo store draws the task, its dependencies and the
knowledge its context drew on; a screenshot is taken (its path printed and
recorded as the test's ``screenshot`` property); the page loads nothing from
the network. Without chromium the tests are skipped, except under CI=true
(scripts/check.sh installs it), where they fail."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import signal
import socketserver
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _mcp_client import clean_env, cli_error, cli_ok

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
WINDOW = (1400, 900)
#: What the browser itself asks of the network on start (its clock, component
#: updates, sign-in), whatever page it shows: not the page's requests. A page
#: asking any other host is caught (test_the_network_check_sees_a_page_that_loads).
BROWSER_OWN_HOSTS = {"clients2.google.com", "update.googleapis.com", "accounts.google.com"}


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "no chromium on PATH (Debian: apt-get install chromium)"
        if IN_CI:
            pytest.fail(f"CI=true and {message}; scripts/check.sh installs it", pytrace=False)
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("view-demo")
    cli_ok("demo", "--store", str(folder / "demo.db"), cwd=folder)
    return folder


class Refuser(socketserver.ThreadingTCPServer):
    """A proxy on 127.0.0.1 that refuses every request and records its first line."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        self.requests: list[str] = []

        class Handler(socketserver.BaseRequestHandler):
            def handle(inner) -> None:
                first = inner.request.recv(65536).split(b"\r\n", 1)[0].decode("latin-1")
                self.requests.append(first)
                inner.request.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

        super().__init__(("127.0.0.1", 0), Handler)

    def page_requests(self) -> list[str]:
        """The requests not the browser's own (:data:`BROWSER_OWN_HOSTS`)."""
        def host(line: str) -> str:
            target = line.split(" ")[1] if " " in line else line
            return re.sub(r"^[a-z]+://", "", target).split("/")[0].split(":")[0]
        return [r for r in self.requests if host(r) not in BROWSER_OWN_HOSTS]


@pytest.fixture
def proxy() -> Iterator[Refuser]:
    server = Refuser()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def browse(chromium: str, url: str, proxy: Refuser, profile: Path, *what: str) -> subprocess.CompletedProcess[bytes]:
    """chromium --headless on ``url`` with every request sent to ``proxy`` (loopback too), ``what``:
    --dump-dom or --screenshot=PATH. The script runs within the virtual time budget."""
    args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-default-apps", "--disable-domain-reliability", "--no-pings",
            "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate",
            f"--user-data-dir={profile}", f"--proxy-server=http://127.0.0.1:{proxy.server_address[1]}",
            "--proxy-bypass-list=<-loopback>", f"--window-size={WINDOW[0]},{WINDOW[1]}",
            "--virtual-time-budget=10000", *what, url]
    proc = subprocess.run(args, capture_output=True, timeout=180, env=clean_env())
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return proc


def drawn(dom: str) -> dict[str, Any]:
    """What the page's script says the library drew (its hidden ``#drawn`` element)."""
    found = re.search(r'<pre id="drawn" hidden="">(.*?)</pre>', dom, re.DOTALL)
    assert found, "the page's script did not run to its end (no #drawn)"
    value: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return value


def network_references(page: str) -> list[str]:
    """src/href/url()/@import values of the page that name a network location."""
    refs = re.findall(r"""(?:\bsrc|\bhref|\baction)\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]+)""", page, re.IGNORECASE)
    refs += re.findall(r"""(?:url\(|@import\s)\s*["']?((?:https?:)?//[^"')\s]+)""", page, re.IGNORECASE)
    return refs


def test_task_015_in_a_headless_browser(chromium: str, demo: Path, proxy: Refuser, tmp_path: Path,
                                        record_property: Any, capsys: pytest.CaptureFixture[str]) -> None:
    store = ["--store", str(demo / "demo.db")]
    page = tmp_path / "task-015.html"
    out = cli_ok("view", "task-015", *store, "--output", str(page), cwd=tmp_path)
    assert re.fullmatch(rf"wrote {re.escape(str(page))} \(task-015: \d+ nodes, \d+ edges\)\n", out)
    text = page.read_text(encoding="utf-8")
    assert network_references(text) == []

    dom = browse(chromium, page.as_uri(), proxy, tmp_path / "profile", "--dump-dom").stdout.decode()
    shown = drawn(dom)
    ids = {n["id"] for n in shown["nodes"]}
    task = json.loads(cli_ok("task", "show", "task-015", *store, "--format", "json", cwd=tmp_path))
    ctx = json.loads(cli_ok("context", "task-015", *store, "--format", "json", cwd=tmp_path))
    knowledge = {f"k:{x['id']}" for part in ("patterns_to_follow", "warnings", "relevant_decisions",
                                             "blocking_questions") for x in ctx[part]}
    assert "task:task-015" in ids
    assert {f"task:{d}" for d in task["depends_on"]} == {"task:task-003", "task:task-006", "task:task-007"} <= ids
    assert {f"handoff:{d}" for d in task["depends_on"]} <= ids
    assert len(knowledge) >= 10 and knowledge <= ids
    assert shown["edges"] >= len(ids) - 1
    width, height = WINDOW
    assert all(n["visible"] and 0 <= n["x"] <= width and 0 <= n["y"] <= height for n in shown["nodes"]), shown
    assert 'data-node="task:task-015"' in dom and f"Drawn: {len(ids)} nodes" in dom

    shot = tmp_path / "view-task-015.png"
    browse(chromium, page.as_uri(), proxy, tmp_path / "profile", f"--screenshot={shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    record_property("screenshot", str(shot))
    with capsys.disabled():
        print(f"\nctxgraph view task-015: screenshot {shot}")
    assert proxy.page_requests() == []


def test_the_network_check_sees_a_page_that_loads(chromium: str, proxy: Refuser, tmp_path: Path) -> None:
    """The two checks above can fail: a page that loads a script and an image is caught by both."""
    page = tmp_path / "loads.html"
    page.write_text('<!DOCTYPE html><img src="http://images.example.test/a.png">'
                    '<script src="//cdn.example.test/lib.js"></script>', encoding="utf-8")
    assert network_references(page.read_text(encoding="utf-8")) == ["http://images.example.test/a.png",
                                                                    "//cdn.example.test/lib.js"]
    browse(chromium, page.as_uri(), proxy, tmp_path / "profile", "--dump-dom")
    hosts = " ".join(proxy.page_requests())
    assert "images.example.test" in hosts


def test_whole_graph_overview_and_its_limit(chromium: str, demo: Path, proxy: Refuser, tmp_path: Path) -> None:
    store = ["--store", str(demo / "demo.db")]
    out = cli_ok("view", *store, cwd=tmp_path)  # the default file
    assert out == "wrote ctxgraph-view.html (the whole graph: 140 nodes, 174 edges)\n"
    dom = browse(chromium, (tmp_path / "ctxgraph-view.html").as_uri(), proxy, tmp_path / "profile",
                 "--dump-dom").stdout.decode()
    ids = {n["id"] for n in drawn(dom)["nodes"]}
    assert len(ids) == 140 and {f"task:task-{n:03d}" for n in range(1, 18)} <= ids
    assert proxy.page_requests() == []

    (tmp_path / "ctxgraph-view.html").unlink()
    code, line = cli_error("view", *store, "--limit", "100", cwd=tmp_path)
    assert (code, line) == (1, "ctxgraph: error: the graph has 140 nodes (tasks, knowledge items, files), more "
                               "than the overview draws (100); name a task to see its neighbourhood: "
                               "ctxgraph view TASK_ID")
    assert cli_error("view", "task-999", *store, cwd=tmp_path)[1] == "ctxgraph: error: unknown task: 'task-999'"
    assert cli_error("view", "--port", "8080", *store, cwd=tmp_path) == (
        2, "ctxgraph: error: --port is where --serve listens: give --serve too")
    assert cli_error("view", "task-015", "--limit", "5", *store, cwd=tmp_path) == (
        2, "ctxgraph: error: --limit bounds the whole-graph overview: give no TASK_ID, or no --limit")
    assert not (tmp_path / "ctxgraph-view.html").exists()


def test_serve_on_loopback(demo: Path, tmp_path: Path) -> None:
    store = ["--store", str(demo / "demo.db")]
    written = tmp_path / "page.html"
    cli_ok("view", "task-015", *store, "-o", str(written), cwd=tmp_path)
    env = clean_env({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {})
    with subprocess.Popen([sys.executable, "-m", "ctxgraph", "view", "task-015", *store, "--serve"], cwd=tmp_path,
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline().decode()
            found = re.match(r"serving (http://127\.0\.0\.1:\d+/) \(task-015: \d+ nodes, \d+ edges\); Ctrl-C to stop",
                             line)
            assert found, line
            with urllib.request.urlopen(found.group(1), timeout=30) as answer:
                assert answer.headers["Content-Type"] == "text/html; charset=utf-8"
                served = answer.read().decode()
            assert served == written.read_text(encoding="utf-8")
            with pytest.raises(urllib.error.HTTPError) as missing:
                urllib.request.urlopen(found.group(1) + "other", timeout=30)
            assert missing.value.code == 404
            missing.value.close()
        finally:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(60) == 0
    assert not (tmp_path / "ctxgraph-view.html").exists()  # --serve alone writes nothing
