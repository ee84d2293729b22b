import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bdpBytes, experimentArms, loadScenario, parseScenario, queueBytes, withOverrides } from '../../src/lab/scenario.js';
import { SCENARIO_DIR } from '../../src/lab/paths.js';

const minimal = {
  name: 'x',
  link: { rateMbps: 40, rttMs: 5, queue: { bdp: 4 } },
  media: { durationS: 100 },
  neighbours: [{ kind: 'none' }],
  arms: ['control', 'sammy'],
};

describe('parseScenario', () => {
  test('fills defaults', () => {
    const s = parseScenario(minimal);
    expect(s.session).toEqual({ playS: 30, startupTimeoutS: 30, gapS: 2 });
    expect(s.player).toEqual({ maxBufferS: 240, config: {}, history: 'per-arm', warmupSessions: 1, warmupPlayS: 5 });
    expect(parseScenario({ ...minimal, player: { history: 'per-session' } }).player.warmupSessions).toBe(0);
    expect(() => parseScenario({ ...minimal, player: { history: 'never' } })).toThrow(/player.history = "never"/);
    expect(s.server).toEqual({ burstPackets: 4, trainPackets: null, congestionControl: 'reno', extraArgs: [] });
    expect(s.thesisComparison).toBe(false);
    expect(s.trials).toBe(1);
    expect(s.media.ladder).toBe('lab');
  });

  test('fills neighbour defaults (thesis section 2.6)', () => {
    const s = parseScenario({ ...minimal, neighbours: [{ kind: 'udp' }, { kind: 'tcp', startS: 10 }, { kind: 'http' }, { kind: 'video', startS: 3 }] });
    const own = { arms: null, server: { burstPackets: 4, trainPackets: null }, queue: { bdp: 4 } };
    expect(s.neighbours).toEqual([
      { kind: 'udp', name: 'udp', rateKbps: 5000, packetBytes: 1200, startS: 0, endS: null, ...own },
      { kind: 'tcp', name: 'tcp', congestionControl: 'reno', startS: 10, endS: null, ...own },
      { kind: 'http', name: 'http', responseBytes: 3_000_000, gapMs: 0, startS: 0, endS: null, ...own },
      { kind: 'video', name: 'video', arm: 'control', startS: 3, endS: null, ...own },
    ]);
  });

  test("named experiments override the scenario's burst, kernel trains and queue; names are unique", () => {
    const s = parseScenario({
      ...minimal,
      server: { burstPackets: 8, trainPackets: 4 },
      neighbours: [
        { kind: 'udp', name: 'b40-shallow', server: { burstPackets: 40, trainPackets: 40 }, queue: { bdp: 0.5 } },
        { kind: 'udp', name: 'kernel', server: { trainPackets: null } },
        { kind: 'none' },
      ],
    });
    expect(s.neighbours.map((e) => [e.name, e.server, e.queue])).toEqual([
      ['b40-shallow', { burstPackets: 40, trainPackets: 40 }, { bdp: 0.5 }],
      ['kernel', { burstPackets: 8, trainPackets: null }, { bdp: 4 }],
      ['none', { burstPackets: 8, trainPackets: 4 }, { bdp: 4 }],
    ]);
    expect(queueBytes(s.link, s.neighbours[0]!.queue)).toBe(12_500);
    expect(withOverrides(s, { neighbours: ['kernel'] }).neighbours.map((e) => e.name)).toEqual(['kernel']);
    expect(withOverrides(s, { neighbours: ['udp'] }).neighbours.map((e) => e.name)).toEqual(['b40-shallow', 'kernel']);
    expect(() => parseScenario({ ...minimal, neighbours: [{ kind: 'udp' }, { kind: 'udp' }] })).toThrow(/each experiment name at most once/);
    expect(() => parseScenario({ ...minimal, neighbours: [{ kind: 'udp', server: { trainPackets: 45 } }] })).toThrow(/neighbours\[0\].server.trainPackets = 45 .*from 1 to 44/);
    expect(() => parseScenario({ ...minimal, neighbours: [{ kind: 'udp', server: { burst: 4 } }] })).toThrow(/neighbours\[0\].server.burst .*no such field/);
  });

  test('an experiment may run a subset of the arms, in the scenario order', () => {
    const s = parseScenario({ ...minimal, arms: ['control', 'sammy', 'fixed4x'], neighbours: [{ kind: 'none' }, { kind: 'udp', arms: ['sammy', 'control'] }] });
    expect(experimentArms(s, s.neighbours[0]!)).toEqual(['control', 'sammy', 'fixed4x']);
    expect(experimentArms(s, s.neighbours[1]!)).toEqual(['control', 'sammy']);
    expect(() => parseScenario({ ...minimal, neighbours: [{ kind: 'udp', arms: ['fixed4x'] }] })).toThrow(/neighbours\[0\].arms\[0\] = "fixed4x" .*control, sammy/);
  });

  test.each([
    [{ ...minimal, link: { ...minimal.link, rateMbps: -1 } }, /link.rateMbps = -1 .*from 0.1 to 10000/],
    [{ ...minimal, arms: ['sammy', 'bola'] }, /arms\[1\] = "bola" .*sammy, control, fixed4x/],
    [{ ...minimal, arms: ['sammy', 'sammy'] }, /each arm at most once/],
    [{ ...minimal, neighbours: [{ kind: 'ping' }] }, /neighbours\[0\].kind = "ping"/],
    [{ ...minimal, neighbours: [{ kind: 'udp', rate: 5 }] }, /neighbours\[0\].rate .*no such field/],
    [{ ...minimal, neighbours: [{ kind: 'tcp', startS: 40 }] }, /neighbours\[0\].startS = 40/],
    [{ ...minimal, neighbours: [] }, /neighbours = \[\] .*non-empty/],
    [{ ...minimal, media: { durationS: 20 } }, /media.durationS = 20 .*at least session.playS \+ 10/],
    [{ ...minimal, server: { congestionControl: 'cubic' } }, /server.congestionControl = "cubic" .*reno, bbr/],
    [{ ...minimal, link: { ...minimal.link, queue: { bdp: 4, bytes: 100 } } }, /link.queue .*"bdp": N/],
    [{ ...minimal, extra: 1 }, /scenario.extra .*no such field/],
    [{ ...minimal, trials: 1.5 }, /scenario.trials = 1.5 .*integer/],
  ])('refuses %# with a message naming the field', (input, message) => {
    expect(() => parseScenario(input)).toThrow(message);
  });

  test('queue in BDPs or bytes', () => {
    const s = parseScenario(minimal);
    expect(bdpBytes(s.link)).toBe(25_000);
    expect(queueBytes(s.link)).toBe(100_000);
    expect(queueBytes(parseScenario({ ...minimal, link: { ...minimal.link, queue: { bytes: 64_000 } } }).link)).toBe(64_000);
  });
});

