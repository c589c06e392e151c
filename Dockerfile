# The Bark worker (DESIGN D8): the project's wheel, serving CDP on port 4780 and answering
# discovery on UDP 4781. The README has both recipes (online, and offline on a local Debian
# base); in short:
#   pip wheel --no-deps -w dist . && docker build -t bark-worker .
# The default base lets pip fetch numpy. Where no image registry is reachable, pass a local
# Debian base that already has python3-numpy (DESIGN §5) and DEBIAN_NUMPY=1:
#   docker build -t bark-worker --build-arg BASE=maned-base:bookworm --build-arg DEBIAN_NUMPY=1 .
# WHEEL picks one wheel when dist/ holds several. Run it with the identity in the
# environment (never on the command line); a refused start says why in `docker logs`.
ARG BASE=python:3.12-slim
FROM ${BASE}
ARG WHEEL=dist/maned-*-py3-none-any.whl
ARG DEBIAN_NUMPY=0
# The Dockerfile rides along so that COPY succeeds when WHEEL matches nothing, and the next
# step can say what to do instead of Docker's "no source files were specified".
COPY Dockerfile ${WHEEL} /tmp/wheel/
RUN set -- /tmp/wheel/*.whl; if [ "$#" -ne 1 ] || [ ! -f "$1" ]; then \
        echo "Dockerfile: expected one wheel in dist/, found: $*; build it with 'pip wheel --no-deps -w dist .' or pick one with --build-arg WHEEL=dist/NAME.whl" >&2; exit 1; \
    fi
RUN if [ "$DEBIAN_NUMPY" = "1" ]; then \
        pip install --break-system-packages --no-deps --no-index /tmp/wheel/*.whl; \
    else \
        pip install --no-cache-dir /tmp/wheel/*.whl; \
    fi && rm -rf /tmp/wheel
EXPOSE 4780 4781/udp
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
    CMD python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:4780/api/status', timeout=3)"
ENTRYPOINT ["bark-worker", "serve", "--host", "0.0.0.0", "--port", "4780"]
