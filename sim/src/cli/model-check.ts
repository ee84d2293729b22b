/**
 * npm run sim:model-check -- --against-lab e2e/results/RUN[,RUN...] [--out DIR] | --render FILE
 * The neighbour models against the lab's UDP neighbour, start by start (src/model-check/).
 * `--out` writes DIR/check.json and DIR/check.md; `--render FILE` prints the table again.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SimError } from '../errors.js';
import { loadSidecar } from '../ladder.js';
import { checkAgainstLab, type ModelCheckResult } from '../model-check/check.js';
import { readLabRun } from '../model-check/lab.js';
import { modelCheckMarkdown } from '../model-check/report.js';
import { BUNDLED_LADDER, cliValues, runMain, userPath } from './common.js';

const USAGE = `usage: npm run sim:model-check -- --against-lab e2e/results/RUN[,RUN...] [--out DIR]
       npm run sim:model-check -- --render DIR/check.json
  replays every lab session beside a UDP neighbour in the simulator and sets each trial's
  Sammy - control difference in the neighbour's delay against the simulator's, per model
  --out DIR      also write DIR/check.json (the raw figures) and DIR/check.md (the tables)
  --render FILE  print the tables from a check.json`;

function main(): number {
  const values = cliValues({ 'against-lab': { type: 'string' }, out: { type: 'string' }, render: { type: 'string' } }, USAGE);
  if (values === null) return 0;
  if (values.render !== undefined) {
    console.log(modelCheckMarkdown(JSON.parse(readFileSync(userPath(values.render), 'utf8')) as ModelCheckResult));
    return 0;
  }
  if (!values['against-lab']) throw new SimError('SIM_BAD_ARGS', `--against-lab is required\n${USAGE}`);
  const runs = values['against-lab'].split(',').map((dir) => readLabRun(userPath(dir.trim())));
  const command = ['npm run sim:model-check --', ...process.argv.slice(2)].join(' ');
  const result = checkAgainstLab(runs, loadSidecar(BUNDLED_LADDER), command);
  const markdown = modelCheckMarkdown(result);
  if (values.out !== undefined) {
    const out = userPath(values.out);
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'check.json'), `${JSON.stringify(result, null, 1)}\n`);
    writeFileSync(join(out, 'check.md'), `# The neighbour models against the lab\n\n${markdown}`);
  }
  console.log(markdown);
  return 0;
}

runMain(main);
