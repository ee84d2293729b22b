/**
 * The demo page over HTTP/2: Chromium, trusting the lab's own certificate, plays a
 * Sammy session from the Node server started with `--http2`. Every segment crosses
 * one connection as an HTTP/2 stream, each paced response is applied as asked (the
 * spiral guard keeps Sammy's declared floor), and the connection's cap, read when a
 * stream's share ends, is never below that stream's own rate: the connection is paced
 * at the sum of its sending streams (docs/server-contract.md, HTTP/2).
 */
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../src/browser.js';
import { chromiumTrustArgs, makeLabCertificate, type LabCertificate } from '../src/lab/lab-tls.js';
import type { LabMedia } from '../src/lab/media.js';
import { runOnOwnServer } from '../src/player-loopback.js';
import { closeAndSkipHooks, expectServerApplied, isSegment, loopbackUnavailableReason, playerFixture } from './player-checks.js';

const FIXTURE_S = 24;
const reason = loopbackUnavailableReason(FIXTURE_S);

let media: LabMedia;
let workDir: string;
let cert: LabCertificate;
let browser: Browser;

test.describe.serial('player over HTTP/2', () => {
  test.beforeAll(async ({}, info) => {
    if (reason) return;
    info.setTimeout(5 * 60_000);
    ({ media, workDir } = await playerFixture(FIXTURE_S, 'sammy-player-h2-'));
    cert = makeLabCertificate(join(workDir, 'tls'));
    browser = await launchChromium({ extraArgs: chromiumTrustArgs(cert) });
  });

  closeAndSkipHooks(reason, () => ({ browser, workDir }));

  test('sammy on dash.js: one connection, every segment an HTTP/2 stream, each paced as asked, the cap the sum', async () => {
    const tls = ['--tls-cert', cert.certFile, '--tls-key', cert.keyFile, '--http2'];
    const r = await runOnOwnServer(browser, { mediaDir: media.dir, playerDir: join(workDir, 'player'), logFile: join(workDir, 'h2.jsonl'), extraArgs: tls }, (baseUrl) => {
      expect(baseUrl).toMatch(/^https:\/\//);
      return { baseUrl, arm: 'sammy', config: { maxBufferS: 12 }, playS: 8 };
    });
    const { session, log } = r;
    expect(session.pageErrors).toEqual([]);
    expect(session.qoe.playDelayS).toBeGreaterThan(0);
    // The browser's side: every video chunk came over HTTP/2 (Resource Timing).
    expect(session.qoe.chunks.length).toBeGreaterThan(4);
    for (const c of session.qoe.chunks) expect(c.protocol, `chunk ${c.index}`).toBe('h2');
    // The server's side: every segment an HTTP/2 stream of one connection.
    const segments = log.filter((l) => isSegment(l.path));
    for (const l of segments) {
      expect(l.protocol, l.path).toBe('h2');
      expect(l.streamId, l.path).toEqual(expect.any(Number));
    }
    expect(new Set(segments.map((l) => l.remotePort)).size).toBe(1);
    // Applied as asked, the guard raised none (Sammy declares its floor), Server-Timing per stream.
    expect(expectServerApplied(r)).toBe(0);
    const paced = segments.filter((l) => l.pacing === 'paced' && !l.aborted);
    expect(paced.length).toBeGreaterThan(4);
    for (const l of paced) {
      const capBytesPerS = l.maxPacingRateBytesPerS;
      const ownBytesPerS = (l.appliedRateKbps! * 1000) / 8;
      if (capBytesPerS !== 'unlimited') expect(capBytesPerS, `${l.path}: the connection's cap when its share ended`).toBeGreaterThanOrEqual(ownBytesPerS * 0.999);
    }
    const capped = paced.filter((l) => l.maxPacingRateBytesPerS !== 'unlimited').length;
    expect(capped, 'paced streams that ended under a cap').toBeGreaterThan(0);
    console.log(`h2: ${session.qoe.chunks.length} video chunks over h2, ${segments.length} segment streams on one connection, ${paced.length} paced (${capped} ended under a cap)`);
  });
});
