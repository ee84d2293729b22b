import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bdpBytes, experimentArms, loadScenario, parseScenario, queueBytes, withOverrides } from '../../src/scenario/scenario.js';
import { SCENARIO_DIR } from '../../src/paths.js';

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
    expect(s.session).toEqual({ playS: 30, startupTimeoutS: 30, gapS: 2, steadyFromBufferFraction: null });
    expect(() => parseScenario({ ...minimal, session: { steadyFromBufferFraction: 0 } })).toThrow(/session.steadyFromBufferFraction = 0 .*from 0.1 to 1/);
    expect(s.player).toEqual({ kind: 'browser', maxBufferS: 240, config: {}, history: 'per-arm', warmupSessions: 1, warmupPlayS: 5 });
    expect(s.experiment).toBeNull();
    expect(parseScenario({ ...minimal, player: { history: 'per-session' } }).player.warmupSessions).toBe(0);
    expect(() => parseScenario({ ...minimal, player: { history: 'never' } })).toThrow(/player.history = "never"/);
    expect(s.server).toEqual({ kind: 'node', protocol: 'h1', burstPackets: 4, trainPackets: null, congestionControl: 'reno', extraArgs: [] });
    expect(s.thesisComparison).toBe(false);
    expect(s.trials).toBe(1);
    expect(s.media.ladder).toBe('lab');
  });

  test('server.kind: the Node server by default, a Traffic Server edge or nginx; neither of these has a burst knob', () => {
    const caddy = { ...minimal, server: { kind: 'caddy' } };
    expect(() => parseScenario(caddy)).toThrow('scenario field server.kind = "caddy" is invalid: expected node, ats-edge, nginx');
    expect(parseScenario({ ...minimal, server: { kind: 'node', burstPackets: 40 } }).server).toMatchObject({ burstPackets: 40 });
    for (const [kind, trainsOf] of [['ats-edge', 'the edge'], ['nginx', 'nginx']]) {
      expect(parseScenario({ ...minimal, server: { kind, trainPackets: 4 } }).server).toMatchObject({ kind, trainPackets: 4 });
      expect(() => parseScenario({ ...minimal, server: { kind, burstPackets: 4 } })).toThrow(
        `server.burstPackets = 4 is invalid: expected no value with server.kind ${kind} (${trainsOf}'s trains are the kernel's: use`,
      );
      expect(() => parseScenario({ ...minimal, server: { kind }, neighbours: [{ kind: 'none', server: { burstPackets: 40 } }] })).toThrow(
        `neighbours[0].server.burstPackets = 40 is invalid: expected no value with server.kind ${kind}`,
      );
    }
  });

  test('server.protocol: plain HTTP/1.1 by default; over TLS, or HTTP/2, only where the server and the player speak it', () => {
    expect(parseScenario({ ...minimal, server: { protocol: 'h2' } }).server).toMatchObject({ kind: 'node', protocol: 'h2' });
    expect(parseScenario({ ...minimal, server: { kind: 'nginx', protocol: 'h1-tls' } }).server).toMatchObject({ kind: 'nginx', protocol: 'h1-tls' });
    expect(() => parseScenario({ ...minimal, server: { protocol: 'h3' } })).toThrow('server.protocol = "h3" is invalid: expected h1, h1-tls, h2');
    expect(() => parseScenario({ ...minimal, server: { kind: 'nginx', protocol: 'h2' } })).toThrow('server.protocol = "h2" is invalid: expected h1, h1-tls with server.kind nginx');
    expect(() => parseScenario({ ...minimal, server: { kind: 'ats-edge', protocol: 'h1-tls' } })).toThrow('expected h1 with server.kind ats-edge');
    expect(() => parseScenario({ ...minimal, player: { kind: 'headless' }, server: { protocol: 'h1-tls' } })).toThrow('expected h1 with player.kind headless');
  });

  test.each([
    ['thesis-2.6-edge', 'ats-edge'],
    ['thesis-2.6-nginx', 'nginx'],
    ['thesis-2.6-h2', 'node'],
  ])('%s is thesis-2.6 through %s, and nothing else', (name, kind) => {
    const other = loadScenario(name);
    const node = loadScenario('thesis-2.6');
    expect(other.name).toBe(name);
    expect(other.server.kind).toBe(kind);
    expect(other.server.protocol).toBe(name.endsWith('-h2') ? 'h2' : 'h1');
    const { name: _o, description: _d, server: otherServer, trials: otherTrials, ...otherRest } = other;
    const { name: _n, description: _m, server: nodeServer, trials: _t, ...nodeRest } = node;
    expect(otherRest).toEqual(nodeRest);
    expect(otherTrials).toBe(5);
    expect({ ...otherServer, kind: 'node', protocol: 'h1' }).toEqual(nodeServer);
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

  test("--server-cc replaces the server namespace's congestion control and says so in the description", () => {
    const s = parseScenario({ ...minimal, server: { congestionControl: 'reno' } });
    const bbr = withOverrides(s, { serverCongestionControl: 'bbr' });
    expect(bbr.server.congestionControl).toBe('bbr');
    expect(bbr.description).toMatch(/\[The server's congestion control replaced from the command line: --server-cc bbr\.\]$/);
    expect(s.server.congestionControl).toBe('reno');
    expect(withOverrides(s, { serverCongestionControl: 'reno' })).toEqual(s);
    expect(() => withOverrides(s, { serverCongestionControl: 'cubic' })).toThrow(/--server-cc = "cubic" is invalid: expected reno, bbr/);
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

describe('player.kind and experiment designs', () => {
  const headless = { ...minimal, player: { kind: 'headless' } };

  test('headless runs only the arms the simulator models, and only Sammy core parameters', () => {
    expect(parseScenario(headless).player.kind).toBe('headless');
    expect(() => parseScenario({ ...minimal, player: { kind: 'phone' } })).toThrow(/player.kind = "phone" .*browser, headless/);
    expect(() => parseScenario({ ...headless, arms: ['control', 'dashjs-rtp'] })).toThrow(/arms\[1\] = "dashjs-rtp" .*headless player runs \(sammy, control, fixed4x\)/);
    expect(() => parseScenario({ ...headless, player: { kind: 'headless', config: { fixedRtpMultiplier: 3 } } })).toThrow(/player.config.fixedRtpMultiplier .*Sammy core parameter/);
    expect(parseScenario({ ...headless, player: { kind: 'headless', config: { beta: 0.7 } } }).player.config).toEqual({ beta: 0.7 });
    expect(withOverrides(parseScenario(minimal), { player: 'headless' }).player.kind).toBe('headless');
    expect(() => withOverrides(parseScenario({ ...minimal, arms: ['dashjs-rtp'] }), { player: 'headless' })).toThrow(/arms\[0\] = "dashjs-rtp"/);
  });

  test('an A/B design: defaults, and its checks', () => {
    const s = parseScenario({ ...headless, neighbours: undefined, arms: undefined, experiment: { design: 'ab', sessions: 10, shares: [0, 0.2, 1] } });
    expect(s.experiment).toEqual({ design: 'ab', sessions: 10, treatment: 'sammy', control: 'control', staggerS: 1, seed: 1, shares: [0, 0.2, 1] });
    expect(s.neighbours.map((n) => n.kind)).toEqual(['none']);
    expect(s.arms).toEqual(['control', 'sammy']);
    const bad = (experiment: unknown) => () => parseScenario({ ...headless, experiment });
    expect(bad({ design: 'ab', shares: [0.5, 1] })).toThrow(/experiment.shares .*holds 0 and 1/);
    expect(bad({ design: 'ab', sessions: 4, shares: [0, 0.1, 1] })).toThrow(/different treatment counts round\(p x 4\)/);
    expect(bad({ design: 'ab', shares: [0, 1.5, 1] })).toThrow(/experiment.shares\[1\] = 1.5 .*from 0 to 1/);
    expect(bad({ design: 'ab', treatment: 'dashjs-rtp' })).toThrow(/experiment.treatment = "dashjs-rtp"/);
    expect(bad({ design: 'ab', rounds: 3 })).toThrow(/experiment.rounds .*no such field for design ab/);
    expect(bad({ design: 'abc' })).toThrow(/experiment.design = "abc" .*ab, switchback, history, fairness/);
    expect(() => parseScenario({ ...minimal, experiment: { design: 'ab' } })).toThrow(/player.kind = "browser" .*headless with an experiment design/);
    expect(() => parseScenario({ ...headless, link: { trace: '../../sim/traces/step-down.json', rttMs: 20 }, experiment: { design: 'ab' } })).toThrow(/no experiment design on a trace link/);
  });

  test('switchback, history and fairness designs', () => {
    const sb = parseScenario({ ...headless, session: { playS: 20 }, experiment: { design: 'switchback', sessions: 5 } }).experiment;
    expect(sb).toMatchObject({ design: 'switchback', intervalS: 60, intervals: 8, washoutS: 20 });
    expect(() => parseScenario({ ...headless, session: { playS: 20 }, experiment: { design: 'switchback', intervalS: 30 } })).toThrow(/experiment.intervalS = 30 .*at least washoutS \+ session.playS \+ 2 \(42\)/);
    expect(parseScenario({ ...headless, experiment: { design: 'history', sessions: 6, treatment: 'sammy', control: 'sammy' } }).experiment).toMatchObject({ rounds: 6, fillRounds: 3, fillPlayS: 5 });
    const f = parseScenario({ ...headless, arms: undefined, experiment: { design: 'fairness', flows: ['sammy', 'reno', 'http'], settings: [{ rateMbps: 10, queue: { bdp: 1 } }] } });
    expect(f.experiment).toEqual({ design: 'fairness', flows: ['sammy', 'reno', 'http'], settings: [{ rateMbps: 10, queue: { bdp: 1 } }], videoDemandMultiplier: 11, measureFromS: 5, seed: 1 });
    expect(f.arms).toEqual(['sammy']);
    expect(() => parseScenario({ ...headless, experiment: { design: 'fairness', flows: ['sammy', 'cubic'], settings: [{ rateMbps: 10 }] } })).toThrow(/experiment.flows\[1\] = "cubic" .*sammy, control, fixed4x, reno, bbr, http/);
    expect(() => parseScenario({ ...headless, experiment: { design: 'fairness', sessions: 3, settings: [{ rateMbps: 10 }] } })).toThrow(/experiment.sessions .*no such field for design fairness/);
  });
});
