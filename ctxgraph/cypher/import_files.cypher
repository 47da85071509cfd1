// What the last import of $source saw of each file (ctxgraph.core.models.sources),
// in one record: the driver's network read per row would cost more than the rows.
MATCH (f:ImportedFile {source: $source})
RETURN collect(properties(f)) AS files
