"""Injection: Cypher and SQL metacharacters in task text, tags, ids and file
paths are data on both stores — ingested, computed and exported unchanged —
and no statement ctxgraph runs is built from input (checked on the source)."""

from __future__ import annotations

import ast
import functools
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import ctxgraph
from ctxgraph.core.models import FileEntry
from ctxgraph.graph.backup import ExportReader, import_rows_into, write_export
from ctxgraph.graph.local import LocalStore
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.service import ContextService
from ctxgraph.signals import SignalExtractor
from tests._reads import stored_files

NASTY = [
    "'", '"', "`", "\\", "';--", '" OR "1"="1', "' OR 1=1 --", "'); DROP TABLE nodes; --",
    "Robert'); DROP TABLE edges;--", "}) DETACH DELETE n //", "MATCH (n) DETACH DELETE n",
    "' }) MATCH (n) DETACH DELETE n //", "$id", "${id}", "{id}", "{{id}}", "%s", "%(id)s", "?", "?1", ":id",
    "@id", "/* x */", "-- x", "// x", "CALL db.clear()", "LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l",
    "UNION SELECT * FROM meta", "json_extract(props, '$.id')", "$(rm -rf /)", "<script>alert(1)</script>",
    "😀", "\uffff", "İ", "a\u0301", "\u2028", "\x1f", "tab\there",
]
PATHS = [
    "src/'; DROP TABLE nodes;--/a.ts", "src/$(rm -rf)/b.py", "src/`x`/c.py", 'src/a"b/d.ts',
    "src/}) DETACH DELETE n -- x.py", "src/ü/ß.py", "src/😀.py", "src/%s/{{id}}.ts", "src/a b/?.py",
]


def task_docs() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for i, text in enumerate(NASTY):
        docs.append({
            "id": f"t{i:02d}{text}-id", "name": f"Handle {text} safely", "objective": f"Store {text} as data\x00",
            "acceptance_criteria": [f"<{text}>", f"login {text}!"],
            "depends_on": [docs[-1]["id"]] if docs else [],
        })
    return docs


def handoff(task_id: str, i: int, text: str) -> dict[str, Any]:
    path = PATHS[i % len(PATHS)]
    return {
        "task_id": task_id, "summary": f"Done [{text}]", "completed_at": f"2026-03-{1 + i % 28:02d}T10:00:00Z",
        "files_created": [{"path": path, "purpose": f"purpose {text}"}],
        "dependencies_for_next": [{"file": path, "reason": f"read {text}"}],
        "patterns_discovered": [{"pattern": f"Pattern {i} [{text}]", "applies_to": [text, f"tag{text}"],
                                 "location": path}],
        "gotchas": [{"issue": f"Gotcha {i} [{text}]", "severity": "high", "applies_to": [text]}],
        "decisions": [{"decision": f"Decision {i} [{text}]", "rationale": text}],
        "open_questions": [{"question": f"Question {i} [{text}]?", "blocking": True, "context": text}],
        f"unknown {text}": text,
    }


def export_bytes(store: KnowledgeStore) -> bytes:
    out = io.StringIO()
    write_export(store, out)
    return out.getvalue().encode("utf-8")


