# The demo server with the sample ladder, for users without Node.
# Uses the same scripts as `npm start`: the ladder is encoded at first start into
# the /app/media volume, then the server listens on 0.0.0.0:8080.
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY encoder/package.json encoder/
COPY server/package.json server/
COPY player/package.json player/
COPY sim/package.json sim/
COPY e2e/package.json e2e/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build
VOLUME /app/media
EXPOSE 8080
CMD ["node", "scripts/start.mjs", "--host", "0.0.0.0", "--port", "8080", "--media", "/app/media"]
