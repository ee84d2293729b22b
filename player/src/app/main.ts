/**
 * The demo page (served by the server at `/`). URL parameters (player/README.md, "The page"):
 *   player=dashjs|shaka|hlsjs              the web player (default dashjs)
 *   arm=NAME                               an arm that runs in the browser on that player (src/abr/arms/; default sammy)
 *   manifest=URL                           (also mpd=URL; default /media/manifest.mpd, for hls.js /media/manifest.m3u8;
 *                                          segments.json is read next to it)
 *   config=<URI-encoded JSON>              overrides of the player config, e.g. {"maxBufferS":240}
 *   autoplay=1|0                           (default 1; with 0 the session starts on the Play button)
 *   compare=1|ARM                          also play a session of ARM (1: control) beside this one, in a frame
 *                                          of this page with embed=1, and chart its download rate under this one's
 *   embed=1                                the video and the summary only (the compared session's frame); no
 *                                          stored history is read or written
 * and `window.sammy` for tests and the lab (this page's session only).
 */
import { armsFor, armSpec, isArmName, PLAYERS, type Arm, type PlayerName } from '../abr/arms/index.js';
import type { SessionQoE } from '../abr/records.js';
import type { SentRequest } from '../browser/options.js';
import { PlaybackCore } from '../browser/playback.js';
import { DEFAULT_PLAYER_CONFIG, parseArm, parsePlayer } from '../browser/player-config.js';
import { downloadRate, videoTransfers, type RateSeries } from './chart-data.js';
import { LiveCharts } from './charts.js';
import { PAGE_PLAYERS, type PagePlayer } from './players.js';

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
const embed = params.get('embed') === '1';
const shownArm = params.get('arm') ?? 'sammy';
/** `compare=1` or `compare=ARM`: the arm of the session played beside this one (none in a frame). */
const compareArm: string | null = embed || !params.get('compare') ? null : params.get('compare') === '1' ? 'control' : params.get('compare');
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

document.body.classList.toggle('embed', embed);

// --- the session beside this one (`compare=`): this page again in a frame, embed=1 ---
const compareFrame: HTMLIFrameElement | null =
  compareArm === null
    ? null
    : (() => {
        const q = new URLSearchParams(params);
        q.delete('compare');
        q.set('arm', compareArm);
        q.set('embed', '1');
        q.set('autoplay', '0'); // it starts when this one does (play())
        const frame = document.createElement('iframe');
        frame.title = `the ${compareArm} session`;
        frame.src = `?${q.toString()}`;
        $('compare-arm').textContent = compareArm;
        $('compare-frame').append(frame);
        $('compare').hidden = false;
        return frame;
      })();

/** The compared page's `window.sammy` once its script has run (same origin). */
function compareApi(): SammyPageApi | null {
  return (compareFrame?.contentWindow as Window | null)?.sammy ?? null;
}

/** Starts the compared session: now if its page has loaded, else once it has. */
function playCompare(): void {
  if (!compareFrame) return;
  const api = compareApi();
  if (api) api.play();
  else compareFrame.addEventListener('load', () => compareApi()?.play(), { once: true });
}

/** Download-rate bins: short enough to show a burst, long enough to smooth a paced chunk's packets. */
const RATE_BIN_MS = 200;

/** This session's video download rate and the compared one's, in seconds since this session's play request. */
function downloadRates(): { main: RateSeries; compare: RateSeries | null } {
  const none: RateSeries = { t: [], kbps: [], meanKbps: [] };
  if (playRequestedMs === null || !sammy) return { main: none, compare: null };
  const origin = playRequestedMs;
  const end = performance.now();
  const rate = (win: Window, api: SammyPageApi) =>
    downloadRate(videoTransfers(win.performance.getEntriesByType('resource') as PerformanceResourceTiming[], api.requests(), win.performance.timeOrigin - performance.timeOrigin), origin, end, RATE_BIN_MS);
  const other = compareApi();
  return { main: rate(window, window.sammy!), compare: other && compareFrame?.contentWindow ? rate(compareFrame.contentWindow, other) : null };
}

const charts = embed ? null : new LiveCharts($('charts'), shownArm, downloadRates, compareArm);
let playerName: PlayerName = 'dashjs';
let arm: Arm = 'sammy';
let manifestUrl = '';
let page: PagePlayer | null = null;
let sammy: PagePlayer['sammy'] | null = null;

/**
 * The player, with Sammy attached through its plugin's public call, as any app would.
 * Its library is imported on demand (one per `?player=`).
 */
