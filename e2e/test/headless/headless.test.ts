import { memoryStore } from '@sammy/player/abr';
import { rtpOf } from '@sammy/player/cmcd-status';
import { decodeCmcd } from '@svta/cml-cmcd';
import { cmcdHeaders } from '../../src/headless/cmcd.js';
import { initUrl, LayoutError, parseLayout, segmentUrl } from '../../src/headless/layout.js';
import { PlaybackModel } from '../../src/headless/playback.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HeadlessSession, pageAssets } from '../../src/headless/session.js';
import { processCpuS } from '../../src/headless/pool.js';

describe('PlaybackModel', () => {
  test('starts at the first segment, drains with the clock, stalls at the buffered end and resumes a segment later', () => {
    const stalls: number[] = [];
    const p = new PlaybackModel(2, 100, { stall: (t) => stalls.push(t) });
    expect(p.bufferS(0.3)).toBe(0);
    expect(p.buffered(1.9, 0.3)).toBeNull(); // less than a segment: no frame yet
    expect(p.buffered(2, 0.5)).toBe('started');
    expect(p.playDelayS).toBe(0.5);
    expect(p.bufferS(1.5)).toBeCloseTo(1, 10);
    expect(p.playheadS(1.5)).toBeCloseTo(1, 10);
    // The playhead reaches 2 s of media at 2.5 s: a rebuffer from then.
    expect(p.playheadS(3)).toBe(2);
    expect(stalls).toEqual([2.5]);
    expect(p.rebufferCount).toBe(1);
    expect(p.stalled).toBe(true);
    expect(p.rebufferS(3)).toBeCloseTo(0.5, 10);
    expect(p.buffered(3, 3.2)).toBeNull(); // 1 s ahead: not enough to resume
    expect(p.stalled).toBe(true);
    expect(p.buffered(4, 3.4)).toBeNull(); // 2 s ahead: playing again, not a new start
    expect(p.stalled).toBe(false);
    expect(p.rebufferS(4.4)).toBeCloseTo(0.9, 10);
    expect(p.bufferS(4.4)).toBeCloseTo(1, 10);
    // Nothing more arrives: it runs dry again at 5.4 s.
    expect(p.rebufferS(10)).toBeCloseTo(0.9 + 4.6, 10);
    expect(p.rebufferCount).toBe(2);
    expect(p.playDelayS).toBe(0.5);
  });

  test('at the end of the content it plays what it has and never stalls', () => {
    const p = new PlaybackModel(2, 3, {});
    expect(p.buffered(3, 1)).toBe('started');
    expect(p.playheadS(10)).toBe(3);
    expect(p.rebufferCount).toBe(0);
  });
});

describe('segment layout', () => {
  const mpd = `<MPD><Period><AdaptationSet><Representation id="0"><SegmentTemplate timescale="1000000" duration="2000000" initialization="init-$RepresentationID$.m4s" media="chunk-$RepresentationID$-$Number%05d$.m4s" startNumber="1"></SegmentTemplate></Representation></AdaptationSet></Period></MPD>`;

  test("the encoder's template, resolved against the MPD's URL, with segment index 0 as number 1", () => {
    const l = parseLayout(mpd, 'http://10.77.1.2:8080/media/manifest.mpd');
    expect(initUrl(l, '3')).toBe('http://10.77.1.2:8080/media/init-3.m4s');
    expect(segmentUrl(l, '4', 0)).toBe('http://10.77.1.2:8080/media/chunk-4-00001.m4s');
    expect(segmentUrl(l, '5', 122)).toBe('http://10.77.1.2:8080/media/chunk-5-00123.m4s');
  });

  test('an MPD without a SegmentTemplate is refused with a coded error', () => {
    expect(() => parseLayout('<MPD/>', 'http://x/m.mpd')).toThrow(LayoutError);
    expect(() => parseLayout('<MPD><SegmentTemplate media="a"/></MPD>', 'http://x/m.mpd')).toThrow(/without initialization/);
  });
});

