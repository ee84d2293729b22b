/**
 * `@sammy/player/shaka`: Sammy for an existing Shaka Player 5 `shaka.Player`, in one call.
 *
 *   const player = new shaka.Player();
 *   await player.attach(video);
 *   const sammy = attachSammy(player, { segments: '/media/segments.json' });
 *   await player.load('/media/manifest.mpd');
 *
 * Built to `lib/` as JavaScript with type declarations (player/README.md, "Shaka
 * Player 5"); Shaka itself is a peer dependency, never imported: the plugin works on the
 * app's player.
 */
export { attachSammy } from './adapter.js';
export * from '../browser/public.js';
