/**
 * A lab report as data, and the one renderer that writes it as markdown. Sections
 * hold blocks; a sentence is a template of `PROSE` and its slots (the numbers), so a
 * test reads the numbers from the model and the wording lives here, in one place.
 */

/** The report's sentences; `{name}` is a slot, filled by `prose()`. */
export const PROSE = {
  started: 'Started {startedAt}, finished {finishedAt}.',
  startedIncomplete: 'Started {startedAt}, finished {finishedAt} — **incomplete run**: only the sessions below were measured.',
  designSessions:
    '{sessions} sessions of the {design} design in {runs} runs ({trials} trial(s) planned), after {warmups} warm-up session(s).',
  sessions: '{sessions} sessions ({trials} trial(s) planned x {experiments} experiment(s) x {arms} arm(s)), {failed} failed.',

  bottleneckTbf: 'tbf {rateMbps} Mbit/s, {queue}), server -> client',
  bottleneckTrace:
    'trace `{file}` ({format}, mean {meanRateMbps} Mbit/s, {repeat}, {restart}), ' +
    'served by the delay line at its delivery opportunities of 1500 B; {queue} at the mean rate), server -> client',
  queue: 'droptail queue {queueBytes} B ({bdpMultiple} x BDP of {bdpBytes} B',
  traceHolds: 'its last step holding',
  traceRepeats: 'repeating every {periodS} s',
  restartAtPlay: 'restarted at every play request',
  restartSpread:
    'restarted at every play request, at a point that moves with the trial so the trials sample the whole trace: ' +
    'trial 1..{trials} at {startsS} s of it, every arm and experiment of a trial at the same point',
  historyPerSession: 'history reset before every session',
  historyPerArm: "history reset once per arm before its first session, {warmup}, carried between that arm's sessions",
  noWarmup: 'no warm-up',
  warmup: 'then {sessions} unmeasured {playS} s warm-up session(s) to seed it',

  videoFromSolo:
    'Video metrics come from the experiment without a neighbour (the video on its own); ' +
    'each neighbour metric from its own experiment, over the window named.',
  videoFromAll:
    'Video metrics come from every session (this run had no experiment without a neighbour); ' +
    'each neighbour metric from its own experiment, over the window named.',
  summaryCells: 'Mean [95% CI] (n); the change is against control.',
  summaryCellsThesis: 'Mean [95% CI] (n); the change is against control. Thesis = Spang 2023, section 2.6 (Sammy vs production).',

  experimentsCells:
    "Mean [95% CI] (n) of each experiment's sessions; the scenario's own settings: {burst}, {trains}, queue {queueBytes} B.",
  burstPackets: 'burst {packets} packets',
  kernelTrainsOf: "{server}'s kernel trains",
  trainsOf: 'kernel trains of {packets} packets',
  ownTrains: "the kernel's own trains",

  windows:
    'Each session is measured in two windows: the startup fill, from playback start until its buffer first held ' +
    '{fraction} x the {targetS} s target ({levelS} s), and the steady state, from then to the session\'s end. ' +
    'Mean [95% CI] (n) over the sessions of each window.',

  cpuLoad:
    "The machine's cores{cores} were busy (from /proc/stat, once a second, everyone's work: Chromium, the servers, " +
    "the tools and other users' jobs) for {busyPct}% of the time on average over the sessions, {unnicedPct}% without " +
    'work at nice > 0 (which yields to the lab). Per arm and experiment: the rows "machine CPU busy" above.',
  cpuNoneBound: 'No session was CPU-bound ({boundPct}% or more busy without niced work).',
  cpuBound:
    "**{bound} of {measured} sessions were CPU-bound** ({boundPct}% or more busy without niced work): " +
    "their metrics measure this machine's CPU as well as the network.",
  cpuBoundSession: 'trial {trial} {experiment} {arm}: {unnicedPct}% ({busyPct}% with niced work)',

  notAvailable: 'Not available: {reason}.',
  noCapacity: 'this result carries no capacity series and its trace file was not found unchanged',
  delayByCapacity:
    "Each of the neighbour's {packets} packets is classed by the capacity the trace offered in the {lookbackS} s before it was sent. " +
    'Where that is below the neighbour\'s own rate, its packets queue up whatever the video does. Per class: the mean over ' +
    "sessions of each session's mean one-way delay (ms) [95% CI] (sessions with packets in the class).",
  delayByTime:
    'The same packets by when they were sent, in {binS} s bins from playback start. The trace restarts at every play request, ' +
    'so in each bin every arm met the same stretch of the trace (shifted by its play delay); what differs is the arm, and ' +
    "whether it was still filling its buffer then. Per bin: the mean over sessions of each session's mean one-way delay (ms) [95% CI].",
  delayByTimeSpread:
    'The same packets by when they were sent, in {binS} s bins from playback start. The trace restarts at every play request, ' +
    "at the trial's point of it, so in each bin every arm of a trial met the same stretch of the trace (shifted by its play " +
    'delay; other trials met other stretches); what differs is the arm, and whether it was still filling its buffer then. ' +
    "Per bin: the mean over sessions of each session's mean one-way delay (ms) [95% CI].",
  neighbourAlone:
    "The neighbour's own datagrams, sent when they were (every one from the first received to the last, lost ones included), " +
    "replayed through the downlink's queue with no video: `labtools trace-sim`, the delay line's own queue and " +
    "delivery-opportunity code on a simulated clock, from the session's point of the trace, plus the line's {lineDelayMs} ms " +
    "one-way delay. That much of the neighbour's delay the trace causes by itself; what the session measured above it, the " +
    'video added, and only that part can an arm change. Both are means over the datagrams that crossed in the session and in ' +
    'the replay. Mean [95% CI] (n) over sessions.',
  addedPaired:
    'Added by the video, paired by trial: the mean over trials of (arm - control) [95% CI] (n trials), and in how many the arm ' +
    'added less and more than control.',
  pairedByTrial:
    "The trials start at different points of the trace, so trial-to-trial spread is mostly the trace's. Here each session is " +
    "set against control's session of the same trial and experiment: the mean over trials of (arm - control) [95% CI] " +
    "(n trials), and in how many trials the arm's value was lower and higher than control's.",

  fidelity:
    "Before the sessions, one saturating TCP Reno flow ran for {calibrationS} s from the trace's start; each {binS} s bin " +
    'from {skippedS} s on (the first is its slow start) compares the bytes the bottleneck served, and the TCP payload the ' +
    "receiver got, with the trace's capacity (1500 B per delivery opportunity).",
  fidelityWithin: '**Within** the {tolerancePct}% bar (total within {tolerancePct}% of the trace{correlation}).',
  fidelityNotWithin: '**NOT within** the {tolerancePct}% bar (total within {tolerancePct}% of the trace{correlation}).',
  fidelityCorrelation: ' and correlation at least {minCorrelation}',

  traceQueue:
    "The downlink's bottleneck queue (trace link): limit {limitBytes} B, at most {maxQueuedBytes} B queued, {drops} packets " +
    'dropped (queue full), {servedBytes} B served at {opportunities} delivery opportunities ({unused} found the queue empty), ' +
    'the trace restarted {restarts} times.',
  failedSession: 'trial {trial} {experiment} {arm}: {error}',

  designOpening:
    '{description}. {runs} runs, {sessions} sessions of the headless player ({failed} failed), {flows} bulk flows.{cpu}{headless}',
  designCpu: " The machine's cores were {busyPct}% busy on average during the runs (everyone's work).",
  designHeadless: ' The headless player process used {cpuS} s of CPU in {wallS} s for {sessions} sessions ({corePct}% of one core).',
  notRun: 'Not run:',
  abEstimates:
    'Percent change, {treatment} (treatment) against {control} (control), mean [95% CI]. TTE: every viewer on {treatment} against ' +
    'every viewer on {control} (shares 1 and 0). A/B at share p: the treatment viewers against the control viewers of the same run, ' +
    'round(p x {sessions}) of {sessions} on the treatment. Bias: the A/B estimate minus the TTE, in percentage points.',
  switchback:
    '{intervals} intervals of {intervalS} s per trial, half all-{treatment} and half all-{control} in random order; viewers arrive ' +
    'every session.playS / {sessions} s; those starting within {washoutS} s of a switch, or too late to finish inside their interval, ' +
    'play but are not measured. The estimate compares treatment-interval means with control-interval means (per trial, then over ' +
    'trials). TTE: one interval of the same arrivals with every viewer on {treatment} against one with every viewer on {control} ' +
    '(run in the same trial, measured by the same rule).',
  historyBias:
    '{treatmentViewers} treatment viewers start from an empty history, {controlViewers} control viewers from one written by ' +
    '{fillRounds} unmeasured round(s) of their own ({fillPlayS} s each); then every viewer plays one session per round and keeps ' +
    'its history. Treatment {treatment}, control {control}. Initial bitrate: the mean bitrate of the first 20 s of media.',
  historyOverall: 'Over all rounds, treatment vs control:',
  fairness:
    "Each pair of flows shares the link for session.playS; throughput counts from {measureFromS} s on. A cell is the row flow's " +
    'throughput divided by its max-min fair share when it runs beside the column flow (1 = its fair share; below 1 it got less, ' +
    "above 1 it took more). A video's demand is its top bitrate x {videoDemandMultiplier}; a bulk flow's is unlimited; " +
    'the capacity is the link rate.',
  designFailed: 'Failed sessions:',
  designFailedSession: '{id} ({arm}): {error}',

  comparePlayers:
    'Headless vs browser player, sessions without a neighbour: {browserDir} (browser) and {headlessDir} (headless). ' +
    'Mean [95% CI] (n); difference = (headless - browser) / browser; within = |difference| <= {agreementPct}%.',

  pooledBy: "Rendered by `npm run lab -- --pool {dirs}` from the runs' result files.",
  pooledPairs:
    "Each session set against control's session of the same run, trial and experiment: the mean over every run's trials of " +
    "(arm - control) [95% CI] (n trials), and in how many trials the arm's value was lower and higher than control's.",
  pooledNoControl: 'No arm to set against control: the runs need control and another arm.',
} as const;

