import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.SAMMY_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Flags for a quiet, deterministic Chromium on a machine without internet access
 * (it may not reach the internet): no background networking, no QUIC (the server speaks TCP), autoplay.
 */
export const CHROMIUM_ARGS = [
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--autoplay-policy=no-user-gesture-required',
  '--disable-dev-shm-usage',
  '--no-sandbox',
  '--disable-gpu',
];

/** Why Chromium cannot run here, or null when it can. */
export function chromiumUnavailableReason(): string | null {
  if (!existsSync(CHROMIUM_PATH)) return `Chromium not found at ${CHROMIUM_PATH} (sudo apt-get install -y chromium)`;
  return null;
}

/**
 * Launches Debian's Chromium headless; with `netns`, inside that network namespace
 * (through a two-line wrapper script: Playwright itself stays in the root namespace).
 * `handleSignals: false` leaves SIGINT/SIGTERM to the caller (the lab cleans up its
 * namespaces first, then closes the browser itself).
 */
export async function launchChromium(opts: { netns?: string; handleSignals?: boolean; extraArgs?: string[] } = {}): Promise<Browser> {
  let executablePath = CHROMIUM_PATH;
  let wrapperDir: string | null = null;
  if (opts.netns) {
    wrapperDir = mkdtempSync(join(tmpdir(), 'sammy-chromium-'));
    executablePath = join(wrapperDir, 'chromium-in-netns');
    writeFileSync(executablePath, `#!/bin/sh\nexec ip netns exec ${opts.netns} ${CHROMIUM_PATH} "$@"\n`);
    chmodSync(executablePath, 0o755);
  }
  const handle = opts.handleSignals ?? true;
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [...CHROMIUM_ARGS, ...(opts.extraArgs ?? [])],
    handleSIGINT: handle,
    handleSIGTERM: handle,
    handleSIGHUP: handle,
  });
  if (wrapperDir) {
    const dir = wrapperDir;
    browser.on('disconnected', () => rmSync(dir, { recursive: true, force: true }));
  }
  return browser;
}
