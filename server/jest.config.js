import base from '../jest.base.js';

/** The suites that send bodies: they run on both body paths (README "Body path"). */
const BODY_SUITES = ['media', 'pacing', 'pipelining', 'carryover', 'hostile/files', 'hostile/hardening', 'hostile/vanishing-clients'];

export default {
  projects: [
    { ...base, displayName: 'default body path' },
    {
      ...base,
      displayName: 'stream body path',
      testMatch: BODY_SUITES.map((name) => `<rootDir>/test/${name}.test.ts`),
      setupFiles: ['<rootDir>/test/stream-body-path.setup.ts'],
    },
  ],
};