export type ProseName = keyof typeof PROSE;
export type Slots = Readonly<Record<string, string | number>>;

/** One sentence: a template of `PROSE` and its slots. */
export interface Prose {
  prose: ProseName;
  slots: Slots;
}

/** A template filled; every slot it names must be given, and only those. */
export function prose(name: ProseName, slots: Slots = {}): string {
  const template: string = PROSE[name];
  const named = new Set([...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!));
  const extra = Object.keys(slots).filter((k) => !named.has(k));
  const missing = [...named].filter((k) => !(k in slots));
  const wrong = [...missing.map((k) => `${k} missing`), ...extra.map((k) => `${k} unknown`)];
  if (wrong.length > 0) throw new Error(`prose ${name}: slots ${wrong.join(', ')}`);
  return template.replace(/\{(\w+)\}/g, (_, k: string) => String(slots[k]));
}

/** A line of a paragraph: a sentence from `PROSE`, a list item that is one, or text as it is (the scenario's description). */
export type Line = Prose | { item: Prose } | string;

export type Block =
  /** Lines one under the other (a paragraph; or a sentence and the list items it introduces). */
  | { lines: Line[] }
  | { table: { header: string[]; rows: string[][] } }
  | { figure: string };


export interface Section {
  /** What the section is, for code and tests that look for it (`summary`, `cpu`, ...). */
  key: string;
  /** Its heading (level 2 to 4), or none: the report's opening lines. */
  heading: { level: 2 | 3 | 4; text: string } | null;
  blocks: Block[];
}

