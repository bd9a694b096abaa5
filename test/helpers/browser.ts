/**
 * Debian's Chromium, driven by playwright-core (browser downloads fail here):
 * headless, with nothing that reaches out on its own (background networking,
 * component updates, sync), so a page's requests are the page's alone.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`This test drives Debian's Chromium at ${CHROMIUM}, which is missing. Install it with: `
      + 'sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y chromium');
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--font-render-hinting=none'],
  });
}
