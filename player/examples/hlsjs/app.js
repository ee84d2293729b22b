// Bundle: npx esbuild app.js --bundle --format=esm --outfile=public/app.js
import Hls from 'hls.js';
import { sammyHls } from '@sammy/player/hlsjs';

const video = document.getElementById('video');
// hls.js takes its loaders and ABR controller when it is made: Sammy is a configuration
// (from your own Hls class) and then a handle on the player made with it.
const setup = sammyHls(Hls, {
  segments: '/media/segments.json', // the encoder's per-segment sizes
  history: 'my-app.sammy.history', // localStorage key of the startup throughput history
  config: { maxBufferS: 30 }, // any field of DEFAULT_SAMMY_CONFIG
});
const player = new Hls({ ...setup.config }); // your own settings after it, keeping its keys
const sammy = setup.attach(player); // before loadSource()
sammy.ready.catch((err) => console.warn('Sammy is off, hls.js plays on its own:', err.message));
player.attachMedia(video);
player.loadSource('/media/manifest.m3u8');
video.play().catch(() => {}); // muted, so the browser lets it start

setInterval(() => (document.getElementById('qoe').textContent = JSON.stringify({ ...sammy.qoe(), chunks: undefined }, null, 1)), 1000);
Object.assign(window, { player, sammy }); // for the console: sammy.qoe(), sammy.detach()