export interface ReportModel {
  /** The level-1 heading; none for a piece printed on its own (--compare-players). */
  title: string | null;
  sections: Section[];
}

/** A block's section, by key, or undefined. */
export function sectionOf(model: ReportModel, key: string): Section | undefined {
  return model.sections.find((s) => s.key === key);
}

function lineText(l: Line): string {
  if (typeof l === 'string') return l;
  return 'item' in l ? `- ${prose(l.item.prose, l.item.slots)}` : prose(l.prose, l.slots);
}

function row(cells: string[]): string {
  return `|${cells.map((c) => (c === '' ? ' ' : ` ${c} `)).join('|')}|`;
}

/** The markdown of one block: its lines, then a blank line. */
function blockLines(b: Block): string[] {
  if ('lines' in b) return [...b.lines.map(lineText), ''];
  if ('table' in b) return [row(b.table.header), row(b.table.header.map(() => '---')), ...b.table.rows.map(row), ''];
  return [`![${b.figure}](${b.figure})`, ''];
}

/** The report as markdown: the title, then each section's heading and blocks, every block followed by a blank line. */
export function markdownOf(model: ReportModel): string {
  const lines = model.title === null ? [] : [`# ${model.title}`, ''];
  for (const s of model.sections) {
    if (s.heading) lines.push(`${'#'.repeat(s.heading.level)} ${s.heading.text}`, '');
    for (const b of s.blocks) lines.push(...blockLines(b));
  }
  return lines.join('\n');
}
