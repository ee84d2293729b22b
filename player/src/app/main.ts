/**
 * The demo page (served by the server at `/`). URL parameters (player/README.md, "The page"):
 *   arm=NAME                               an arm that runs in the browser (src/abr/arms/; default sammy)
 *   mpd=URL                                (default /media/manifest.mpd; segments.json is read next to it)
 *   config=<URI-encoded JSON>              overrides of the player config, e.g. {"maxBufferS":240}
 *   autoplay=1|0                           (default 1; with 0 the session starts on the Play button)
 * and `window.sammy` for tests and the lab.
 */
import * as dashjs from 'dashjs';
import type { MediaPlayerClass } from 'dashjs';
import { ARMS } from '../abr/arms/index.js';
import { attachSammy, DEFAULT_PLAYER_CONFIG, type Arm, type SammyHandle, type SentRequest, type SessionQoE } from '../dashjs/index.js';
import { parseArm } from '../browser/player-config.js';
import { LiveCharts } from './charts.js';

export interface SammyPageApi {
  /** Resolves once the page can play (config valid, segments.json loaded); rejects with the reason otherwise. */
  ready: Promise<void>;
  qoe(): SessionQoE;
  /** The full parameter set of this page: arm, manifest and every player parameter. */
  config(): Record<string, unknown>;
  /** Empties this device's initial-phase throughput history (thesis 2.5.6). */
  resetHistory(): void;
  /** Extra: every segment request as sent (path, media type, phase, rtp). */
  requests(): readonly SentRequest[];
  /** Extra: the stored history, kbps per past session (null if storage is unavailable or corrupt). */
  history(): number[] | null;
  /** Extra: start the session (what the Play button does when autoplay=0). */
  play(): void;
  /**
   * Extra: end the session: its QoE is frozen (later `qoe()` calls return it) and the
   * dash.js player is destroyed, so no request leaves the page afterwards. Tests call
   * it before comparing what the page sent with what the server logged.
   */
  stop(): SessionQoE;
}

declare global {
  interface Window {
    sammy?: SammyPageApi;
  }
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const params = new URLSearchParams(location.search);
const mpdUrl = new URL(params.get('mpd') ?? '/media/manifest.mpd', location.href).href;
const autoplay = params.get('autoplay') !== '0';
const logLines: string[] = [];

function log(message: string, err?: unknown): void {
  const line = err === undefined ? message : `${message}: ${err instanceof Error ? err.message : String(err)}`;
  logLines.push(line);
  console.warn(`[sammy] ${line}`);
  $('log').textContent = logLines.slice(-8).join('\n');
}

function showError(message: string): void {
  const el = $('error');
  el.textContent = message;
  el.hidden = false;
}

function configOverrides(): unknown {
  const raw = params.get('config');
  if (raw === null || raw === '') return {};
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new Error(`config is not valid JSON: ${(err as Error).message}`);
  }
}

const charts = new LiveCharts($('charts'));
let arm: Arm = 'sammy';
let player: MediaPlayerClass | null = null;
let sammy: SammyHandle | null = null;
let setupError: Error | null = null;
try {
  arm = parseArm(params.get('arm'));
  player = dashjs.MediaPlayer().create();
  player.updateSettings({ debug: { logLevel: 3 /* warnings and errors */ } } as never);
  // The page plays through the plugin's public call, as any dash.js app would. The
  // segment sizes load now, so `ready` says before Play whether Sammy can run.
  sammy = attachSammy(player, {
    arm,
    config: configOverrides() as Record<string, number>,
    segments: new URL('segments.json', mpdUrl).href,
    log,
    onChunk: (c) => charts.addChunk(c),
  });
} catch (err) {
  setupError = err as Error;
}

const fullConfig = (): Record<string, unknown> => ({ ...(sammy?.config() ?? { arm, ...DEFAULT_PLAYER_CONFIG }), mpd: mpdUrl });
const ready: Promise<void> = setupError ? Promise.reject(setupError) : sammy!.ready;
ready.catch((err: Error) => showError(err.message));