def test_metacharacters_round_trip_as_data(store: KnowledgeStore, extractor: SignalExtractor,
                                           tmp_path: Path) -> None:
    svc = ContextService(store, extractor)
    docs = task_docs()
    svc.add_tasks(docs)
    svc.add_files([FileEntry(path=p, component=f"comp {t}", notes=f"notes {t}") for p, t in zip(PATHS, NASTY, strict=False)])
    for i, doc in enumerate(docs[:-1]):
        result = svc.ingest_handoff(handoff(doc["id"], i, NASTY[i]), source=f"h{i}")
        assert result.written

    tasks = {t.id: t for t in svc.list_tasks()}
    assert sorted(tasks) == sorted(d["id"] for d in docs)
    for doc in docs:
        task = tasks[doc["id"]]
        assert (task.name, task.objective, list(task.acceptance_criteria)) == (
            doc["name"], doc["objective"], doc["acceptance_criteria"])
        assert list(task.depends_on) == doc["depends_on"]
    stats = store.stats()
    assert stats.labels["Task"] == len(docs)
    assert stats.labels["Handoff"] == len(docs) - 1
    assert stats.relationships["DEPENDS_ON"] == len(docs) - 1
    assert {p for p in PATHS} <= set(stored_files(store))

    for i in range(1, len(docs)):  # each task sees its dependency's handoff, verbatim
        ctx = svc.compute(docs[i]["id"], complexity="complex", debug=True)
        dumped = json.dumps(ctx.model_dump(mode="json", by_alias=True), ensure_ascii=False)
        text = NASTY[i - 1]
        for expected in (f"Done [{text}]", f"Pattern {i - 1} [{text}]", f"Gotcha {i - 1} [{text}]",
                         f"Question {i - 1} [{text}]?", PATHS[(i - 1) % len(PATHS)]):
            assert json.dumps(expected, ensure_ascii=False)[1:-1] in dumped, (i, expected)

    first = export_bytes(store)
    for text in (*NASTY, *PATHS):
        assert json.dumps(text, ensure_ascii=False)[1:-1].encode() in first, text
    copy = LocalStore.open(tmp_path / "copy.db")
    try:
        import_rows_into(copy, ExportReader.from_bytes(first))
        assert export_bytes(copy) == first
        assert copy.stats() == store.stats()
    finally:
        copy.close()
    if isinstance(store, LocalStore):  # the tables are all still there
        conn = sqlite3.connect(store.path)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            conn.close()
        assert {"meta", "nodes", "edges"} <= tables


# --------------------------------------------------- no statement built from input

PACKAGE = Path(ctxgraph.__file__).resolve().parent
DB_METHODS = {"execute", "executemany", "executescript"}
RUN_RECEIVERS = {"tx", "session", "transaction", "txn", "neo4j_session"}
SAFE_STR_METHODS = {"strip", "lstrip", "rstrip", "split", "splitlines", "lower", "upper", "replace", "join"}
SAFE_FUNCS = {"filter", "sorted", "list", "tuple", "reversed", "str"}


def _receiver_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _is_db_call(call: ast.Call) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr in DB_METHODS:
        return True
    name = _receiver_name(func.value).lstrip("_")
    return func.attr == "run" and (name in RUN_RECEIVERS or name.endswith(("tx", "session")))


