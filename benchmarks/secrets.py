"""What the index's secret filter costs and what it redacts, on real trees.

For each tree: the text files the index would read (``ctxgraph.memory.scan``
candidates, secret files by name left out), their lines and size; the CPU
time to read them all, and the CPU time of the redaction alone
(:meth:`ctxgraph.memory.secrets.SecretFilter.redact`, its memo bypassed),
also per MB; then, per detect-secrets plugin, the values it found (after its
heuristic filters, for the guessing ones) and in how many files, with a few
lines as examples (cut at 100 characters) — the false positives to judge by
eye. ``--plugins`` also times each plugin alone over every line, without the
whole-text gates (what the gates save).

    python -m benchmarks.secrets                       # ctxgraph/, tests/, docs/ of this checkout
    python -m benchmarks.secrets PATH [PATH ...] [--plugins] [--examples 3]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from ctxgraph.memory import secrets
from ctxgraph.memory.scan import SourceFile, walk
from ctxgraph.memory.secrets import DEFAULT, GUESSING

HERE = Path(__file__).resolve().parents[1]


def measure(root: Path, *, examples: int, plugins: bool) -> None:
    began = time.process_time()
    files = [f for f in walk(root) if isinstance(f, SourceFile)]
    read_s = time.process_time() - began
    raw = {f.path: (root / f.path).read_text(encoding="utf-8", errors="replace") for f in files}
    size = sum(len(t) for t in raw.values()) / 1e6
    lines = sum(t.count("\n") + 1 for t in raw.values())
    found = secrets._detectors()
    began = time.process_time()
    redacted = {p: secrets._redact(found, (), p, t)[1] for p, t in raw.items()}
    redact_s = time.process_time() - began
    print(f"\n{root}: {len(files)} files, {lines:,} lines, {size:.1f} MB")
    print(f"  read (redaction included): {read_s:.2f} s CPU; redaction alone {redact_s:.2f} s "
          f"({redact_s / max(size, 1e-9):.2f} s/MB); {sum(1 for n in redacted.values() if n)} files with "
          f"{sum(redacted.values())} values redacted")
    hits: dict[str, int] = defaultdict(int)
    where: dict[str, set[str]] = defaultdict(set)
    shown: dict[str, list[str]] = defaultdict(list)
    for path, text in raw.items():
        for number, line in enumerate(text.splitlines(), start=1):
            for name, plugin, _ in found.plugins:
                values = _plugin_values(found, name, plugin, path, line, number)
                if values:
                    hits[name] += len(values)
                    where[name].add(path)
                    if len(shown[name]) < examples:
                        shown[name].append(f"{path}:{number}: {line.strip()[:100]}")
    for name, _, _ in found.plugins:
        if hits[name]:
            print(f"  {name:26s} {hits[name]:6d} values in {len(where[name]):4d} files")
            for line in shown[name]:
                print(f"      {line}")
    if plugins:
        _per_plugin(found, raw)


def _plugin_values(found: secrets._Detectors, name: str, plugin: object, path: str, line: str,
                   number: int) -> set[str]:
    if name in GUESSING:
        return {s.secret_value for s in plugin.analyze_line(filename=path.lower(), line=line,  # type: ignore[attr-defined]
                                                            line_number=number)
                if s.secret_value and not found.false_positive(name, plugin, s.secret_value, line)}
    return {m.group(0) for p in plugin.denylist for m in p.finditer(line)}  # type: ignore[attr-defined]


def _per_plugin(found: secrets._Detectors, raw: dict[str, str]) -> None:
    print("  each plugin alone, every line, no gate (CPU):")
    for name, plugin, _ in found.plugins:
        began = time.process_time()
        for path, text in raw.items():
            for line in text.splitlines():
                plugin.analyze_line(filename=path.lower(), line=line)
        print(f"    {name:26s} {1000 * (time.process_time() - began):8.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.secrets", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--examples", type=int, default=3, help="example lines per plugin (default 3)")
    parser.add_argument("--plugins", action="store_true", help="also time each plugin alone, without the gates")
    args = parser.parse_args()
    print(f"rules {DEFAULT.tag} (detect-secrets plugins: {len(secrets.PLUGINS)})")
    for root in args.paths or [HERE / "ctxgraph", HERE / "tests", HERE / "docs"]:
        measure(root.resolve(), examples=args.examples, plugins=args.plugins)


if __name__ == "__main__":
    main()
