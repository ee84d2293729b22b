/**
 * The demo page (served by the server at `/`). URL parameters (player/README.md, "The page"):
 *   player=dashjs|shaka|hlsjs              the web player (default dashjs)
 *   arm=NAME                               an arm that runs in the browser on that player (src/abr/arms/; default sammy)
 *   manifest=URL                           (also mpd=URL; default /media/manifest.mpd, for hls.js /media/manifest.m3u8;
 *                                          segments.json is read next to it)
 *   config=<URI-encoded JSON>              overrides of the player config, e.g. {"maxBufferS":240}
 *   autoplay=1|0                           (default 1; with 0 the session starts on the Play button)
 * and `window.sammy` for tests and the lab.
 */
import { DEFAULT_SEGMENT_DURATION_S, parseSegmentsSidecar, type SegmentsSidecar } from '@sammy/encoder/sidecar';
import { InitialThroughputHistory } from '../abr/history.js';
import { summarizeSession } from '../abr/qoe.js';
import { armsFor, PLAYERS, type Arm, type PlayerName } from '../abr/arms/index.js';
import type { SessionQoE } from '../abr/records.js';
import type { Playback, SentRequest } from '../browser/playback.js';
import { DEFAULT_PLAYER_CONFIG, parseArm, parsePlayer, resolvePlayerConfig, type PlayerConfig } from '../browser/player-config.js';
import { PLAYER_REGISTRY } from '../browser/players.js';
import { LiveCharts } from './charts.js';
import { localStorageStore } from './local-storage.js';

