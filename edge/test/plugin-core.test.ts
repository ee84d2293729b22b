/**
 * The plugin's pure parts (plugin/cmcd.c, sfv.c, options.c, telemetry.c), built
 * with the C compiler and run through plugin/test_driver.c. The CMCD reader must
 * decide every request as the Node server does (server/src/cmcd.ts): both run
 * over the same handwritten cases and a few thousand generated ones, and the
 * rate, the source and whether there is a problem must agree on each.
 */
import { execFileSync } from 'node:child_process';
import { readRateRequest } from '@sammy/server/cmcd';
import { parseTelemetry } from '@sammy/server/telemetry';
import { buildTestDriver, compilerUnavailableReason } from '../src/build.js';

const noCompiler = compilerUnavailableReason();
const describeCc = noCompiler === null ? describe : describe.skip;
if (noCompiler !== null) console.log(`SKIP: the plugin core tests need a C compiler: ${noCompiler}`);

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
  source: 'header' | 'query' | null;
  hasProblem: boolean;
  problem: string;
}

function inC(cases: Case[]): Decision[] {
  const lines = cases.map((c) =>
    [...FIELDS.map((f) => (c.headers[f] === undefined ? '-' : hex(c.headers[f]!, 'latin1') || '-')), c.query === null ? '-' : hex(c.query, 'latin1') || '-', '1'].join('\t'),
  );
  return runDriver('cmcd', lines).map((line) => {
    const [rtp, source, problemHex] = line.split('\t');
    const problem = Buffer.from(problemHex ?? '', 'hex').toString('latin1');
    return { rtpKbps: Number(rtp) === 0 ? null : Number(rtp), source: source === 'none' ? null : (source as 'header' | 'query'), hasProblem: problem !== '', problem };
  });
}

function inNode(c: Case): Decision {
  // Node drops an empty header value before it reaches the reader (so does the driver's '-').
  const headers = Object.fromEntries(Object.entries(c.headers).filter(([, v]) => v !== ''));
  const r = readRateRequest(headers, c.query ?? '', MAX_BYTES);
  // The server also reads `tb`/`br` for its spiral guard; the edge has no guard and reads
  // only `rtp`, so the server's notes about those keys are not the edge's business.
  const problem = (r.problem ?? '').split('; ').filter((p) => !/^(tb|br) .* is not a positive bitrate \(kbps\): ignored$/.test(p)).join('; ');
  return { rtpKbps: r.rtpKbps, source: r.source, hasProblem: problem !== '', problem };
}

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
  'rtp', 'rtp=', 'v=', 'bs', 'sid=', 'br=', '=', ',', ', ', ';', ';x=1', ' ', '\t', '"', '\\', '(', ')', ':', '?1', '?0', '@',
  '-', '.', '0', '1', '2', '3', '5', '9', '40000', '1.5', '2.000', '.25', '123456789012', '1234567890123456', 'abc', 'A', '*',
  'x', '\xa0', '\xe9', '\x7f', '\x01', '==', 'QUJD', '%', '%3D', '%2C', '%22', '%20', '+', '%C2%A0', '%E2%80%80', '%FF', '%ZZ', '%4',
];

