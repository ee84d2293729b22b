/**
 * npm run traces -w @sammy/sim: regenerates the bundled variable mahimahi trace
 * (sim/traces/lte-variable.mahimahi) from its seed. The step traces are hand-written.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LTE_LIKE, variableMahimahiTrace } from '../tracegen.js';
import { BUNDLED_TRACES, runMain } from './common.js';

runMain(() => {
  const path = join(BUNDLED_TRACES, 'lte-variable.mahimahi');
  writeFileSync(path, variableMahimahiTrace(LTE_LIKE));
  console.log(`wrote ${path}`);
  return 0;
});