export interface SammyPageApi {
  /** Resolves once the page can play (config valid, segments.json loaded); rejects with the reason otherwise. */
  ready: Promise<void>;
  qoe(): SessionQoE;
  /** The full parameter set of this page: player, arm, manifest and every player parameter. */
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
   * player is destroyed, so no request leaves the page afterwards. Tests call
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

let player: PlayerName = 'dashjs';
let arm: Arm = 'sammy';
let config: PlayerConfig = { ...DEFAULT_PLAYER_CONFIG };
let setupError: Error | null = null;
try {
  player = parsePlayer(params.get('player'));
  arm = parseArm(params.get('arm'), player);
  const raw = params.get('config');
  let overrides: unknown = {};
  if (raw !== null && raw !== '') {
    try {
      overrides = JSON.parse(raw);
    } catch (err) {
      throw new Error(`config is not valid JSON: ${(err as Error).message}`);
    }
  }
  config = resolvePlayerConfig(overrides);
} catch (err) {
  setupError = err as Error;
}

const manifestUrl = new URL(params.get('manifest') ?? params.get('mpd') ?? PLAYER_REGISTRY[player].defaultManifest, location.href).href;
const history = new InitialThroughputHistory(localStorageStore(), config.historySize);
const fullConfig = (): Record<string, unknown> => ({ player, arm, manifest: manifestUrl, ...config });
let sidecar: SegmentsSidecar | null = null;
let playback: Playback | null = null;

async function loadSidecar(): Promise<SegmentsSidecar | null> {
  const url = new URL('segments.json', manifestUrl).href;
  try {
    const res = await fetch(url, { cache: 'no-cache' });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return parseSegmentsSidecar(await res.json());
  } catch (err) {
    // Sammy cannot look ahead without it; the other arms play, without SSIM.
    if (arm === 'sammy') throw new Error(`cannot load ${url} (the Sammy lookahead needs it): ${(err as Error).message}`);
    log(`no segments.json at ${url}; SSIM unavailable`, err);
    return null;
  }
}

const ready: Promise<void> = setupError ? Promise.reject(setupError) : loadSidecar().then((s) => void (sidecar = s));
ready.catch((err: Error) => showError(err.message));

const charts = new LiveCharts($('charts'));

let playRequestedMs: number | null = null;

function play(): void {
  if (playRequestedMs !== null || setupError) return;
  // The play delay counts from here, so it includes fetching segments.json.
  playRequestedMs = performance.now();
  $('play').hidden = true;
  void ready.then(async () => {
    if (playback) return;
    try {
      const startPlayback = await PLAYER_REGISTRY[player].load();
      if (playback || stoppedQoe) return;
      playback = startPlayback({
        video: $<HTMLVideoElement>('video'),
        manifestUrl,
        arm,
        config,
        sidecar,
        history,
        log,
        playRequestedMs: playRequestedMs!,
        onChunk: (c) => charts.addChunk(c),
      });
    } catch (err) {
      showError((err as Error).message);
    }
  });
}

let stoppedQoe: SessionQoE | null = null;

function stop(): SessionQoE {
  if (stoppedQoe) return stoppedQoe;
  stoppedQoe = playback?.qoe() ?? emptyQoe();
  playback?.destroy();
  return stoppedQoe;
}

function emptyQoe(): SessionQoE {
  return summarizeSession({ arm, config: fullConfig(), chunks: [], segmentDurationS: DEFAULT_SEGMENT_DURATION_S, ssim: null, playDelayS: null, rebufferCount: 0, rebufferS: 0, playedRanges: [] });
}

window.sammy = {
  ready,
  qoe: () => stoppedQoe ?? playback?.qoe() ?? emptyQoe(),
  config: fullConfig,
  resetHistory: () => history.reset(),
  requests: () => playback?.requests() ?? [],
  history: () => history.sessionsKbps(),
  play,
  stop,
};

// --- page furniture ---
const playerSelect = $<HTMLSelectElement>('player');
for (const p of PLAYERS) playerSelect.add(new Option(PLAYER_REGISTRY[p].description, p, p === player, p === player));
playerSelect.addEventListener('change', () => {
  params.set('player', playerSelect.value);
  // Keep the arm only if the new player runs it.
  if (!(armsFor(playerSelect.value as PlayerName) as readonly string[]).includes(arm)) params.delete('arm');
  location.search = params.toString();
});
const select = $<HTMLSelectElement>('arm');
for (const a of armsFor(player)) select.add(new Option(a, a, a === arm, a === arm));
select.addEventListener('change', () => {
  params.set('arm', select.value);
  location.search = params.toString();
});
$('reset').addEventListener('click', () => {
  history.reset();
  log('history reset');
});
$('play').addEventListener('click', play);
$('config').textContent = JSON.stringify(fullConfig(), null, 1);

function fmt(v: number | null, digits = 0, unit = ''): string {
  return v === null || !Number.isFinite(v) ? '–' : `${v.toFixed(digits)}${unit}`;
}

setInterval(() => {
  if (!playback) return;
  const t = playback.collector.sinceStartS();
  if (t !== null) charts.addBuffer(t, playback.bufferS());
  const q = playback.qoe();
  const last = q.chunks.at(-1);
  const rows: [string, string][] = [
    ['player', PLAYER_REGISTRY[playback.player].description],
    ['arm', q.arm],
    ['phase', playback.collector.phase],
    ['play delay', fmt(q.playDelayS, 3, ' s')],
    ['rebuffers', `${q.rebufferCount} (${fmt(q.rebufferS, 1, ' s')})`],
    ['avg bitrate (played)', fmt(q.avgBitrateKbps, 0, ' kbps')],
    ['avg SSIM (played)', fmt(q.avgQuality, 4)],
    ['switches', String(q.switchCount)],
    ['initial-phase throughput', fmt(q.initialThroughputKbps, 0, ' kbps')],
    ['playing-phase chunk throughput', fmt(q.chunkThroughputKbps, 0, ' kbps')],
    ['chunks', String(q.chunks.length)],
    ['last rtp sent / applied', `${fmt(last?.rtpKbps ?? null)} / ${fmt(last?.appliedRateKbps ?? null)} kbps`],
    ['history (kbps per session)', (history.sessionsKbps() ?? []).map((k) => Math.round(k)).join(', ') || 'none'],
  ];
  $('qoe').innerHTML = rows.map(([k, v]) => `<tr><th>${k}</th><td>${v}</td></tr>`).join('');
  if (last?.reason) $('reason').textContent = `last decision: ${last.reason}`;
}, 250);

if (autoplay) play();
else $('play').hidden = false;
