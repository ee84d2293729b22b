/**
 * `npm run loopback -w @sammy/e2e -- [options]`: player sessions on the demo page
 * against the real server over plain loopback (no namespaces, no root), one fresh
 * server per session, alternating the server's spiral guard on and off; prints each
 * session's QoE and how many responses the guard raised, then the mean per setting.
 * For checks of a stock player against the server (e.g. Shaka's own rtp: `--player
 * shaka --arm shaka-rtp`).
 *
 *   --player dashjs|shaka|hlsjs   (default shaka)
 *   --arm NAME                    (default shaka-rtp; an arm the player runs)
 *   --config JSON                 player config overrides (default {"maxBufferS":10}: Shaka's own buffering goal)
 *   --seconds S                   play time after the first frame (default 60)
 *   --runs N                      sessions per guard setting (default 1)
 *   --guard on,off                the settings to alternate (default on,off)
 *   --json FILE                   every session's SessionQoE and telemetry summary
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildPlayer } from '@sammy/player/build';
import { armsFor, PLAYERS, type Arm, type PlayerName, type SessionQoE } from '@sammy/player/abr';
import { launchChromium } from './browser.js';
import { ensureLabMedia } from './lab/media.js';
import { cpuMetrics, startCpuMonitor } from './lab/cpu-monitor.js';
import { runPlayerSession, startLoopbackServer, stopLoopbackServer } from './player-loopback.js';

const { values } = parseArgs({
  options: {
    player: { type: 'string', default: 'shaka' },
    arm: { type: 'string', default: 'shaka-rtp' },
    config: { type: 'string', default: '{"maxBufferS":10}' },
    seconds: { type: 'string', default: '60' },
    runs: { type: 'string', default: '1' },
    guard: { type: 'string', default: 'on,off' },
    json: { type: 'string' },
  },
});

function fail(message: string): never {
  console.error(`loopback: ${message}`);
  process.exit(2);
}

const player = values.player as PlayerName;
if (!(PLAYERS as readonly string[]).includes(player)) fail(`--player must be one of ${PLAYERS.join(', ')}`);
const arm = values.arm as Arm;
if (!(armsFor(player) as readonly string[]).includes(arm)) fail(`--arm must be one of ${armsFor(player).join(', ')} for ${player}`);
const playS = Number(values.seconds);
const runs = Number(values.runs);
if (!(playS > 0) || !Number.isInteger(runs) || runs < 1) fail('--seconds must be > 0 and --runs a positive integer');
const guards = values.guard!.split(',');
if (guards.some((g) => g !== 'on' && g !== 'off')) fail('--guard takes on, off or on,off');
const config = JSON.parse(values.config!) as Record<string, unknown>;

/** Time-weighted bitrate of the segments played in [fromS, toS) of media time. */
function bitrateBetween(qoe: SessionQoE, fromS: number, toS: number, segmentS: number): number | null {
  const last = new Map<number, number>();
  for (const c of qoe.chunks) last.set(c.index, c.bitrateKbps);
  const picked = [...last].filter(([i]) => i * segmentS >= fromS && i * segmentS < toS).map(([, kbps]) => kbps);
  return picked.length === 0 ? null : picked.reduce((a, b) => a + b, 0) / picked.length;
}

const media = await ensureLabMedia('lab', playS + 40, (line) => console.error(line));
const segmentS = media.sidecar.segmentDurationS;
const work = mkdtempSync(join(tmpdir(), 'sammy-loopback-'));
await buildPlayer(join(work, 'player'));
const browser = await launchChromium();
const results: { guard: string; run: number; qoe: SessionQoE; raised: number; paced: number; cpuBusyPct: number | null; cpuBusyUnnicedPct: number | null }[] = [];
try {
  for (let run = 1; run <= runs; run++) {
    for (const guard of guards) {
      const server = await startLoopbackServer({ mediaDir: media.dir, playerDir: join(work, 'player'), logFile: join(work, `${guard}-${run}.jsonl`), serverArgs: ['--spiral-guard', guard] });
      const t0 = Date.now();
      const cpu = startCpuMonitor(() => t0);
      let session: Awaited<ReturnType<typeof runPlayerSession>>;
      try {
        session = await runPlayerSession(browser, { baseUrl: server.url, player, arm, config, playS, startupTimeoutS: 30 });
      } catch (err) {
        cpu.stop();
        await stopLoopbackServer(server);
        throw err;
      }
      const load = cpuMetrics(cpu.stop());
      const log = await stopLoopbackServer(server);
      const raised = log.filter((l) => l.guardRaised).length;
      const paced = log.filter((l) => l.pacing === 'paced').length;
      results.push({ guard, run, qoe: session.qoe, raised, paced, ...load });
      const q = session.qoe;
      const firstS = bitrateBetween(q, 0, 20, segmentS);
      const lastS = bitrateBetween(q, playS - 20, playS, segmentS);
      const video = q.chunks.map((c) => `${c.requestS?.toFixed(0)}s:${c.bitrateKbps}${c.rtpKbps === null ? '' : `@${c.rtpKbps}`}`).join(' ');
      console.log(
        `guard ${guard} run ${run}: avg bitrate ${q.avgBitrateKbps.toFixed(0)} kbps (media 0-20 s ${firstS?.toFixed(0)}, last 20 s ${lastS?.toFixed(0)}), ` +
          `rebuffers ${q.rebufferCount}, switches ${q.switchCount}, paced ${paced}, guard raised ${raised}, CPU busy ${load.cpuBusyPct?.toFixed(0)}% (not niced ${load.cpuBusyUnnicedPct?.toFixed(0)}%)`,
      );
      console.log(`  video chunks (request time: bitrate@rtp kbps): ${video}`);
    }
  }
} finally {
  await browser.close();
  rmSync(work, { recursive: true, force: true });
}
for (const guard of guards) {
  const mine = results.filter((r) => r.guard === guard).map((r) => r.qoe.avgBitrateKbps);
  const mean = mine.reduce((a, b) => a + b, 0) / mine.length;
  console.log(`guard ${guard}: mean time-average bitrate ${mean.toFixed(0)} kbps over ${mine.length} session(s): ${mine.map((k) => k.toFixed(0)).join(', ')}`);
}
if (values.json) writeFileSync(values.json, `${JSON.stringify({ player, arm, config, playS, results }, null, 1)}\n`);
