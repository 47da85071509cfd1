"""The graph: user documents' parsing, record parsers, the store port and its two
implementations (its models live in ``ctxgraph.core.models``)."""
