# syntax=docker/dockerfile:1
# Laurel's production image. Build stage: dev dependencies and the TypeScript compiler.
# Runtime stage: dist/ and production dependencies only, run by node as an unprivileged user.
#
#   docker build -t laurel .
#   docker run laurel                                   the web side (node dist/src/bin/web.js)
#   docker run laurel node dist/src/bin/worker.js         a worker
#   docker run laurel node dist/src/bin/migrate.js      the release phase (migrations)

FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/copy-build-assets.mjs ./scripts/
COPY src ./src
COPY migrations ./migrations
# The demo command (src/cli/demo.ts) uses the TypeScript client, compiled into dist/clients/.
COPY clients/typescript/src ./clients/typescript/src
RUN npm run build

FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Node is PID 1: Laurel handles SIGTERM and SIGINT itself (drain, then exit 0) and starts no
# child processes but its own cluster workers, which Node reaps; no init is needed.
USER node
EXPOSE 3000 9464
# Probes PORT, or METRICS_PORT in a worker-only container (src/bin/healthcheck.ts).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 CMD ["node", "dist/src/bin/healthcheck.js"]
CMD ["node", "dist/src/bin/web.js"]
