# platform-api: `docker build -t platform-api .`, then `docker compose up` (compose.yaml) or
# `docker run -p 8080:8080 -p 5000:5000 -v platform-data:/data platform-api`.

# Build: the locked dependencies (better-sqlite3 compiled when no prebuilt binary is reachable),
# the TypeScript compiled into dist/, then the development dependencies pruned.
FROM node:20-bookworm-slim AS build
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts are skipped (the prepare script needs the sources, buf's and esbuild's binaries are not
# needed here); better-sqlite3's own install step is run explicitly.
RUN npm install --no-audit --no-fund --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY gen gen
COPY src src
COPY console console
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Run: the compiled code and the production dependencies, as the unprivileged user `node`.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    DATABASE_URL=/data/platform.db \
    REGISTRY_DIR=/data/registry
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY bin bin
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080 5000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD ["node", "bin/healthcheck.js"]
ENTRYPOINT ["node", "bin/platform-api.js"]
CMD ["serve"]
