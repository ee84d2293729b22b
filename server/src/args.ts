// Command-line arguments to ServerOptionsInput; ranges are checked by resolveServerOptions().
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { invalidOption, ServerError } from './errors.js';
import { DEFAULT_SERVER_OPTIONS, type ServerOptionsInput } from './options.js';

export const USAGE = `usage: npm run serve -- --media DIR [--port ${DEFAULT_SERVER_OPTIONS.port}] [--host ${DEFAULT_SERVER_OPTIONS.host}]
  [--burst-packets ${DEFAULT_SERVER_OPTIONS.burstPackets}] [--burst-mode auto|app|kernel] [--body-path auto|sendfile|stream] [--pacing on|off]
  [--spiral-guard on|off] [--spiral-guard-multiplier ${DEFAULT_SERVER_OPTIONS.spiralGuardMultiplier}]
  [--min-rate-kbps ${DEFAULT_SERVER_OPTIONS.minRateKbps}] [--max-rate-kbps ${DEFAULT_SERVER_OPTIONS.maxRateKbps}]
  [--log FILE] [--log-level fatal|error|warn|info|debug|silent] [--player DIR] [--cors-origin ORIGIN|*]
  [--workers N (default: ${DEFAULT_SERVER_OPTIONS.workers}, the number of cores)] [--tls-cert FILE --tls-key FILE [--http2]]`;

/** The flag that sets each option, so a refused value is reported as the user typed it. */
export const FLAG_OF_OPTION: Record<string, string> = {
  mediaDir: '--media',
  playerDir: '--player',
  port: '--port',
  host: '--host',
  burstPackets: '--burst-packets',
  burstMode: '--burst-mode',
  bodyPath: '--body-path',
  pacing: '--pacing',
  spiralGuard: '--spiral-guard',
  spiralGuardMultiplier: '--spiral-guard-multiplier',
  minRateKbps: '--min-rate-kbps',
  maxRateKbps: '--max-rate-kbps',
  logFile: '--log',
  logLevel: '--log-level',
  corsOrigin: '--cors-origin',
  workers: '--workers',
  'tls.certFile': '--tls-cert',
  'tls.keyFile': '--tls-key',
  http2: '--http2',
};

/** An error message in terms of the command line. */
export function cliMessage(err: ServerError): string {
  const flag = err.option === null ? undefined : FLAG_OF_OPTION[err.option];
  return flag === undefined ? err.message : err.message.replace(`invalid ${err.option}:`, `invalid ${flag}:`);
}

/** The error a refused flag value throws (the server's, the edge's, nginx's): it names the flag, the value and what is accepted. */
export type InvalidFlag = (flag: string, value: unknown, accepted: string) => Error;

/** A CLI number: the option validator reports ranges, this only rejects non-numbers. */
export function numberFlag(flag: string, text: string | undefined, invalid: InvalidFlag = invalidOption): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw invalid(flag, text, 'a number');
  return value;
}

/** A CLI switch: `on` or `off`. */
export function onOffFlag(flag: string, text: string | undefined, invalid: InvalidFlag = invalidOption): boolean | undefined {
  if (text === undefined) return undefined;
  if (text === 'on' || text === 'off') return text === 'on';
  throw invalid(flag, text, 'on, off');
}

/**
 * `npm run serve -w ...` runs in the workspace folder; npm keeps the folder the user
 * typed the command in as INIT_CWD, and relative paths mean that one.
 */
function userPath(path: string | undefined, cwd: string): string | undefined {
  return path === undefined ? undefined : resolve(cwd, path);
}

export function parseCli(argv: string[], cwd = process.env['INIT_CWD'] ?? process.cwd()): ServerOptionsInput | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        media: { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        'burst-packets': { type: 'string' },
        'burst-mode': { type: 'string' },
        'body-path': { type: 'string' },
        pacing: { type: 'string' },
        'spiral-guard': { type: 'string' },
        'spiral-guard-multiplier': { type: 'string' },
        'min-rate-kbps': { type: 'string' },
        'max-rate-kbps': { type: 'string' },
        log: { type: 'string' },
        'log-level': { type: 'string' },
        player: { type: 'string' },
        'cors-origin': { type: 'string' },
        workers: { type: 'string' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        http2: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new ServerError('SAMMY_SERVER_BAD_ARGS', `${(err as Error).message}\n${USAGE}`);
  }
  if (values.help) return 'help';
  if (values.media === undefined) throw new ServerError('SAMMY_SERVER_BAD_ARGS', `--media DIR is required\n${USAGE}`);
  const input: ServerOptionsInput = { mediaDir: userPath(values.media, cwd)! };
  const set = <K extends keyof ServerOptionsInput>(key: K, value: ServerOptionsInput[K] | undefined): void => {
    if (value !== undefined) input[key] = value;
  };
  set('port', numberFlag('--port', values.port));
  set('host', values.host);
  set('burstPackets', numberFlag('--burst-packets', values['burst-packets']));
  set('burstMode', values['burst-mode'] as ServerOptionsInput['burstMode']);
  set('bodyPath', values['body-path'] as ServerOptionsInput['bodyPath']);
  set('pacing', onOffFlag('--pacing', values.pacing));
  set('spiralGuard', onOffFlag('--spiral-guard', values['spiral-guard']));
  set('spiralGuardMultiplier', numberFlag('--spiral-guard-multiplier', values['spiral-guard-multiplier']));
  set('minRateKbps', numberFlag('--min-rate-kbps', values['min-rate-kbps']));
  set('maxRateKbps', numberFlag('--max-rate-kbps', values['max-rate-kbps']));
  set('logFile', userPath(values.log, cwd));
  set('logLevel', values['log-level'] as ServerOptionsInput['logLevel']);
  set('playerDir', userPath(values.player, cwd));
  set('corsOrigin', values['cors-origin']);
  set('workers', numberFlag('--workers', values.workers));
  set('http2', values.http2);
  const [certFile, keyFile] = [values['tls-cert'], values['tls-key']];
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ServerError('SAMMY_SERVER_BAD_ARGS', `--tls-cert FILE and --tls-key FILE are given together\n${USAGE}`);
  }
  if (certFile !== undefined) input.tls = { certFile: userPath(certFile, cwd)!, keyFile: userPath(keyFile, cwd)! };
  return input;
}