function generated(count: number, seed: number): Case[] {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const text = (): string => Array.from({ length: 1 + Math.floor(random() * 9) }, () => pick(PIECES)).join('');
  const number = (): string => pick(['', '', '', '-']) + String(Math.floor(random() * 10 ** (1 + Math.floor(random() * 17)))) + pick(['', '', '', '', '.0', '.000', '.5', '.0001']);
  const dictionary = (): string => pick([() => `rtp=${number()}`, () => `v=${pick(['1', '2', '3', '2.0', '"2"'])},rtp=${number()}`, () => text(), () => `${text()}rtp=${number()}${text()}`])();
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

describeCc('the plugin core, against the Node server', () => {
  beforeAll(async () => {
    driver = await buildTestDriver();
  }, 120_000);

  test('handwritten CMCD cases: the same rate, source and verdict as server/src/cmcd.ts', () => {
    const c = inC(HANDWRITTEN);
    const mismatches = HANDWRITTEN.map((k, i) => ({ input: k, node: inNode(k), c: c[i]! })).filter(
      (m) => m.node.rtpKbps !== m.c.rtpKbps || m.node.source !== m.c.source || m.node.hasProblem !== m.c.hasProblem,
    );
    expect(mismatches).toEqual([]);
    // The cases do exercise every outcome.
    expect(c.filter((d) => d.rtpKbps !== null).length).toBeGreaterThan(10);
    expect(c.filter((d) => d.rtpKbps === null && d.hasProblem).length).toBeGreaterThan(20);
  });

  test('4000 generated requests: the same decisions as the server', () => {
    const cases = generated(4000, 17);
    const c = inC(cases);
    const mismatches = cases.map((k, i) => ({ input: k, node: inNode(k), c: c[i]! })).filter(
      (m) => m.node.rtpKbps !== m.c.rtpKbps || m.node.source !== m.c.source || m.node.hasProblem !== m.c.hasProblem,
    );
    expect(mismatches.slice(0, 5)).toEqual([]);
    const accepted = c.filter((d) => d.rtpKbps !== null).length;
    const refused = c.filter((d) => d.rtpKbps === null && d.hasProblem).length;
    // Both sides of the rules are reached, not only one.
    expect(accepted).toBeGreaterThan(400);
    expect(refused).toBeGreaterThan(400);
  });

  test('problems are said in the server words for the common cases', () => {
    const long = `rtp=1,sid="${'a'.repeat(MAX_BYTES)}"`;
    const [notInteger, tooLong, newer, repeated] = inC([status('rtp=abc'), status(long), { headers: { 'cmcd-status': 'rtp=5', 'cmcd-session': 'v=3' }, query: null }, status('rtp=1000, bs, rtp=3000')]);
    expect(notInteger!.problem).toBe('rtp abc is not a positive integer (kbps): ignored');
    expect(tooLong!.problem).toBe(`CMCD header of ${long.length} bytes exceeds ${MAX_BYTES}: ignored`);
    expect(newer!.problem).toBe(inNode({ headers: { 'cmcd-status': 'rtp=5', 'cmcd-session': 'v=3' }, query: null }).problem);
    expect(repeated!.problem).toBe('rtp given 2 times: the last value (3000) is used');
  });

  test('the query is read only when honoured', () => {
    const line = ['-', '-', '-', '-', hex('CMCD=rtp%3D4000', 'latin1'), '0'].join('\t');
    expect(runDriver('cmcd', [line])).toEqual(['0\tnone\t']);
  });

  test('stripping CMCD from the URL keeps every other argument, in order', () => {
    const strip = (q: string): string => Buffer.from(runDriver('strip', [hex(q, 'latin1') || '-'])[0]!, 'hex').toString('latin1');
    expect(strip('CMCD=rtp%3D4000')).toBe('');
    expect(strip('a=1&CMCD=rtp%3D4000&b=2')).toBe('a=1&b=2');
    expect(strip('%43MCD=x&CMCDX=1&cmcd=2')).toBe('CMCDX=1&cmcd=2');
    expect(strip('a=1&&b')).toBe('a=1&b');
  });

  test('options: defaults, ranges, and a coded error naming the option, the value and what is accepted', () => {
    const [defaults, set, low, order, unknown, onOff] = runDriver('options', [
      '',
      '--min-rate-kbps=500\t--max-rate-kbps=9000\t--query-cmcd=off\t--max-cmcd-bytes=4096',
      '--min-rate-kbps=0',
      '--min-rate-kbps=900\t--max-rate-kbps=800',
      '--burst=4',
      '--query-cmcd=yes',
    ]);
    expect(defaults).toBe('ok 100 10000000 on 2048');
    expect(set).toBe('ok 500 9000 off 4096');
    expect(low).toBe('error SAMMY_EDGE_INVALID_OPTION: invalid --min-rate-kbps: "0" (accepted: an integer from 1 to 1000000000000)');
    expect(order).toBe('error SAMMY_EDGE_INVALID_OPTION: invalid --max-rate-kbps: "800" (accepted: at least --min-rate-kbps (900))');
    expect(unknown).toMatch(/^error SAMMY_EDGE_BAD_ARGS: unknown option --burst/);
    expect(onOff).toBe('error SAMMY_EDGE_INVALID_OPTION: invalid --query-cmcd: "yes" (accepted: on, off)');
  });

  test('the telemetry line is one JSON object the server parser reads, with any path bytes escaped', () => {
    const [line] = runDriver('telemetry', [`${hex('/media/a"b\\c\x01\xe9.m4s', 'latin1')}\t${hex('rtp "x" is not a positive integer (kbps): ignored', 'latin1')}`]);
    const [t] = parseTelemetry(`${line}\n`);
    expect(t).toMatchObject({
      msg: 'media response',
      path: '/media/a"b\\c\x01\xe9.m4s',
      bytes: 10_000_000,
      durationMs: 2000.25,
      rtpKbps: 40_000,
      appliedRateKbps: 40_000,
      pacing: 'paced',
      achievedRateKbps: 39_995,
      burstMechanism: 'kernel',
      rttUs: 5100,
      retransmits: 2,
      totalRetrans: 3,
      bytesSent: 10_000_000,
      bytesRetrans: 2896,
      maxPacingRateBytesPerS: 5_000_000,
      cmcdProblem: 'rtp "x" is not a positive integer (kbps): ignored',
      cacheLookup: 'hit-fresh',
    });
  });
});
