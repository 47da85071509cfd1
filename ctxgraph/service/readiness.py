"""Whether a Neo4j store is ready to serve, asked on a driver of its own (for
``ctxgraph mcp --http``'s ``/readyz``, :mod:`ctxgraph.mcp.probes`): reachable,
with the schema's indexes and constraints in place (``ready_schema.cypher``).

The probe never uses a connection a request is using; each check is one
round trip, on a connection checked before use (the first check after a
restart of Neo4j is right) and never retried (a check that fails says so at
once; the next one tries again).
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from ctxgraph import cypher

if TYPE_CHECKING:
    from neo4j import Driver

_SCHEMA_NAME = re.compile(r"^\s*CREATE\s+(?:[A-Z]+\s+)?(?:CONSTRAINT|INDEX)\s+(\w+)\s+IF NOT EXISTS", re.M)


def schema_names() -> list[str]:
    """The names of the indexes and constraints ``schema.cypher`` creates
    (a constraint's backing index has its name)."""
    names = []
    for statement in cypher.statements("schema"):
        found = _SCHEMA_NAME.search(statement)
        if found:
            names.append(found.group(1))
    return names


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()).rstrip(":")
    return text[:300] if text else type(exc).__name__


class Neo4jProbe:
    """Asks one Neo4j store whether it is ready (see the module). The password
    is resolved as ``ContextService.open`` resolves it (``NEO4J_PASSWORD``,
    ``NEO4J_PASSWORD_FILE``)."""

    def __init__(self, uri: str, *, user: str | None = None, password: str | None = None,
                 database: str | None = None, timeout: float = 5.0) -> None:
        from ctxgraph.graph.neo4j_store import Neo4jSettings

        self.settings = Neo4jSettings.from_env(uri=uri, user=user, password=password, database=database)
        self.timeout = timeout
        self.names = schema_names()
        self._driver: Driver | None = None

    def driver(self) -> Driver:
        if self._driver is None:
            from neo4j import GraphDatabase

            s = self.settings
            self._driver = GraphDatabase.driver(
                s.uri, auth=(s.user, s.password) if s.password is not None else None,
                connection_timeout=self.timeout, max_transaction_retry_time=0, liveness_check_timeout=0,
                max_connection_pool_size=1, notifications_min_severity="OFF")
        return self._driver

    def check(self) -> tuple[str | None, float]:
        """Why the store is not ready (None: it is), and the seconds its round trip took."""
        from neo4j import RoutingControl
        from neo4j import exceptions as neo4j_errors

        where = self.settings.uri
        began = time.perf_counter()
        try:
            records = self.driver().execute_query(cypher.load("ready_schema"), names=self.names,
                                                  database_=self.settings.database,
                                                  routing_=RoutingControl.READ).records
        except neo4j_errors.AuthError:
            return f"Neo4j at {where} refused the credentials", time.perf_counter() - began
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError, ValueError) as exc:
            return f"cannot reach Neo4j at {where}: {_one_line(exc)}", time.perf_counter() - began
        seconds = time.perf_counter() - began
        states = {str(r["name"]): str(r["state"]) for r in records}
        missing = [n for n in self.names if n not in states]
        if missing:
            shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
            return (f"the schema is not applied on Neo4j at {where}: {len(missing)} of its {len(self.names)} "
                    f"indexes and constraints are missing ({shown})"), seconds
        failed = sorted(n for n, s in states.items() if s == "FAILED")
        if failed:
            return f"indexes failed on Neo4j at {where}: {', '.join(failed[:5])}", seconds
        return None, seconds

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None
