// buildApp(): the whole server as a fastify instance, not listening (tests inject
// or listen on port 0; the CLI listens on the configured address).
import fastifyCors from '@fastify/cors';
import { CMCD_HEADER_FIELDS } from '@svta/cml-cmcd';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import pino, { type DestinationStream } from 'pino';
import { errorResponseBody, rawErrorResponse } from './errors.js';
import { readKernelTsoSettings, DeviceGsoTable } from './kernel-settings.js';
import { MEDIA_PREFIX, mediaPlugin } from './media.js';
import { createMetrics, type ServerMetrics } from './metrics.js';
import { resolveServerOptions, type ServerOptions, type ServerOptionsInput } from './options.js';
import { Http2Pacing, isHttp2Request } from './http2-pacing.js';
import { PacingController } from './pacing.js';
import { BodySender } from './body-sender.js';
import { ServerError } from './errors.js';
import { hostilePathReason } from './paths.js';
import { playerPlugin } from './player.js';
import { loadSocketControl, type SocketControl } from './socket.js';
import { readTlsCredentials } from './tls.js';

export interface AppDependencies {
  /** The setsockopt/TCP_INFO binding; tests replace it to act out a platform without one. */
  socketControl?: SocketControl;
  /** Where log lines go besides --log FILE (default stdout). */
  logStream?: DestinationStream;
  /**
   * The /metrics text; a worker of `--workers N` asks its primary, which sums every
   * process's metrics (src/workers.ts). Default: this app's own registry.
   */
  metricsText?: () => Promise<string>;
  /** Starts the zero-copy sender; tests replace it to act out a platform without one. */
  startSender?: (onLost: (reason: string) => void) => Promise<BodySender>;
}

export interface SammyDecorations {
  options: ServerOptions;
  pacing: PacingController;
  /** HTTP/2 streams' pacing (--http2); null without it. */
  http2Pacing: Http2Pacing | null;
  socketControl: SocketControl;
  metrics: ServerMetrics;
  /** The zero-copy path's sender thread; null when every body streams. */
  sender: BodySender | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    sammy: SammyDecorations;
  }
}

/** Headers a cross-origin player may send (CMCD in header mode, ranges). */
export const CORS_ALLOWED_HEADERS = ['Range', ...CMCD_HEADER_FIELDS];
/** Headers a cross-origin player may read (the applied rate, range replies). */
export const CORS_EXPOSED_HEADERS = ['Server-Timing', 'Content-Length', 'Content-Range', 'Accept-Ranges', 'ETag'];

type FileDestination = DestinationStream & { flushSync?: () => void; end?: () => void };

/**
 * Lines for --log FILE are written in batches of about this many bytes, and at least
 * this often: one write per line would cost a file-thread round trip (two thread
 * switches) per media response.
 */
const LOG_BATCH_BYTES = 8 * 1024;
const LOG_FLUSH_INTERVAL_MS = 250;

/**
 * Log lines go to stdout at --log-level, and with --log FILE every line from info
 * up (the "media response" lines included) goes to FILE as JSON lines.
 */
export function createLogger(options: ServerOptions, deps: AppDependencies = {}): { logger: pino.Logger; closeLog: () => void } {
  const streams: pino.StreamEntry[] = [];
  if (options.logLevel !== 'silent') streams.push({ level: options.logLevel, stream: deps.logStream ?? process.stdout });
  let file: FileDestination | null = null;
  if (options.logFile !== null) {
    file = pino.destination({
      dest: options.logFile,
      mkdir: true,
      sync: false,
      minLength: LOG_BATCH_BYTES,
      periodicFlush: LOG_FLUSH_INTERVAL_MS,
    }) as FileDestination;
    streams.push({ level: 'info', stream: file });
  }
  const level = options.logLevel === 'debug' ? 'debug' : file !== null ? 'info' : options.logLevel;
  const logger = streams.length === 0 ? pino({ level: 'silent' }) : pino({ level }, pino.multistream(streams));
  return {
    logger,
    closeLog: () => {
      file?.flushSync?.();
      file?.end?.();
    },
  };
}

