/**
 * `@sammy/player/hlsjs`: Sammy for hls.js 1, as a configuration and a handle.
 *
 *   const setup = sammyHls(Hls, { segments: '/media/segments.json' });
 *   const hls = new Hls({ ...setup.config });
 *   const sammy = setup.attach(hls);   // then hls.attachMedia(video), hls.loadSource(url)
 *
 * Built to `lib/` as JavaScript with type declarations (player/README.md, "hls.js
 * 1"); hls.js itself is a peer dependency, never imported: the plugin extends the
 * app's own `Hls` class's loader and ABR controller.
 */
export { sammyHls, type SammyHlsSetup } from './adapter.js';
export * from '../browser/public.js';
