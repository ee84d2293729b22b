import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PLAYER_CONFIG, resolvePlayerConfig } from '../../src/browser/player-config.js';
import { BUILT_IN_RULES, CMCD_MODE_HEADERS, cmcdKeysFor, dashjsSettings, mergePatches, restorePatch, sammyAbrSettings } from '../../src/dashjs/settings.js';

/** The installed dash.js's debug bundle, whose code the settings below rely on (docs/dashjs.md). */
function dashjsBundle(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const bundle = [join(here, '../../node_modules'), join(here, '../../../node_modules')]
    .map((dir) => join(dir, 'dashjs/dist/modern/esm/dash.all.debug.js'))
    .find((file) => existsSync(file))!;
  return readFileSync(bundle, 'utf8');
}

describe('dash.js settings per arm', () => {
  test("CMCD goes in headers: mode is 'headers' (plural), the value dash.js 5.2.1 compares with", () => {
    expect(CMCD_MODE_HEADERS).toBe('headers');
    for (const arm of ['sammy', 'control', 'fixed4x', 'dashjs-rtp'] as const) {
      const cmcd = dashjsSettings(arm, DEFAULT_PLAYER_CONFIG).streaming.cmcd;
      expect(cmcd).toMatchObject({ enabled: true, mode: 'headers', version: 1 });
      expect(cmcd.mode).not.toBe('header'); // the typings' spelling silently means query mode
    }
    // The installed dash.js decides header mode by comparing with this constant (docs/dashjs.md).
    const src = dashjsBundle();
    expect(src).toMatch(/cmcdConfigAccessor\.get\('mode'\) === [\w$.[\]"]+\.CMCD_MODE_HEADERS/);
    expect(src).toMatch(/CMCD_MODE_HEADERS: [\w$.]+\.CmcdTransmissionMode\.HEADERS/);
  });

  test('sammy, once the core runs: every built-in quality rule off, the first chunk at the core\'s rung', () => {
    const { abr } = sammyAbrSettings(750).streaming;
    expect(Object.keys(abr.rules).sort()).toEqual([...BUILT_IN_RULES].sort());
    for (const rule of Object.values(abr.rules)) expect(rule.active).toBe(false);
    expect(abr.initialBitrate).toEqual({ video: 750 });
    expect(sammyAbrSettings(750).streaming.abandonLoadTimeout).toBe(0);
  });

  test("dash.js bans up-switches for abandonLoadTimeout after an abandonment, the setting the sammy arm zeroes", () => {
    const src = dashjsBundle();
    // AbrController: a new representation only if the state allows loads or it is lower...
    expect(src).toMatch(/abandonmentStateDict\[streamId\]\[type\]\.state === [\w$.[\]"]+\.ALLOW_LOAD \|\| newRepresentation\.absoluteIndex < currentRepresentation\.absoluteIndex/);
    // ...and the state goes back to ALLOW_LOAD after the setting's timeout.
    expect(src).toMatch(/}, settings\.get\(\)\.streaming\.abandonLoadTimeout\);/);
  });

  test("no arm's attach-time settings touch dash.js's ABR", () => {
    for (const arm of ['sammy', 'control', 'fixed4x', 'dashjs-rtp'] as const) expect(dashjsSettings(arm, DEFAULT_PLAYER_CONFIG).streaming).not.toHaveProperty('abr');
  });

  test("restorePatch copies the player's values at every leaf a patch sets, so detach gives them back", () => {
    const current = {
      debug: { logLevel: 5 },
      streaming: {
        buffer: { bufferTimeDefault: 12, bufferTimeAtTopQuality: 30, bufferTimeAtTopQualityLongForm: 60, fastSwitchEnabled: true, other: 1 },
        cmcd: { enabled: false, mode: 'query', version: 1, enabledKeys: ['br', 'sid'], rtpSafetyFactor: 5, cid: 'app' },
        abr: { rules: Object.fromEntries(BUILT_IN_RULES.map((r) => [r, { active: true, parameters: {} }])), initialBitrate: { video: -1, audio: -1 } },
      },
    };
    const patch = mergePatches(dashjsSettings('sammy', DEFAULT_PLAYER_CONFIG), sammyAbrSettings(300));
    const restore = restorePatch(patch, current) as typeof current;
    expect(restore.streaming.buffer).toEqual({ bufferTimeDefault: 12, bufferTimeAtTopQuality: 30, bufferTimeAtTopQualityLongForm: 60, fastSwitchEnabled: true });
    expect(restore.streaming.cmcd).toEqual({ enabled: false, mode: 'query', version: 1, enabledKeys: ['br', 'sid'], rtpSafetyFactor: 5 });
    expect(restore.streaming.abr.initialBitrate).toEqual({ video: -1 });
    for (const r of BUILT_IN_RULES) expect(restore.streaming.abr.rules[r]).toEqual({ active: true });
    expect(restore).not.toHaveProperty('debug');
    // A copy: changing the player's live object afterwards does not change it.
    current.streaming.cmcd.enabledKeys.push('rtp');
    expect(restore.streaming.cmcd.enabledKeys).toEqual(['br', 'sid']);
  });

  test('every arm gets the same buffer target, maxBufferS', () => {
    const config = resolvePlayerConfig({ maxBufferS: 240 });
    for (const arm of ['sammy', 'control'] as const) {
      expect(dashjsSettings(arm, config).streaming.buffer).toEqual({
        bufferTimeDefault: 240,
        bufferTimeAtTopQuality: 240,
        bufferTimeAtTopQualityLongForm: 240,
        fastSwitchEnabled: false,
      });
    }
  });

  test("dash.js computes rtp only in the dashjs-rtp arm; the others keep every other CMCD key", () => {
    expect(cmcdKeysFor('dashjs-rtp')).toContain('rtp');
    for (const arm of ['sammy', 'control', 'fixed4x'] as const) {
      expect(cmcdKeysFor(arm)).not.toContain('rtp');
      expect(cmcdKeysFor(arm)).toEqual(expect.arrayContaining(['br', 'bl', 'bs', 'd', 'mtp', 'ot', 'sid', 'tb']));
    }
  });
});
