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
}

export interface NginxOptions {
  /** nginx's limit_rate (bytes/s), or null for none. */
  limitRateBytesPerS: number | null;
  /** Serve HTTPS with this certificate and key (the same files Sammy gets). */
  tls?: { certFile: string; keyFile: string } | null;
  /**
   * Cap every accepted connection at this rate with SO_MAX_PACING_RATE, through the
   * bench's LD_PRELOAD library (bench/pace-preload.c, built at `preload`).
   */
  kernelPace?: { preload: string; bytesPerS: number } | null;
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
  stop(server: BenchServer): Promise<void>;
  /** Runs `node --import tsx SCRIPT '<job JSON>'` in the client namespace and returns its last stdout line, parsed. */
  runClient<T>(script: string, job: unknown): Promise<T>;
  /** The server's telemetry lines so far. */
  telemetry(server: BenchServer): ResponseTelemetry[];
  /** CPU seconds used so far by a process and its children (workers). */
  cpuSeconds(pid: number): number;
}

export const fmt = (x: number, digits = 2): string => (Number.isFinite(x) ? x.toFixed(digits) : '-');

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
