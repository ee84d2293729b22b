/**
 * `npm run spiral-check -w e2e -- [--query 'arm=dashjs-rtp'] [--seconds 60] [--protocol h1|h2] [--json FILE]`
 * `npm run spiral-check -w e2e -- --render FILE...` (the table of earlier `--json` records)
 *
 * Does the server's spiral guard keep a stock player's own `rtp` from walking it down
 * the ladder (thesis 2.2.3)? One session of the demo page with `--query` (its URL
 * parameters: an arm, a config, or a player), played twice over loopback against the
 * real server: once with `--spiral-guard off` (every rtp applied as sent) and once with
 * the guard on (the default). Prints, for each, the time-average bitrate of what was
 * played, the bitrate per 10 s of requests, the switches and rebuffers, the rates
 * the server applied and how many the guard raised. Needs Chromium and ffmpeg (the
 * lab's synthetic ladder, encoded once into e2e/.cache/); no root.
 *
 * `--protocol h2` serves the page over HTTPS with `--http2` (a certificate made for the
 * run, trusted by Chromium by its key): audio and video segments then share one
 * connection, whose cap is the sum of the rates of the streams sending at once, so a
 * stock player's audio rtp and video rtp act together. It also prints how many
 * segments came over h2 and how often a stream's share ended with another beside it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Arm } from '@sammy/player/abr';
import { buildPlayer } from '@sammy/player/build';
import { parseSpiralCheckRecord, renderSpiralCheck, SPIRAL_CHECK_PROTOCOLS, type GuardRun, type SpiralCheckProtocol, type SpiralCheckRecord } from './analysis/spiral-check.js';
import { chromiumUnavailableReason, launchChromium } from './browser.js';
import { chromiumTrustArgs, makeLabCertificate } from './lab/lab-tls.js';
import { ensureLabMedia } from './lab/media.js';
import { demoPageAt, runOnOwnServer, type SessionRun } from './player-loopback.js';

/** The video outlasts the session and the buffer target (dash.js's default 30 s at the top rung). */
const FIXTURE_MARGIN_S = 40;
const WINDOW_S = 10;


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
    h2Chunks: qoe.chunks.filter((c) => c.protocol === 'h2').length,
    chunks: qoe.chunks.length,
    pacedWithCompanion: paced.filter((l) => typeof l.maxPacingRateBytesPerS === 'number' && l.maxPacingRateBytesPerS * 8 > l.appliedRateKbps! * 1000 * 1.001).length,
  };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      query: { type: 'string', default: 'arm=dashjs-rtp' },
      seconds: { type: 'string', default: '60' },
      protocol: { type: 'string', default: 'h1' },
      json: { type: 'string' },
      render: { type: 'boolean', default: false },
    },
    allowPositionals: true,
  });
  if (values.render) {
    const records = positionals.map((file) => parseSpiralCheckRecord(readFileSync(resolve(process.env['INIT_CWD'] ?? process.cwd(), file), 'utf8'), file));
    if (records.length === 0) throw new Error('--render needs the record files (JSON written by --json)');
    process.stdout.write(renderSpiralCheck(records));
    return;
  }
  if (positionals.length > 0) throw new Error(`unexpected argument ${JSON.stringify(positionals[0])} (files are read only with --render)`);
  const protocol = values.protocol as SpiralCheckProtocol;
  if (!SPIRAL_CHECK_PROTOCOLS.includes(protocol)) throw new Error(`invalid --protocol: ${JSON.stringify(values.protocol)} (accepted: ${SPIRAL_CHECK_PROTOCOLS.join(', ')})`);
  const startedAt = new Date().toISOString();
  const loadBefore = loadavg()[0]!;
  const seconds = Number(values.seconds);
  if (!Number.isFinite(seconds) || seconds < 10 || seconds > 600) throw new Error(`invalid --seconds: ${JSON.stringify(values.seconds)} (accepted: 10 to 600)`);
  const unavailable = chromiumUnavailableReason();
  if (unavailable) throw new Error(unavailable);
  const media = await ensureLabMedia('lab', seconds + FIXTURE_MARGIN_S, (line) => console.log(line));
  const workDir = mkdtempSync(join(tmpdir(), 'sammy-spiral-check-'));
  const cert = protocol === 'h2' ? makeLabCertificate(join(workDir, 'tls')) : null;
  const protocolArgs = cert === null ? [] : ['--tls-cert', cert.certFile, '--tls-key', cert.keyFile, '--http2'];
  const browser = await launchChromium({ extraArgs: chromiumTrustArgs(cert) });
  try {
    await buildPlayer(join(workDir, 'player'));
    const runs: GuardRun[] = [];
    const arm = (new URLSearchParams(values.query).get('arm') ?? 'sammy') as Arm;
    for (const guard of ['off', 'on'] as const) {
      const run = await runOnOwnServer(
        browser,
        { mediaDir: media.dir, playerDir: join(workDir, 'player'), logFile: join(workDir, `guard-${guard}.jsonl`), extraArgs: ['--spiral-guard', guard, ...protocolArgs] },
        (baseUrl) => ({ baseUrl, arm, config: {}, playS: seconds, page: demoPageAt(values.query!) }),
      );
      const s = summarize(guard, run, seconds, media.videoRungs);
      runs.push(s);
      console.log(
        `guard ${guard}: time-average bitrate ${s.avgBitrateKbps} kbps, per ${WINDOW_S} s of requests [${s.bitrateByWindowKbps.join(', ')}] kbps, ` +
          `${s.switchCount} switches, ${s.rebufferCount} rebuffers, play delay ${s.playDelayS?.toFixed(3)} s; ` +
          `${s.pacedResponses} paced responses (${s.guardRaised} raised by the guard); video rtp median ${s.medianRequestedKbps} kbps, applied median ${s.medianAppliedKbps} kbps; ` +
          `${s.h2Chunks} of ${s.chunks} video chunks over h2, ${s.pacedWithCompanion} paced streams ended beside another's share`,
      );
    }
    const top = media.sidecar.representations.at(-1)!.bitrateKbps;
    console.log(`query ${values.query}, ${protocol}, ${seconds} s each, loopback, top rung ${top} kbps: guard on / off time-average bitrate ${(runs[1]!.avgBitrateKbps / runs[0]!.avgBitrateKbps).toFixed(2)}x`);
    const record: SpiralCheckRecord = { query: values.query!, protocol, seconds, topKbps: top, runs, startedAt, loadAverage1m: { before: loadBefore, after: loadavg()[0]! } };
    if (values.json) writeFileSync(resolve(process.env['INIT_CWD'] ?? process.cwd(), values.json), `${JSON.stringify(record, null, 1)}\n`);
  } finally {
    await browser.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  console.error(`spiral-check: ${err.message}`);
  process.exit(1);
});
