"""Context outcomes: what each delivered context held, and how its task's handoff used it.

* :mod:`.records` — a delivery and its score as models, the compact JSON the
  stores keep of them, and the log's trimming rule (pure; the stores import it);
* :mod:`.scoring` — a computed context as a delivery, a delivery scored
  against a handoff, a window of them summed up (pure);
* :mod:`.delivery_log` — the service's half: the background writer, scoring
  the deliveries of ingested handoffs, the report (through the store port).

The storage is the stores' (``graph/local/outcomes.py``,
``graph/neo4j_store/outcomes.py``); the service's entry points are in
``service/feedback.py``, the command in ``cli/_outcomes.py``. Nothing is
imported here: the stores load :mod:`.records` alone.
"""
