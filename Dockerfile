# powerplan as a container: `docker build -t powerplan .` (see README, "Running as a service").
#
# It listens on 0.0.0.0:8750, which the service only does with a token file: the file lives in the
# state volume; create tokens with `docker exec powerplan powerplan token create --name ... --scopes ...`.
# Reading the plan works as the unprivileged user. Changing a Linux host's plan from a container
# needs /sys mounted writable and privileges (root in the container and --privileged, or the
# cpufreq sysfs tree bind-mounted read-write); tuned and power-profiles-daemon are reached through
# their command-line tools, which are not in this image. Not built on the project's build machines
# (no Docker engine there).

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
RUN mkdir -p /var/lib/powerplan && chown node:node /var/lib/powerplan \
    && ln -s /app/bin/powerplan.js /usr/local/bin/powerplan
USER node
VOLUME ["/var/lib/powerplan"]
EXPOSE 8750
# /healthz answers without a token. (With POWERPLAN_TLS_* set, replace http with https here.)
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.POWERPLAN_PORT||8750)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# A small young generation keeps the resident memory steady under load (docs/PERFORMANCE.md).
ENTRYPOINT ["node", "--max-semi-space-size=1", "bin/powerplan.js"]
CMD ["serve"]
