// What a bench section gets from the bench runner (bench/run.ts): the namespaces,
// the work and media folders, how to start the servers and the clients inside them,
// and how to print. Sections in their own files take this instead of importing the
// runner (which imports them).
import type { Managed } from '../src/process.js';
import type { ResponseTelemetry } from '../src/telemetry.js';
import type { BenchNet } from './netns.js';

export interface BenchServer {
  name: string;
  process: Managed;
  pid: number;
  port: number;
  logFile: string | null;
  /** How it is stopped gracefully (nginx: SIGQUIT); SIGTERM when unset. */
  stopSignal?: NodeJS.Signals;
  /** nginx's error log (read for crashes and alerts when it stops). */
  errorLog?: string;
}

/** ngx_http_sammy_module's directives in `location /media/` (native/nginx), besides `sammy on` and its telemetry log. */
export interface NginxModuleOptions {
  /** sammy_pacing: off serves every response unpaced (a request's rtp then says `disabled`). */
  pacing: boolean;
  /** sammy_tail_hold: hold a paced body's last byte until the rest has left the socket, then lift the cap. */
  tailHold: boolean;
  /** sammy_min_rate_kbps; the module's default (100) when unset. */
  minRateKbps?: number;
}

export interface NginxOptions {
  /** nginx's limit_rate (bytes/s), or null for none. */
  limitRateBytesPerS: number | null;
  /** Serve HTTPS with this certificate and key (the same files Sammy gets). */
  tls?: { certFile: string; keyFile: string } | null;
  /** With `tls`: HTTP/2 on that listener for clients that offer `h2` (`listen ... ssl http2`, nginx 1.22's form). */
  http2?: boolean;
  /**
   * Cap every accepted connection at this rate with SO_MAX_PACING_RATE, through the
   * bench's LD_PRELOAD library (bench/pace-preload.c, built at `preload`).
   */
  kernelPace?: { preload: string; bytesPerS: number } | null;
  /**
   * Load the Sammy module (`load_module`, built once per bench run) and turn it on in
   * `location /media/` with its telemetry log, which becomes the server's logFile.
   */
  sammy?: NginxModuleOptions | null;
  /**
   * worker_connections and worker_rlimit_nofile (default 4096 and 8192), and
   * open_file_cache's max (default none: a descriptor per response in flight).
   */
  workerConnections?: number;
  rlimitNofile?: number;
  openFileCacheMax?: number | null;
}

export interface BenchKit {
  net: BenchNet;
  work: string;
  mediaDir: string;
  say(line?: string): void;
  table(header: string[], rows: string[][]): void;
  /** `npm run serve` in the server namespace with --media, --host, --port 0, --log and these args. */
  startSammy(name: string, args: string[]): Promise<BenchServer>;
  /** Debian's nginx in the server namespace; null when it is not installed (the bench says so). */
  startNginx(name: string, port: number, o: NginxOptions): Promise<BenchServer | null>;
  /** Why nginx cannot run with the Sammy module here (no nginx, or the module cannot be built), or null when it can. */
  nginxModuleUnavailable: string | null;
  stop(server: BenchServer): Promise<void>;
  /** Runs `node --import tsx SCRIPT '<job JSON>'` in the client namespace and returns its last stdout line, parsed. */
  runClient<T>(script: string, job: unknown): Promise<T>;
  /** The server's telemetry lines so far. */
  telemetry(server: BenchServer): ResponseTelemetry[];
  /** CPU seconds used so far by a process and its children (workers). */
  cpuSeconds(pid: number): number;
}

/** A markdown table's lines. */
export function markdownTable(header: string[], rows: string[][]): string[] {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)];
}

export const fmt = (x: number, digits = 2): string => (Number.isFinite(x) ? x.toFixed(digits) : '-');

/** The q-quantile (0..1) of `values`, interpolated between the two nearest; NaN for none. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  return sorted[below]! + (sorted[Math.min(below + 1, sorted.length - 1)]! - sorted[below]!) * (at - below);
}

export const median = (values: number[]): number => quantile(values, 0.5);
