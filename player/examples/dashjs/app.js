// Bundle: npx esbuild app.js --bundle --format=esm --outfile=public/app.js
import * as dashjs from 'dashjs';
import { attachSammy } from '@sammy/player/dashjs';

const video = document.getElementById('video');
const player = dashjs.MediaPlayer().create();
// Before initialize(): the rule, the rtp and the records are in place for the first request.
const sammy = attachSammy(player, {
  segments: '/media/segments.json', // the encoder's per-segment sizes
  history: 'my-app.sammy.history', // localStorage key of the startup throughput history
  config: { maxBufferS: 30 }, // any field of DEFAULT_SAMMY_CONFIG
});
sammy.ready.catch((err) => console.warn('Sammy is off, dash.js plays on its own:', err.message));
player.initialize(video, '/media/manifest.mpd', true);

setInterval(() => (document.getElementById('qoe').textContent = JSON.stringify({ ...sammy.qoe(), chunks: undefined }, null, 1)), 1000);
Object.assign(window, { player, sammy }); // for the console: sammy.qoe(), sammy.detach()