async function loadPlayer(): Promise<void> {
  playerName = parsePlayer(params.get('player'));
  arm = parseArm(params.get('arm'), playerName);
  manifestUrl = new URL(params.get('manifest') ?? params.get('mpd') ?? PAGE_PLAYERS[playerName].defaultManifest, location.href).href;
  page = await PAGE_PLAYERS[playerName].create($<HTMLVideoElement>('video'), {
    arm,
    config: configOverrides() as Record<string, number>,
    segments: new URL('segments.json', manifestUrl).href,
    log,
    onChunk: (c) => charts?.addChunk(c),
    // The compared session must not move this device's history (nor read it).
    ...(embed ? { history: null } : {}),
  }, embed ? 'compare' : undefined);
  sammy = page.sammy;
}

const fullConfig = (): Record<string, unknown> => ({ ...PlaybackCore.qoeConfig(playerName, arm, manifestUrl || null, DEFAULT_PLAYER_CONFIG), ...(sammy?.config() ?? {}) });
const loaded: Promise<void> = loadPlayer();
/** The segment sizes load at once too, so `ready` says before Play whether Sammy can run. */
const ready: Promise<void> = loaded.then(() => sammy!.ready);
ready.catch((err: Error) => showError(err.message));

let playPressed = false;
let playRequestedMs: number | null = null;
let playing = false;

function play(): void {
  if (playPressed) return;
  playPressed = true;
  $('play').hidden = true;
  playCompare();
  // The play delay counts from the play request, or from when the player's library has
  // loaded if that is later: a site ships its player with the page, so it is loaded
  // before any play request; this page imports it on demand, which costs the page, not
  // the stream (on a 2 Mbit/s link, about 3.5 s). It does include waiting for segments.json.
  void loaded
    .then(() => {
      playRequestedMs = performance.now();
      return ready;
    })
    .then(() => {
      if (playing || stoppedQoe) return;
      playing = true;
      sammy!.playRequested(playRequestedMs!);
      page!.start(manifestUrl);
    })
    .catch(() => undefined); // shown by ready's handler
}

let stoppedQoe: SessionQoE | null = null;

function stop(): SessionQoE {
  if (stoppedQoe) return stoppedQoe;
  stoppedQoe = sammy?.qoe() ?? emptyQoe();
  compareApi()?.stop();
  sammy?.detach();
  page?.destroy();
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
const playerSelect = $<HTMLSelectElement>('player');
const shownPlayer = (() => {
  try {
    return parsePlayer(params.get('player'));
  } catch {
    return 'dashjs';
  }
})();
for (const p of PLAYERS) playerSelect.add(new Option(PAGE_PLAYERS[p].description, p, p === shownPlayer, p === shownPlayer));
playerSelect.addEventListener('change', () => {
  params.set('player', playerSelect.value);
  // Keep the arm only if the new player runs it.
  if (!(armsFor(playerSelect.value as PlayerName) as readonly string[]).includes(params.get('arm') ?? 'sammy')) params.delete('arm');
  location.search = params.toString();
});
const select = $<HTMLSelectElement>('arm');
for (const a of armsFor(shownPlayer)) select.add(new Option(a, a, a === params.get('arm'), a === (params.get('arm') ?? 'sammy')));
select.addEventListener('change', () => {
  params.set('arm', select.value);
  location.search = params.toString();
});
if (isArmName(shownArm)) $('arm-description').textContent = armSpec(shownArm).description;
const compareLink = $<HTMLAnchorElement>('compare-link');
{
  const q = new URLSearchParams(params);
  if (compareArm === null) q.set('compare', '1');
  else q.delete('compare');
  compareLink.href = `?${q.toString()}`;
  compareLink.textContent = compareArm === null ? 'play a control session beside this one' : `stop playing ${compareArm} beside this one`;
}
$('reset').addEventListener('click', () => {
  sammy?.resetHistory();
  log('history reset');
});
$('play').addEventListener('click', play);
$('config').textContent = JSON.stringify(fullConfig(), null, 1);
void ready.then(() => ($('config').textContent = JSON.stringify(fullConfig(), null, 1))).catch(() => {});

function fmt(v: number | null, digits = 0, unit = ''): string {
  return v === null || !Number.isFinite(v) ? '–' : `${v.toFixed(digits)}${unit}`;
}

setInterval(() => {
  if (!playing || stoppedQoe || !sammy || !page || playRequestedMs === null) return;
  const b = page.bufferS();
  charts?.addBuffer((performance.now() - playRequestedMs) / 1000, Number.isFinite(b) ? b : 0);
  const q = sammy.qoe();
  const last = q.chunks.at(-1);
  const rows: [string, string][] = [
    ['player', PAGE_PLAYERS[playerName].description],
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
