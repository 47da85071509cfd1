#!/bin/bash
# The entry point of the Neo4j stand-in image (neo4j.Dockerfile): the
# official image's conventions on plain jars.
#   NEO4J_AUTH            "neo4j/" and the initial password (a new /data only); "none": no auth
#   NEO4J_a_b__c=VALUE          the setting a.b_c=VALUE ('_' -> '.', '__' -> '_')
#   NEO4J_server_memory_heap_{initial,max}__size   the JVM's -Xms / -Xmx
set -euo pipefail
home=${NEO4J_HOME:-/var/lib/neo4j}
conf=$home/conf/neo4j.conf
heap_min=512m heap_max=1g
declare -A settings=(
    [server.default_listen_address]=0.0.0.0
    [server.directories.data]=/data
    [server.directories.logs]=/logs
    [server.https.enabled]=false
    [dbms.usage_report.enabled]=false
)
while IFS='=' read -r name value; do
    case "$name" in
        NEO4J_AUTH|NEO4J_HOME|NEO4J_CONF|NEO4J_PASSWORD*) continue ;;
        NEO4J_server_memory_heap_initial__size) heap_min=$value; continue ;;
        NEO4J_server_memory_heap_max__size) heap_max=$value; continue ;;
    esac
    key=${name#NEO4J_}
    key=${key//__/$'\x01'}
    key=${key//_/.}
    settings[${key//$'\x01'/_}]=$value
done < <(env | grep '^NEO4J_' || true)
if [ "${NEO4J_AUTH:-}" = none ]; then
    settings[dbms.security.auth_enabled]=false
fi
for key in "${!settings[@]}"; do echo "$key=${settings[$key]}"; done >"$conf"
auth=${NEO4J_AUTH:-}
if [ -n "$auth" ] && [ "$auth" != none ] && [ ! -e /data/dbms/auth.ini ] && [ ! -d /data/databases/system ]; then
    NEO4J_CONF=$home/conf java -cp "$home/lib/*" org.neo4j.cli.AdminTool dbms set-initial-password "${auth#neo4j/}" \
        >/dev/null
fi
chown -R neo4j:neo4j /data /logs "$home/conf" 2>/dev/null || true
exec setpriv --reuid=neo4j --regid=neo4j --init-groups \
    java "-Xms$heap_min" "-Xmx$heap_max" -XX:+UseG1GC -XX:-OmitStackTraceInFastThrow \
    -XX:+UnlockExperimentalVMOptions -XX:+TrustFinalNonStaticFields -XX:+DisableExplicitGC \
    -Djdk.nio.maxCachedBufferSize=1024 \
    --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --enable-native-access=ALL-UNNAMED \
    -Dio.netty.tryReflectionSetAccessible=true -Dlog4j2.disable.jmx=true \
    -cp "$home/lib/*" org.neo4j.server.CommunityEntryPoint \
    "--home-dir=$home" "--config-dir=$home/conf" --console-mode
