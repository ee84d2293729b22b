/**
 * npm run sim:starts -- --trace TRACE [--every-s S | --starts N] [--duration S] [--arms LIST] [--ladder SEGMENTS_JSON]
 *                       [--max-buffer S] [--config JSON] [--history-kbps LIST] [--latency-ms MS]
 *                       [--mahimahi-bin-ms MS] [--link-efficiency F] [--json]
 * Every arm from every S seconds of one pass of a trace, or from N points spread over it (src/starts.ts).
 */
import { basename } from 'node:path';
import { SIM_ARMS, type SimArm } from '../arms/types.js';
import { resolveSammyConfig } from '../core.js';
import { CORPUS_LATENCY_MS } from '../corpus/traces.js';
import { SimError } from '../errors.js';
import { loadSidecar } from '../ladder.js';
import { runStarts, startsMarkdown, type StartSpacing } from '../starts.js';
import { atLinkEfficiency, DEFAULT_MAHIMAHI_BIN_MS, loadTrace } from '../trace.js';
import { BUNDLED_LADDER, cliValues, jsonObject, LINK_EFFICIENCY_HELP, numberList, numberOption, runMain, traceSpec, userPath } from './common.js';

const DEFAULT_ARMS: readonly SimArm[] = ['sammy', 'control', 'fixed4x'];
const DEFAULT_EVERY_S = 10;
const DEFAULT_DURATION_S = 60;

const USAGE = `usage: npm run sim:starts -- --trace TRACE [--every-s ${DEFAULT_EVERY_S} | --starts N] [--duration ${DEFAULT_DURATION_S}] [--arms ${DEFAULT_ARMS.join(',')}]
                           [--ladder SEGMENTS_JSON] [--max-buffer S] [--config '{"beta":0.6}'] [--history-kbps 1500]
                           [--latency-ms ${CORPUS_LATENCY_MS}] [--mahimahi-bin-ms ${DEFAULT_MAHIMAHI_BIN_MS}] [--link-efficiency 1] [--json]
  Runs every arm from every --every-s seconds of one pass of TRACE (a mahimahi or JSON steps
  file), --duration seconds of media each, and compares each arm with control start by start.
  --starts N      N starts spread evenly over the pass instead (start k at k / N of it, as the
                  lab's "traceStart": "spread" places trial k + 1 of N)
  --arms          any of ${SIM_ARMS.join(', ')}
  --latency-ms    request latency of mahimahi files and steps without one (default ${CORPUS_LATENCY_MS}, as sim:corpus)
  --history-kbps  earlier sessions' initial-phase throughputs for sammy (default none: its no-history rule)
  --link-efficiency  ${LINK_EFFICIENCY_HELP}
  --json          print the result as JSON instead of the tables`;

function arms(value: string | undefined): SimArm[] {
  if (value === undefined) return [...DEFAULT_ARMS];
  const list = value.split(',').map((a) => a.trim());
  const unknown = list.filter((a) => !(SIM_ARMS as readonly string[]).includes(a));
  if (unknown.length > 0) throw new SimError('SIM_BAD_ARGS', `--arms: unknown arm ${JSON.stringify(unknown[0])} (accepted: ${SIM_ARMS.join(', ')})`);
  if (new Set(list).size !== list.length) throw new SimError('SIM_BAD_ARGS', `--arms lists an arm twice: ${JSON.stringify(value)}`);
  return list as SimArm[];
}

function main(): number {
  const values = cliValues(
    {
      trace: { type: 'string' },
      'every-s': { type: 'string' },
      starts: { type: 'string' },
      duration: { type: 'string' },
      arms: { type: 'string' },
      ladder: { type: 'string' },
      'max-buffer': { type: 'string' },
      config: { type: 'string' },
      'history-kbps': { type: 'string' },
      'latency-ms': { type: 'string' },
      'mahimahi-bin-ms': { type: 'string' },
      'link-efficiency': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    USAGE,
  );
  if (values === null) return 0;
  if (!values.trace) throw new SimError('SIM_BAD_ARGS', `--trace is required\n${USAGE}`);
  const latencyMs = numberOption(values['latency-ms'], '--latency-ms', (n) => n >= 0, 'a non-negative number of ms') ?? CORPUS_LATENCY_MS;
  const binMs = numberOption(values['mahimahi-bin-ms'], '--mahimahi-bin-ms', (n) => n > 0, 'a positive number of ms');
  const linkEfficiency = numberOption(values['link-efficiency'], '--link-efficiency', (n) => n > 0 && n <= 1, 'a number in (0, 1]') ?? 1;
  if (values['every-s'] !== undefined && values.starts !== undefined) throw new SimError('SIM_BAD_ARGS', '--every-s and --starts both place the starts: give one');
  const count = numberOption(values.starts, '--starts', (n) => Number.isInteger(n) && n >= 1, 'a positive whole number');
  const spacing: StartSpacing = count !== undefined ? { count } : { everyS: numberOption(values['every-s'], '--every-s', (n) => n > 0, 'a positive number of seconds') ?? DEFAULT_EVERY_S };
  const durationS = numberOption(values.duration, '--duration', (n) => n > 0, 'a positive number of seconds') ?? DEFAULT_DURATION_S;
  const maxBufferS = numberOption(values['max-buffer'], '--max-buffer', (n) => n > 0, 'a positive number of seconds');
  const sammy = jsonObject(values.config, '--config');
  const historyKbps = numberList(values['history-kbps'], '--history-kbps');
  const trace = atLinkEfficiency(
    loadTrace(traceSpec(values.trace), { defaultLatencyMs: latencyMs, ...(binMs === undefined ? {} : { mahimahiBinMs: binMs }) }),
    linkEfficiency,
  );
  // Sammy's whole config as the sessions run it (validated here, before any session), and
  // the buffer target every arm gets: --max-buffer, else a maxBufferS in --config, else the core's.
  const sammyConfig = resolveSammyConfig({ ...sammy, ...(maxBufferS === undefined ? {} : { maxBufferS }) });
  const bufferS = sammyConfig.maxBufferS;
  const ladderPath = values.ladder === undefined ? BUNDLED_LADDER : userPath(values.ladder);
  const result = runStarts({
    trace,
    sidecar: loadSidecar(ladderPath),
    arms: arms(values.arms),
    durationS,
    spacing,
    armOptions: {
      maxBufferS: bufferS,
      ...(sammy === undefined ? {} : { sammy }),
      ...(historyKbps === undefined ? {} : { historyKbps }),
    },
  });
  const config = {
    trace: trace.name, ladder: basename(ladderPath), durationS, ...spacing, maxBufferS: bufferS, latencyMs, linkEfficiency,
    historyKbps: historyKbps ?? [], sammyConfig,
  };
  if (values.json) console.log(JSON.stringify({ config, ...result }));
  else {
    const where = 'count' in spacing ? `${spacing.count} points of` : `every ${spacing.everyS} s of`;
    console.log(startsMarkdown(result, `Sessions from ${where} ${trace.name}: ${durationS} s of media, a ${bufferS} s buffer target, ${latencyMs} ms latency`));
  }
  return 0;
}

runMain(main);
