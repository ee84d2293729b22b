/**
 * The C core both native adapters link (core/: cmcd.c, sfv.c, rate.c, options.c,
 * telemetry.c), built with AddressSanitizer and UBSan and run through
 * core/test_driver.c. The CMCD reader and the rate decision must decide every
 * request as the Node server does (server/src/cmcd.ts, spiral-guard.ts): both run
 * over the same handwritten cases and a few thousand generated ones, and the rate,
 * `tb`, `br`, the source, whether there is a problem, and the applied rate with the
 * spiral guard's floor must agree on each. This covers the Traffic Server plugin
 * and the nginx module at once: neither has a reader or a decision of its own.
 */
import { execFileSync } from 'node:child_process';
import { clampRateKbps, readRateRequest } from '@sammy/server/cmcd';
import { DEFAULT_SERVER_OPTIONS } from '@sammy/server/options';
import {
  DRAIN_POLL_MAX_MS,
  DRAIN_POLL_MIN_MS,
  drainPollMs,
  MAX_DRAIN_STALL_MS,
  PACED_DRAIN_POLL_MAX_MS,
  UNPACED_DRAIN_RATE_BYTES_PER_S,
} from '@sammy/server/drain';
import { DEFAULT_DEVICE_GSO, DEFAULT_KERNEL_TSO, predictKernelTrainPackets } from '@sammy/server/burst';
import { applyGuard, guardFloor } from '@sammy/server/spiral-guard';
import { parseTelemetry } from '@sammy/server/telemetry';
import { buildTestDriver, compilerUnavailableReason } from '../src/build.js';

const noCompiler = compilerUnavailableReason();
const describeCc = noCompiler === null ? describe : describe.skip;
if (noCompiler !== null) console.log(`SKIP: the C core tests need a C compiler: ${noCompiler}`);

const MAX_BYTES = 2048;
/** The driver's order of the CMCD header fields (@svta/cml-cmcd's CMCD_HEADER_FIELDS). */
const FIELDS = ['cmcd-object', 'cmcd-request', 'cmcd-session', 'cmcd-status'] as const;

interface Case {
  headers: Partial<Record<(typeof FIELDS)[number], string>>;
  query: string | null;
}

const hex = (text: string, encoding: BufferEncoding): string => Buffer.from(text, encoding).toString('hex');

