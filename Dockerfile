# powerplan as a container (first draft; see README "Running as a service").
# Changing a Linux host's plan from a container needs /sys mounted writable and privileges.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production POWERPLAN_HOST=0.0.0.0 POWERPLAN_STATE_DIR=/var/lib/powerplan
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
RUN mkdir -p /var/lib/powerplan && chown node:node /var/lib/powerplan
USER node
EXPOSE 8750
HEALTHCHECK --interval=30s --timeout=3s CMD node -e "fetch('http://127.0.0.1:8750/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
ENTRYPOINT ["node", "bin/powerplan.js"]
CMD ["serve"]