let playRequestedMs: number | null = null;
let playing = false;

function play(): void {
  if (playRequestedMs !== null || setupError) return;
  // The play delay counts from here, so it includes waiting for segments.json.
  playRequestedMs = performance.now();
  $('play').hidden = true;
  void ready.then(() => {
    if (playing || stoppedQoe) return;
    playing = true;
    sammy!.playRequested(playRequestedMs!);
    player!.initialize($<HTMLVideoElement>('video'), mpdUrl, true);
  });
}

let stoppedQoe: SessionQoE | null = null;

function stop(): SessionQoE {
  if (stoppedQoe) return stoppedQoe;
  stoppedQoe = sammy?.qoe() ?? emptyQoe();
  sammy?.detach();
  player?.destroy();
  return stoppedQoe;
}

function emptyQoe(): SessionQoE {
  return { arm, playDelayS: null, rebufferCount: 0, rebufferS: 0, avgBitrateKbps: 0, avgQuality: null, switchCount: 0, initialThroughputKbps: null, chunkThroughputKbps: null, chunks: [], config: fullConfig() };
}

window.sammy = {
  ready,
  qoe: () => stoppedQoe ?? sammy?.qoe() ?? emptyQoe(),
  config: fullConfig,
  resetHistory: () => sammy?.resetHistory(),
  requests: () => sammy?.requests() ?? [],
  history: () => sammy?.history() ?? null,
  play,
  stop,
};

// --- page furniture ---
const select = $<HTMLSelectElement>('arm');
for (const a of ARMS) select.add(new Option(a, a, a === arm, a === arm));
select.addEventListener('change', () => {
  params.set('arm', select.value);
  location.search = params.toString();
});
$('reset').addEventListener('click', () => {
  sammy?.resetHistory();
  log('history reset');
});
$('play').addEventListener('click', play);
$('config').textContent = JSON.stringify(fullConfig(), null, 1);

function fmt(v: number | null, digits = 0, unit = ''): string {
  return v === null || !Number.isFinite(v) ? '–' : `${v.toFixed(digits)}${unit}`;
}

setInterval(() => {
  if (!playing || stoppedQoe || !sammy || !player || playRequestedMs === null) return;
  const b = player.getBufferLength('video');
  charts.addBuffer((performance.now() - playRequestedMs) / 1000, Number.isFinite(b) ? b : 0);
  const q = sammy.qoe();
  const last = q.chunks.at(-1);
  const rows: [string, string][] = [
    ['arm', q.arm],
    ['phase', sammy.phase()],
    ['play delay', fmt(q.playDelayS, 3, ' s')],
    ['rebuffers', `${q.rebufferCount} (${fmt(q.rebufferS, 1, ' s')})`],
    ['avg bitrate (played)', fmt(q.avgBitrateKbps, 0, ' kbps')],
    ['avg SSIM (played)', fmt(q.avgQuality, 4)],
    ['switches', String(q.switchCount)],
    ['initial-phase throughput', fmt(q.initialThroughputKbps, 0, ' kbps')],
    ['playing-phase chunk throughput', fmt(q.chunkThroughputKbps, 0, ' kbps')],
    ['chunks', String(q.chunks.length)],
    ['last rtp sent / applied', `${fmt(last?.rtpKbps ?? null)} / ${fmt(last?.appliedRateKbps ?? null)} kbps`],
    ['history (kbps per session)', (sammy.history() ?? []).map((k) => Math.round(k)).join(', ') || 'none'],
  ];
  $('qoe').innerHTML = rows.map(([k, v]) => `<tr><th>${k}</th><td>${v}</td></tr>`).join('');
  if (last?.reason) $('reason').textContent = `last decision: ${last.reason}`;
}, 250);

if (autoplay) play();
else $('play').hidden = false;
