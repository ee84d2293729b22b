#!/usr/bin/env node
/**
 * npm run encode -- (--input FILE | --synthetic SECONDS) --out DIR [--ladder lab|hd|LADDER.json] [--segment-seconds S]
 * npm run encode -- --add-hls DIR   (the HLS playlists of a ladder encoded before the encoder wrote them)
 */
import { parseArgs } from 'node:util';
import { abandonPartialOutputs, encodeLadder } from './encode.js';
import { EncoderError } from './errors.js';
import { MULTIVARIANT_PLAYLIST, writeHlsPlaylists } from './hls.js';
import { resolveLadder } from './ladder.js';
import { DEFAULT_SEGMENT_DURATION_S } from './sidecar.js';

const USAGE =
  'usage: npm run encode -- (--input FILE | --synthetic SECONDS) --out DIR [--ladder lab|hd|LADDER.json] [--segment-seconds S]\n' +
  '       npm run encode -- --add-hls DIR';

function progressPrinter(): (fraction: number, stage: string) => void {
  const tty = process.stderr.isTTY;
  let lastPct = -1;
  return (fraction, stage) => {
    const pct = Math.floor(fraction * 100);
    if (pct === lastPct) return;
    if (tty) {
      const filled = Math.round(fraction * 30);
      process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(30 - filled)}] ${String(pct).padStart(3)}% ${stage.padEnd(8)}`);
      if (pct === 100) process.stderr.write('\n');
    } else if (pct % 10 === 0 || pct === 100) {
      process.stderr.write(`${stage} ${pct}%\n`);
    }
    lastPct = pct;
  };
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        input: { type: 'string' },
        synthetic: { type: 'string' },
        out: { type: 'string' },
        ladder: { type: 'string', default: 'lab' },
        'segment-seconds': { type: 'string', default: String(DEFAULT_SEGMENT_DURATION_S) },
        'add-hls': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new EncoderError('ENC_BAD_ARGS', `${(err as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values['add-hls'] !== undefined) {
    const { video } = writeHlsPlaylists(values['add-hls']);
    console.log(`wrote ${values['add-hls']}/${MULTIVARIANT_PLAYLIST}: ${video.length} video rungs`);
    return 0;
  }
  if (!values.out) throw new EncoderError('ENC_BAD_ARGS', `--out DIR is required\n${USAGE}`);
  const syntheticS = values.synthetic === undefined ? undefined : Number(values.synthetic);
  if (syntheticS !== undefined && !Number.isFinite(syntheticS)) {
    throw new EncoderError('ENC_BAD_ARGS', `--synthetic takes a number of seconds, got ${JSON.stringify(values.synthetic)}`);
  }
  const segmentS = Number(values['segment-seconds']);
  const result = await encodeLadder({
    ...(values.input === undefined ? {} : { input: values.input }),
    ...(syntheticS === undefined ? {} : { syntheticS }),
    outDir: values.out,
    ladder: resolveLadder(values.ladder!),
    segmentS,
    onProgress: progressPrinter(),
    log: (line) => process.stderr.write(`encode: ${line}\n`),
  });
  const reps = result.sidecar.representations;
  console.log(
    `wrote ${result.outDir}/manifest.mpd: ${reps.length} video rungs x ${reps[0]!.segmentSizesBytes.length} segments, ` +
      `${result.mediaDurationS.toFixed(1)} s of media in ${result.elapsedS.toFixed(1)} s ` +
      `(${(result.elapsedS / result.mediaDurationS).toFixed(2)}x real time)`,
  );
  return 0;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    abandonPartialOutputs();
    process.exit(130);
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    const message = err instanceof EncoderError ? `${err.message}` : `unexpected error: ${(err as Error).stack ?? String(err)}`;
    process.stderr.write(`\nencode: error: ${message}\n`);
    process.exit(err instanceof EncoderError && err.code === 'ENC_BAD_ARGS' ? 2 : 1);
  },
);
