import { test, expect } from '@playwright/test';
import { chromiumUnavailableReason, launchChromium } from '../src/browser.js';

test('Debian Chromium starts headless and renders a page', async () => {
  const reason = chromiumUnavailableReason();
  if (reason) console.log(`SKIP: ${reason}`);
  test.skip(reason !== null, reason ?? '');
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.setContent('<p id="x">sammy</p>');
    expect(await page.textContent('#x')).toBe('sammy');
    expect(await page.evaluate(() => MediaSource.isTypeSupported('video/mp4; codecs="avc1.64001f"'))).toBe(true);
  } finally {
    await browser.close();
  }
});
