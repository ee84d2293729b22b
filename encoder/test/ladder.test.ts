import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EncoderError } from '../src/errors.js';
import { HD_LADDER, LAB_LADDER, resolveLadder, validateLadder } from '../src/ladder.js';

describe('ladder presets', () => {
  test('lab is the thesis lab ladder: at least 5 rungs, top rung 1050 kbps (section 2.6)', () => {
    expect(LAB_LADDER.rungs.length).toBeGreaterThanOrEqual(5);
    expect(LAB_LADDER.rungs.at(-1)!.bitrateKbps).toBe(1050);
  });

  test('hd has at least 6 rungs up to 1080p at about 5 Mbps', () => {
    expect(HD_LADDER.rungs.length).toBeGreaterThanOrEqual(6);
    expect(HD_LADDER.rungs.at(-1)).toMatchObject({ height: 1080, bitrateKbps: 5000 });
  });

  test('presets resolve by name', () => {
    expect(resolveLadder('lab')).toBe(LAB_LADDER);
    expect(resolveLadder('hd')).toBe(HD_LADDER);
  });
});

describe('ladder files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ladder-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, body: string): string => {
    const path = join(dir, name);
    writeFileSync(path, body);
    return path;
  };

  test('a valid JSON ladder fills defaults', () => {
    const path = write('ok.json', JSON.stringify({ rungs: [{ height: 240, bitrateKbps: 200 }, { height: 480, width: 854, bitrateKbps: 800 }] }));
    expect(resolveLadder(path)).toEqual({
      name: path,
      rungs: [{ height: 240, bitrateKbps: 200 }, { height: 480, width: 854, bitrateKbps: 800 }],
      audioBitrateKbps: 64,
      frameRate: 25,
    });
  });

  test.each([
    ['not json', '{', /not valid JSON/],
    ['no rungs', '{}', /"rungs" must be a non-empty array/],
    ['odd height', JSON.stringify({ rungs: [{ height: 241, bitrateKbps: 100 }] }), /rungs\[0\]\.height must be an even integer/],
    ['negative bitrate', JSON.stringify({ rungs: [{ height: 240, bitrateKbps: -1 }] }), /rungs\[0\]\.bitrateKbps/],
    ['unsorted', JSON.stringify({ rungs: [{ height: 480, bitrateKbps: 800 }, { height: 240, bitrateKbps: 200 }] }), /strictly increasing/],
    ['bad frame rate', JSON.stringify({ rungs: [{ height: 240, bitrateKbps: 200 }], frameRate: 0 }), /frameRate/],
  ])('%s is rejected with a message naming the field', (_name, body, message) => {
    const path = write(`${_name.replace(/\s/g, '-')}.json`, body);
    expect(() => resolveLadder(path)).toThrow(message);
  });

  test('an unknown preset name says what is accepted', () => {
    expect(() => resolveLadder('4k')).toThrow(/use one of lab, hd or LADDER\.json|use one of lab, hd, or LADDER\.json|lab, hd/);
    expect(() => resolveLadder('4k')).toThrow(EncoderError);
  });

  test('validateLadder rejects a non-object', () => {
    expect(() => validateLadder(null, 'x')).toThrow(/must be a JSON object/);
  });
});
