"""Seeded synthetic project histories for the speed-and-scale benchmarks.

``generate(nodes, seed)`` returns a :class:`Dataset`: the documents an
orchestrator would feed ctxgraph (tasks with dependency chains, a context map,
and one structured handoff per finished task carrying patterns, gotchas,
decisions and open questions), plus benchmark *query* tasks, each with a few
*planted* relevant items whose share in a rendered context is the
``planted_recall``. The same ``(nodes, seed)`` always gives the same
documents, byte for byte.

What "nodes" means: the content nodes the documents create —
``Task + Handoff + knowledge (Pattern, Gotcha, Decision, OpenQuestion) +
File``. The target is met exactly (:meth:`Dataset.counts`). The stores also
create one ``Tag`` node per distinct tag and one ``Term`` node per distinct
full-text term; those depend on the vocabulary, not on the documents' count,
and the suite reports them separately (``graph_nodes``).

Shape, per ``nodes`` = N:

- tasks ≈ 0.19 N, in dependency order: epics (chains of about 8 tasks, each
  task depending on the previous one) with an occasional extra dependency on
  a recent task of another epic; 90 % of them finished (3 % failed), a few
  pending ones blocked, and the query tasks last, pending;
- files (the context map) ≈ 0.10 N, ``src/<component>/<word>_<n>.ts``, the
  component drawn from a Zipf distribution of components;
- knowledge ≈ 0.54 N, about 3 items per handoff;
- tags: every ``applies_to`` list and every task text draws its words from a
  vocabulary of about N / 8 words (real technical nouns first, then made-up
  ones) with a Zipf distribution (exponent :data:`ZIPF_S`), so a few tags
  are everywhere and most are rare — as in real projects;
- for each query task, :data:`PLANTED_KNOWLEDGE` knowledge items (a pattern, a
  gotcha and a decision, in handoffs of unrelated earlier tasks) and
  :data:`PLANTED_FILES` context-map files share two rare words with it that
  nothing else uses. Each planted knowledge summary starts with a unique
  marker (``PLANT-<query>-<n>``); planted files are named by their path.

The words and the Zipf draw are in ``benchmarks.vocabulary``, the
:class:`Dataset` and :class:`Planted` classes in ``benchmarks.dataset``; this
module re-exports them.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks.dataset import Dataset, Planted
from benchmarks.vocabulary import HEAD_WORDS, ZIPF_S, Zipf, vocabulary

#: Bumped whenever the documents generated for a (nodes, seed) change (cache keys).
GENERATOR_VERSION = 1
#: Planted relevant items per query task.
PLANTED_KNOWLEDGE = 3
PLANTED_FILES = 2
#: Shares of the node target (the rest is knowledge).
TASK_SHARE = 0.19
FILE_SHARE = 0.10
FINISHED_SHARE = 0.90
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)

_KINDS = ("pattern", "gotcha", "decision", "open_question")
_KIND_WEIGHTS = (0.36, 0.30, 0.24, 0.10)
_SEVERITIES = ("low", "medium", "high", "critical")
_SEVERITY_WEIGHTS = (0.25, 0.45, 0.22, 0.08)

_TASK_VERBS = ("Add", "Refactor", "Fix", "Extend", "Migrate", "Harden", "Speed up", "Document", "Split", "Rework")
_PATTERNS = (
    "Wrap every {a} call in the {b} helper before touching the {c}",
    "Keep {a} state in the {b} module and pass the {c} explicitly",
    "Route {a} writes through one {b} adapter so the {c} stays consistent",
    "Build the {a} payload with the shared {b} builder, never by hand in the {c}",
)
_GOTCHAS = (
    "The {a} client drops the {b} header when the {c} is empty",
    "A slow {a} blocks the {b} loop unless the {c} has a deadline",
    "Two {a} workers race on the same {b} row without a {c} guard",
    "The {a} cache keeps a stale {b} after the {c} changes",
)
_DECISIONS = (
    "Store the {a} in the {b} table keyed by {c}",
    "Use one {a} per {b} instead of a global {c}",
    "Serve the {a} from the {b} replica, not from the {c}",
    "Version the {a} format and keep the old {b} reader for one {c} release",
)
_QUESTIONS = (
    "Should the {a} expire with the {b} or with the {c}",
    "Who owns the {a} once the {b} moves to the {c}",
)


def _sizes(nodes: int) -> tuple[int, int, int, int, int]:
    """(tasks, finished, files, knowledge, queries) adding up to ``nodes``."""
    if nodes < 100:
        raise ValueError("nodes must be at least 100")
    queries = max(3, min(20, nodes // 100))
    tasks = max(queries + 10, round(nodes * TASK_SHARE))
    finished = round((tasks - queries) * FINISHED_SHARE)
    files = max(PLANTED_FILES * queries + 5, round(nodes * FILE_SHARE))
    knowledge = nodes - tasks - finished - files
    if knowledge < PLANTED_KNOWLEDGE * queries + finished:
        raise ValueError(f"nodes={nodes} is too small for {queries} query tasks")
    return tasks, finished, files, knowledge, queries


def generate(nodes: int, seed: int = 42) -> Dataset:
    """A reproducible synthetic project of ``nodes`` content nodes (see the module docstring)."""
    n_tasks, n_finished, n_files, n_knowledge, n_queries = _sizes(nodes)
    rng = random.Random(f"dataset:{nodes}:{seed}")
    words = vocabulary(max(400, nodes // 8) + 2 * n_queries, seed)
    planted_words = words[-2 * n_queries :]  # reserved: nothing else draws them
    words = words[: -2 * n_queries]
    zipf = Zipf(len(words))
    tag_counts: Counter[str] = Counter()

    def word() -> str:
        return words[zipf.draw(rng)]

    def tags(k: int) -> list[str]:
        out = list(dict.fromkeys(word() for _ in range(k)))
        tag_counts.update(out)
        return out

    # -- the context map ----------------------------------------------------------
    n_components = max(8, nodes // 400)
    components = vocabulary(n_components + 40, seed + 1)[40:]  # beyond the head words
    comp_zipf = Zipf(len(components), 1.0)
    files: list[dict[str, str]] = []
    by_component: dict[str, list[str]] = {}
    for i in range(n_files - PLANTED_FILES * n_queries):
        comp = components[comp_zipf.draw(rng)]
        path = f"src/{comp}/{word()}_{i}.ts"
        files.append(
            {
                "path": path,
                "component": comp,
                "notes": f"{word()} {word()} for the {word()} {rng.choice(('flow', 'layer', 'step'))}",
            }
        )
        by_component.setdefault(comp, []).append(path)

    # -- tasks in dependency order -------------------------------------------------
    tasks: list[dict[str, Any]] = []
    epic_of: dict[str, str] = {}
    epic_last: dict[str, str] = {}
    n_regular = n_tasks - n_queries
    epic = components[0]
    for i in range(n_regular):
        tid = f"task-{i + 1:06d}"
        if i == 0 or rng.random() < 1 / 8:  # a new epic starts
            epic = components[comp_zipf.draw(rng)]
            prev = None
        else:
            prev = epic_last.get(epic)
        deps = [prev] if prev else []
        if i > 20 and rng.random() < 0.15:
            extra = tasks[rng.randrange(max(0, i - 500), i)]["id"]
            if extra not in deps:
                deps.append(extra)
        a, b, c = word(), word(), word()
        task: dict[str, Any] = {
            "id": tid,
            "name": f"{rng.choice(_TASK_VERBS)} {a} {b} in {epic}",
            "objective": (
                f"The {epic} {a} needs the {b} to handle the {c} case. "
                f"Update the {word()} and the {word()} so the {word()} keeps working."
            ),
            "acceptance_criteria": [f"the {a} {word()} is covered by a {word()} test"],
            "type": rng.choice(("feature", "feature", "bugfix", "refactor")),
            "complexity": rng.choice(("easy", "normal", "normal", "complex")),
            "depends_on": deps,
        }
        tag_counts.update([a, b, c])
        tasks.append(task)
        epic_of[tid] = epic
        epic_last[epic] = tid

    finished_ids = [t["id"] for t in tasks[:n_finished]]
    pending = tasks[n_finished:]
    for t in pending[: min(3, len(pending))]:
        t["status"] = "blocked"
        t["blocked_reason"] = f"waiting for the {word()} review"
    # pending tasks must not depend on tasks that stay pending beyond them: fine either way

    # -- handoffs: knowledge counts spread over the finished tasks -------------------
    per = [n_knowledge // n_finished] * n_finished
    for i in rng.sample(range(n_finished), n_knowledge % n_finished):
        per[i] += 1
    # shuffle counts between handoffs a little (1..5 items) while keeping the total
    for _ in range(n_finished):
        i, j = rng.randrange(n_finished), rng.randrange(n_finished)
        if per[i] > 1 and per[j] < 5:
            per[i] -= 1
            per[j] += 1

    # -- query tasks and their planted items -----------------------------------------
    queries: list[str] = []
    planted: dict[str, Planted] = {}
    plant_slots: dict[int, list[tuple[str, str, list[str]]]] = {}  # handoff index -> [(kind, text, tags)]
    query_tasks = []
    serial = itertools.count(1)
    for q in range(n_queries):
        qid = f"query-{q + 1:03d}"
        w1, w2 = planted_words[2 * q], planted_words[2 * q + 1]
        common = [word() for _ in range(6)]
        dep = finished_ids[rng.randrange(len(finished_ids) // 2, len(finished_ids))]
        markers: list[str] = []
        excluded = {dep}
        for kind in ("pattern", "gotcha", "decision")[:PLANTED_KNOWLEDGE]:
            marker = f"PLANT-{q + 1:03d}-{len(markers) + 1}"
            text = {
                "pattern": f"{marker} route every {w1} {w2} write through the {common[0]} adapter",
                "gotcha": f"{marker} the {w1} {w2} sync loses the {common[1]} on retry",
                "decision": f"{marker} keep the {w1} {w2} state in the {common[2]} table",
            }[kind]
            while True:  # an unrelated earlier handoff with room for one more item
                slot = rng.randrange(n_finished)
                if finished_ids[slot] not in excluded and per[slot] > len(plant_slots.get(slot, ())):
                    break
            plant_slots.setdefault(slot, []).append((kind, text, [w1, w2]))
            markers.append(marker)
        paths = []
        for n in range(PLANTED_FILES):
            path = f"src/{w1}/{w2}_{common[3 + n]}_{next(serial)}.ts"
            files.append({"path": path, "component": w1, "notes": f"{w2} {common[3 + n]} for the {w1} flow"})
            paths.append(path)
        text_words = [word() for _ in range(24)]
        query_tasks.append(
            {
                "id": qid,
                "name": f"Extend the {w1} {w2} handling",
                "objective": (
                    f"The {w1} {w2} flow must support the {common[0]} and the {common[1]} cases. "
                    f"Today the {w1} keeps its {w2} state next to the {common[2]}, and the {text_words[0]} "
                    f"and {text_words[1]} paths bypass it. Move the {w1} {w2} writes behind one adapter, "
                    f"keep the {text_words[2]} and the {text_words[3]} in sync, and make the {text_words[4]} "
                    f"retry safe. The {text_words[5]} team relies on the {text_words[6]} and the "
                    f"{text_words[7]}, so the {text_words[8]} contract stays the same."
                ),
                "acceptance_criteria": [
                    f"the {w1} {w2} state survives a {text_words[9]} restart",
                    f"the {text_words[10]} and {text_words[11]} tests cover the {w1} {w2} adapter",
                ],
                "type": "feature",
                "complexity": "normal",
                "depends_on": [dep],
            }
        )
        tag_counts.update([w1, w2, *common])
        queries.append(qid)
        planted[qid] = Planted(query=qid, words=(w1, w2), knowledge=tuple(markers), files=tuple(paths))
    tasks.extend(query_tasks)

    # -- handoff documents ------------------------------------------------------------
    all_paths = [f["path"] for f in files[: n_files - PLANTED_FILES * n_queries]]
    handoffs: list[dict[str, Any]] = []
    item_no = itertools.count(1)
    for i, tid in enumerate(finished_ids):
        comp_files = by_component.get(epic_of[tid]) or all_paths
        touched = list(dict.fromkeys(rng.choice(comp_files) for _ in range(rng.randint(1, 3))))
        created, modified = touched[:1], touched[1:]
        own = rng.choices(_KINDS, _KIND_WEIGHTS, k=per[i] - len(plant_slots.get(i, ())))
        items: list[tuple[str, str | None, list[str] | None]] = [(k, None, None) for k in own]
        items.extend(plant_slots.get(i, []))
        doc: dict[str, Any] = {
            "task_id": tid,
            "summary": f"{tasks[i]['name']}: {word()} {word()} done, {word()} left as is.",
            "success": rng.random() >= 0.03,
            "completed_at": (START + timedelta(minutes=37 * i)).isoformat().replace("+00:00", "Z"),
            "files_created": [{"path": p, "purpose": f"{word()} {word()}"} for p in created],
            "files_modified": [
                {"path": p, "lines": f"{rng.randint(1, 200)}-{rng.randint(201, 400)}", "purpose": f"{word()} {word()}"}
                for p in modified
            ],
            "dependencies_for_next": [{"file": touched[0], "reason": f"reuse the {word()} {word()}"}],
            "patterns_discovered": [],
            "gotchas": [],
            "decisions": [],
            "open_questions": [],
        }
        for kind, fixed, fixed_tags in items:
            a, b, c = word(), word(), word()
            n = next(item_no)
            applies = fixed_tags or tags(rng.randint(1, 3))
            if kind == "pattern":
                text = fixed or f"{rng.choice(_PATTERNS).format(a=a, b=b, c=c)} (#{n})"
                doc["patterns_discovered"].append(
                    {"pattern": text, "applies_to": applies, "location": rng.choice(touched)}
                )
            elif kind == "gotcha":
                text = fixed or f"{rng.choice(_GOTCHAS).format(a=a, b=b, c=c)} (#{n})"
                severity = "high" if fixed else rng.choices(_SEVERITIES, _SEVERITY_WEIGHTS)[0]
                doc["gotchas"].append({"issue": text, "severity": severity, "applies_to": applies})
            elif kind == "decision":
                text = fixed or f"{rng.choice(_DECISIONS).format(a=a, b=b, c=c)} (#{n})"
                doc["decisions"].append(
                    {"decision": text, "rationale": f"the {word()} stays simple", "applies_to": applies}
                )
            else:
                text = f"{rng.choice(_QUESTIONS).format(a=a, b=b, c=c)} (#{n})?"
                doc["open_questions"].append(
                    {
                        "question": text,
                        "context": f"the {word()} is shared",
                        "recommendation": f"ask the {word()} owner",
                        "blocking": rng.random() < 0.05,
                        "applies_to": applies,
                    }
                )
        handoffs.append(doc)

    return Dataset(
        nodes=nodes,
        seed=seed,
        files=files,
        tasks=tasks,
        handoffs=handoffs,
        queries=queries,
        planted=planted,
        tag_counts=tag_counts,
    )


__all__ = [
    "GENERATOR_VERSION",
    "HEAD_WORDS",
    "PLANTED_FILES",
    "PLANTED_KNOWLEDGE",
    "ZIPF_S",
    "Dataset",
    "Planted",
    "Zipf",
    "generate",
    "vocabulary",
]
