// --workers N: the server on every core, with node:cluster.
//
// Why cluster and not SO_REUSEPORT: Node 20 cannot set SO_REUSEPORT before bind
// (`reusePort` arrived in Node 22.12), and cluster's round-robin scheduling spreads
// connections evenly, where the kernel's accept wake-ups (and reuseport's hash)
// can leave one worker with most of them. A paced connection lives for minutes, so
// an even spread is what keeps every core's event loop equally loaded. The primary
// accepts each connection and hands its descriptor to a worker; the worker's socket
// is then an ordinary kernel socket, paced as in one process.
//
// The primary serves nothing itself. It
//   - starts N workers and prints the one `listening on` line once all listen;
//   - replaces a worker that dies (logged, counted in sammy_worker_restarts_total);
//   - answers /metrics for whichever worker a scraper reached, with every process's
//     metrics summed (prom-client's cluster aggregation), so the numbers describe
//     the whole server;
//   - on SIGTERM/SIGINT asks each worker to close, waits, and exits. If the primary
//     itself is killed, Node's cluster workers exit when their IPC channel closes:
//     no worker outlives it.
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { buildApp, createLogger } from './app.js';
import type { ServerOptions, ServerOptionsInput } from './options.js';
import { listeningLine } from './process.js';

/** One registry as JSON (Registry.getMetricsAsJSON()). */
type RegistryJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** Worker -> primary. */
type FromWorker =
  | { type: 'sammy:listening'; port: number }
  /** Someone scraped /metrics on this worker: the primary answers with `sammy:metrics-text`. */
  | { type: 'sammy:metrics-request'; id: number }
  /** This worker's own registry, for collection `id`. */
  | { type: 'sammy:metrics'; id: number; metrics: RegistryJson };

/** Primary -> worker. */
type FromPrimary =
  | { type: 'sammy:collect'; id: number }
  | { type: 'sammy:metrics-text'; id: number; text: string }
  | { type: 'sammy:shutdown' };

/**
 * The port a worker passes to listen(). The primary shares one listening socket per
 * (host, port) *as the workers ask for it*: with `--port 0` every worker must ask for
 * 0 to share the first one's socket (asking for the bound port would bind a second
 * socket and fail with EADDRINUSE). Only when no worker is left, and the socket is
 * closed, does a replacement ask for the bound port, so the port stays the same.
 */
const PORT_ENV = 'SAMMY_WORKER_PORT';
/** A worker that has not sent its registry by then is left out of that scrape (sammy_metrics_workers_reporting says so). */
const COLLECT_TIMEOUT_MS = 2000;
/** A worker asking for the aggregate gives up after this and answers with its own registry. */
const ASK_PRIMARY_TIMEOUT_MS = 2 * COLLECT_TIMEOUT_MS;
/** Workers still running this long after the shutdown request are killed. */
const SHUTDOWN_GRACE_MS = 10_000;
/** A worker that dies sooner than this after it started is replaced after a growing delay (a crash loop must not spin). */
const STABLE_WORKER_MS = 10_000;
const MAX_RESTART_DELAY_MS = 10_000;

interface PrimaryMetrics {
  registry: Registry;
  workers: Gauge;
  restarts: Counter;
  reporting: Gauge;
}

function createPrimaryMetrics(): PrimaryMetrics {
  const registry = new Registry();
  // The primary's own CPU and memory, summed with the workers' into the whole server's.
  collectDefaultMetrics({ register: registry, prefix: 'sammy_' });
  const registers = [registry];
  return {
    registry,
    workers: new Gauge({ name: 'sammy_workers', help: 'Worker processes running (--workers N)', registers }),
    restarts: new Counter({ name: 'sammy_worker_restarts_total', help: 'Workers that died and were replaced', registers }),
    reporting: new Gauge({
      name: 'sammy_metrics_workers_reporting',
      help: 'Workers whose metrics are in this scrape (fewer than sammy_workers when one did not answer in time)',
      registers,
    }),
  };
}

