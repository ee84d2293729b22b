import { markdownOf, prose, type ReportModel } from '../../src/analysis/report-markdown.js';

describe('report markdown', () => {
  test('a sentence takes exactly the slots its template names', () => {
    expect(prose('cpuBound', { bound: 1, measured: 9, boundPct: 90 })).toBe(
      "**1 of 9 sessions were CPU-bound** (90% or more busy without niced work): their metrics measure this machine's CPU as well as the network.",
    );
    expect(() => prose('cpuBound', { bound: 1, measured: 9 })).toThrow('prose cpuBound: slots boundPct missing');
    expect(() => prose('noWarmup', { sessions: 1 })).toThrow('prose noWarmup: slots sessions unknown');
  });

  test('a model renders as headings, paragraphs, list items, tables and figures, each followed by a blank line', () => {
    const model: ReportModel = {
      title: 'Lab report: x',
      sections: [
        { key: 'opening', heading: null, blocks: [{ lines: ['as written', { prose: 'noWarmup', slots: {} }] }] },
        {
          key: 'cpu',
          heading: { level: 2, text: 'CPU load' },
          blocks: [
            { lines: [{ prose: 'cpuNoneBound', slots: { boundPct: 90 } }, { item: { prose: 'failedSession', slots: { trial: 1, experiment: 'udp', arm: 'sammy', error: 'e' } } }] },
            { table: { header: ['', 'b'], rows: [['1', '']] } },
            { figure: 'fig-a.svg' },
          ],
        },
        { key: 'design:runs', heading: { level: 4, text: 'Runs' }, blocks: [] },
      ],
    };
    expect(markdownOf(model)).toBe(
      [
        '# Lab report: x', '',
        'as written', 'no warm-up', '',
        '## CPU load', '',
        'No session was CPU-bound (90% or more busy without niced work).', '- trial 1 udp sammy: e', '',
        '| | b |', '| --- | --- |', '| 1 | |', '',
        '![fig-a.svg](fig-a.svg)', '',
        '#### Runs', '',
      ].join('\n'),
    );
  });
});
