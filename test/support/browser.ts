import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Debian's Chromium (scripts/test-setup.sh installs it), headless, with nothing reaching out
 * to the network on its own: this machine's network is closed, and its refusals slow a start.
 */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  expect(existsSync(executablePath), `${executablePath} must be installed (scripts/test-setup.sh)`).toBe(true);
  return chromium.launch({
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
