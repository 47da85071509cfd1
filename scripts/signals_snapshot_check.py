"""Compare the spaCy-free snapshot (``ctxgraph/signals/_tagger.py``) with spaCy.

For every task text of the evaluation sets (and, with ``--all-strings``,
every string of their JSON lines), tokens (offset, length) and fine-grained
tags from the snapshot against spaCy's pipeline as ctxgraph loads it, one
text at a time and in batches of 64, and the extracted signals of both;
prints the counts identical.

    python scripts/signals_snapshot_check.py /work/shared/eval [--all-strings]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any


def texts_of(folder: Path, all_strings: bool) -> list[str]:
    out: list[str] = []

    def strings(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                strings(v)
        elif isinstance(value, list):
            for v in value:
                strings(v)

    for path in sorted(folder.rglob("*.jsonl")):
        if path.name not in ("history.jsonl", "queries.jsonl"):
            continue
        for line in path.read_text().splitlines():
            item = json.loads(line)
            parts = [item.get("name", ""), item.get("objective", ""), *item.get("acceptance_criteria", [])]
            out.append("\n".join(p for p in parts if p))
            if all_strings:
                strings(item)
    return list(dict.fromkeys(t for t in out if t))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--all-strings", action="store_true")
    args = parser.parse_args(argv)
    from ctxgraph.signals import _pipeline, _tagger
    from ctxgraph.signals._extract import DEFAULT_MODEL, SignalExtractor

    texts = texts_of(args.folder, args.all_strings)
    spacy_pipeline = _pipeline._load(DEFAULT_MODEL, snapshot=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.snapshot"
        _tagger.export(spacy_pipeline.nlp, spacy_pipeline.tables(), path)
        snap = _pipeline.Pipeline.from_snapshot(_tagger.Snapshot.load(path), DEFAULT_MODEL)
    tokens_same = tags_same = signals_same = 0
    shown = 0
    ex_spacy, ex_snap = SignalExtractor(), SignalExtractor()
    for text in texts:
        a = spacy_pipeline.tagged([text])[0]
        b = snap.tagged([text])[0]
        tokens_same += [r[:2] for r in a] == [r[:2] for r in b]
        tags_same += a == b
        sa = ex_spacy._signals(spacy_pipeline, text, a, None)
        sb = ex_snap._signals(snap, text, b, None)
        signals_same += sa == sb
        if a != b and shown < 5:
            shown += 1
            diff = [(x, y) for x, y in zip(a, b, strict=False) if x != y][:3]
            print(f"differs: {text[:80]!r}: {diff} ({len(a)} vs {len(b)} tokens)", file=sys.stderr)
    # In batches too (extract_many): spaCy's nlp.pipe and the snapshot, 64 texts a pass.
    batched_same = sum(a == b for a, b in zip(spacy_pipeline.tagged(texts), snap.tagged(texts), strict=True))
    n = len(texts)
    print(json.dumps({"texts": n, "tokens_identical": tokens_same, "tags_identical": tags_same,
                      "signals_identical": signals_same, "share_signals_identical": round(signals_same / n, 6),
                      "batched_tags_identical": batched_same}))
    return 0 if signals_same == batched_same == n else 1


if __name__ == "__main__":
    sys.exit(main())
