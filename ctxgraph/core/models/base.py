"""What every model shares: the frozen value config and UTC timestamps."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import ConfigDict

#: The config of a value passed between the store, the compute pipeline and the API.
VALUE = ConfigDict(defer_build=True, frozen=True, extra="forbid")


def utcnow() -> str:
    """The current time as the ISO-8601 string every node stores."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def normalize_timestamp(value: str | datetime | None) -> str | None:
    """Render a timestamp as ISO-8601 in UTC (``...Z``); ``None`` stays ``None``."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValueError(f"not an ISO-8601 timestamp: {value!r}") from exc
    else:
        parsed = value
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
