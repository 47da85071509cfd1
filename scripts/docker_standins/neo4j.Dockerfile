# A stand-in for the official neo4j:5.26-community image, for machines without
# an image registry (scripts/docker_stack.sh): Debian's Java 17 and the jars
# scripts/neo4j_local.py fetches from Maven Central, started by an entry point
# that honours what docker-compose.yml and testcontainers use of the official
# image: NEO4J_AUTH, NEO4J_* settings, /data and /logs, ports 7474 and 7687,
# "Remote interface available at" in the log, wget for the health check.
FROM local/debian:bookworm
RUN apt-get update -qq \
    && apt-get install -y -q --no-install-recommends openjdk-17-jre-headless wget \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
    && groupadd --gid 7474 neo4j && useradd --uid 7474 --gid 7474 --home-dir /var/lib/neo4j neo4j \
    && mkdir -p /var/lib/neo4j/conf /data /logs && chown -R neo4j:neo4j /var/lib/neo4j /data /logs
COPY lib /var/lib/neo4j/lib
COPY neo4j-entrypoint.sh /usr/local/bin/neo4j-entrypoint
ENV NEO4J_HOME=/var/lib/neo4j
VOLUME ["/data", "/logs"]
EXPOSE 7474 7687
ENTRYPOINT ["/usr/local/bin/neo4j-entrypoint"]
