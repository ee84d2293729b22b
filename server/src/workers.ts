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

/** A /metrics scrape being collected from the workers. */
interface Collection {
  parts: RegistryJson[];
  waiting: Set<Worker>;
  finish: () => void;
}

/** The cluster's primary: forks, replaces and stops the workers, and sums their metrics. */
class ClusterPrimary {
  readonly #options: ServerOptions;
  readonly #log: ReturnType<typeof createLogger>['logger'];
  readonly #closeLog: () => void;
  readonly #metrics = createPrimaryMetrics();
  readonly #workers = new Map<Worker, { startedMs: number }>();
  readonly #listening = new Set<Worker>();
  readonly #collections = new Map<number, Collection>();
  #nextCollection = 0;
  /** The port workers ask for (PORT_ENV), and the one the server got. */
  #askPort: number;
  #port: number;
  #started = false;
  #shuttingDown = false;
  #quickDeaths = 0;
  #exitCode = 0;
  #killTimer: NodeJS.Timeout | null = null;

  constructor(options: ServerOptions) {
    this.#options = options;
    const { logger, closeLog } = createLogger(options);
    this.#log = logger;
    this.#closeLog = closeLog;
    this.#askPort = options.port;
    this.#port = options.port;
  }

  start(): void {
    // Must be set before the first fork; it is Linux's default, stated because the
    // even spread is the reason for using cluster at all.
    cluster.schedulingPolicy = cluster.SCHED_RR;
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => this.#shutdown());
    for (let i = 0; i < this.#options.workers; i++) this.#fork();
  }

  #fork(): void {
    // No worker left holds the shared socket: ask for the port it had.
    if (this.#listening.size === 0 && this.#started) this.#askPort = this.#port;
    const worker = cluster.fork({ [PORT_ENV]: String(this.#askPort) });
    this.#workers.set(worker, { startedMs: performance.now() });
    this.#metrics.workers.set(this.#workers.size);
    worker.on('message', (m: FromWorker) => this.#onMessage(worker, m));
    worker.once('exit', (code, signal) => this.#onExit(worker, code, signal));
  }

  #onMessage(worker: Worker, message: FromWorker): void {
    if (message.type === 'sammy:listening') {
      this.#port = message.port;
      this.#listening.add(worker);
      if (!this.#started && this.#listening.size === this.#options.workers) {
        this.#started = true;
        process.stdout.write(listeningLine(this.#options.host, this.#port, this.#options.tls === null ? 'http' : 'https'));
      }
    } else if (message.type === 'sammy:metrics-request') {
      void this.#collect().then((text) => {
        if (worker.isConnected()) worker.send({ type: 'sammy:metrics-text', id: message.id, text } satisfies FromPrimary);
      });
    } else if (message.type === 'sammy:metrics') {
      const collection = this.#collections.get(message.id);
      if (collection === undefined || !collection.waiting.delete(worker)) return;
      collection.parts.push(message.metrics);
      if (collection.waiting.size === 0) collection.finish();
    }
  }

  /** Every worker's registry and the primary's own, summed; a worker that does not answer in time is left out. */
  #collect(): Promise<string> {
    return new Promise((resolve) => {
      const id = this.#nextCollection++;
      const waiting = new Set([...this.#workers.keys()].filter((w) => w.isConnected()));
      const parts: RegistryJson[] = [];
      const finish = (): void => {
        if (!this.#collections.delete(id)) return;
        clearTimeout(timer);
        this.#metrics.reporting.set(parts.length);
        this.#metrics.registry.getMetricsAsJSON().then(
          (own) => resolve(AggregatorRegistry.aggregate([own, ...parts]).metrics()),
          (err: unknown) => {
            this.#log.error({ err }, 'metrics aggregation failed');
            resolve('');
          },
        );
      };
      const timer = setTimeout(finish, COLLECT_TIMEOUT_MS);
      this.#collections.set(id, { parts, waiting, finish });
      for (const w of waiting) w.send({ type: 'sammy:collect', id } satisfies FromPrimary);
      if (waiting.size === 0) finish();
    });
  }

  #onExit(worker: Worker, code: number | null, signal: string | null): void {
    const livedMs = performance.now() - (this.#workers.get(worker)?.startedMs ?? 0);
    this.#workers.delete(worker);
    this.#listening.delete(worker);
    this.#metrics.workers.set(this.#workers.size);
    // A scrape waiting for this worker need not wait any longer.
    for (const c of this.#collections.values()) if (c.waiting.delete(worker) && c.waiting.size === 0) c.finish();
    if (this.#shuttingDown) {
      if (code !== 0) this.#exitCode ||= 1;
      if (this.#workers.size === 0) this.#exit();
      return;
    }
    if (!this.#started) {
      // It could not start (the port is taken, ...): it printed why; so may the others.
      this.#log.error({ workerPid: worker.process.pid, code, signal }, 'worker failed to start; stopping');
      this.#exitCode = 2;
      return this.#shutdown();
    }
    this.#quickDeaths = livedMs < STABLE_WORKER_MS ? this.#quickDeaths + 1 : 0;
    const delayMs = this.#quickDeaths === 0 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 100 * 2 ** (this.#quickDeaths - 1));
    this.#metrics.restarts.inc();
    this.#log.warn({ workerPid: worker.process.pid, code, signal, livedMs: Math.round(livedMs), restartInMs: delayMs }, 'worker died; starting a replacement');
    setTimeout(() => {
      if (!this.#shuttingDown) this.#fork();
    }, delayMs);
  }

  /** Asks every worker to close (they write their in-flight lines), kills those still running after the grace. */
  #shutdown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    if (this.#workers.size === 0) return this.#exit();
    for (const w of this.#workers.keys()) {
      if (w.isConnected()) w.send({ type: 'sammy:shutdown' } satisfies FromPrimary);
      else w.process.kill('SIGTERM');
    }
    this.#killTimer = setTimeout(() => {
      this.#log.warn({ workers: this.#workers.size }, 'workers still running after the shutdown grace; killing them');
      this.#exitCode ||= 1;
      for (const w of this.#workers.keys()) w.process.kill('SIGKILL');
    }, SHUTDOWN_GRACE_MS);
  }

  #exit(): void {
    if (this.#killTimer !== null) clearTimeout(this.#killTimer);
    this.#closeLog();
    process.exit(this.#exitCode);
  }
}

/** Runs the cluster's primary until SIGTERM/SIGINT; exits the process itself. */
export async function runPrimary(options: ServerOptions): Promise<void> {
  new ClusterPrimary(options).start();
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
