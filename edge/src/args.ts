// Command-line arguments to EdgeOptionsInput; ranges are checked by resolveEdgeOptions().
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { numberFlag, onOffFlag } from '@sammy/server/args';
import { DEFAULT_EDGE_OPTIONS, EdgeError, invalidEdgeOption, type EdgeOptionsInput } from './options.js';

export const USAGE = `usage: npm run edge -- --origin URL [--port ${DEFAULT_EDGE_OPTIONS.port}] [--host ${DEFAULT_EDGE_OPTIONS.host}]
  [--min-rate-kbps ${DEFAULT_EDGE_OPTIONS.minRateKbps}] [--max-rate-kbps ${DEFAULT_EDGE_OPTIONS.maxRateKbps}] [--query-cmcd on|off]
  [--spiral-guard on|off] [--spiral-guard-multiplier ${DEFAULT_EDGE_OPTIONS.spiralGuardMultiplier}] [--log FILE] [--cache-mb ${DEFAULT_EDGE_OPTIONS.cacheSizeMb}]`;

const numberArg = (flag: string, text: string | undefined): number | undefined => numberFlag(flag, text, invalidEdgeOption);
const onOff = (flag: string, text: string | undefined): boolean | undefined => onOffFlag(flag, text, invalidEdgeOption);

/** The options the command line gives; "help" for --help. */
export function parseEdgeCli(argv: string[], cwd = process.env['INIT_CWD'] ?? process.cwd()): EdgeOptionsInput | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        origin: { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        'min-rate-kbps': { type: 'string' },
        'max-rate-kbps': { type: 'string' },
        'query-cmcd': { type: 'string' },
        'spiral-guard': { type: 'string' },
        'spiral-guard-multiplier': { type: 'string' },
        log: { type: 'string' },
        'cache-mb': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new EdgeError('SAMMY_EDGE_BAD_ARGS', `${(err as Error).message}\n${USAGE}`);
  }
  if (values.help) return 'help';
  if (values.origin === undefined) throw new EdgeError('SAMMY_EDGE_BAD_ARGS', `--origin URL is required\n${USAGE}`);
  const input: EdgeOptionsInput = { originUrl: values.origin };
  const set = <K extends keyof EdgeOptionsInput>(key: K, value: EdgeOptionsInput[K] | undefined): void => {
    if (value !== undefined) input[key] = value;
  };
  set('port', numberArg('--port', values.port));
  set('host', values.host);
  set('minRateKbps', numberArg('--min-rate-kbps', values['min-rate-kbps']));
  set('maxRateKbps', numberArg('--max-rate-kbps', values['max-rate-kbps']));
  set('honourQueryCmcd', onOff('--query-cmcd', values['query-cmcd']));
  set('spiralGuard', onOff('--spiral-guard', values['spiral-guard']));
  set('spiralGuardMultiplier', numberArg('--spiral-guard-multiplier', values['spiral-guard-multiplier']));
  // Relative to the folder npm was started in, as the server's --log.
  set('logFile', values.log === undefined ? undefined : resolve(cwd, values.log));
  set('cacheSizeMb', numberArg('--cache-mb', values['cache-mb']));
  return input;
}