describe('CMCD headers', () => {
  test("dash.js's v1 keys for a video segment, and the arm's rtp in CMCD-Status as the browser player sets it", () => {
    const h = cmcdHeaders({ sessionId: 's-1', objectType: 'v', bitrateKbps: 1050, topBitrateKbps: 1050, durationMs: 2000, bufferMs: 4049, measuredKbps: 24_960, nextObject: 'chunk-4-00003.m4s', startup: false, starved: false, rtpKbps: 3100 });
    expect(rtpOf(h)).toBe(3100);
    expect(h['CMCD-Status']).toBe('rtp=3100');
    expect(decodeCmcd(h['CMCD-Object']!)).toEqual({ br: 1050, d: 2000, ot: 'v', tb: 1050 });
    expect(decodeCmcd(h['CMCD-Request']!)).toEqual({ bl: 4000, mtp: 25000, nor: 'chunk-4-00003.m4s' });
    expect(decodeCmcd(h['CMCD-Session']!)).toEqual({ sf: 'd', sid: 's-1', st: 'v' });
  });

  test('no rtp in the initial phase; startup and starvation flags', () => {
    const h = cmcdHeaders({ sessionId: 's', objectType: 'v', bitrateKbps: 150, startup: true, starved: true, rtpKbps: null });
    expect(rtpOf(h)).toBeNull();
    expect(h['CMCD-Status']).toBe('bs');
    expect(decodeCmcd(h['CMCD-Request']!)).toEqual({ su: true });
  });
});

describe('page assets', () => {
  test("the page's own scripts and stylesheets, not icons or other origins", () => {
    const html = '<link rel="icon" href="data:,"><link rel="stylesheet" href="uPlot.min.css"><link rel="stylesheet" href="style.css"><script src="https://cdn.example/x.js"></script><script type="module" src="main.js"></script>';
    expect(pageAssets(html)).toEqual(['main.js', 'uPlot.min.css', 'style.css']);
  });
});

describe('the play request', () => {
  const ASSET_DELAY_MS = 300;
  let server: Server;
  let baseUrl: string;
  beforeAll(async () => {
    // A page whose script arrives late; no media behind it.
    server = createServer((req, res) => {
      if (req.url === '/') res.end('<script type="module" src="main.js"></script>');
      else if (req.url === '/main.js') setTimeout(() => res.end('void 0;'), ASSET_DELAY_MS);
      else if (req.url === '/broken/') res.end('<script src="gone.js"></script>');
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const session = (url: string) =>
    new HeadlessSession({ baseUrl: url, arm: 'control', config: {}, device: { store: memoryStore(), dashjsSavedKbps: null }, startupTimeoutS: 5, loadPage: true });

  test("is made once the page's assets have loaded, as the demo page counts from its player's arrival", async () => {
    const before = Date.now();
    const s = session(baseUrl);
    const originMs = await s.started;
    expect(originMs - before).toBeGreaterThanOrEqual(ASSET_DELAY_MS - 5);
    expect(s.originMs).toBe(originMs);
    await expect(s.playbackStart).rejects.toThrow(/manifest\.mpd/); // no media behind the page
    const r = await s.finish();
    expect(r.originMs).toBe(originMs);
  });

  test('is never made when an asset of the page fails: started rejects with the reason', async () => {
    const s = session(`${baseUrl}/broken`);
    await expect(s.started).rejects.toThrow(/gone\.js/);
    await s.finish();
  });
});

describe('processCpuS', () => {
  test('utime + stime of /proc/PID/stat, after the parenthesised name (which may hold spaces)', () => {
    const stat = '4242 (node worker) S 1 4242 4242 0 -1 4194560 9000 0 0 0 1234 567 0 0 20 0 11 0 100 1000000 5000';
    expect(processCpuS(stat)).toBeCloseTo(18.01, 10);
    expect(processCpuS('garbage')).toBeNull();
  });
});
