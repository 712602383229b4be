# powerplan as a container: `docker build -t powerplan .` (see README, "Running as a service").
#
# It listens on 0.0.0.0:8750, which the service only does with a token file: the file lives in the
# state volume; create tokens with `docker exec powerplan powerplan token create --name ... --scopes ...`.
#
# Which hosts it can drive, and how (README, "Docker"):
# - cpufreq in sysfs (no tuned, no power-profiles-daemon): reading works as the image's user;
#   changing needs /sys writable and root: --user 0 --privileged -v /sys:/sys.
# - tuned (the RHEL default) and power-profiles-daemon (Fedora, Ubuntu desktops): the image has
#   their clients (tuned-adm, powerprofilesctl), which talk to the host's daemon over the host's
#   system bus: -v /run/dbus/system_bus_socket:/run/dbus/system_bus_socket. Reading works as the
#   image's user; a change is authorised by the daemon's polkit rules, which allow root:
#   --user 0. Without the bus mounted the clients find no daemon, the service says so (the plan
#   owner's note) and only sysfs is left, which on such a host the daemon owns: mount the bus.
# - Windows hosts: not from a container; run powerplan.exe as a service there.
#
# State: the volume belongs to the user that wrote it. The image's user is `node` (uid 1000); a run
# with --user 0 leaves root's files, and a later run as `node` then stops at start with one line
# saying which files and the chown to run. Keep one user per volume.
#
# The root file system can be read-only (--read-only): the service writes only to the state volume.
#
# Built and run in CI with Debian's podman (`npm run test:container`, scripts/test-container.mjs):
# `podman build --format docker` keeps the HEALTHCHECK; the base is made locally there
# (scripts/container/base-image.mjs). The healthcheck script and the state check are also tested
# without an engine (test/integrations/container.test.ts).

# Base: Node.js 24 on Debian 12, the newest LTS line the CI workflow tests (supported until April
# 2028); Node.js 20 reached end of life in April 2026 and gets no security fixes.

# Stage 1: the start-up bundle (dist/, see scripts/build.mjs), built with the dev dependencies.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
RUN npm run build

# Stage 2: production dependencies only.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# Stage 3: the runtime, as the unprivileged `node` user. The sources come with the bundle (the
# status page is read from src/, and without a current bundle the command runs the sources).
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    POWERPLAN_HOST=0.0.0.0 \
    POWERPLAN_PORT=8750 \
    POWERPLAN_STATE_DIR=/var/lib/powerplan \
    POWERPLAN_TOKEN_FILE=/var/lib/powerplan/tokens.json
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY --from=build /app/src ./src
COPY --from=build /app/dist ./dist
COPY deploy/container/healthcheck.mjs ./deploy/container/healthcheck.mjs
# The clients of the host's tuned and power-profiles-daemon (their daemons are not started here:
# the host's run them, reached through its system bus mounted at /run/dbus/system_bus_socket).
RUN apt-get update \
    && apt-get install -y --no-install-recommends tuned power-profiles-daemon \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /var/lib/powerplan && chown node:node /var/lib/powerplan \
    && ln -s /app/bin/powerplan.js /usr/local/bin/powerplan
USER node
VOLUME ["/var/lib/powerplan"]
EXPOSE 8750
# /healthz answers without a token; the script reads the service's settings, so with
# POWERPLAN_TLS_CERT/KEY set it speaks HTTPS and checks that the server presents that certificate.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "deploy/container/healthcheck.mjs"]
# The V8 flags of every start of the service (docs/PERFORMANCE.md, "V8 flags"): a small young and
# old generation keep the resident memory near 75 MiB under load.
ENTRYPOINT ["node", "--max-semi-space-size=1", "--max-old-space-size=128", "--no-memory-reducer", "--single-threaded", "bin/powerplan.js"]
CMD ["serve"]
