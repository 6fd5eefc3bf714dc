# The xaclab server.  Build from the repository root (docker-compose.yml does):
#   docker build -f docker/server.Dockerfile .
# The server depends on xaclab-contracts (contracts/: the suites, the result
# schema, the thesis's figures), installed from the copied source alongside.
FROM python:3.11-slim-bookworm AS build
WORKDIR /src
COPY contracts/ contracts/
COPY server/ server/
RUN python -m venv /opt/xaclab \
 && /opt/xaclab/bin/pip install --no-cache-dir /src/contracts /src/server

FROM python:3.11-slim-bookworm
RUN useradd --system --uid 10001 --home-dir /var/lib/xaclab --create-home xaclab
COPY --from=build /opt/xaclab /opt/xaclab
ENV PATH=/opt/xaclab/bin:$PATH \
    XACLAB_DATA_DIR=/var/lib/xaclab \
    PYTHONUNBUFFERED=1
USER xaclab
WORKDIR /var/lib/xaclab
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
# Waits for the database and runs the migrations, then serves: HTTPS with
# XACLAB_TLS_CERT_FILE and XACLAB_TLS_KEY_FILE; plain HTTP on the container's
# 0.0.0.0 only with XACLAB_ALLOW_PLAIN_HTTP=true (docker-compose.yml publishes
# the port on the host's loopback).
ENTRYPOINT ["xaclab-server", "--host", "0.0.0.0", "--port", "8000"]
