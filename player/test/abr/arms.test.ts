import { ARM_PARAMS, ARM_REGISTRY, ARMS, armsFor, armsIn, PLAYERS, dashjsBufferTimesS, isArmName, spiralRung, type ArmName, type RtpInput } from '../../src/abr/arms/index.js';
import { isSammyConfigKey, resolveSammyConfig } from '../../src/abr/config.js';
import { SammySession } from '../../src/abr/session.js';
import { cbrLadder, LAB_BITRATES_KBPS } from './fixtures.js';

function input(over: Partial<RtpInput> = {}): RtpInput {
  return { session: null, bufferS: 10, segmentIndex: 3, maxRung: 4, topKbps: () => 1050, param: (name) => ARM_PARAMS[name]!.default, ...over };
}

describe('the arm registry', () => {
  test('lists where each arm runs', () => {
    expect(ARMS).toEqual(['sammy', 'control', 'fixed4x', 'dashjs-rtp', 'shaka-rtp', 'hlsjs-rtp']);
    expect(armsIn('headless')).toEqual(['sammy', 'control', 'fixed4x', 'dashjs-rtp', 'shaka-rtp', 'hlsjs-rtp']);
    expect(armsIn('simulator')).toEqual(['sammy', 'control', 'fixed4x', 'spiral']);
    expect(isArmName('spiral')).toBe(true);
    expect(isArmName('bola')).toBe(false);
  });

  test('per player: every player runs sammy and control (its own ABR, no rtp); each stock rtp arm runs on its own player', () => {
    expect(armsFor('dashjs')).toEqual(['sammy', 'control', 'fixed4x', 'dashjs-rtp']);
    expect(armsFor('shaka')).toEqual(['sammy', 'control', 'fixed4x', 'shaka-rtp']);
    expect(armsFor('hlsjs')).toEqual(['sammy', 'control', 'fixed4x', 'hlsjs-rtp']);
    for (const player of PLAYERS) expect(armsFor(player)).toEqual(expect.arrayContaining(['sammy', 'control']));
    expect(armsFor('shaka', 'simulator')).toEqual(['sammy', 'control', 'fixed4x']);
  });

  test('every browser arm has an rtp policy and a player, every simulated arm a model, every parameter a default in its range', () => {
    for (const name of Object.keys(ARM_REGISTRY) as ArmName[]) {
      const spec = ARM_REGISTRY[name];
      expect(spec.playerRtp !== null).toBe((spec.runs as readonly string[]).includes('browser'));
      expect(spec.players.length > 0).toBe((spec.runs as readonly string[]).includes('browser'));
      // A stock rtp arm names a parameter it declares.
      if (spec.ownRtp) expect(Object.keys(spec.params)).toContain(spec.ownRtp.safetyFactorParam);
      expect(spec.sim !== null).toBe((spec.runs as readonly string[]).includes('simulator'));
    }
    for (const p of Object.values(ARM_PARAMS)) expect(p.default >= p.min && p.default <= p.max).toBe(true);
  });

  test("no two arms declare the same parameter, and none shadows one of the core's", () => {
    const names = Object.values(ARM_REGISTRY).flatMap((spec) => Object.keys(spec.params));
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(isSammyConfigKey(name)).toBe(false);
  });

  test("rtp per arm: control none, fixed4x 4x the top bitrate rounded up, the stock rtp arms keep the player's", () => {
    expect(ARM_REGISTRY.control.playerRtp()).toEqual({ rtpKbps: null, floorKbps: null, declaredFloorKbps: null });
    expect(ARM_REGISTRY.fixed4x.playerRtp(input())).toEqual({ rtpKbps: 4200, floorKbps: null, declaredFloorKbps: null });
    expect(ARM_REGISTRY.fixed4x.playerRtp(input({ topKbps: () => 1010 }))).toEqual({ rtpKbps: 4100, floorKbps: null, declaredFloorKbps: null });
    expect(ARM_REGISTRY['dashjs-rtp'].playerRtp()).toBe('keep');
    expect(ARM_REGISTRY['shaka-rtp'].playerRtp()).toBe('keep');
    expect(ARM_REGISTRY['hlsjs-rtp'].playerRtp()).toBe('keep');
  });

  test("sammy sends the core's pace: none in the initial phase, the pace with its floor (declared to the server) after the first frame", () => {
    const session = new SammySession({ ladder: cbrLadder(), config: resolveSammyConfig() });
    expect(ARM_REGISTRY.sammy.playerRtp(input({ session }))).toEqual({ rtpKbps: null, floorKbps: expect.any(Number), declaredFloorKbps: null });
    session.firstFrame();
    const expected = session.pace({ bufferS: 10, segmentIndex: 3, maxRung: 4 });
    expect(ARM_REGISTRY.sammy.playerRtp(input({ session }))).toEqual({
      rtpKbps: expected.rtpKbps,
      floorKbps: expected.pace.floorKbps,
      declaredFloorKbps: Math.ceil(expected.pace.floorKbps),
    });
    expect(() => ARM_REGISTRY.sammy.playerRtp(input())).toThrow(/core session/);
  });

  test('spiral: the top rung without samples, then the highest bitrate strictly below half the minimum of the last 3', () => {
    expect(spiralRung(LAB_BITRATES_KBPS, [])).toBe(4);
    expect(spiralRung(LAB_BITRATES_KBPS, [1600])).toBe(3); // 750 < 800
    expect(spiralRung(LAB_BITRATES_KBPS, [1500])).toBe(2); // strictly below 750
    expect(spiralRung(LAB_BITRATES_KBPS, [100, 3000, 3000, 3000])).toBe(4); // the oldest is out of the window
    expect(spiralRung(LAB_BITRATES_KBPS, [200])).toBe(0);
  });

  test("one buffer target sets dash.js's three buffer times", () => {
    expect(dashjsBufferTimesS(240)).toEqual({ bufferTimeDefault: 240, bufferTimeAtTopQuality: 240, bufferTimeAtTopQualityLongForm: 240 });
  });
});
