import { fileURLToPath } from 'node:url';
import { DEFAULT_SAMMY_CONFIG, resolveSammyConfig } from '../src/core.js';
import { runCli } from './helpers.js';

const COMMITTED = fileURLToPath(new URL('../results/ablation/ablation-30.json', import.meta.url));

describe('npm run sim:ablation', () => {
  test('each row turns off what it names: valid parameters, each away from its default', async () => {
    const { ABLATIONS } = await import('../src/cli/ablation.js');
    expect(Object.keys(ABLATIONS[0]!.off)).toEqual([]);
    for (const { rule, off } of ABLATIONS.slice(1)) {
      const config = resolveSammyConfig(off);
      const changed = Object.entries(off).filter(([k, v]) => DEFAULT_SAMMY_CONFIG[k as keyof typeof DEFAULT_SAMMY_CONFIG] !== v);
      expect([rule, changed.length]).toEqual([rule, Object.keys(off).length]);
      expect(config).not.toEqual(DEFAULT_SAMMY_CONFIG);
    }
  });

  test('the committed result renders again as its table', () => {
    const r = runCli('ablation', ['--render', COMMITTED]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\| rule off \| set \| rebuffer s /);
    expect(r.stdout).toContain('| the pace under the link | `linkPaceFraction: 0` |');
    expect(r.stdout).toContain("| control (dash.js's default rules) |");
  });

  test('a bad flag says what is accepted', () => {
    const r = runCli('ablation', ['--max-buffer', 'abc']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--max-buffer/);
  });
});