let driver = '';
function runDriver(mode: string, lines: string[]): string[] {
  const out = execFileSync(driver, [mode], { input: `${lines.join('\n')}\n`, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return out.split('\n').slice(0, lines.length);
}

interface Decision {
  rtpKbps: number | null;
  topBitrateKbps: number | null;
  bitrateKbps: number | null;
  declaredFloorKbps: number | null;
  source: 'header' | 'query' | null;
  hasProblem: boolean;
  problem: string;
}

/** A case's first five driver fields: the four header fields and the query, hex, '-' for absent. */
const caseFields = (c: Case): string[] => [...FIELDS.map((f) => (c.headers[f] === undefined ? '-' : hex(c.headers[f]!, 'latin1') || '-')), c.query === null ? '-' : hex(c.query, 'latin1') || '-'];
const orNull = (n: number): number | null => (n === 0 ? null : n);

function inC(cases: Case[]): Decision[] {
  return runDriver('cmcd', cases.map((c) => [...caseFields(c), '1'].join('\t'))).map((line) => {
    const [rtp, tb, br, floor, source, problemHex] = line.split('\t');
    const problem = Buffer.from(problemHex ?? '', 'hex').toString('latin1');
    return {
      rtpKbps: orNull(Number(rtp)),
      topBitrateKbps: orNull(Number(tb)),
      bitrateKbps: orNull(Number(br)),
      declaredFloorKbps: orNull(Number(floor)),
      source: source === 'none' ? null : (source as 'header' | 'query'),
      hasProblem: problem !== '',
      problem,
    };
  });
}

/** Node drops an empty header value before it reaches the reader (so does the driver's '-'). */
const nodeHeaders = (c: Case): Record<string, string> => Object.fromEntries(Object.entries(c.headers).filter(([, v]) => v !== ''));

function inNode(c: Case): Decision {
  const r = readRateRequest(nodeHeaders(c), c.query ?? '', MAX_BYTES);
  const problem = r.problem ?? '';
  return { rtpKbps: r.rtpKbps, topBitrateKbps: r.topBitrateKbps, bitrateKbps: r.bitrateKbps, declaredFloorKbps: r.declaredFloorKbps, source: r.source, hasProblem: problem !== '', problem };
}

const sameDecision = (a: Decision, b: Decision): boolean =>
  a.rtpKbps === b.rtpKbps &&
  a.topBitrateKbps === b.topBitrateKbps &&
  a.bitrateKbps === b.bitrateKbps &&
  a.declaredFloorKbps === b.declaredFloorKbps &&
  a.source === b.source &&
  a.hasProblem === b.hasProblem;

const status = (value: string): Case => ({ headers: { 'cmcd-status': value }, query: null });
const query = (value: string): Case => ({ headers: {}, query: value });

const HANDWRITTEN: Case[] = [
  status('rtp=40000'),
  status('bs,rtp=3100'),
  status('rtp=abc'),
  status('rtp=0'),
  status('rtp=-1'),
  status('rtp=-0'),
  status('rtp=1.5'),
  status('rtp=2.000'),
  status('rtp=2.0001'),
  status('rtp=1e30'),
  status('rtp=12345678901234567890'),
  status('rtp=999999999999999'),
  status('rtp=1234567890123.5'),
  status('rtp'),
  status('rtp;x=1'),
  status('rtp=(1 2)'),
  status('rtp=100;x=1'),
  status('rtp="100"'),
  status('rtp=?1'),
  status('rtp=:AAAA:'),
  status('rtp=:AAA=:'),
  status('rtp=:A:'),
  status('rtp=:AA\nAA:'),
  status('rtp=@1700000000'),
  status('rtp=@1.5'),
  status('rtp=tok'),
  status('rtp=,,'),
  status('rtp=1000, bs, rtp=3000'),
  status(' rtp=500 '),
  status('rtp=500,'),
  status('rtp=500,,bs'),
  status('\xa0rtp=500\xa0'),
  status('rtp=500\x00'),
  status('sid="a\\"b",rtp=700'),
  status('sid="a\\x",rtp=700'),
  status(`rtp=1000,sid="${'a'.repeat(MAX_BYTES)}"`),
  status(`rtp=1000,sid="${'\xe9'.repeat(1100)}"`),
  { headers: { 'cmcd-status': 'rtp=500', 'cmcd-session': 'v=2' }, query: null },
  { headers: { 'cmcd-status': 'rtp=500', 'cmcd-session': 'v=3' }, query: null },
  { headers: { 'cmcd-status': 'rtp=500', 'cmcd-session': 'v="2"' }, query: null },
  { headers: { 'cmcd-status': 'rtp=500', 'cmcd-session': 'v=2.0' }, query: null },
  { headers: { 'cmcd-status': 'rtp=500', 'cmcd-session': 'v=0' }, query: null },
  { headers: { 'cmcd-object': 'rtp=100', 'cmcd-status': 'rtp=200' }, query: null },
  { headers: { 'cmcd-request': 'bl=2000' }, query: 'CMCD=rtp%3D2000' },
  { headers: { 'cmcd-status': 'rtp=8000' }, query: 'CMCD=rtp%3D2000' },
  query('CMCD=rtp%3D4000'),
  query('foo=1&CMCD=rtp%3D4000%2Cbr%3D1050'),
  query('?CMCD=rtp%3D4000'),
  query('CMCD=rtp=4000'),
  query('CMCD=rtp%3D4000&CMCD=rtp%3D5000'),
  query('CMCD=rtp%3D4000&CMCD=bl%3D5'),
  query('CMCD=rtp%3D4000+'),
  query('CMCD=rtp%3D4000%C2%A0'),
  query('CMCD=rtp%3D4000%E2%80%A8'),
  query('CMCD=rtp%3D4000%FF'),
  query('CMCD=sid%3D%22%FF%22,rtp%3D4000'),
  query('CMCD=rtp%3D%34%30'),
  query('CMCD=rtp%3D40%'),
  query('CMCD=rtp%3D40%4'),
  query('%43MCD=rtp%3D4000'),
  query('CMCD%3Dx&%43MCD=rtp%3D4000'),
  query('CMCDX=rtp%3D4000'),
  query('CMCD'),
  query('CMCD='),
  query('CMCD=&&&'),
  query('a=b'),
  query(''),
  // What the spiral guard reads: tb, else br (CMCD v1 numbers, v2 inner lists).
  status('rtp=1000,tb=1050'),
  status('rtp=1000,tb=1050.5'),
  status('rtp=1000,br=300'),
  status('rtp=1000,tb=1050,br=300'),
  status('rtp=1000,tb=(1050;v 64;a)'),
  status('rtp=1000,tb=(1050 64)'),
  status('rtp=1000,tb=()'),
  status('rtp=1000,tb=(1050 64);x=1'),
  status('rtp=1000,tb=1050;x=1'),
  status('rtp=1000,tb=(1050 "a")'),
  status('rtp=1000,tb=(1050 -5)'),
  status('rtp=1000,tb="1050"'),
  status('rtp=1000,tb=abc'),
  status('rtp=1000,tb'),
  status('rtp=1000,tb=0'),
  status('rtp=1000,tb=-0'),
  status('rtp=1000,tb=-1050'),
  status('rtp=1000,tb=?1'),
  status('rtp=1000,tb=@5'),
  status('rtp=1000,tb=:AAAA:'),
  status('rtp=abc,tb=1050'),
  status('tb=1050'),
  status('tb=abc,br=xyz'),
  status('rtp=1000,tb=999999999999999'),
  status('rtp=1200,sammy-floor=1155,tb=1050'),
  status('rtp=900,sammy-floor=1155.5,tb=1050'),
  status('rtp=1200,sammy-floor=(1155;v 64;a)'),
  status('rtp=1200,sammy-floor=-1,tb=1050'),
  status('rtp=1200,sammy-floor=abc,br=300'),
  status('rtp=1200,sammy-floor,tb=1050'),
  status('rtp=1200,sammy-floor=0'),
  status('sammy-floor=1155'),
  { headers: { 'cmcd-object': 'tb=1050', 'cmcd-status': 'rtp=1200,sammy-floor=1155' }, query: null },
  { headers: {}, query: 'CMCD=rtp%3D1200%2Csammy-floor%3D1155' },
  { headers: { 'cmcd-object': 'tb=1050,br=500', 'cmcd-status': 'rtp=1200' }, query: null },
  { headers: { 'cmcd-object': 'tb=1050', 'cmcd-status': 'rtp=1200', 'cmcd-session': 'v=3' }, query: null },
  query('CMCD=rtp%3D1000%2Ctb%3D(1050%3Bv%2064%3Ba)'),
];

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  'rtp', 'rtp=', 'v=', 'bs', 'sid=', 'br=', 'tb=', 'sammy-floor=', '(1050;v 64;a)', '(1 2)', '()', '=', ',', ', ', ';', ';x=1', ' ', '\t', '"', '\\', '(', ')', ':', '?1', '?0', '@',
  '-', '.', '0', '1', '2', '3', '5', '9', '40000', '1.5', '2.000', '.25', '123456789012', '1234567890123456', 'abc', 'A', '*',
  'x', '\xa0', '\xe9', '\x7f', '\x01', '==', 'QUJD', '%', '%3D', '%2C', '%22', '%20', '+', '%C2%A0', '%E2%80%80', '%FF', '%ZZ', '%4',
];

function generated(count: number, seed: number): Case[] {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const text = (): string => Array.from({ length: 1 + Math.floor(random() * 9) }, () => pick(PIECES)).join('');
  const number = (): string => pick(['', '', '', '-']) + String(Math.floor(random() * 10 ** (1 + Math.floor(random() * 17)))) + pick(['', '', '', '', '.0', '.000', '.5', '.0001']);
  // Rates near each other, so the guard's floor is above rtp as often as below it.
  const small = (): string => String(1 + Math.floor(random() * 5000)) + pick(['', '', '', '.5']);
  const bitrate = (): string => pick([small, small, number, () => `(${small()};v ${number()};a)`, () => `(${number()} ${text()})`, () => `${small()};x=1`, text])();
  const dictionary = (): string =>
    pick([
      () => `rtp=${number()}`,
      () => `v=${pick(['1', '2', '3', '2.0', '"2"'])},rtp=${number()}`,
      () => text(),
      () => `${text()}rtp=${number()}${text()}`,
      () => `rtp=${pick([number, small])()},${pick(['tb', 'br'])}=${bitrate()}`,
      () => `tb=${bitrate()},br=${bitrate()},rtp=${pick([number, small])()}`,
      () => `rtp=${pick([number, small])()},sammy-floor=${bitrate()}${pick(['', ',tb=1050', `,br=${bitrate()}`])}`,
    ])();
  const cases: Case[] = [];
  for (let i = 0; i < count; i++) {
    const form = random();
    if (form < 0.5) {
      const headers: Case['headers'] = {};
      for (const field of FIELDS) if (random() < (field === 'cmcd-status' ? 0.9 : 0.2)) headers[field] = dictionary().replace(/%[0-9A-Z]{0,2}|\+/g, '');
      cases.push({ headers, query: random() < 0.2 ? `CMCD=${encodeURIComponent(dictionary())}` : null });
    } else {
      const value = random() < 0.5 ? encodeURIComponent(dictionary()) : dictionary().replace(/[&#\s"\\\x00-\x1f\x7f-\xff]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
      const parts = [`${pick(['CMCD', 'CMCD', 'CMCD', '%43MCD', 'cmcd', 'CMCD%20'])}=${value}`];
      if (random() < 0.3) parts.push(`other=${text().replace(/[&#\s"\\\x00-\x1f\x7f-\xff]/g, '')}`);
      if (random() < 0.2) parts.push(`CMCD=${encodeURIComponent(dictionary())}`);
      cases.push({ headers: {}, query: (random() < 0.1 ? '?' : '') + parts.sort(() => random() - 0.5).join('&') });
    }
  }
  return cases;
}

/** The Node server's decision for a request (server/src/pacing.ts #decide): outcome, applied rate, guard floor, basis, raised. */
function decideInNode(c: Case, o: { pacing: boolean; spiralGuard: boolean; spiralGuardMultiplier: number; minRateKbps: number; maxRateKbps: number }): string {
  const rate = readRateRequest(nodeHeaders(c), c.query ?? '', MAX_BYTES);
  if (rate.rtpKbps === null) return 'unpaced\t0\t0\t-\t-';
  if (!o.pacing) return 'disabled\t0\t0\t-\t-';
  const guard = o.spiralGuard ? applyGuard(rate.rtpKbps, guardFloor(rate, o.spiralGuardMultiplier)) : null;
  const applied = clampRateKbps(guard?.rateKbps ?? rate.rtpKbps, o.minRateKbps, o.maxRateKbps);
  return ['paced', applied, guard?.floor?.floorKbps ?? 0, guard?.floor?.basis ?? '-', guard?.raised ? 'raised' : '-'].join('\t');
}

/** Option sets the decision is compared under, as the driver's arguments and the server's options. */
const OPTION_SETS: { args: string[]; o: Parameters<typeof decideInNode>[1] }[] = [
  { args: [], o: DEFAULT_SERVER_OPTIONS },
  { args: ['--spiral-guard=off'], o: { ...DEFAULT_SERVER_OPTIONS, spiralGuard: false } },
  { args: ['--spiral-guard-multiplier=4.5'], o: { ...DEFAULT_SERVER_OPTIONS, spiralGuardMultiplier: 4.5 } },
  { args: ['--min-rate-kbps=500', '--max-rate-kbps=3000'], o: { ...DEFAULT_SERVER_OPTIONS, minRateKbps: 500, maxRateKbps: 3000 } },
  { args: ['--pacing=off'], o: { ...DEFAULT_SERVER_OPTIONS, pacing: false } },
];

describeCc('the C core, against the Node server', () => {
  beforeAll(async () => {
    driver = await buildTestDriver();
  }, 120_000);

  const mismatchesOf = (cases: Case[]) => {
    const c = inC(cases);
    return { c, mismatches: cases.map((k, i) => ({ input: k, node: inNode(k), c: c[i]! })).filter((m) => !sameDecision(m.node, m.c)) };
  };

  test('handwritten CMCD cases: the same rate, tb, br, source and verdict as server/src/cmcd.ts', () => {
    const { c, mismatches } = mismatchesOf(HANDWRITTEN);
    expect(mismatches).toEqual([]);
    // The cases do exercise every outcome.
    expect(c.filter((d) => d.rtpKbps !== null).length).toBeGreaterThan(10);
    expect(c.filter((d) => d.rtpKbps === null && d.hasProblem).length).toBeGreaterThan(20);
    expect(c.filter((d) => d.topBitrateKbps !== null).length).toBeGreaterThan(5);
    expect(c.filter((d) => d.bitrateKbps !== null).length).toBeGreaterThan(2);
    expect(c.filter((d) => d.declaredFloorKbps !== null).length).toBeGreaterThan(3);
  });

  test('4000 generated requests: the same decisions as the server', () => {
    const { c, mismatches } = mismatchesOf(generated(4000, 17));
    expect(mismatches.slice(0, 5)).toEqual([]);
    // Both sides of the rules are reached, not only one.
    expect(c.filter((d) => d.rtpKbps !== null).length).toBeGreaterThan(400);
    expect(c.filter((d) => d.rtpKbps === null && d.hasProblem).length).toBeGreaterThan(400);
    expect(c.filter((d) => d.topBitrateKbps !== null || d.bitrateKbps !== null).length).toBeGreaterThan(200);
    expect(c.filter((d) => d.declaredFloorKbps !== null).length).toBeGreaterThan(100);
  });

  test.each(OPTION_SETS.map((set) => [set.args.join(' ') || 'defaults', set] as const))(
    'the applied rate and the spiral guard decide as the server does (%s)',
    (_label, { args, o }) => {
      const cases = [...HANDWRITTEN, ...generated(1500, 29)];
      const c = runDriver('decide', cases.map((k) => [...caseFields(k), ...args].join('\t')));
      const node = cases.map((k) => decideInNode(k, o));
      const mismatches = cases.map((k, i) => ({ input: k, node: node[i], c: c[i] })).filter((m) => m.node !== m.c);
      expect(mismatches.slice(0, 5)).toEqual([]);
      if (o.pacing && o.spiralGuard) expect(c.filter((line) => line.endsWith('raised')).length).toBeGreaterThan(20);
      if (o.pacing && o.spiralGuard) expect(c.filter((line) => line.includes('\tsammy-floor\t')).length).toBeGreaterThan(20);
    },
  );

  test('problems are said in the server words for the common cases', () => {
    const long = `rtp=1,sid="${'a'.repeat(MAX_BYTES)}"`;
    const newerCase: Case = { headers: { 'cmcd-status': 'rtp=5', 'cmcd-session': 'v=3' }, query: null };
    const [notInteger, tooLong, newer, repeated, badTop] = inC([status('rtp=abc'), status(long), newerCase, status('rtp=1000, bs, rtp=3000'), status('rtp=1000,tb=abc')]);
    expect(notInteger!.problem).toBe('rtp abc is not a positive integer (kbps): ignored');
    expect(tooLong!.problem).toBe(`CMCD header of ${long.length} bytes exceeds ${MAX_BYTES}: ignored`);
    expect(newer!.problem).toBe(inNode(newerCase).problem);
    expect(repeated!.problem).toBe('rtp given 2 times: the last value (3000) is used');
    expect(badTop!.problem).toBe('tb abc is not a positive bitrate (kbps): ignored');
  });

  test('the query is read only when honoured', () => {
    const line = ['-', '-', '-', '-', hex('CMCD=rtp%3D4000', 'latin1'), '0'].join('\t');
    expect(runDriver('cmcd', [line])).toEqual(['0\t0\t0\t0\tnone\t']);
  });

  test('stripping CMCD from the URL keeps every other argument, in order', () => {
    const strip = (q: string): string => Buffer.from(runDriver('strip', [hex(q, 'latin1') || '-'])[0]!, 'hex').toString('latin1');
    expect(strip('CMCD=rtp%3D4000')).toBe('');
    expect(strip('a=1&CMCD=rtp%3D4000&b=2')).toBe('a=1&b=2');
    expect(strip('%43MCD=x&CMCDX=1&cmcd=2')).toBe('CMCDX=1&cmcd=2');
    expect(strip('a=1&&b')).toBe('a=1&b');
  });

  test("options: the server's defaults, ranges, and a coded error naming the option, the value and what is accepted", () => {
    const [defaults, set, low, order, unknown, onOff, multiplier, underscore] = runDriver('options', [
      '',
      '--min-rate-kbps=500\t--max-rate-kbps=9000\t--query-cmcd=off\t--max-cmcd-bytes=4096\t--spiral-guard=off\t--pacing=off\t--tail-hold=off',
      '--min-rate-kbps=0',
      '--min-rate-kbps=900\t--max-rate-kbps=800',
      '--burst=4',
      '--query-cmcd=yes',
      '--spiral-guard-multiplier=0.5',
      '--spiral_guard_multiplier=3.25',
    ]);
    const d = DEFAULT_SERVER_OPTIONS;
    const onOffOf = (b: boolean): string => (b ? 'on' : 'off');
    expect(defaults).toBe(`ok ${onOffOf(d.pacing)} ${d.minRateKbps} ${d.maxRateKbps} ${onOffOf(d.spiralGuard)} ${d.spiralGuardMultiplier} on ${d.limits.maxCmcdBytes} on`);
    expect(set).toBe('ok off 500 9000 off 2.5 off 4096 off');
    expect(low).toBe('error SAMMY_INVALID_OPTION: invalid --min-rate-kbps: "0" (accepted: an integer from 1 to 1000000000000)');
    expect(order).toBe('error SAMMY_INVALID_OPTION: invalid --max-rate-kbps: "800" (accepted: at least --min-rate-kbps (900))');
    expect(unknown).toMatch(/^error SAMMY_BAD_ARGS: unknown option --burst \(options: --pacing, --min-rate-kbps, /);
    expect(onOff).toBe('error SAMMY_INVALID_OPTION: invalid --query-cmcd: "yes" (accepted: on, off)');
    expect(multiplier).toBe('error SAMMY_INVALID_OPTION: invalid --spiral-guard-multiplier: "0.5" (accepted: a number from 1 to 100)');
    expect(underscore).toBe('ok on 100 10000000 on 3.25 on 2048 on');
  });

  test('the drain policy: a paced tail is looked at when it can have left (up to 30 s), an unpaced one within 1 s', () => {
    const cases = ['0 5000000 0', '5000000 5000000 0', '50000 5000000 0', '50000000 5000000 0', '500000000 5000000 0', '4000000 0 2000000', '300000 0 0', '999 1000000 0'];
    expect(runDriver('drain', cases.map((c) => c.replace(/ /g, '\t')))).toEqual(['1', '1000', '10', '10000', '30000', '1000', '300', '1']);
  });

  test("the drain policy's constants are the Node server's (server/src/drain.ts), and so is the policy, floored to whole ms", () => {
    const out = execFileSync(driver, ['constants'], { input: '', encoding: 'utf8' });
    const inC = Object.fromEntries(out.trim().split('\n').map((line) => line.split('\t')).map(([name, value]) => [name, Number(value)]));
    expect(inC).toEqual({ DRAIN_POLL_MIN_MS, DRAIN_POLL_MAX_MS, PACED_DRAIN_POLL_MAX_MS, UNPACED_DRAIN_RATE_BYTES_PER_S, MAX_DRAIN_STALL_MS });
    // Every wait from 1 ms to past both ceilings, paced and unpaced, with and without a delivery-rate sample.
    const cases: [number, number, number][] = [];
    for (const rate of [0, 12_500, 125_000, 1_250_000, 5_000_000, 125_000_000]) {
      for (const delivery of [0, 1, 700_000, 60_000_000]) {
        for (const notsent of [0, 1, 999, 1000, 1448, 65_536, 1_000_000, 4_194_304, 123_456_789, 4_000_000_000]) cases.push([notsent, rate, delivery]);
      }
    }
    const c = runDriver('drain', cases.map((k) => k.join('\t')));
    const node = cases.map(([unsentBytes, rateBytesPerS, deliveryRateBytesPerS]) => String(Math.floor(drainPollMs({ unsentBytes, rateBytesPerS, deliveryRateBytesPerS }))));
    expect(c).toEqual(node);
  });

  test("the kernel's train: the Node server's prediction (server/src/burst.ts) with Linux's default settings", () => {
    const cases: [number, number, number][] = [];
    for (const rateBytesPerS of [12_500, 125_000, 1_250_000, 5_000_000, 12_500_000, 125_000_000]) {
      for (const minRttUs of [3, 200, 600, 1100, 5000, 40_000]) for (const mssBytes of [1448, 65_483]) cases.push([rateBytesPerS, minRttUs, mssBytes]);
    }
    const c = runDriver('train', cases.map((k) => k.join('\t')));
    const node = cases.map(([rateBytesPerS, minRttUs, mssBytes]) =>
      String(predictKernelTrainPackets({ rateBytesPerS, mssBytes, minRttUs, kernel: DEFAULT_KERNEL_TSO, device: DEFAULT_DEVICE_GSO }) * mssBytes),
    );
    expect(c).toEqual(node);
    // A 64 KB skb at microsecond round trips, 2 segments at 5 ms and 1.25 MB/s.
    expect(c[cases.findIndex(([r, t, m]) => r === 125_000 && t === 3 && m === 1448)]).toBe(String(45 * 1448));
    expect(c[cases.findIndex(([r, t, m]) => r === 1_250_000 && t === 5000 && m === 1448)]).toBe(String(2 * 1448));
  });

  test('the telemetry line is one JSON object the server parser reads, with any path bytes escaped', () => {
    const [line] = runDriver('telemetry', [`${hex('/media/a"b\\c\x01\xe9.m4s', 'latin1')}\t${hex('rtp "x" is not a positive integer (kbps): ignored', 'latin1')}`]);
    const [t] = parseTelemetry(`${line}\n`);
    expect(t).toMatchObject({
      msg: 'media response',
      path: '/media/a"b\\c\x01\xe9.m4s',
      bytes: 10_000_000,
      bodyPath: 'sendfile',
      durationMs: 2000.25,
      rtpKbps: 40_000,
      appliedRateKbps: 40_000,
      pacing: 'paced',
      achievedRateKbps: 39_995,
      burstPackets: null,
      burstMechanism: 'kernel',
      trainPackets: null,
      rttUs: 5100,
      retransmits: 2,
      totalRetrans: 3,
      bytesSent: 10_000_000,
      bytesRetrans: 2896,
      maxPacingRateBytesPerS: 5_000_000,
      cmcdProblem: 'rtp "x" is not a positive integer (kbps): ignored',
      guardFloorKbps: 2625,
      guardBasis: 'tb',
      guardRaised: false,
      cacheLookup: 'hit-fresh',
      protocol: 'http/1.1',
      streamId: null,
      server: 'test',
    });
  });
});
