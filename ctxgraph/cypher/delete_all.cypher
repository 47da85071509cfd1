// Remove every node and relationship (tests and `ctxgraph init --reset`).
MATCH (n)
DETACH DELETE n
