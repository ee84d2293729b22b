/** The model check as markdown: agreement per run and pooled, then every pair. */
import { num } from '../corpus/report.js';
import type { NeighbourModel } from '../neighbour.js';
import type { Agreement, ModelCheckResult } from './check.js';

const agreementCells = (a: Agreement): string => `${a.signAgree} of ${a.pairs} | ${num(a.spearman, 2)} | ${num(a.pearson, 2)}`;

export function modelCheckMarkdown(r: ModelCheckResult): string {
  const models = r.models;
  const modelHeads = models.flatMap((m) => [`${m}: sign agrees`, `${m}: Spearman`, `${m}: Pearson`]);
  const agreementRow = (label: string, byModel: Record<NeighbourModel, Agreement>): string =>
    `| ${label} | ${models.map((m) => agreementCells(byModel[m])).join(' | ')} |`;
  const lines = [
    `\`${r.command}\``,
    '',
    'Per trial, Sammy minus control: the lab neighbour\'s mean one-way delay (ms) against the simulator\'s delay over the same window (full queues), from the same trace start. Sign: pairs where the two differences have the same sign.',
    '',
    `| run | trace | buffer s | neighbour kbps | server guard raised Sammy's paced requests | fade-hold keys dropped | ${modelHeads.join(' | ')} |`,
    `|${['run', 'trace', 'b', 'n', 'g', 'f', ...modelHeads].map(() => ' --- ').join('|')}|`,
    ...r.runs.map((run) => {
      const guard = run.guardFloorKbps === null ? `none (0 of ${run.guardRaised.paced})` : `to ${run.guardFloorKbps} kbps (${run.guardRaised.raised} of ${run.guardRaised.paced}); simulated`;
      const dropped = run.droppedKeys.length === 0 ? '-' : run.droppedKeys.join(', ');
      return `| ${run.name} | ${run.trace} | ${run.maxBufferS} | ${run.neighbourKbps} | ${guard} | ${dropped} | ${models.map((m) => agreementCells(run.agreement[m])).join(' | ')} |`;
    }),
    '',
    `| pooled | ${modelHeads.join(' | ')} |`,
    `|${['p', ...modelHeads].map(() => ' --- ').join('|')}|`,
    agreementRow('runs replayed as they ran', r.pooled.asRun),
    agreementRow('runs that ran the fade hold (replayed without it)', r.pooled.withoutFadeHold),
    '',
    'The mean of the differences, and each session\'s own level (lab ms against simulated queues: how well the model follows the trace, both arms):',
    '',
    `| set | lab mean difference ms | ${models.flatMap((m) => [`${m}: mean difference`, `${m}: levels Spearman`, `${m}: levels Pearson`]).join(' | ')} |`,
    `|${['s', 'l', ...models.flatMap(() => ['d', 'ls', 'lp'])].map(() => ' --- ').join('|')}|`,
    ...[...r.runs.map((run) => [run.name, run.agreement] as const), ['pooled: as they ran', r.pooled.asRun] as const, ['pooled: fade hold dropped', r.pooled.withoutFadeHold] as const].map(
      ([label, byModel]) =>
        `| ${label} | ${byModel[models[0]!].labMeanDiffMs.toFixed(1)} | ${models.map((m) => `${byModel[m].simMeanDiff.toFixed(3)} | ${num(byModel[m].levelSpearman, 2)} | ${num(byModel[m].levelPearson, 2)}`).join(' | ')} |`,
    ),
    '',
    'Per phase, where the run measured them (steady-state scenarios: the startup fill from playback start until the buffer first holds 90% of the target, then the steady state; each arm\'s own windows, in the lab and in the simulator):',
    '',
    `| run | phase | ${modelHeads.join(' | ')} |`,
    `|${['r', 'p', ...modelHeads].map(() => ' --- ').join('|')}|`,
    ...r.runs.flatMap((run) =>
      Object.entries(run.phaseAgreement).map(([phase, byModel]) => `| ${run.name} | ${phase} | ${models.map((m) => agreementCells(byModel[m])).join(' | ')} |`),
    ),
    '',
    'The lab against itself: two runs of one config from the same starts, the second run\'s differences against the first\'s (what a model could reach at best):',
    '',
    '| runs | sign agrees | Spearman | Pearson | levels Spearman | levels Pearson |',
    '| --- | --- | --- | --- | --- | --- |',
    ...(r.repeats.length === 0 ? ['| none among these runs | | | | | |'] : r.repeats.map((x) => `| ${x.runs.join(', ')} | ${agreementCells(x.agreement)} | ${num(x.agreement.levelSpearman, 2)} | ${num(x.agreement.levelPearson, 2)} |`)),
    '',
    `| run | trial | trace start s (control, sammy) | lab control ms | lab sammy ms | lab difference ms | ${models.map((m) => `${m}: control, sammy, difference`).join(' | ')} |`,
    `|${['r', 't', 's', 'c', 'sa', 'd', ...models].map(() => ' --- ').join('|')}|`,
    ...r.runs.flatMap((run) =>
      run.pairs.map((p) => {
        const sim = models.map((m) => `${p.sim.control[m].toFixed(3)}, ${p.sim.sammy[m].toFixed(3)}, ${(p.sim.sammy[m] - p.sim.control[m]).toFixed(3)}`);
        return `| ${run.name} | ${p.trial} | ${p.traceStartS.control.toFixed(1)}, ${p.traceStartS.sammy.toFixed(1)} | ${p.lab.controlMs.toFixed(0)} | ${p.lab.sammyMs.toFixed(0)} | ${(p.lab.sammyMs - p.lab.controlMs).toFixed(0)} | ${sim.join(' | ')} |`;
      }),
    ),
    '',
  ];
  return lines.join('\n');
}
