# A stand-in for the official python:3.11-slim-bookworm image, for machines
# without an image registry (scripts/docker_stack.sh): Debian bookworm's own
# Python 3.11 with venv and pip, on a root file system made by debootstrap and
# imported as local/debian:bookworm. Tagged with the official name, so the
# repository's Dockerfile is built unchanged.
FROM local/debian:bookworm
RUN apt-get update -qq \
    && apt-get install -y -q --no-install-recommends python3 python3-venv python3-pip python-is-python3 \
        ca-certificates \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
ENV LANG=C.UTF-8
CMD ["python3"]
