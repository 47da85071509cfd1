"""The neo4j user's password over Bolt: log in, change it from the initial or saved one, wait for it."""

from __future__ import annotations

import time
from typing import Any

from .common import HOST, INITIAL_PASSWORD, USER, Fail, rel, say
from .instance import Instance


def driver_for(neo4j: Any, port: int, password: str) -> Any:
    return neo4j.GraphDatabase.driver(
        f"bolt://{HOST}:{port}",
        auth=(USER, password),
        connection_timeout=5.0,
        max_connection_lifetime=60,
    )


def try_login(neo4j: Any, port: int, password: str) -> bool | None:
    """True: these credentials work. False: refused. None: Bolt not answering yet."""
    driver = driver_for(neo4j, port, password)
    try:
        driver.verify_connectivity()
        return True
    except neo4j.exceptions.AuthError:
        return False
    except (neo4j.exceptions.ServiceUnavailable, neo4j.exceptions.SessionExpired, OSError):
        return None
    finally:
        driver.close()


def change_password(neo4j: Any, port: int, old: str, new: str) -> bool:
    """Log in with `old` and set `new`; False when `old` is refused."""
    driver = driver_for(neo4j, port, old)
    try:
        with driver.session(database="system") as session:
            session.run("ALTER CURRENT USER SET PASSWORD FROM $old TO $new", old=old, new=new).consume()
        return True
    except neo4j.exceptions.AuthError:
        return False
    except neo4j.exceptions.ClientError as exc:
        # The message may quote our input; keep only Neo4j's code.
        raise Fail(f"Neo4j refused the password change ({exc.code})") from None
    finally:
        driver.close()


def ensure_password(inst: Instance, neo4j: Any, port: int, target: str, works_already: bool) -> str:
    """Make the server's neo4j user use `target` as password, saved to the instance's file."""
    previous = inst.read_password_file()
    inst.write_password(target)  # saved before the change, so it cannot be lost after it
    if works_already:
        return target
    for old in (INITIAL_PASSWORD, previous):
        if not old or old == target:
            continue
        if change_password(neo4j, port, old, target):
            how = "initial password" if old == INITIAL_PASSWORD else "saved password"
            say(f"Set the neo4j user's password (was the {how}); saved in {rel(inst.password_file)}")
            return target
    if previous:
        inst.write_password(previous)
    else:
        inst.password_file.unlink(missing_ok=True)
    raise Fail(
        "the server refused both the wanted and the known passwords for user neo4j "
        "(this home was set up with another password: set NEO4J_PASSWORD to it, or "
        "stop the server and remove the home's data folder)"
    )


def wait_for_password(neo4j: Any, port: int, password: str, timeout: float = 60.0) -> None:
    """Run a query on the default database until it succeeds (databases come up late)."""
    deadline = time.monotonic() + timeout
    driver = driver_for(neo4j, port, password)
    try:
        while True:
            try:
                driver.execute_query("RETURN 1")
                return
            except neo4j.exceptions.AuthError:
                raise Fail("the password was set but the server then refused it") from None
            except neo4j.exceptions.Neo4jError as exc:
                if time.monotonic() > deadline:
                    raise Fail(f"the default database did not come online ({exc.code})") from None
            except neo4j.exceptions.DriverError:
                if time.monotonic() > deadline:
                    raise Fail("the server stopped answering after the password step") from None
            time.sleep(0.5)
    finally:
        driver.close()