/** Runs the cluster's primary until SIGTERM/SIGINT; exits the process itself. */
export async function runPrimary(options: ServerOptions): Promise<void> {
  const { logger, closeLog } = createLogger(options);
  const metrics = createPrimaryMetrics();
  // Must be set before the first fork; it is Linux's default, stated because the
  // even spread is the reason for using cluster at all.
  cluster.schedulingPolicy = cluster.SCHED_RR;
  const workers = new Set<Worker>();
  const startedMs = new Map<Worker, number>();
  const collections = new Map<number, { parts: RegistryJson[]; waiting: Set<Worker>; finish: () => void }>();
  let nextCollection = 0;
  /** The port workers ask for (PORT_ENV), and the one the server got. */
  let askPort = options.port;
  let port = options.port;
  const listening = new Set<Worker>();
  let started = false;
  let shuttingDown = false;
  let quickDeaths = 0;
  let exitCode = 0;
  let killTimer: NodeJS.Timeout | null = null;

  const collect = (): Promise<string> =>
    new Promise((resolve) => {
      const id = nextCollection++;
      const waiting = new Set([...workers].filter((w) => w.isConnected()));
      const parts: RegistryJson[] = [];
      const finish = (): void => {
        if (!collections.delete(id)) return;
        clearTimeout(timer);
        metrics.reporting.set(parts.length);
        metrics.registry.getMetricsAsJSON().then(
          (own) => resolve(AggregatorRegistry.aggregate([own, ...parts]).metrics()),
          (err: unknown) => {
            logger.error({ err }, 'metrics aggregation failed');
            resolve('');
          },
        );
      };
      const timer = setTimeout(finish, COLLECT_TIMEOUT_MS);
      collections.set(id, { parts, waiting, finish });
      for (const w of waiting) w.send({ type: 'sammy:collect', id } satisfies FromPrimary);
      if (waiting.size === 0) finish();
    });

  const onMessage = (worker: Worker, message: FromWorker): void => {
    if (message.type === 'sammy:listening') {
      port = message.port;
      listening.add(worker);
      if (!started && listening.size === options.workers) {
        started = true;
        process.stdout.write(listeningLine(options.host, port, options.tls === null ? 'http' : 'https'));
      }
    } else if (message.type === 'sammy:metrics-request') {
      void collect().then((text) => {
        if (worker.isConnected()) worker.send({ type: 'sammy:metrics-text', id: message.id, text } satisfies FromPrimary);
      });
    } else if (message.type === 'sammy:metrics') {
      const collection = collections.get(message.id);
      if (collection === undefined || !collection.waiting.delete(worker)) return;
      collection.parts.push(message.metrics);
      if (collection.waiting.size === 0) collection.finish();
    }
  };

  const fork = (): void => {
    if (listening.size === 0 && started) askPort = port;
    const worker = cluster.fork({ [PORT_ENV]: String(askPort) });
    workers.add(worker);
    startedMs.set(worker, performance.now());
    metrics.workers.set(workers.size);
    worker.on('message', (m: FromWorker) => onMessage(worker, m));
    worker.once('exit', (code, signal) => onExit(worker, code, signal));
  };

  const onExit = (worker: Worker, code: number | null, signal: string | null): void => {
    workers.delete(worker);
    listening.delete(worker);
    metrics.workers.set(workers.size);
    // A collection waiting for this worker need not wait any longer.
    for (const c of collections.values()) if (c.waiting.delete(worker) && c.waiting.size === 0) c.finish();
    const livedMs = performance.now() - (startedMs.get(worker) ?? 0);
    startedMs.delete(worker);
    if (shuttingDown) {
      if (workers.size === 0) finishShutdown();
      return;
    }
    if (!started) {
      // It could not start (the port is taken, ...): it printed why; so do the others.
      logger.error({ workerPid: worker.process.pid, code, signal }, 'worker failed to start; stopping');
      exitCode = 2;
      return beginShutdown();
    }
    quickDeaths = livedMs < STABLE_WORKER_MS ? quickDeaths + 1 : 0;
    const delayMs = quickDeaths === 0 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 100 * 2 ** (quickDeaths - 1));
    metrics.restarts.inc();
    logger.warn({ workerPid: worker.process.pid, code, signal, livedMs: Math.round(livedMs), restartInMs: delayMs }, 'worker died; starting a replacement');
    setTimeout(() => {
      if (!shuttingDown) fork();
    }, delayMs);
  };

  const finishShutdown = (): void => {
    if (killTimer !== null) clearTimeout(killTimer);
    closeLog();
    process.exit(exitCode);
  };
  const beginShutdown = (): void => {
    if (shuttingDown) return;
    shuttingDown = true;
    if (workers.size === 0) return finishShutdown();
    for (const w of workers) {
      if (w.isConnected()) w.send({ type: 'sammy:shutdown' } satisfies FromPrimary);
      else w.process.kill('SIGTERM');
    }
    killTimer = setTimeout(() => {
      logger.warn({ workers: workers.size }, 'workers still running after the shutdown grace; killing them');
      exitCode = exitCode || 1;
      for (const w of workers) w.process.kill('SIGKILL');
    }, SHUTDOWN_GRACE_MS);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, beginShutdown);

  for (let i = 0; i < options.workers; i++) fork();
}

/** Runs one worker: the whole server, listening on the primary's shared port. */
export async function runWorker(input: ServerOptionsInput): Promise<void> {
  const asks = new Map<number, (text: string | null) => void>();
  let nextAsk = 0;
  const send = (message: FromWorker): void => {
    if (process.connected) process.send!(message);
  };
  const askPrimary = (): Promise<string | null> =>
    new Promise((resolve) => {
      const id = nextAsk++;
      const timer = setTimeout(() => answer(null), ASK_PRIMARY_TIMEOUT_MS);
      const answer = (text: string | null): void => {
        clearTimeout(timer);
        asks.delete(id);
        resolve(text);
      };
      asks.set(id, answer);
      send({ type: 'sammy:metrics-request', id });
    });

  const port = Number(process.env[PORT_ENV] ?? input.port);
  const app = await buildApp(
    { ...input, port },
    {
      metricsText: async () => {
        const text = await askPrimary();
        if (text !== null) return text;
        app.log.warn('the primary did not answer with every worker\'s metrics in time; this worker\'s alone');
        return app.sammy.metrics.registry.metrics();
      },
    },
  );
  let closing = false;
  const close = (): void => {
    if (closing) return;
    closing = true;
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('message', (message: FromPrimary) => {
    if (message.type === 'sammy:collect') {
      void app.sammy.metrics.registry.getMetricsAsJSON().then((metrics) => send({ type: 'sammy:metrics', id: message.id, metrics }));
    } else if (message.type === 'sammy:metrics-text') {
      asks.get(message.id)?.(message.text);
    } else if (message.type === 'sammy:shutdown') {
      close();
    }
  });
  // Ctrl-C in a terminal reaches every process of the group, workers included.
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
  await app.listen({ host: app.sammy.options.host, port });
  const address = app.server.address();
  send({ type: 'sammy:listening', port: typeof address === 'object' && address !== null ? address.port : port });
}

export const isWorkerProcess = (): boolean => cluster.isWorker;