/** Validates options (throwing SAMMY_SERVER_INVALID_OPTION) and assembles the server. */
export async function buildApp(input: ServerOptionsInput, deps: AppDependencies = {}): Promise<FastifyInstance> {
  const options = resolveServerOptions(input);
  const { limits } = options;
  const { logger, closeLog } = createLogger(options, deps);
  const metrics = createMetrics();
  const httpOptions = {
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // Node enforces the two timeouts above only this often.
    connectionsCheckingInterval: Math.min(1000, Math.ceil(limits.headersTimeoutMs / 2)),
  };
  const app = Fastify({
    loggerInstance: logger,
    // One "media response" line per media response replaces fastify's two request lines.
    logController: new LogController({ disableRequestLogging: true }),
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    forceCloseConnections: true,
    // Request heads the HTTP parser rejects, and URLs the router cannot decode, get
    // the one error shape too (fastify's defaults echo the URL).
    clientErrorHandler: (err: NodeJS.ErrnoException, socket: Socket) => answerClientError(err, socket, metrics, logger),
    frameworkErrors: (err, request, reply) => {
      metrics.errors.inc({ kind: 'bad_path' });
      request.log.info({ code: err.code }, 'refused request path');
      sendError(reply, 400, 'SAMMY_BAD_PATH', 'malformed URL');
    },
    ...transportOptions(options, httpOptions),
  }) as unknown as FastifyInstance;
  // fastify sets these only on an HTTP/1.1 server; an HTTP/2 server serves HTTP/1.1
  // connections by them too.
  if (options.http2) Object.assign(app.server, { ...httpOptions, keepAliveTimeout: limits.keepAliveTimeoutMs });
  // A failed handshake (plain HTTP to the TLS port, a bad client hello, a timeout):
  // Node closes the connection; it is counted so a scraper can see it.
  app.server.on('tlsClientError', (err: NodeJS.ErrnoException) => {
    metrics.errors.inc({ kind: 'tls' });
    logger.debug({ code: err.code }, 'TLS handshake failed');
  });

  const socketControl = deps.socketControl ?? loadSocketControl();
  const sender = await startSender(options, deps, app.log, metrics);
  const pacing = new PacingController({
    options,
    control: socketControl,
    metrics,
    log: app.log,
    kernel: readKernelTsoSettings(),
    devices: new DeviceGsoTable(),
    sender,
  });
  const http2Pacing = options.http2 ? new Http2Pacing({ options, control: socketControl, metrics, log: app.log }) : null;
  app.decorate('sammy', { options, pacing, http2Pacing, socketControl, metrics, sender });
  // Before connections are cut, while their TCP_INFO is still readable.
  app.addHook('preClose', (done) => {
    pacing.finishAll();
    http2Pacing?.finishAll();
    done();
  });
  if (http2Pacing !== null) {
    // Every HTTP/2 response, not only media: one without a rate lifts its connection's cap while it sends.
    app.addHook('onSend', (request, reply, payload, done) => {
      if (!isHttp2Request(request)) return done(null, payload);
      let body: unknown = payload;
      try {
        body = http2Pacing.onSend(request, reply, payload, request.routeOptions.url === `${MEDIA_PREFIX}*`);
      } catch (err) {
        // A pacing fault must never cost the client its response: send it unpaced.
        metrics.errors.inc({ kind: 'server' });
        request.log.error({ err }, 'HTTP/2 pacing failed; sending unpaced');
      }
      done(null, body);
    });
    // A client that breaks the protocol (bad frames, floods): nghttp2 ends its session.
    app.server.on('sessionError', (err: NodeJS.ErrnoException) => {
      metrics.errors.inc({ kind: 'client' });
      logger.debug({ code: err.code }, 'HTTP/2 session failed');
    });
  }
  // After the connections are closed (their transfers aborted), before the log.
  app.addHook('onClose', async () => {
    await sender?.stop();
    closeLog();
  });

  app.addHook('onRequest', (request, reply, done) => {
    const reason = hostilePathReason(request.url);
    if (reason === null) return done();
    metrics.errors.inc({ kind: 'bad_path' });
    request.log.info({ reason, url: request.url.slice(0, 200) }, 'refused request path');
    sendError(reply, 400, 'SAMMY_BAD_PATH', reason);
  });
  // Request logging is off (one telemetry line per media response replaces it), and
  // with it fastify's own error log: failures are logged and counted here. Every
  // error goes out in one shape (errors.ts), never with the error's own message,
  // which may quote the request.
  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, request, reply) => {
    if (clientLeft(request, reply)) {
      // Not the server's failure: the client reset a connection (or an HTTP/2 stream)
      // whose response had not started, and its body stream was cut. Its
      // "media response" line already says aborted; nothing is answered.
      request.log.debug({ code: err.code, url: request.url.slice(0, 200) }, 'client left before its response');
      sendError(reply, 500);
      return;
    }
    const status = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) {
      metrics.errors.inc({ kind: 'server' });
      request.log.error({ err, url: request.url.slice(0, 200) }, 'request failed');
    } else {
      request.log.info({ status, code: err.code, url: request.url.slice(0, 200) }, 'request refused');
    }
    sendError(reply, status, status < 500 && typeof err.code === 'string' && /^FST_[A-Z0-9_]+$/.test(err.code) ? err.code : undefined);
  });
  app.setNotFoundHandler((_request, reply) => sendError(reply, 404));
  app.addHook('onResponse', (request, reply, done) => {
    metrics.requests.inc({ route: request.routeOptions.url ?? 'none', status: String(reply.statusCode) });
    done();
  });

  if (options.corsOrigin !== null) {
    await app.register(fastifyCors, {
      origin: options.corsOrigin,
      methods: ['GET', 'HEAD'],
      allowedHeaders: CORS_ALLOWED_HEADERS,
      exposedHeaders: CORS_EXPOSED_HEADERS,
      maxAge: 600,
    });
  }

  app.get('/healthz', async () => ({
    status: 'ok',
    pacing: options.pacing && socketControl.available,
    burstPackets: options.burstPackets,
    burstMode: options.burstMode,
    spiralGuard: options.spiralGuard,
    spiralGuardMultiplier: options.spiralGuardMultiplier,
    bodyPath: sender?.available === true ? 'sendfile' : 'stream',
    activeResponses: pacing.activeResponses + (http2Pacing?.activeStreams ?? 0),
    tls: options.tls !== null,
    http2: options.http2,
    // Which process answered: with --workers N each connection has its own.
    pid: process.pid,
  }));
  app.get('/metrics', async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return deps.metricsText === undefined ? metrics.registry.metrics() : deps.metricsText();
  });
  await app.register(mediaPlugin, { mediaDir: options.mediaDir, pacing, metrics, sender });
  await app.register(playerPlugin, { playerDir: options.playerDir, metrics });
  return app;
}

