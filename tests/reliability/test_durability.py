"""Durability of the embedded store: a process killed with SIGKILL in the
middle of a batch ingest leaves a store that opens (read-only too), passes
SQLite's integrity check, holds every handoff it reported committed, and
holds no handoff in part. Re-running the same ingest completes it, and the
result equals an uninterrupted run byte for byte (`ctxgraph export`)."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _faults import FAULTS, Corpus, build_corpus, check_all_or_nothing, cli_env, export_bytes, kill, popen

from ctxgraph.graph.backup import ExportReader
from ctxgraph.graph.local import LocalStore
from ctxgraph.signals import SignalExtractor

N_HANDOFFS = 120
KILLS = 5

#: Handoffs per transaction in the child (the CLI's default, 500, would write
#: the whole corpus in one transaction).
BATCH = 8

#: One batch ingest through the service, as `ctxgraph ingest handoff DIR
#: --batch-size 8` does it, printing a line per handoff once its batch's
#: transaction has committed.
CHILD = r"""
import sys
from pathlib import Path
from ctxgraph.service import ContextService

store, folder, batch = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
files = sorted(folder.glob("*.yaml"))
with ContextService.open(store) as svc:
    svc.ingest_handoffs([(f.name, f.read_bytes()) for f in files], batch_size=batch,
                        progress=lambda n: print("committed\n" * n, end="", flush=True))
print("done", flush=True)
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, extractor: SignalExtractor) -> Corpus:
    return build_corpus(tmp_path_factory.mktemp("durability"), N_HANDOFFS, extractor)


@pytest.mark.slow
def test_sigkill_during_a_batch_ingest_loses_nothing_committed_and_leaves_nothing_half_written(
    corpus: Corpus, tmp_path: Path
) -> None:
    db = tmp_path / "graph.db"
    seed = LocalStore.open(db)
    seed.import_rows(ExportReader.from_path(corpus.base).rows())
    seed.close()
    order = [f.stem for f in corpus.handoff_files()]
    rng = random.Random(7)
    present = 0
    kills = 0
    while kills < KILLS:
        # Kill after the k-th reported commit plus a random few milliseconds: the
        # next batch's transaction is then usually half done (k stays short of
        # the last batch, which would finish the run before the kill).
        k = rng.randint(present + 1, min(N_HANDOFFS - 2 * BATCH, present + N_HANDOFFS // (2 * KILLS)))
        seen = 0
        with popen(
            [sys.executable, "-c", CHILD, str(db), str(corpus.handoffs), str(BATCH)],
            env=cli_env(),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                seen += line == "committed\n"
                if seen >= k:
                    time.sleep(rng.uniform(0, 0.005))
                    kill(proc.pid)
                    break
            proc.wait(timeout=60)
            assert proc.returncode == -9, (proc.returncode, proc.stderr.read() if proc.stderr else "")
        kills += 1
        FAULTS["embedded store: SIGKILL during a batch ingest"] += 1
        assert Path(str(db) + "-wal").exists(), "killed with a live connection: the WAL must still be there"

        # Reading first (read-only: this is what a `ctxgraph context` would see next) ...
        reader = LocalStore.open(db, read_only=True)
        try:
            assert reader.db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            snapshot = export_bytes(reader, tmp_path)
        finally:
            reader.close()
        now_present = check_all_or_nothing(snapshot, corpus, order)
        assert now_present >= seen, f"{seen} handoffs were reported committed, only {now_present} are there"
        assert now_present >= present
        present = now_present

    # ... then the same ingest again, to the end.
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(db), str(corpus.handoffs), str(BATCH)],
        env=cli_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("committed") == N_HANDOFFS and done.stderr == ""
    store = LocalStore.open(db, read_only=True)
    try:
        assert store.db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        final = export_bytes(store, tmp_path)
    finally:
        store.close()
    assert check_all_or_nothing(final, corpus, order) == N_HANDOFFS
    assert final == corpus.reference
