/**
 * The headless player against the real server over plain loopback (no namespaces, so no
 * root needed): three sessions at once in one player process (sammy, control, fixed4x)
 * on the 24 s lab ladder with a 12 s buffer target. Each session's requests are told
 * apart in the server's log by the local ports the session reports; per arm, the rtp
 * the server read and applied is the one the arm's model chose for that chunk (none
 * before Sammy's first frame, the core's pace after it, 4x the top rung for fixed4x,
 * none for control), and the QoE record is the browser's shape.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import type { ResponseTelemetry } from '@sammy/server/telemetry';
import { fixedRtpKbps, FIXED_RTP_TOP_MULTIPLIER, DEFAULT_SAMMY_CONFIG } from '@sammy/player/abr';
import { startHeadlessPool, type HeadlessSessionResult } from '../src/headless/pool.js';
import { ensureLabMedia, mediaDirFor, type LabMedia } from '../src/lab/media.js';
import { startLoopbackServer, stopLoopbackServer } from '../src/player-loopback.js';

const FIXTURE_S = 24;
const ARMS = ['sammy', 'control', 'fixed4x'] as const;

function unavailableReason(): string | null {
  const cached = existsSync(join(mediaDirFor('lab', FIXTURE_S), 'segments.json'));
  if (!cached && spawnSync('ffmpeg', ['-version'], { stdio: 'ignore' }).status !== 0) return 'ffmpeg not found, needed to encode the test video (sudo apt-get install -y ffmpeg)';
  return null;
}

const reason = unavailableReason();
let media: LabMedia;
let workDir: string;
let log: ResponseTelemetry[] = [];
const results = new Map<string, HeadlessSessionResult>();

test.describe.serial('headless player over loopback, three sessions in one process', () => {
  test.beforeAll(async ({}, info) => {
    if (reason) return;
    info.setTimeout(5 * 60_000);
    media = await ensureLabMedia('lab', FIXTURE_S, (line) => console.log(line));
    workDir = mkdtempSync(join(tmpdir(), 'sammy-headless-loopback-'));
    const server = await startLoopbackServer({ mediaDir: media.dir, playerDir: join(workDir, 'no-page'), logFile: join(workDir, 'server.jsonl') });
    const pool = await startHeadlessPool();
    try {
      const sessions = await Promise.all(
        ARMS.map((arm) => pool.startSession({ id: arm, baseUrl: server.url, arm, device: arm, resetHistory: true, config: { maxBufferS: 12 }, startupTimeoutS: 20, loadPage: true })),
      );
      await Promise.all(sessions.map((s) => s.playbackStart));
      await new Promise((r) => setTimeout(r, 8000));
      for (const [i, s] of sessions.entries()) results.set(ARMS[i]!, await s.finish());
    } finally {
      await pool.close();
      log = await stopLoopbackServer(server);
    }
  });

  test.afterAll(() => {
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  test.beforeEach(() => {
    if (reason) console.log(`SKIP: ${reason}`);
    test.skip(reason !== null, reason ?? '');
  });

  test('every session played with no error and the browser QoE shape', () => {
    for (const arm of ARMS) {
      const r = results.get(arm)!;
      expect(r.pageErrors, arm).toEqual([]);
      expect(r.qoe!.arm).toBe(arm);
      expect(r.qoe!.playDelayS, arm).toBeGreaterThan(0);
      expect(r.qoe!.rebufferCount, arm).toBe(0);
      expect(r.qoe!.chunks.length, arm).toBeGreaterThan(3);
      expect(r.buffer.length, arm).toBeGreaterThan(10);
      expect((r.qoe!.config as { player?: string }).player).toBe('headless');
    }
  });

  test("the server's log, split by each session's ports, holds exactly its chunks with the rtp its arm chose", () => {
    const top = media.sidecar.representations.at(-1)!.bitrateKbps;
    for (const arm of ARMS) {
      const r = results.get(arm)!;
      const ports = new Set(r.localPorts);
      const mine = log.filter((l) => l.remotePort !== null && ports.has(l.remotePort) && l.path.includes('/chunk-'));
      const video = mine.filter((l) => !l.path.includes(`chunk-${media.sidecar.audio?.id}-`));
      for (const c of r.qoe!.chunks) {
        const path = `/media/chunk-${c.rung}-${String(c.index + 1).padStart(5, '0')}.m4s`;
        const line = video.find((l) => l.path === path);
        expect(line, `${arm} ${path}`).toBeDefined();
        expect(line!.rtpKbps, `${arm} ${path}`).toBe(c.rtpKbps);
        expect(line!.appliedRateKbps, `${arm} ${path}`).toBe(c.appliedRateKbps);
        if (arm === 'control') expect(c.rtpKbps).toBeNull();
        if (arm === 'fixed4x') expect(c.rtpKbps).toBe(fixedRtpKbps(top, FIXED_RTP_TOP_MULTIPLIER));
        if (arm === 'sammy') expect(c.rtpKbps === null).toBe(c.phase === 'initial');
      }
    }
    // No session's ports show up in another's.
    const all = ARMS.flatMap((arm) => results.get(arm)!.localPorts);
    expect(new Set(all).size).toBe(all.length);
  });
});
