// Command-line arguments to NginxServerOptionsInput; ranges are checked by resolveNginxOptions().
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { numberFlag, onOffFlag } from '@sammy/server/args';
import { DEFAULT_NGINX_OPTIONS, invalidNginxOption, NginxError, type NginxServerOptionsInput } from './options.js';

const D = DEFAULT_NGINX_OPTIONS;
export const USAGE = `usage: npm run nginx -- --media DIR [--port ${D.port}] [--host ${D.host}] [--player DIR]
  [--workers N (default: ${D.workers}, the number of cores)] [--pacing on|off] [--spiral-guard on|off]
  [--spiral-guard-multiplier ${D.spiralGuardMultiplier}] [--min-rate-kbps ${D.minRateKbps}] [--max-rate-kbps ${D.maxRateKbps}]
  [--query-cmcd on|off] [--tail-hold on|off] [--log FILE] [--tls-cert FILE --tls-key FILE] [--http2 on|off]
  [--cors-origin ORIGIN|*]`;

/** The Node server's flags the module has no equivalent of, and why. */
const REFUSED_FLAGS: Record<string, string> = {
  'burst-packets':
    "the nginx module has no burst knob: its bursts are the kernel's own trains (one TSO/GSO packet per departure), " +
    'not application-timed ones; for N-packet trains cap them on the host (native/README.md "Burst size")',
  'burst-mode':
    "the nginx module's bursts are always the kernel's own trains (the Node server's --burst-mode kernel); there are no " +
    'application-timed bursts to choose (native/README.md "Burst size")',
};

const numberArg = (flag: string, text: string | undefined): number | undefined => numberFlag(flag, text, invalidNginxOption);
const onOff = (flag: string, text: string | undefined): boolean | undefined => onOffFlag(flag, text, invalidNginxOption);

/** Every flag that takes a value; the refused ones are parsed only to be refused with their reason. */
const VALUE_FLAGS = [
  'media', 'port', 'host', 'player', 'workers', 'pacing', 'spiral-guard', 'spiral-guard-multiplier', 'min-rate-kbps',
  'max-rate-kbps', 'query-cmcd', 'tail-hold', 'log', 'tls-cert', 'tls-key', 'http2', 'cors-origin', 'burst-packets', 'burst-mode',
] as const;
type ValueFlag = (typeof VALUE_FLAGS)[number];

/** The options the command line gives; "help" for --help. Relative paths are taken from the folder npm was started in. */
export function parseNginxCli(argv: string[], cwd = process.env['INIT_CWD'] ?? process.cwd()): NginxServerOptionsInput | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        ...(Object.fromEntries(VALUE_FLAGS.map((flag) => [flag, { type: 'string' }])) as Record<ValueFlag, { type: 'string' }>),
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new NginxError('SAMMY_NGINX_BAD_ARGS', `${(err as Error).message}\n${USAGE}`);
  }
  for (const [flag, why] of Object.entries(REFUSED_FLAGS)) {
    if (values[flag as ValueFlag] !== undefined) {
      throw new NginxError('SAMMY_NGINX_BAD_ARGS', `--${flag} is not an option of npm run nginx: ${why}`);
    }
  }
  if (values.help) return 'help';
  const path = (text: string | undefined): string | undefined => (text === undefined ? undefined : resolve(cwd, text));
  if (values.media === undefined) throw new NginxError('SAMMY_NGINX_BAD_ARGS', `--media DIR is required\n${USAGE}`);
  const input: NginxServerOptionsInput = { mediaDir: path(values.media)! };
  const set = <K extends keyof NginxServerOptionsInput>(key: K, value: NginxServerOptionsInput[K] | undefined): void => {
    if (value !== undefined) input[key] = value;
  };
  set('port', numberArg('--port', values.port));
  set('host', values.host);
  set('playerDir', path(values.player));
  set('workers', numberArg('--workers', values.workers));
  set('pacing', onOff('--pacing', values.pacing));
  set('spiralGuard', onOff('--spiral-guard', values['spiral-guard']));
  set('spiralGuardMultiplier', numberArg('--spiral-guard-multiplier', values['spiral-guard-multiplier']));
  set('minRateKbps', numberArg('--min-rate-kbps', values['min-rate-kbps']));
  set('maxRateKbps', numberArg('--max-rate-kbps', values['max-rate-kbps']));
  set('honourQueryCmcd', onOff('--query-cmcd', values['query-cmcd']));
  set('tailHold', onOff('--tail-hold', values['tail-hold']));
  set('logFile', path(values.log));
  set('http2', onOff('--http2', values.http2));
  set('corsOrigin', values['cors-origin']);
  const [certFile, keyFile] = [path(values['tls-cert']), path(values['tls-key'])];
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new NginxError('SAMMY_NGINX_BAD_ARGS', `--tls-cert FILE and --tls-key FILE are given together\n${USAGE}`);
  }
  if (certFile !== undefined && keyFile !== undefined) input.tls = { certFile, keyFile };
  return input;
}
