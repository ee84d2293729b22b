import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeCmcd } from '@svta/cml-cmcd';
import { rtpOf, withRtp } from '../../src/browser/cmcd-status.js';
import { DEFAULT_PLAYER_CONFIG, parseArm, parsePlayer, resolvePlayerConfig } from '../../src/browser/player-config.js';
import { appliedRateKbps } from '../../src/browser/server-timing.js';
import { BUILT_IN_RULES, CMCD_MODE_HEADERS, dashjsSettings } from '../../src/dashjs/settings.js';
import { playerCmcdKeys } from '../../src/browser/cmcd-status.js';

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

describe('dash.js settings per arm', () => {
  test("CMCD goes in headers: mode is 'headers' (plural), the value dash.js 5.2.1 compares with", () => {
    expect(CMCD_MODE_HEADERS).toBe('headers');
    for (const arm of ['sammy', 'control', 'fixed4x', 'dashjs-rtp'] as const) {
      const cmcd = dashjsSettings(arm, DEFAULT_PLAYER_CONFIG, null).streaming.cmcd;
      expect(cmcd).toMatchObject({ enabled: true, mode: 'headers', version: 1 });
      expect(cmcd.mode).not.toBe('header'); // the typings' spelling silently means query mode
    }
    // The installed dash.js decides header mode by comparing with this constant (docs/dashjs.md).
    const here = dirname(fileURLToPath(import.meta.url));
    const bundle = [join(here, '../../node_modules'), join(here, '../../../node_modules')]
      .map((dir) => join(dir, 'dashjs/dist/modern/esm/dash.all.debug.js'))
      .find((file) => existsSync(file))!;
    const src = readFileSync(bundle, 'utf8');
    expect(src).toMatch(/cmcdConfigAccessor\.get\('mode'\) === [\w$.[\]"]+\.CMCD_MODE_HEADERS/);
    expect(src).toMatch(/CMCD_MODE_HEADERS: [\w$.]+\.CmcdTransmissionMode\.HEADERS/);
  });

  test('sammy: every built-in quality rule off, the first chunk at the core\'s rung', () => {
    const { abr } = dashjsSettings('sammy', DEFAULT_PLAYER_CONFIG, 750).streaming;
    expect(Object.keys(abr.rules as object).sort()).toEqual([...BUILT_IN_RULES].sort());
    for (const rule of Object.values(abr.rules as Record<string, { active: boolean }>)) expect(rule.active).toBe(false);
    expect(abr.initialBitrate).toEqual({ video: 750 });
  });

  test("the other arms keep dash.js's ABR", () => {
    for (const arm of ['control', 'fixed4x', 'dashjs-rtp'] as const) expect(dashjsSettings(arm, DEFAULT_PLAYER_CONFIG, 750).streaming.abr).toEqual({});
  });

  test('every arm gets the same buffer target, maxBufferS', () => {
    const config = resolvePlayerConfig({ maxBufferS: 240 });
    for (const arm of ['sammy', 'control'] as const) {
      expect(dashjsSettings(arm, config, null).streaming.buffer).toEqual({
        bufferTimeDefault: 240,
        bufferTimeAtTopQuality: 240,
        bufferTimeAtTopQualityLongForm: 240,
        fastSwitchEnabled: false,
      });
    }
  });

  test("the player computes rtp only in its own-rtp arm; the others keep every other CMCD key", () => {
    for (const arm of ['dashjs-rtp', 'shaka-rtp', 'hlsjs-rtp'] as const) expect(playerCmcdKeys(arm)).toContain('rtp');
    for (const arm of ['sammy', 'control', 'fixed4x'] as const) {
      expect(playerCmcdKeys(arm)).not.toContain('rtp');
      expect(playerCmcdKeys(arm)).toEqual(expect.arrayContaining(['br', 'bl', 'bs', 'd', 'mtp', 'ot', 'sid', 'tb']));
    }
    expect(dashjsSettings('dashjs-rtp', DEFAULT_PLAYER_CONFIG, null).streaming.cmcd.enabledKeys).toContain('rtp');
    expect(dashjsSettings('sammy', DEFAULT_PLAYER_CONFIG, null).streaming.cmcd.enabledKeys).not.toContain('rtp');
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

  test("arms: sammy by default, the player's arms, nothing else", () => {
    expect(parseArm(null)).toBe('sammy');
    expect(parseArm('')).toBe('sammy');
    expect(parseArm('fixed4x')).toBe('fixed4x');
    expect(() => parseArm('bola')).toThrow(/unknown arm "bola"/);
    expect(parseArm('shaka-rtp', 'shaka')).toBe('shaka-rtp');
    expect(() => parseArm('shaka-rtp', 'dashjs')).toThrow(/unknown arm "shaka-rtp" for player dashjs \(known: sammy, control, fixed4x, dashjs-rtp\)/);
    expect(() => parseArm('dashjs-rtp', 'hlsjs')).toThrow(/for player hlsjs \(known: sammy, control, fixed4x, hlsjs-rtp\)/);
  });

  test('players: dash.js by default, the three names, nothing else', () => {
    expect(parsePlayer(null)).toBe('dashjs');
    expect(parsePlayer('hlsjs')).toBe('hlsjs');
    expect(() => parsePlayer('videojs')).toThrow(/unknown player "videojs" \(known: dashjs, shaka, hlsjs\)/);
  });
});
