/**
 * `@sammy/player/dashjs`: Sammy for an existing dash.js 5 `MediaPlayer`, in one call.
 *
 *   const player = dashjs.MediaPlayer().create();
 *   const sammy = attachSammy(player, { segments: '/media/segments.json' });
 *   player.initialize(video, '/media/manifest.mpd', true);
 *   ... sammy.qoe()   // the session's SessionQoE; sammy.detach() takes Sammy off
 *
 * Built to `lib/` as JavaScript with type declarations (player/README.md, "dash.js
 * 5"); dash.js itself is a peer dependency, never bundled.
 */
export { attachSammy } from './adapter.js';
export * from '../browser/public.js';
