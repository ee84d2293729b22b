import { encodeCmcd, toCmcdHeaders } from '@svta/cml-cmcd';
import { clampRateKbps, readRateRequest } from '../src/cmcd.js';
import { kbpsToBytesPerS } from '../src/units.js';

const MAX_BYTES = 2048;

describe('readRateRequest', () => {
  test('reads rtp from the CMCD-Status header as encoded by @svta/cml-cmcd (what dash.js sends)', () => {
    const headers = Object.fromEntries(
      Object.entries(toCmcdHeaders({ rtp: 12_300, bl: 8000, ot: 'v', sid: 's-1' } as never)).map(([k, v]) => [k.toLowerCase(), v]),
    );
    expect(headers['cmcd-status']).toContain('rtp=12300');
    expect(readRateRequest(headers, '', MAX_BYTES)).toEqual({ rtpKbps: 12_300, topBitrateKbps: null, bitrateKbps: null, declaredFloorKbps: null, source: 'header', problem: null });
  });

  test('reads the query form', () => {
    const query = `foo=1&CMCD=${encodeURIComponent(encodeCmcd({ rtp: 4000, br: 1050 } as never))}`;
    expect(readRateRequest({}, query, MAX_BYTES)).toEqual({ rtpKbps: 4000, topBitrateKbps: null, bitrateKbps: 1050, declaredFloorKbps: null, source: 'query', problem: null });
  });

  test('headers win over the query when both are present, even without rtp', () => {
    expect(readRateRequest({ 'cmcd-status': 'rtp=8000' }, 'CMCD=rtp%3D2000', MAX_BYTES).rtpKbps).toBe(8000);
    expect(readRateRequest({ 'cmcd-request': 'bl=2000' }, 'CMCD=rtp%3D2000', MAX_BYTES)).toEqual({ rtpKbps: null, topBitrateKbps: null, bitrateKbps: null, declaredFloorKbps: null, source: 'header', problem: null });
  });

  test('no CMCD: no request', () => {
    expect(readRateRequest({ accept: '*/*' }, 'a=b', MAX_BYTES)).toEqual({ rtpKbps: null, topBitrateKbps: null, bitrateKbps: null, declaredFloorKbps: null, source: null, problem: null });
  });

  test('version 1 (no v), 1 and 2 are understood; a newer version is ignored (CTA-5004 section 6)', () => {
    expect(readRateRequest({ 'cmcd-status': 'rtp=500' }, '', MAX_BYTES).rtpKbps).toBe(500);
    expect(readRateRequest({ 'cmcd-status': 'rtp=500', 'cmcd-session': 'v=2' }, '', MAX_BYTES).rtpKbps).toBe(500);
    const newer = readRateRequest({ 'cmcd-status': 'rtp=500', 'cmcd-session': 'v=3' }, '', MAX_BYTES);
    expect(newer.rtpKbps).toBeNull();
    expect(newer.problem).toContain('version 3 is newer than 2');
    expect(readRateRequest({ 'cmcd-session': 'v="2"', 'cmcd-status': 'rtp=500' }, '', MAX_BYTES).rtpKbps).toBeNull();
  });

  test.each([
    ['rtp=abc', 'not a positive integer'],
    ['rtp=0', 'not a positive integer'],
    ['rtp=-1', 'not a positive integer'],
    ['rtp=2.5', 'not a positive integer'],
    ['rtp', 'not a positive integer'],
    ['rtp=(1 2)', 'not a positive integer'],
    ['rtp=100;x=1', 'not a positive integer'],
    ['rtp=1e30', 'not a structured-field dictionary'],
    ['rtp=,,', 'not a structured-field dictionary'],
  ])('%s is ignored: %s', (text, problem) => {
    const r = readRateRequest({ 'cmcd-status': text }, '', MAX_BYTES);
    expect(r.rtpKbps).toBeNull();
    expect(r.problem).toContain(problem);
  });

  test('duplicated keys: the last wins (RFC 8941 4.2.2), noted', () => {
    const r = readRateRequest({ 'cmcd-status': 'rtp=1000, bs, rtp=3000' }, '', MAX_BYTES);
    expect(r.rtpKbps).toBe(3000);
    expect(r.problem).toBe('rtp given 2 times: the last value (3000) is used');
  });

  test('reads tb and br, in any CMCD header, for the spiral guard (dash.js sends them in CMCD-Object)', () => {
    const r = readRateRequest({ 'cmcd-object': 'br=300,d=2000,ot=v,tb=1050', 'cmcd-status': 'rtp=3100' }, '', MAX_BYTES);
    expect(r).toEqual({ rtpKbps: 3100, topBitrateKbps: 1050, bitrateKbps: 300, declaredFloorKbps: null, source: 'header', problem: null });
    // CMCD v2 lists a value per media type: the largest counts.
    expect(readRateRequest({ 'cmcd-object': 'tb=(1050;v 64;a),br=(300 64)', 'cmcd-session': 'v=2' }, '', MAX_BYTES)).toMatchObject({ topBitrateKbps: 1050, bitrateKbps: 300 });
  });

  test.each([
    ['tb=abc', 'tb "abc" is not a positive bitrate'],
    ['tb=-5', 'tb -5 is not a positive bitrate'],
    ['tb=0', 'tb 0 is not a positive bitrate'],
    ['tb', 'tb true is not a positive bitrate'],
    ['tb=()', 'tb [] is not a positive bitrate'],
    ['tb=(1050 "x")', 'is not a positive bitrate'],
  ])('an unusable %s is ignored and noted; the rtp still counts', (tb, problem) => {
    const r = readRateRequest({ 'cmcd-object': `br=300,${tb}`, 'cmcd-status': 'rtp=3100' }, '', MAX_BYTES);
    expect(r).toMatchObject({ rtpKbps: 3100, topBitrateKbps: null, bitrateKbps: 300 });
    expect(r.problem).toContain(problem);
  });

  test('reads the floor a player declares (sammy-floor) beside its rtp; an unusable one is ignored and noted', () => {
    const r = readRateRequest({ 'cmcd-object': 'tb=1050', 'cmcd-status': 'rtp=1200,sammy-floor=1155' }, '', MAX_BYTES);
    expect(r).toEqual({ rtpKbps: 1200, topBitrateKbps: 1050, bitrateKbps: null, declaredFloorKbps: 1155, source: 'header', problem: null });
    expect(readRateRequest({}, `CMCD=${encodeURIComponent('rtp=1200,sammy-floor=1155.5')}`, MAX_BYTES)).toMatchObject({ rtpKbps: 1200, declaredFloorKbps: 1155.5, source: 'query' });
    const bad = readRateRequest({ 'cmcd-status': 'rtp=1200,sammy-floor=-3' }, '', MAX_BYTES);
    expect(bad).toMatchObject({ rtpKbps: 1200, declaredFloorKbps: null });
    expect(bad.problem).toBe('sammy-floor -3 is not a positive bitrate (kbps): ignored');
  });

  test('an ignored payload says nothing about the stream either', () => {
    expect(readRateRequest({ 'cmcd-object': 'tb=1050', 'cmcd-session': 'v=3' }, '', MAX_BYTES)).toMatchObject({ topBitrateKbps: null, bitrateKbps: null });
  });

  test('a payload over the size limit is ignored whole', () => {
    const r = readRateRequest({ 'cmcd-status': `rtp=1000,sid="${'a'.repeat(MAX_BYTES)}"` }, '', MAX_BYTES);
    expect(r).toMatchObject({ rtpKbps: null, source: 'header' });
    expect(r.problem).toContain(`exceeds ${MAX_BYTES}`);
  });
});

describe('rate units', () => {
  test('clamps to [min, max]', () => {
    expect(clampRateKbps(50, 100, 1000)).toBe(100);
    expect(clampRateKbps(500, 100, 1000)).toBe(500);
    expect(clampRateKbps(5000, 100, 1000)).toBe(1000);
  });

  test('kbps are 1000 bits per second (CTA-5004)', () => {
    expect(kbpsToBytesPerS(40_000)).toBe(5_000_000);
    expect(kbpsToBytesPerS(100)).toBe(12_500);
  });
});
