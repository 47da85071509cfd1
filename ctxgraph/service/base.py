"""The state every part of :class:`~ctxgraph.service.ContextService` shares:
the store it owns, the signal extractor, the settings and the switches a
caller may flip. The operations are in the mixins ``ContextService`` joins."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ctxgraph.compute.config import ContextConfig
from ctxgraph.graph.store import KnowledgeStore
from ctxgraph.memory.secrets import DEFAULT, SecretFilter
from ctxgraph.signals import SignalExtractor

if TYPE_CHECKING:
    from ctxgraph.outcomes.delivery_log import DeliveryWriter
    from ctxgraph.service.root import ProjectRoot


class ServiceBase:
    """A store, the extractor its tasks' signals come from, and the settings."""

    def __init__(
        self,
        store: KnowledgeStore,
        extractor: SignalExtractor | None = None,
        config: ContextConfig | None = None,
    ) -> None:
        self.store = store
        self.extractor = extractor or SignalExtractor()
        self.config = config or ContextConfig()
        #: Associative memory at context time: on by default (it is skipped,
        #: with a note, when no usable index exists).
        self.memory = True
        #: The indexed project to search (None: the only one indexed).
        self.memory_project: str | None = os.environ.get("CTXGRAPH_PROJECT") or None
        #: The project's root (:mod:`ctxgraph.service.root`; :meth:`open` finds it):
        #: with several projects indexed and none named, the memory searches its.
        self.root: ProjectRoot | None = None
        #: What the associative memory never takes in (the settings' ``[index]`` added to
        #: the defaults: :mod:`ctxgraph.memory.secrets`); its index and its snippets use it.
        self.secrets: SecretFilter = DEFAULT
        #: The sentence embedder (None: the shared all-MiniLM-L6-v2, loaded on first use).
        self.embedder: Any = None
        #: Neighbours by embedding at context time: the query's text is embedded
        #: when finished tasks have vectors (``embed_tasks``); off, or when the
        #: model cannot load, the history ranks by full text alone.
        self.task_vectors = os.environ.get("CTXGRAPH_TASK_VECTORS", "1") != "0"
        self._vectors_seen: tuple[float, bool] | None = None  # (monotonic time, any task vectors)
        #: Context outcomes (``ctxgraph.outcomes``): record every delivered context
        #: (on a store opened for writing) and score it when its task's handoff is
        #: ingested. The evaluation turns it off.
        self.record_outcomes = True
        self._deliveries: DeliveryWriter | None = None


__all__ = ["ServiceBase"]
