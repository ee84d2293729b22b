// Bundle: npx esbuild app.js --bundle --format=esm --outfile=public/app.js
import shaka from 'shaka-player';
import { attachSammy } from '@sammy/player/shaka';

const video = document.getElementById('video');
shaka.polyfill.installAll();
const player = new shaka.Player();
await player.attach(video);
// After attach(), before load(): the filters, the rtp and the records are in place for the first request.
const sammy = attachSammy(player, {
  segments: '/media/segments.json', // the encoder's per-segment sizes
  history: 'my-app.sammy.history', // localStorage key of the startup throughput history
  config: { maxBufferS: 30 }, // any field of DEFAULT_SAMMY_CONFIG
});
sammy.ready.catch((err) => console.warn('Sammy is off, Shaka plays on its own:', err.message));
await player.load('/media/manifest.mpd');
video.play().catch(() => {}); // muted, so the browser lets it start

setInterval(() => (document.getElementById('qoe').textContent = JSON.stringify({ ...sammy.qoe(), chunks: undefined }, null, 1)), 1000);
Object.assign(window, { player, sammy }); // for the console: sammy.qoe(), sammy.detach()
