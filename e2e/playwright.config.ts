import { defineConfig } from '@playwright/test';

/**
 * Playwright drives Debian's Chromium (`npx playwright install` cannot download
 * browsers here): see src/browser.ts. Tests that need root (network namespaces)
 * or Chromium skip themselves with a printed reason.
 */
export default defineConfig({
  testDir: './tests',
  testMatch: /.*\.spec\.ts$/,
  workers: 1,
  fullyParallel: false,
  retries: 0,
  timeout: 10 * 60_000,
  reporter: [['list']],
  outputDir: 'test-results',
});