/**
 * fastify's transport options. fastify hands `http` only to a plain server: over TLS
 * the same limits go with the certificate, and a handshake gets no longer than a
 * request head (slowloris). With --http2, HTTP/2 beside HTTP/1.1 (ALPN gives h2 to
 * clients that offer it, every browser), with the same cap on a request's header block.
 * (Typed loosely: fastify's overloads tie `http2: true` to its HTTP/2 types, which
 * the rest of the app does not use.)
 */
function transportOptions(options: ServerOptions, httpOptions: object): object {
  if (options.tls === null) return { http: httpOptions };
  const https = { ...httpOptions, ...readTlsCredentials(options.tls), handshakeTimeout: options.limits.headersTimeoutMs };
  if (!options.http2) return { https };
  return {
    http2: true,
    http2SessionTimeout: options.limits.idleTimeoutMs,
    https: { ...https, allowHTTP1: true, settings: { maxHeaderListSize: options.limits.maxHeaderBytes, maxConcurrentStreams: options.limits.maxConcurrentStreams } },
  };
}

/**
 * The zero-copy sender for --body-path auto or sendfile. Where it cannot start,
 * `auto` serves every body through streams (said once in the log) and `sendfile`
 * refuses to start the server. Over TLS every body streams (Node encrypts it).
 */
async function startSender(options: ServerOptions, deps: AppDependencies, log: FastifyBaseLogger, metrics: ServerMetrics): Promise<BodySender | null> {
  if (options.bodyPath === 'stream' || options.tls !== null) return null;
  const onLost = (reason: string): void => {
    metrics.errors.inc({ kind: 'sendfile' });
    log.error({ reason }, 'zero-copy sender lost; bodies take the stream path from now on');
  };
  try {
    return await (deps.startSender ?? BodySender.start)(onLost);
  } catch (err) {
    const reason = (err as Error).message;
    if (options.bodyPath === 'sendfile') {
      throw new ServerError('SAMMY_SERVER_SENDFILE_UNAVAILABLE', `--body-path sendfile, but the zero-copy sender cannot start: ${reason}`, 'bodyPath');
    }
    log.warn({ reason }, `zero-copy sender unavailable, bodies take the stream path: ${reason}`);
    return null;
  }
}

/** The connection (or HTTP/2 stream) the response would go out on is gone. */
function clientLeft(request: FastifyRequest, reply: FastifyReply): boolean {
  const stream = (reply.raw as { stream?: { destroyed?: boolean } }).stream;
  return request.raw.socket?.destroyed === true || reply.raw.destroyed || stream?.destroyed === true;
}

function sendError(reply: FastifyReply, status: number, code?: string, message?: string): void {
  reply.code(status).type('application/json; charset=utf-8').send(errorResponseBody(status, code, message));
}

/**
 * A request head the HTTP parser refused (malformed, too large, too slow): answered
 * in the one error shape, counted, and the connection closed. A client that reset
 * the connection gets nothing, and neither does one whose earlier response is still
 * being sent (a bad head pipelined behind a good one): the error would land inside
 * that body.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket, metrics: ServerMetrics, log: pino.Logger): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  metrics.errors.inc({ kind: 'client' });
  log.info({ status, code: err.code }, 'refused request head');
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (socket.writable && inFlight?.headersSent !== true) socket.write(rawErrorResponse(status));
  socket.destroy();
}