class _Checker:
    """Decides whether an expression can only be a literal, a shipped Cypher
    file, a module constant, or text derived from those."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents: dict[ast.AST, ast.AST] = {}
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        self.constants: dict[str, ast.expr] = {}
        for stmt in tree.body:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else (
                [stmt.target] if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else [])
            value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
            for target in targets:
                if isinstance(target, ast.Name) and value is not None:
                    self.constants[target.id] = value

    def _bindings(self, name: str, at: ast.AST) -> list[ast.expr | None] | None:
        """What ``name`` is bound to in the functions enclosing ``at`` (None: a
        parameter or an unknown binding); None when no function binds it."""
        node: ast.AST | None = at
        while node is not None:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                found: list[ast.expr | None] = []
                all_args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                if node.args.vararg:
                    all_args.append(node.args.vararg)
                if node.args.kwarg:
                    all_args.append(node.args.kwarg)
                if any(a.arg == name for a in all_args):
                    found.append(None)
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Assign):
                        if any(isinstance(t, ast.Name) and t.id == name for t in sub.targets):
                            found.append(sub.value)
                    elif isinstance(sub, ast.AnnAssign | ast.AugAssign):
                        if isinstance(sub.target, ast.Name) and sub.target.id == name:
                            found.append(sub.value if sub.value is not None else None)
                    elif isinstance(sub, ast.For | ast.AsyncFor):
                        if isinstance(sub.target, ast.Name) and sub.target.id == name:
                            found.append(ast.Call(func=ast.Name(id="__iter_of__"), args=[sub.iter], keywords=[]))
                    elif (isinstance(sub, ast.withitem) and isinstance(sub.optional_vars, ast.Name)
                          and sub.optional_vars.id == name):
                        found.append(None)
                if found:
                    return found
            node = self.parents.get(node)
        return None

    def safe(self, expr: ast.expr | None, bound: frozenset[str] = frozenset(), seen: frozenset[str] = frozenset(),
             ) -> bool:
        if expr is None:
            return False
        if isinstance(expr, ast.Constant):
            return isinstance(expr.value, str | int | float | bool) or expr.value is None
        if isinstance(expr, ast.JoinedStr):
            return all(self.safe(v, bound, seen) for v in expr.values)
        if isinstance(expr, ast.FormattedValue):
            return self.safe(expr.value, bound, seen)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return self.safe(expr.left, bound, seen) and self.safe(expr.right, bound, seen)
        if isinstance(expr, ast.Subscript):
            return self.safe(expr.value, bound, seen)
        if isinstance(expr, ast.Subscript):  # an item of a safe collection, whatever the key
            return self.safe(expr.value, bound, seen)
        if isinstance(expr, ast.Dict):
            return all(v is not None and self.safe(v, bound, seen) for v in expr.values)
        if isinstance(expr, ast.Tuple | ast.List):
            return all(self.safe(e, bound, seen) for e in expr.elts)
        if isinstance(expr, ast.Starred):
            return self.safe(expr.value, bound, seen)
        if isinstance(expr, ast.IfExp):  # a choice between safe statements
            return self.safe(expr.body, bound, seen) and self.safe(expr.orelse, bound, seen)
        if isinstance(expr, ast.GeneratorExp | ast.ListComp):
            names = set(bound)
            for gen in expr.generators:
                if not self.safe(gen.iter, frozenset(names), seen):
                    return False
                names.update(n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name))
            return self.safe(expr.elt, frozenset(names), seen)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id in SQL_MODULES:
            # a statement of the embedded store's sql.py (or sql_imports.py)
            return _sql_checker(expr.value.id).safe(ast.Name(id=expr.attr))
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "cypher":
                return True  # cypher.load / load_analyst / statements: shipped files only
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in SQL_MODULES:
                return all(self.safe(a, bound, seen) for a in expr.args) and \
                    _sql_checker(func.value.id).returns_safe(func.attr)
            if isinstance(func, ast.Name) and (func.id in SAFE_FUNCS or func.id == "__iter_of__"):
                return all(self.safe(a, bound, seen) for a in expr.args)
            if isinstance(func, ast.Attribute) and func.attr in SAFE_STR_METHODS:
                return self.safe(func.value, bound, seen) and all(self.safe(a, bound, seen) for a in expr.args)
            return False
        if isinstance(expr, ast.Name):
            if expr.id in bound:
                return True
            if expr.id in seen:
                return False
            bindings = self._bindings(expr.id, expr)
            if bindings is None:
                value = self.constants.get(expr.id)
                return value is not None and self.safe(value, frozenset(), seen | {expr.id})
            return all(self.safe(b, frozenset(), seen | {expr.id}) for b in bindings)
        return False

    def returns_safe(self, name: str) -> bool:
        """Whether the module's function ``name`` returns only text derived from
        constants and its own parameters (its callers' arguments are checked)."""
        for stmt in self.tree.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                params = frozenset(a.arg for a in [*stmt.args.posonlyargs, *stmt.args.args, *stmt.args.kwonlyargs])
                returns = [r for r in ast.walk(stmt) if isinstance(r, ast.Return)]
                return bool(returns) and all(self.safe(r.value, params) for r in returns)
        return False


#: The embedded store's modules of statements, as its code names them (``sql.NAME``, ``sql_imports.NAME``).
SQL_MODULES = ("sql", "sql_imports")


@functools.cache
def _sql_checker(module: str = "sql") -> _Checker:
    """The embedded store's statements (``ctxgraph/graph/local/sql.py``, after
    sql_schema.py's, which it re-exports; for ``sql_imports``, that module after
    theirs, whose constants it imports)."""
    names = ["sql_schema", "sql"] if module == "sql" else ["sql_schema", "sql", module]
    body = [stmt for name in names
            for stmt in ast.parse((PACKAGE / "graph" / "local" / f"{name}.py").read_text(encoding="utf-8")).body]
    return _Checker(ast.Module(body=body, type_ignores=[]))


def statement_violations(source: str, filename: str) -> tuple[int, list[str]]:
    """(database calls found, calls whose statement is not provably constant)."""
    tree = ast.parse(source, filename)
    checker = _Checker(tree)
    found, bad = 0, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_db_call(node):
            found += 1
            first = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg in ("query", "sql", "statement")), None)
            if not checker.safe(first):
                bad.append(f"{filename}:{node.lineno}: {ast.unparse(node)[:120]}")
    return found, bad


