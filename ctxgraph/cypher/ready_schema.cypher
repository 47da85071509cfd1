// The readiness check of `ctxgraph mcp --http` (/readyz; ctxgraph/mcp/probes.py): which of
// the schema's indexes and constraints ($names, from schema.cypher) exist, and their state.
// A constraint's backing index has the constraint's name.
SHOW INDEXES YIELD name, state
WHERE name IN $names
RETURN name, state
