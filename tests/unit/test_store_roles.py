"""The store port is the union of its role protocols (``ctxgraph.graph.store``):
each method in exactly one role, nothing in the port outside them, and the
contract modules (``tests/store/contract/test_contract_<role>.py``) each
give the store as one role, every role having one."""

from __future__ import annotations

import inspect
from pathlib import Path

from ctxgraph.graph import store as port

CONTRACTS = Path(__file__).resolve().parents[1] / "store" / "contract"


def _own_members(cls: type) -> set[str]:
    return {n for n in vars(cls) if not n.startswith("_")} | set(getattr(cls, "__annotations__", {}))


def test_the_port_is_its_roles_and_each_member_has_one_role() -> None:
    roles = [b for b in port.KnowledgeStore.__bases__ if b is not port.Protocol]  # type: ignore[attr-defined]
    assert roles and all(inspect.getmodule(r) is port for r in roles)
    assert _own_members(port.KnowledgeStore) == set()
    members = [m for r in roles for m in _own_members(r)]
    assert len(members) == len(set(members)), "a member in two roles"
    public = {n for n, _ in inspect.getmembers(port.KnowledgeStore) if not n.startswith("_")}
    assert public | {"location"} == set(members)


def test_every_role_has_one_contract_module_testing_it_through_the_role() -> None:
    roles = {b.__name__ for b in port.KnowledgeStore.__bases__} - {"Protocol"}
    modules = sorted(CONTRACTS.glob("test_contract_*.py"))
    covered: set[str] = set()
    for module in modules:
        typed = {r for r in roles if f"-> {r}:" in module.read_text(encoding="utf-8")}
        assert len(typed) == 1, f"{module.name}: its fixture gives the store as one role, not {sorted(typed)}"
        covered |= typed
    assert covered == roles, f"roles without a contract module: {sorted(roles - covered)}"
