// The browser the tests drive (e2e/chromium.ts, ADR 060): a new context opens a window, and this Chromium would load
// the omnibox's popup WebUIs for it in a renderer of their own, ≈ 0.25 s of CPU per context on a 2-core machine. The
// tests launch it with those features off, on top of Playwright's own `--disable-features` list.
import { describe, expect, inject, test } from 'vitest';
import { useBrowser } from './browser.ts';
import { DISABLED_FEATURES, disableFeaturesSwitch } from './chromium.ts';

const fixture = useBrowser();

describe('the tests’ Chromium', () => {
  test('a new context loads no omnibox popup WebUI', async () => {
    const page = await fixture.newPage();
    await page.setContent('<h1>A page</h1>');
    const browser = page.context().browser();
    if (!browser) throw new Error('no browser');
    const session = await browser.newBrowserCDPSession();
    const { targetInfos } = (await session.send('Target.getTargets')) as { targetInfos: { type: string; url: string }[] };
    await session.detach();
    expect(targetInfos.filter((t) => t.url.startsWith('chrome://')).map((t) => t.url)).toEqual([]);
    expect(targetInfos.some((t) => t.type === 'page')).toBe(true);
  });

  test('Playwright’s own disabled features stay disabled', () => {
    const playwright = inject('playwrightDisableFeatures');
    expect(playwright).toMatch(/^--disable-features=\w/);
    const ours = disableFeaturesSwitch(playwright);
    for (const feature of playwright.slice('--disable-features='.length).split(',')) expect(ours.split(/[=,]/)).toContain(feature);
    for (const feature of DISABLED_FEATURES) expect(ours.split(/[=,]/)).toContain(feature);
  });
});
