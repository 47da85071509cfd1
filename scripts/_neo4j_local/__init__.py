"""The parts of scripts/neo4j_local.py (the command-line entry point).

common: constants, errors, output and the tools found on PATH; instance: one
server's paths, recorded state and saved password; fetch: Neo4j's jars from
Maven Central; auth: the neo4j user's password over Bolt; server: the java
process (start, stop, status).
"""
