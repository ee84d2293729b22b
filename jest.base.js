// Shared jest settings: every package's tests are TypeScript ES modules, run by
// ts-jest in ESM mode (jest is started with --experimental-vm-modules). Type
// checking is `npm run typecheck`; here ts-jest only transpiles, for speed.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, transpilation: true }],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
};