def test_no_statement_is_built_from_input() -> None:
    total, problems = 0, []
    for path in sorted(PACKAGE.rglob("*.py")):
        found, bad = statement_violations(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
        total += found
        problems.extend(bad)
    assert problems == [], "statements must be literals, cypher.load(...) or constants:\n" + "\n".join(problems)
    assert total >= 30, f"only {total} database calls found: is the scanner still looking?"


@pytest.mark.parametrize("source", [
    "def f(cur, name):\n    cur.execute(f\"SELECT * FROM nodes WHERE id = '{name}'\")\n",
    "def f(cur, name):\n    cur.execute(\"SELECT * FROM nodes WHERE id = '\" + name + \"'\")\n",
    "def f(cur, name):\n    cur.execute(\"SELECT * FROM {}\".format(name))\n",
    "def f(cur, name):\n    q = 'SELECT ' + name\n    cur.execute(q)\n",
    "def f(tx, label):\n    tx.run(f'MATCH (n:{label}) RETURN n')\n",
    "def f(session, text):\n    session.run(text)\n",
    "def f(self, tx, rows):\n    for r in rows:\n        tx.run(r)\n",
    "def f(conn, name):\n    conn.executescript('DROP TABLE ' + name)\n",
    "def f(cur, name):\n    cur.execute(sql.busy_timeout(name))\n",
    "def f(cur):\n    cur.execute(sql.NO_SUCH_STATEMENT)\n",
    "def f(cur, name, kept):\n    cur.execute(sql.NODE if kept else name)\n",
    "def f(cur, name):\n    for s in (*sql.AGGREGATES, name):\n        cur.execute(s)\n",
])
def test_the_scanner_catches_built_statements(source: str) -> None:
    found, bad = statement_violations(source, "example.py")
    assert found == 1 and len(bad) == 1


@pytest.mark.parametrize("source", [
    "LIMIT = 5\ndef f(cur, x):\n    cur.execute(f'PRAGMA busy_timeout = {LIMIT}')\n",
    "from ctxgraph import cypher\ndef f(tx, name, p):\n    tx.run(cypher.load(name), p)\n",
    "S = 'A; B'\ndef f(cur):\n    for s in filter(None, (x.strip() for x in S.split(';'))):\n        cur.execute(s)\n",
    "def f(cur, x):\n    cur.execute('SELECT ? ', (x,))\n",
    "from ctxgraph.graph.local import sql\nLIMIT = 5\ndef f(cur, x):\n    cur.execute(sql.busy_timeout(LIMIT))\n",
    "from ctxgraph.graph.local import sql\ndef f(cur, x):\n    cur.execute(sql.NODE, (x, x))\n",
    "from ctxgraph.graph.local import sql\ndef f(cur, kept):\n    cur.execute(sql.NODE if kept else sql.NODES)\n",
    "from ctxgraph.graph.local import sql\ndef f(cur):\n    for s in (*sql.AGGREGATES_DROP, *sql.AGGREGATES):\n        cur.execute(s)\n",
])
def test_the_scanner_accepts_constant_statements(source: str) -> None:
    found, bad = statement_violations(source, "example.py")
    assert found == 1 and bad == []
