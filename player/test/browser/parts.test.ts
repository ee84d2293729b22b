import { decodeCmcd } from '@svta/cml-cmcd';
import { declaredFloorOf, rtpOf, withDeclaredFloor, withRtp } from '../../src/browser/cmcd-status.js';
import { DEFAULT_PLAYER_CONFIG, parseArm, resolvePlayerConfig } from '../../src/browser/player-config.js';
import { appliedRateKbps } from '../../src/browser/server-timing.js';

describe('CMCD-Status rtp', () => {
  const dashjsHeaders = { 'CMCD-Object': 'br=1050,d=2000,ot=v,tb=1050', 'CMCD-Request': 'bl=4000,mtp=25000', 'CMCD-Status': 'bs', 'CMCD-Session': 'sid="abc"' };

  test("sets rtp and keeps dash.js's other keys byte for byte", () => {
    const out = withRtp(dashjsHeaders, 3100);
    expect(out).toEqual({ ...dashjsHeaders, 'CMCD-Status': 'bs,rtp=3100' });
    expect(decodeCmcd(out['CMCD-Status']!)).toEqual({ bs: true, rtp: 3100 });
    expect(rtpOf(out)).toBe(3100);
    expect(dashjsHeaders['CMCD-Status']).toBe('bs'); // the input is not mutated
  });

  test("replaces dash.js's own rtp, and removes it (and an emptied header) for null", () => {
    expect(withRtp({ 'CMCD-Status': 'rtp=15100' }, 4200)).toEqual({ 'CMCD-Status': 'rtp=4200' });
    expect(withRtp({ 'CMCD-Status': 'bs,rtp=15100' }, null)).toEqual({ 'CMCD-Status': 'bs' });
    expect(withRtp({ 'cmcd-status': 'rtp=15100', Range: 'bytes=0-9' }, null)).toEqual({ Range: 'bytes=0-9' });
    expect(withRtp(undefined, 11600)).toEqual({ 'CMCD-Status': 'rtp=11600' });
    expect(rtpOf({ 'cmcd-status': 'bs' })).toBeNull();
    expect(rtpOf(undefined)).toBeNull();
  });

  test('refuses a rate that is not a positive integer kbps', () => {
    expect(() => withRtp({}, 3045.5)).toThrow(RangeError);
    expect(() => withRtp({}, 0)).toThrow(RangeError);
    expect(() => withDeclaredFloor({}, 1154.5)).toThrow(RangeError);
  });

  test('the declared floor (sammy-floor) goes beside rtp in CMCD-Status, and goes away with it', () => {
    const out = withDeclaredFloor(withRtp(dashjsHeaders, 1200), 1155);
    expect(out['CMCD-Status']).toBe('bs,rtp=1200,sammy-floor=1155');
    expect(decodeCmcd(out['CMCD-Status']!)).toEqual({ bs: true, rtp: 1200, 'sammy-floor': 1155 });
    expect(declaredFloorOf(out)).toBe(1155);
    expect(withDeclaredFloor(withRtp(out, null), null)['CMCD-Status']).toBe('bs');
  });
});

describe('Server-Timing applied rate', () => {
  test('reads pace;dur in kbps; 0, other outcomes and absence are null', () => {
    expect(appliedRateKbps('pace;dur=3100;desc="paced"')).toBe(3100);
    expect(appliedRateKbps('cdn;dur=3, pace;desc="paced";dur=11600')).toBe(11600);
    expect(appliedRateKbps('pace;dur=0;desc="unpaced"')).toBeNull();
    expect(appliedRateKbps('pace;dur=0;desc="disabled"')).toBeNull();
    expect(appliedRateKbps('pace;desc="unavailable"')).toBeNull();
    expect(appliedRateKbps('other;dur=5')).toBeNull();
    expect(appliedRateKbps(null)).toBeNull();
  });
});

describe('player config and arms', () => {
  test('defaults: the Sammy core parameters plus the baselines', () => {
    expect(DEFAULT_PLAYER_CONFIG).toMatchObject({ paceEmptyMultiplier: 11, paceFullMultiplier: 2.9, fixedRtpMultiplier: 4, maxBufferS: 30 });
  });

  test('overrides; bad input names the field', () => {
    expect(resolvePlayerConfig({ maxBufferS: 240, fixedRtpMultiplier: 2 })).toMatchObject({ maxBufferS: 240, fixedRtpMultiplier: 2 });
    expect(() => resolvePlayerConfig({ maxBufferSeconds: 1 })).toThrow(/unknown player parameter "maxBufferSeconds"/);
    expect(() => resolvePlayerConfig({ fixedRtpMultiplier: -1 })).toThrow(/invalid fixedRtpMultiplier: -1/);
    expect(() => resolvePlayerConfig([])).toThrow(/must be a JSON object/);
    expect(() => resolvePlayerConfig({ beta: 2 })).toThrow(/invalid beta: 2/);
  });

  test('arms: sammy by default, the four names, nothing else', () => {
    expect(parseArm(null)).toBe('sammy');
    expect(parseArm('')).toBe('sammy');
    expect(parseArm('fixed4x')).toBe('fixed4x');
    expect(() => parseArm('bola')).toThrow(/unknown arm "bola"/);
  });
});
