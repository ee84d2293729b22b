/** What the nginx tests share. */
import { readFileSync } from 'node:fs';

/** A worker that died on a signal, or an alert: nginx's error log says so. */
export function crashesIn(errorLog: string): string[] {
  return readFileSync(errorLog, 'utf8')
    .split('\n')
    .filter((line) => /exited on signal|\[alert\]|\[emerg\]|\[crit\]/.test(line));
}