describe('shipped scenarios', () => {
  test.each(readdirSync(SCENARIO_DIR).filter((f) => f.endsWith('.json')))('%s is valid', (file) => {
    const s = loadScenario(join(SCENARIO_DIR, file));
    expect(`${s.name}.json`).toBe(file);
    // The video must outlast the buffer target plus the session (docs/lab-scenarios.md: media.durationS).
    expect(s.media.durationS).toBeGreaterThanOrEqual(s.player.maxBufferS + s.session.playS);
  });

  test('thesis-2.6 is the thesis lab: 40 Mbit/s, 5 ms, 4 x BDP, lab ladder, the four neighbours', () => {
    const s = loadScenario('thesis-2.6');
    expect(s.link).toMatchObject({ rateMbps: 40, rttMs: 5, queue: { bdp: 4 } });
    expect(s.media.ladder).toBe('lab');
    expect(s.neighbours.map((n) => n.kind)).toEqual(['none', 'udp', 'tcp', 'http', 'video']);
    expect(s.neighbours.find((n) => n.kind === 'tcp')).toMatchObject({ congestionControl: 'reno', startS: 10 });
    expect(s.trials).toBeGreaterThanOrEqual(10);
  });

  test('an unknown name says where it looked', () => {
    expect(() => loadScenario('nope')).toThrow(/no scenario nope .*scenarios\/nope.json/);
  });
});

describe('withOverrides', () => {
  test('arms, trials and neighbours from the command line', () => {
    const s = withOverrides(loadScenario('thesis-2.6'), { arms: ['sammy', 'control'], trials: 2, neighbours: ['udp'] });
    expect(s.arms).toEqual(['sammy', 'control']);
    expect(s.trials).toBe(2);
    expect(s.neighbours.map((n) => n.kind)).toEqual(['udp']);
  });

  test('refuses what the scenario does not have', () => {
    expect(() => withOverrides(loadScenario('ci-short'), { neighbours: ['tcp'] })).toThrow(/--neighbours = "tcp" .*none, udp/);
    expect(() => withOverrides(loadScenario('ci-short'), { trials: 0 })).toThrow(/--trials/);
  });
});
