// Opens a local HTML report (gpuclean bisect --html) in headless Chromium,
// fails on any page or console error, writes a PNG screenshot, and prints one
// JSON line describing what the screenshot shows:
//   {"errors":[], "svg_boxes":N, "outlined":N, "png_bytes":N,
//    "distinct_colours":N, "highlight_pixels":N}
// `highlight_pixels` counts pixels of the first-break outline colour (black
// on a coloured box) inside the break node's bounding box.
//
//   node probe/html_screenshot.mjs REPORT.html OUT.png
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const CHROMIUM = process.env.GPUCLEAN_CHROMIUM || '/usr/bin/chromium';
const FLAGS = ['--headless=new', '--no-sandbox', '--disable-gpu-sandbox', '--disable-background-networking',
               '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

function fail(message) {
  process.stderr.write(`html_screenshot: ${message}\n`);
  process.exit(2);
}

const [report, png] = process.argv.slice(2);
if (!report || !png) fail('usage: node probe/html_screenshot.mjs REPORT.html OUT.png');
if (!fs.existsSync(report)) fail(`${report}: no such file`);

const {chromium} = await import('playwright-core').catch(() => fail('playwright-core is not installed (npm ci)'));
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuclean-html-'));
let context;
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: false, ignoreDefaultArgs: ['--headless'], args: FLAGS,
    viewport: {width: 1200, height: 900},
  });
  const page = context.pages()[0] || await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  // Any request leaving the file is a network access the report must not make.
  page.on('request', (r) => { if (!r.url().startsWith('file://') && !r.url().startsWith('data:')) errors.push(`network: ${r.url()}`); });
  await page.goto('file://' + path.resolve(report), {waitUntil: 'load'});

  const outlined = page.locator("svg rect[stroke-width='4']");
  const shot = await page.screenshot({fullPage: true});
  fs.writeFileSync(png, shot);
  let breakBox = null;
  if (await outlined.count() > 0) {
    await outlined.first().scrollIntoViewIfNeeded();
    breakBox = await outlined.first().boundingBox();
  }
  const view = await page.screenshot();  // what is on screen, break node scrolled into view
  const stats = await page.evaluate(async ({b64, box}) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + b64;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.width;
    canvas.height = img.height;
    const g = canvas.getContext('2d');
    g.drawImage(img, 0, 0);
    const data = g.getImageData(0, 0, img.width, img.height).data;
    const colours = new Set();
    for (let i = 0; i < data.length; i += 4 * 7) colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    let highlight = 0;
    if (box) {
      const x0 = Math.max(0, Math.floor(box.x)), y0 = Math.max(0, Math.floor(box.y));
      const x1 = Math.min(img.width, Math.ceil(box.x + box.width)), y1 = Math.min(img.height, Math.ceil(box.y + box.height));
      for (let y = y0; y < y1; ++y)
        for (let x = x0; x < x1; ++x) {
          const i = 4 * (y * img.width + x);
          if (data[i] < 40 && data[i + 1] < 40 && data[i + 2] < 40) ++highlight;
        }
    }
    return {distinct_colours: colours.size, highlight_pixels: highlight};
  }, {b64: view.toString('base64'), box: breakBox});
  const result = {
    errors,
    svg_boxes: await page.locator('svg rect').count(),
    outlined: await outlined.count(),
    png_bytes: shot.length,
    ...stats,
  };
  process.stdout.write(JSON.stringify(result) + '\n');
} catch (e) {
  fail(e.message.split('\n')[0]);
} finally {
  if (context) await context.close();
  fs.rmSync(profile, {recursive: true, force: true});
}
