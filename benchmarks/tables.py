"""The suite's rows as text: an aligned table (``python -m benchmarks``) and
Markdown (the tables of docs/performance.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

COLUMNS = (
    ("store", "store", "{}"),
    ("nodes", "nodes", "{:,}"),
    ("vectors", "vectors", "{}"),
    ("graph_nodes", "graph", "{:,}"),
    ("ingest_handoffs_per_s", "handoffs/s", "{:,.0f}"),
    ("ingest_nodes_per_s", "nodes/s", "{:,.0f}"),
    ("compute_p50_ms", "p50 ms", "{:.2f}"),
    ("compute_p95_ms", "p95 ms", "{:.2f}"),
    ("compute_p99_ms", "p99 ms", "{:.2f}"),
    ("p95_vs_full_text", "p95/ft", "{:.2f}x"),
    ("compute_inline_p50_ms", "inline p50", "{:.2f}"),
    ("compute_inline_p95_ms", "inline p95", "{:.2f}"),
    ("signals_p50_ms", "sig ms", "{:.2f}"),
    ("tokens", "tokens", "{:,}"),
    ("planted_recall", "recall", "{:.2f}"),
    ("accumulated_tokens", "acc tokens", "{:,}"),
    ("accumulated_recall", "acc recall", "{:.2f}"),
    ("token_ratio", "ratio", "{:.3f}"),
    ("accumulated_tokens_same_recall", "acc@recall", "{:,}"),
    ("token_ratio_same_recall", "ratio@recall", "{:.4f}"),
    ("peak_rss_mb", "rss MiB", "{:,.0f}"),
)


def _cell(row: dict[str, Any], key: str, fmt: str) -> str:
    value = row.get(key)
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return fmt.format(value)


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The rows as an aligned text table."""
    cells = [[title for _, title, _ in COLUMNS]]
    for row in rows:
        cells.append([_cell(row, key, fmt) for key, _, fmt in COLUMNS])
    widths = [max(len(r[i]) for r in cells) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        for r in cells
    )


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """The rows as a Markdown table (for docs/performance.md)."""
    head = "| " + " | ".join(title for _, title, _ in COLUMNS) + " |"
    rule = "|" + "|".join("---" for _ in COLUMNS) + "|"
    body = [
        "| " + " | ".join(_cell(row, key, fmt) for key, _, fmt in COLUMNS) + " |"
        for row in rows
    ]
    return "\n".join([head, rule, *body])


__all__ = ["COLUMNS", "markdown_table", "table"]
