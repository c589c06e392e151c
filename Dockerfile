# The Bark worker (DESIGN D8): the project's wheel, serving CDP on port 4780.
#   docker build -t bark-worker --build-arg WHEEL=dist/maned-0.1.0-py3-none-any.whl .
# The default base lets pip fetch numpy. Where no image registry is reachable, pass a local
# Debian base that already has python3-numpy (DESIGN §5) and DEBIAN_NUMPY=1:
#   docker build --build-arg BASE=maned-base:bookworm --build-arg DEBIAN_NUMPY=1 ...
# Run it with the identity in the environment (never on the command line):
#   docker run -d -p 127.0.0.1:4780:4780 -e BARK_ALIAS=bob -e BARK_USER=test \
#     -e BARK_PASS="$MANED_BOB_PASS" bark-worker
ARG BASE=python:3.12-slim
FROM ${BASE}
ARG WHEEL
ARG DEBIAN_NUMPY=0
COPY ${WHEEL} /tmp/
RUN if [ "$DEBIAN_NUMPY" = "1" ]; then \
        pip install --break-system-packages --no-deps --no-index /tmp/*.whl; \
    else \
        pip install --no-cache-dir /tmp/*.whl; \
    fi && rm -f /tmp/*.whl
EXPOSE 4780 4781/udp
ENTRYPOINT ["bark-worker", "serve", "--host", "0.0.0.0", "--port", "4780"]
