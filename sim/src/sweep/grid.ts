/**
 * The sweep's parameter grid: `key=v1,v2;key=v1,...` over Sammy config fields (the
 * core validates names and values). Short names for the four the thesis tunes.
 */
import { SimError } from '../errors.js';
import { isSammyConfigKey, resolveSammyConfig, type SammyConfig } from '../core.js';

export type Grid = Partial<Record<keyof SammyConfig, number[]>>;

export const GRID_ALIASES: Record<string, keyof SammyConfig> = {
  empty: 'paceEmptyMultiplier',
  full: 'paceFullMultiplier',
  beta: 'beta',
  lookahead: 'lookaheadSegments',
};

/** Empty- and full-buffer multipliers, beta, lookahead: 6 x 6 x 4 x 3 points (those with full > empty dropped). */
export const DEFAULT_GRID_SPEC = 'empty=2,4,6,8,11,14;full=0.5,1,1.5,2,2.9,4;beta=0.3,0.5,0.7,0.9;lookahead=3,5,10';

export function parseGrid(spec: string): Grid {
  const grid: Grid = {};
  for (const part of spec.split(';').map((p) => p.trim()).filter((p) => p !== '')) {
    const match = /^([A-Za-z]+)\s*=\s*(.+)$/.exec(part);
    if (!match) throw new SimError('SIM_BAD_GRID', `grid entry ${JSON.stringify(part)} must look like name=v1,v2 (e.g. ${DEFAULT_GRID_SPEC})`);
    const key = GRID_ALIASES[match[1]!] ?? match[1]!;
    if (!isSammyConfigKey(key)) {
      throw new SimError('SIM_BAD_GRID', `unknown grid parameter ${JSON.stringify(match[1])}: use ${Object.keys(GRID_ALIASES).join(', ')} or a Sammy config field`);
    }
    if (grid[key]) throw new SimError('SIM_BAD_GRID', `grid parameter ${key} given twice`);
    const values = match[2]!.split(',').map((v) => Number(v.trim()));
    for (const value of values) resolveSammyConfig({ [key]: value }); // throws naming the field and range
    grid[key] = [...new Set(values)];
  }
  if (Object.keys(grid).length === 0) throw new SimError('SIM_BAD_GRID', `the grid is empty (e.g. ${DEFAULT_GRID_SPEC})`);
  return grid;
}

/** Every combination, as Sammy config overrides; combinations pacing faster when full than when empty are dropped. */
export function gridPoints(grid: Grid): Partial<SammyConfig>[] {
  let points: Partial<SammyConfig>[] = [{}];
  for (const [key, values] of Object.entries(grid) as [keyof SammyConfig, number[]][]) {
    points = points.flatMap((p) => values.map((v) => ({ ...p, [key]: v })));
  }
  return points.filter((p) => {
    const c = resolveSammyConfig(p);
    return c.paceFullMultiplier <= c.paceEmptyMultiplier;
  });
}
