import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSpiralCheckRecord, renderSpiralCheck, type GuardRun } from '../../src/analysis/spiral-check.js';

const run = (guard: 'on' | 'off', over: Partial<GuardRun> = {}): GuardRun => ({
  guard,
  avgBitrateKbps: 1040,
  switchCount: 1,
  rebufferCount: 0,
  playDelayS: 0.9,
  bitrateByWindowKbps: [1025, null],
  pacedResponses: 88,
  guardRaised: 86,
  medianAppliedKbps: 2625,
  medianRequestedKbps: 100,
  ...over,
});

describe('spiral-check records', () => {
  test('a row per record: protocol (h1 when a record predates it), each guard with its windows, raises and h2 share', () => {
    const table = renderSpiralCheck([
      { query: 'arm=dashjs-rtp', seconds: 60, topKbps: 1050, runs: [run('off', { avgBitrateKbps: 281, guardRaised: 0 }), run('on')] },
      { query: 'arm=sammy', protocol: 'h2', seconds: 60, topKbps: 1050, runs: [run('off', { h2Chunks: 25, chunks: 25, pacedWithCompanion: 44 }), run('on', { h2Chunks: 43, chunks: 44, pacedWithCompanion: 0 })] },
    ]);
    const rows = table.trim().split('\n');
    expect(rows).toHaveLength(4);
    expect(rows[2]).toBe(
      '| `arm=dashjs-rtp` | h1 | **281 kbit/s**: 1025, - per 10 s, 1 switches, 0 rebuffers; 0 of 88 raised; video rtp median 100, applied 2625 ' +
        '| **1040 kbit/s**: 1025, - per 10 s, 1 switches, 0 rebuffers; 86 of 88 raised; video rtp median 100, applied 2625 |',
    );
    expect(rows[3]).toContain("| h2 | ");
    expect(rows[3]).toContain("25 of 25 chunks over h2; 44 paced streams ended beside another's share |");
    expect(rows[3]).toContain('43 of 44 chunks over h2 |');
  });

  test('a file that is not a record, or names an unknown protocol, is refused with its name', () => {
    const good = { query: 'q', seconds: 60, topKbps: 1050, runs: [run('off'), run('on')] };
    expect(parseSpiralCheckRecord(JSON.stringify(good), 'a.json').query).toBe('q');
    expect(() => parseSpiralCheckRecord(JSON.stringify({ ...good, runs: [run('on'), run('off')] }), 'b.json')).toThrow(/b\.json: not a spiral-check record/);
    expect(() => parseSpiralCheckRecord(JSON.stringify({ ...good, protocol: 'h3' }), 'c.json')).toThrow(/c\.json: unknown protocol "h3"/);
    expect(() => parseSpiralCheckRecord('{}', 'd.json')).toThrow(/d\.json/);
  });
});

describe('results/spiral-check/README.md', () => {
  test('holds the table its --render command prints from the committed records', () => {
    const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'results', 'spiral-check');
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    const command = /^npm run spiral-check -w e2e -- --render e2e\/results\/spiral-check\/(\S+)$/m.exec(readme);
    expect(command).not.toBeNull();
    // One brace list, as the README writes it: 2026-11-28-{a,b}.json
    const [, prefix, list, suffix] = /^(.*)\{(.*)\}(.*)$/.exec(command![1]!)!;
    const files = list!.split(',').map((name) => `${prefix}${name}${suffix}`);
    const records = files.map((f) => parseSpiralCheckRecord(readFileSync(join(dir, f), 'utf8'), f));
    expect(records.length).toBeGreaterThan(1);
    expect(readme).toContain(renderSpiralCheck(records));
  });
});
