# Three images from one build of the repository:
# - `server` (the default target): the demo server with the sample ladder, for users
#   without Node. Uses the same scripts as `npm start`: the ladder is encoded at first
#   start into the /app/media volume, then the server listens on 0.0.0.0:8080.
# - `edge` (docker compose --profile edge): Debian's Traffic Server with the Sammy
#   plugin in front of the `origin` service, started like `npm run edge`; the plugin
#   is built at start (about a second).
# - `nginx` (docker compose --profile nginx): the same demo served by Debian's nginx
#   with the Sammy module (`npm start -- --server nginx`) on 0.0.0.0:8082; the module is
#   built into the image.
FROM node:20-bookworm-slim AS base
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY encoder/package.json encoder/
COPY server/package.json server/
COPY player/package.json player/
COPY sim/package.json sim/
COPY edge/package.json edge/
COPY native/package.json native/
COPY nginx/package.json nginx/
COPY e2e/package.json e2e/
RUN npm ci --no-audit --no-fund
COPY . .

FROM base AS edge
RUN apt-get update \
 && apt-get install -y --no-install-recommends trafficserver trafficserver-dev gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
EXPOSE 8081
CMD ["node", "scripts/edge.mjs", "--origin", "http://origin:8080", "--host", "0.0.0.0", "--port", "8081"]

FROM base AS nginx
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg nginx-core nginx-dev gcc libc6-dev make \
 && rm -rf /var/lib/apt/lists/*
RUN npm run build
# The module once, at build time (configuring nginx's source tree takes about 10 s).
RUN node --import tsx --input-type=module --eval "await (await import('@sammy/native/build')).buildNginxModule();"
VOLUME /app/media
EXPOSE 8082
CMD ["node", "scripts/start.mjs", "--server", "nginx", "--host", "0.0.0.0", "--port", "8082", "--media", "/app/media"]

FROM base AS server
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg \
 && rm -rf /var/lib/apt/lists/*
RUN npm run build
VOLUME /app/media
EXPOSE 8080
CMD ["node", "scripts/start.mjs", "--host", "0.0.0.0", "--port", "8080", "--media", "/app/media"]
