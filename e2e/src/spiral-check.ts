/**
 * `npm run spiral-check -w e2e -- [--query 'arm=dashjs-rtp'] [--seconds 60] [--json FILE]`
 *
 * Does the server's spiral guard keep a stock player's own `rtp` from walking it down
 * the ladder (thesis 2.2.3)? One session of the demo page with `--query` (its URL
 * parameters: an arm, a config, or a player), played twice over loopback against the
 * real server: once with `--spiral-guard off` (every rtp applied as sent) and once with
 * the guard on (the default). Prints, for each, the time-average bitrate of what was
 * played, the bitrate per 10 s of requests, the switches and rebuffers, the rates
 * the server applied and how many the guard raised. Needs Chromium and ffmpeg (the
 * lab's synthetic ladder, encoded once into e2e/.cache/); no root.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Arm } from '@sammy/player/abr';
import { buildPlayer } from '@sammy/player/build';
import { chromiumUnavailableReason, launchChromium } from './browser.js';
import { ensureLabMedia } from './lab/media.js';
import { demoPageAt, runOnOwnServer, type SessionRun } from './player-loopback.js';

/** The video outlasts the session and the buffer target (dash.js's default 30 s at the top rung). */
const FIXTURE_MARGIN_S = 40;
const WINDOW_S = 10;

interface GuardRun {
  guard: 'on' | 'off';
  avgBitrateKbps: number;
  switchCount: number;
  rebufferCount: number;
  playDelayS: number | null;
  /** Mean nominal bitrate of the video chunks requested in each 10 s window. */
  bitrateByWindowKbps: (number | null)[];
  pacedResponses: number;
  guardRaised: number;
  /** Over the paced video segment responses. */
  medianAppliedKbps: number | null;
  medianRequestedKbps: number | null;
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function summarize(guard: 'on' | 'off', r: SessionRun, seconds: number, videoRungs: number): GuardRun {
  const { qoe } = r.session;
  const windows = Array.from({ length: Math.ceil(seconds / WINDOW_S) }, (_, w) => {
    const inWindow = qoe.chunks.filter((c) => (c.requestS ?? 0) >= w * WINDOW_S && (c.requestS ?? 0) < (w + 1) * WINDOW_S);
    return inWindow.length === 0 ? null : Math.round(inWindow.reduce((sum, c) => sum + c.bitrateKbps, 0) / inWindow.length);
  });
  const paced = r.log.filter((l) => l.pacing === 'paced');
  const pacedVideo = paced.filter((l) => Number(/\/chunk-(\d+)-/.exec(l.path)?.[1] ?? videoRungs) < videoRungs);
  return {
    guard,
    avgBitrateKbps: Math.round(qoe.avgBitrateKbps),
    switchCount: qoe.switchCount,
    rebufferCount: qoe.rebufferCount,
    playDelayS: qoe.playDelayS,
    bitrateByWindowKbps: windows,
    pacedResponses: paced.length,
    guardRaised: paced.filter((l) => l.guardRaised).length,
    medianAppliedKbps: median(pacedVideo.map((l) => l.appliedRateKbps!)),
    medianRequestedKbps: median(pacedVideo.map((l) => l.rtpKbps!)),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { query: { type: 'string', default: 'arm=dashjs-rtp' }, seconds: { type: 'string', default: '60' }, json: { type: 'string' } },
  });
  const seconds = Number(values.seconds);
  if (!Number.isFinite(seconds) || seconds < 10 || seconds > 600) throw new Error(`invalid --seconds: ${JSON.stringify(values.seconds)} (accepted: 10 to 600)`);
  const unavailable = chromiumUnavailableReason();
  if (unavailable) throw new Error(unavailable);
  const media = await ensureLabMedia('lab', seconds + FIXTURE_MARGIN_S, (line) => console.log(line));
  const workDir = mkdtempSync(join(tmpdir(), 'sammy-spiral-check-'));
  const browser = await launchChromium();
  try {
    await buildPlayer(join(workDir, 'player'));
    const runs: GuardRun[] = [];
    const arm = (new URLSearchParams(values.query).get('arm') ?? 'sammy') as Arm;
    for (const guard of ['off', 'on'] as const) {
      const run = await runOnOwnServer(
        browser,
        { mediaDir: media.dir, playerDir: join(workDir, 'player'), logFile: join(workDir, `guard-${guard}.jsonl`), extraArgs: ['--spiral-guard', guard] },
        (baseUrl) => ({ baseUrl, arm, config: {}, playS: seconds, page: demoPageAt(values.query!) }),
      );
      const s = summarize(guard, run, seconds, media.videoRungs);
      runs.push(s);
      console.log(
        `guard ${guard}: time-average bitrate ${s.avgBitrateKbps} kbps, per ${WINDOW_S} s of requests [${s.bitrateByWindowKbps.join(', ')}] kbps, ` +
          `${s.switchCount} switches, ${s.rebufferCount} rebuffers, play delay ${s.playDelayS?.toFixed(3)} s; ` +
          `${s.pacedResponses} paced responses (${s.guardRaised} raised by the guard); video rtp median ${s.medianRequestedKbps} kbps, applied median ${s.medianAppliedKbps} kbps`,
      );
    }
    const top = media.sidecar.representations.at(-1)!.bitrateKbps;
    console.log(`query ${values.query}, ${seconds} s each, loopback, top rung ${top} kbps: guard on / off time-average bitrate ${(runs[1]!.avgBitrateKbps / runs[0]!.avgBitrateKbps).toFixed(2)}x`);
    if (values.json) writeFileSync(resolve(process.env['INIT_CWD'] ?? process.cwd(), values.json), `${JSON.stringify({ query: values.query, seconds, topKbps: top, runs }, null, 1)}\n`);
  } finally {
    await browser.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  console.error(`spiral-check: ${err.message}`);
  process.exit(1);
});
