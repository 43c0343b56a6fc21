#!/usr/bin/env node
// LiteRT.js WebGPU probe: runs .tflite models on the LiteRT.js `webgpu`
// accelerator (the ML Drift GPU backend) in headless Debian Chromium on its
// SwiftShader adapter, and records which ops the GPU delegate took.
// See probe/README.md. Exit codes: 0 ok, 2 any error (one line on stderr).

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {writeNpy} from './npy.mjs';
import {HarnessError, describeTensor, median, prepareFeeds} from './inputs.mjs';
import {parseResidency} from './residency.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const NODE_MODULES = path.join(ROOT, 'node_modules');
const CHROMIUM = process.env.GPUCLEAN_CHROMIUM || '/usr/bin/chromium';
// Flags measured to give headless Chromium a WebGPU adapter (SwiftShader)
// when running as root, without network side traffic (LITERTJS.md).
const CHROMIUM_FLAGS = [
  '--headless=new', '--no-sandbox', '--disable-gpu-sandbox', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--enable-unsafe-webgpu',
];

const HELP = `usage: node probe/litert_webgpu.mjs MODEL.tflite [options]
       node probe/litert_webgpu.mjs --jobs JOBS.json [--verbose]
       node probe/litert_webgpu.mjs --serve [--verbose]

Runs MODEL on LiteRT.js (@litertjs/core, accelerator webgpu, JSPI wasm build
for the CPU part) in headless Chromium (${CHROMIUM}) on the SwiftShader
WebGPU adapter, and parses the GPU delegate's residency log.

  --precision fp32|fp16 gpuOptions.precision (default fp32)
  --input KEY=FILE.npy  feed FILE to input KEY (index or name); repeatable
  --seed N              seed for inputs that are not given (default 0); the
                        generator is the one litert_run.mjs uses
  --out DIR             write DIR/out<i>.npy, DIR/in<i>.npy (generated inputs)
                        and DIR/meta.json; without it meta JSON goes to stdout
  --repeat N            run N times; run_ms is the median of runs 2..N
  --describe-residency  compile only: residency and tensor details, no run
  --jobs FILE           FILE holds a JSON array of jobs
                        {model, out, precision?, inputs?:[{key,file}], seed?,
                        repeat?, describe_residency?, accelerator?}; all run in
                        one Chromium (accelerator wasm: LiteRT.js's CPU path
                        in the same page, for a pipeline's CPU graphs).
                        Each job writes its own meta.json (ok:false on failure)
  --serve               one job per stdin line (the --jobs fields, "out"
                        required), run in the same page and WebGPU device
                        as they arrive; each answers one stdout line
                        {"done":N,"ok":bool} once its meta.json is written.
                        Ends at end of input. For pipelines, whose graphs
                        wait on host steps between them
  --verbose             echo browser log lines to stderr
  --help                this text

meta.json: ok, model, runtime, accelerator, precision, adapter,
is_fully_accelerated (LiteRT.js's flag), residency (parsed from the log:
gpu_ops, cpu_ops, total_ops, partitions, fully_delegated, fallback,
unsupported [{op, reason}], compile_errors, delegations), inputs, outputs,
timings (browser_launch_ms, init_ms, compile_ms, run_ms, run_ms_first,
run_ms_all) and the log lines tagged with their phase.`;

function oneLine(s) {
  return String(s).replace(/\s+/g, ' ').trim().slice(0, 800);
}

function fail(msg) {
  process.stderr.write(`litert_webgpu: ${oneLine(msg)}\n`);
  process.exit(2);
}

let verbose = false;

// ------------------------------------------------------------------ args ---

function parseInt32(flag, s, min) {
  if (!/^\d+$/.test(s) || Number(s) > 0xffffffff || Number(s) < min) {
    throw new HarnessError(`${flag} expects an integer in [${min}, 2^32), got '${s}'`);
  }
  return Number(s);
}

function checkPrecision(p) {
  if (p !== 'fp32' && p !== 'fp16') throw new HarnessError(`--precision expects fp32 or fp16, got '${p}'`);
  return p;
}

let serve = false;

function parseArgs(argv) {
  const job = {model: null, out: null, precision: 'fp32', inputs: [], seed: 0, repeat: 1, describe_residency: false,
    accelerator: 'webgpu'};
  let jobsFile = null;
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let inlineVal = null;
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    if (eq > 0 && a.slice(0, eq) !== '--input') {
      inlineVal = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    const val = () => {
      if (inlineVal !== null) return inlineVal;
      if (i + 1 >= argv.length) throw new HarnessError(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case '--help': case '-h':
        process.stdout.write(HELP + '\n');
        process.exit(0);
        break;
      case '--verbose': verbose = true; break;
      case '--serve': serve = true; break;
      case '--describe-residency': job.describe_residency = true; break;
      case '--precision': job.precision = checkPrecision(val()); break;
      case '--out': job.out = val(); break;
      case '--seed': job.seed = parseInt32('--seed', val(), 0); break;
      case '--repeat': job.repeat = parseInt32('--repeat', val(), 1); break;
      case '--jobs': jobsFile = val(); break;
      case '--input': {
        const v = val();
        const k = v.indexOf('=');
        if (k <= 0 || k === v.length - 1) throw new HarnessError(`--input expects KEY=FILE.npy, got '${v}'`);
        job.inputs.push({key: v.slice(0, k), file: v.slice(k + 1)});
        break;
      }
      default:
        if (a.startsWith('-')) throw new HarnessError(`unknown option '${a}' (see --help)`);
        if (job.model !== null) throw new HarnessError(`more than one model given ('${job.model}', '${a}')`);
        job.model = a;
    }
  }
  if (serve) {
    if (job.model !== null || jobsFile !== null) throw new HarnessError('--serve reads its jobs from stdin; give no MODEL or --jobs');
    return [];
  }
  if (jobsFile !== null) {
    if (job.model !== null) throw new HarnessError('give either MODEL or --jobs, not both');
    return readJobs(jobsFile);
  }
  if (job.model === null) throw new HarnessError('no model given (see --help)');
  return [job];
}

function parseJob(j, where) {
  if (!j || typeof j.model !== 'string' || typeof j.out !== 'string') {
    throw new HarnessError(`${where} needs string fields "model" and "out"`);
  }
  return {
    model: j.model,
    out: j.out,
    precision: checkPrecision(j.precision ?? 'fp32'),
    inputs: (j.inputs ?? []).map((x) => ({key: String(x.key), file: String(x.file)})),
    seed: parseInt32('seed', String(j.seed ?? 0), 0),
    repeat: parseInt32('repeat', String(j.repeat ?? 1), 1),
    describe_residency: Boolean(j.describe_residency),
    accelerator: checkAccelerator(j.accelerator ?? 'webgpu'),
  };
}

// A pipeline's CPU graphs run in the same page on LiteRT.js's wasm
// accelerator, as an app runs its CPU stages beside its GPU ones.
function checkAccelerator(a) {
  if (a !== 'webgpu' && a !== 'wasm') throw new HarnessError(`accelerator must be webgpu or wasm, got '${a}'`);
  return a;
}

function readJobs(file) {
  let list;
  try {
    list = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new HarnessError(`${file}: cannot read jobs: ${e.message}`);
  }
  if (!Array.isArray(list) || list.length === 0) throw new HarnessError(`${file}: expected a non-empty JSON array of jobs`);
  return list.map((j, n) => parseJob(j, `${file}: job ${n}`));
}

// ---------------------------------------------------------------- server ---
// Chromium loads the page, LiteRT.js and the wasm from here; models and
// input tensors are handed over as /blob/<id>, outputs come back as POSTs.

const CONTENT_TYPES = {'.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript',
  '.wasm': 'application/wasm', '.json': 'application/json', '.map': 'application/json'};

function startServer() {
  const blobs = new Map();
  const uploads = new Map();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const send = (code, body, type = 'text/plain') => {
      res.writeHead(code, {'Content-Type': type, 'Cache-Control': 'no-store'});
      res.end(body);
    };
    if (req.method === 'POST' && url.pathname.startsWith('/upload/')) {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        uploads.set(url.pathname.slice('/upload/'.length), Buffer.concat(chunks));
        send(200, 'ok');
      });
      return;
    }
    if (req.method !== 'GET') return send(405, 'method not allowed');
    if (url.pathname === '/') return send(200, fs.readFileSync(path.join(HERE, 'webgpu', 'page.html')), 'text/html');
    if (url.pathname.startsWith('/blob/')) {
      const blob = blobs.get(url.pathname.slice('/blob/'.length));
      return blob ? send(200, blob, 'application/octet-stream') : send(404, 'no such blob');
    }
    // Only the page's own folder and the two LiteRT.js packages are served.
    const allowed = [['/probe/webgpu/', path.join(HERE, 'webgpu')],
      ['/node_modules/@litertjs/', path.join(NODE_MODULES, '@litertjs')]];
    for (const [prefix, dir] of allowed) {
      if (!url.pathname.startsWith(prefix)) continue;
      const file = path.resolve(dir, decodeURIComponent(url.pathname.slice(prefix.length)));
      if (!file.startsWith(dir + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) break;
      return send(200, fs.readFileSync(file), CONTENT_TYPES[path.extname(file)] || 'application/octet-stream');
    }
    send(404, 'not found');
  });
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({server, blobs, uploads, origin: `http://127.0.0.1:${server.address().port}`}));
  });
}

// --------------------------------------------------------------- browser ---

async function launchBrowser() {
  if (!fs.existsSync(CHROMIUM)) {
    throw new HarnessError(`Chromium not found at ${CHROMIUM}; install it (apt-get install chromium, see tools/setup.sh) or set GPUCLEAN_CHROMIUM`);
  }
  if (!fs.existsSync(path.join(NODE_MODULES, '@litertjs', 'core', 'wasm', 'litert_wasm_jspi_internal.wasm'))) {
    throw new HarnessError(`LiteRT.js not installed under ${NODE_MODULES}; run npm ci in ${ROOT} (tools/setup.sh)`);
  }
  let chromium;
  try {
    ({chromium} = await import('playwright-core'));
  } catch {
    throw new HarnessError(`playwright-core not installed under ${NODE_MODULES}; run npm ci in ${ROOT} (tools/setup.sh)`);
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuclean-chromium-'));
  const t0 = performance.now();
  let context;
  try {
    // launchPersistentContext with headless:false plus our own --headless=new:
    // Playwright's own headless switch would select the old headless shell.
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: false, ignoreDefaultArgs: ['--headless'], args: CHROMIUM_FLAGS,
    });
  } catch (e) {
    fs.rmSync(profile, {recursive: true, force: true});
    throw new HarnessError(`cannot launch ${CHROMIUM}: ${e.message.split('\n')[0]}`);
  }
  return {context, profile, launchMs: performance.now() - t0};
}

// ------------------------------------------------------------------ jobs ---

function prepareOutDir(dir) {
  fs.mkdirSync(dir, {recursive: true});
  for (const f of fs.readdirSync(dir)) {
    if (/^(out|in)\d+\.npy$/.test(f) || f === 'meta.json') fs.rmSync(path.join(dir, f));
  }
}

const TYPED = {float32: Float32Array, int32: Int32Array, uint8: Uint8Array};

// Lines that mean the model could not be prepared or run. LiteRT.js still
// returns (stale) output buffers then, so the log decides.
const FAILURE_RE = /failed to prepare|Failed to allocate tensors|Failed to invoke|Invoke failed|unresolved custom op|Aborted\(|RuntimeError/i;

async function runJob(job, ctx, common) {
  const log = [];
  const addLog = (phase, lines) => {
    for (const l of lines) {
      log.push({phase, line: l.line});
      if (verbose) process.stderr.write(`[webgpu ${phase}] ${l.line}\n`);
    }
  };
  const meta = {
    ok: false,
    model: path.resolve(job.model),
    runtime: common.runtime,
    accelerator: job.accelerator,
    precision: job.precision,
    browser: common.browserVersion,
    adapter: common.adapter,
    seed: job.seed,
  };
  const finish = () => {
    meta.residency = parseResidency(log.filter((l) => l.phase !== 'init').map((l) => l.line));
    meta.log = log.map((l) => `[${l.phase}] ${l.line}`);
    return meta;
  };
  try {
    let modelBytes;
    try {
      modelBytes = fs.readFileSync(job.model);
    } catch (e) {
      throw new HarnessError(`${job.model}: cannot read model: ${e.code || e.message}`);
    }
    const id = `job${ctx.nextId++}`;
    ctx.blobs.set(`${id}/model`, modelBytes);
    const c = await ctx.page.evaluate(([j, u, p, a]) => window.gpucleanProbe.compile(j, u, p, a), [id, `/blob/${id}/model`, job.precision, job.accelerator]);
    ctx.blobs.delete(`${id}/model`);
    addLog('compile', c.log);
    if (!c.ok) {
      // LiteRT.js's exception only names source lines; the log says why.
      const logged = log.filter((l) => FAILURE_RE.test(l.line)).map((l) => l.line);
      throw new HarnessError(`${job.model}: ${c.error}${logged.length ? ' | ' + logged.join(' | ') : ''}`);
    }
    meta.compile_ms = c.compile_ms;
    meta.is_fully_accelerated = c.is_fully_accelerated;
    const compileFailures = log.filter((l) => FAILURE_RE.test(l.line));
    if (compileFailures.length) {
      throw new HarnessError(`${job.model}: compile reported errors: ${compileFailures.map((l) => l.line).join(' | ')}`);
    }
    meta.inputs = c.inputs.map((d) => ({...describeTensor(d), index: d.index}));
    meta.outputs = c.outputs.map((d, i) => ({...describeTensor(d), index: d.index, file: `out${i}.npy`}));
    if (job.describe_residency) {
      addLog('release', await ctx.page.evaluate((j) => window.gpucleanProbe.release(j), id));
      meta.ok = true;
      return finish();
    }

    const {feeds, inputMeta} = prepareFeeds(c.inputs, job.inputs, job.seed);
    meta.inputs = inputMeta;
    const feedSpecs = feeds.map((f, i) => {
      const bytes = Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength);
      ctx.blobs.set(`${id}/in${i}`, bytes);
      return {url: `/blob/${id}/in${i}`, dtype: c.inputs[i].dtype, shape: f.shape};
    });
    const r = await ctx.page.evaluate(([j, s, n, u]) => window.gpucleanProbe.run(j, s, n, u),
        [id, feedSpecs, job.repeat, `/upload/${id}/out`]);
    for (let i = 0; i < feeds.length; i++) ctx.blobs.delete(`${id}/in${i}`);
    for (const l of r.log) addLog(l.run === undefined ? 'run' : `run${l.run}`, [l]);
    addLog('release', await ctx.page.evaluate((j) => window.gpucleanProbe.release(j), id));
    if (!r.ok) throw new HarnessError(`${job.model}: ${r.error}`);
    const runFailures = log.filter((l) => l.phase.startsWith('run') && FAILURE_RE.test(l.line));
    if (runFailures.length) {
      throw new HarnessError(`${job.model}: invoke failed: ${runFailures.map((l) => l.line).join(' | ')}`);
    }
    if (!r.identical) throw new HarnessError(`${job.model}: outputs differ between runs (non-deterministic)`);

    const outputs = r.outputs.map((o, i) => {
      const bytes = ctx.uploads.get(`${id}/out${i}`);
      ctx.uploads.delete(`${id}/out${i}`);
      const Ctor = TYPED[o.dtype];
      if (!bytes || !Ctor) throw new HarnessError(`${job.model}: output ${i} (${o.dtype}) did not come back`);
      const copy = new Uint8Array(bytes);  // aligned copy for the typed view
      return {data: new Ctor(copy.buffer, 0, copy.byteLength / Ctor.BYTES_PER_ELEMENT), shape: o.shape, dtype: o.dtype};
    });
    meta.outputs = meta.outputs.map((m, i) => ({...m, out_dtype: outputs[i].dtype, out_shape: outputs[i].shape}));
    const times = r.run_ms_all;
    meta.run_ms = median(times.length > 1 ? times.slice(1) : times);
    meta.run_ms_first = times[0];
    meta.run_ms_all = times;
    meta.repeat = job.repeat;
    meta.ok = true;
    finish();
    if (job.out) {
      for (let i = 0; i < outputs.length; i++) writeNpy(path.join(job.out, `out${i}.npy`), outputs[i].data, outputs[i].shape);
      for (let i = 0; i < feeds.length; i++) {
        if (inputMeta[i].file) writeNpy(path.join(job.out, inputMeta[i].file), feeds[i].data, feeds[i].shape);
      }
    }
    return meta;
  } catch (e) {
    meta.ok = false;
    meta.error = oneLine(e && e.message ? e.message : e);
    return finish();
  }
}

function writeMeta(job, meta) {
  if (job.out) fs.writeFileSync(path.join(job.out, 'meta.json'), JSON.stringify(meta, null, 2) + '\n');
  else process.stdout.write(JSON.stringify(meta) + '\n');
}

// Jobs from stdin, one JSON object per line, each answered on stdout when
// its meta.json is written; a job that cannot be parsed or run still gets
// its answer (ok:false) so the caller never waits forever.
async function serveJobs(ctx, common, browser, init) {
  const readline = await import('node:readline');
  const lines = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
  let n = 0;
  for await (const line of lines) {
    if (!line.trim()) continue;
    let job = null;
    let meta;
    try {
      job = parseJob(JSON.parse(line), `stdin job ${n}`);
      prepareOutDir(job.out);
      meta = await runJob(job, ctx, common);
    } catch (e) {
      meta = {ok: false, model: job ? path.resolve(job.model) : null, error: oneLine(e && e.message ? e.message : e)};
    }
    meta.browser_launch_ms = browser.launchMs;
    meta.init_ms = init.init_ms;
    meta.first_in_browser = n === 0;
    meta.served = n;
    if (job) writeMeta(job, meta);
    process.stdout.write(JSON.stringify({done: n, ok: meta.ok, ...(meta.ok ? {} : {error: meta.error})}) + '\n');
    n++;
  }
}

// ------------------------------------------------------------------ main ---

async function main() {
  let jobs;
  try {
    jobs = parseArgs(process.argv.slice(2));
    for (const job of jobs) {
      if (!job.out) continue;
      try {
        prepareOutDir(job.out);
      } catch (e) {
        throw new HarnessError(`cannot prepare output directory ${job.out}: ${e.message}`);
      }
    }
  } catch (e) {
    fail(e.message);
  }

  let browser = null;
  let srv = null;
  // Set instead of exiting at once, so that Chromium is always closed first.
  let failure = null;
  try {
    srv = await startServer();
    browser = await launchBrowser();
    const page = browser.context.pages()[0] || await browser.context.newPage();
    await page.goto(`${srv.origin}/`);
    await page.waitForFunction(() => window.gpucleanProbeReady === true, null, {timeout: 30000});
    const init = await page.evaluate(() => window.gpucleanProbe.init());
    for (const l of init.log) if (verbose) process.stderr.write(`[webgpu init] ${l.line}\n`);
    if (!init.ok) throw new HarnessError(init.error);
    const common = {
      runtime: `@litertjs/core ${JSON.parse(fs.readFileSync(path.join(NODE_MODULES, '@litertjs', 'core', 'package.json'), 'utf8')).version}`,
      browserVersion: `chromium ${browser.context.browser()?.version() ?? 'unknown'}`,
      adapter: init.adapter,
    };
    const ctx = {page, blobs: srv.blobs, uploads: srv.uploads, nextId: 0};
    if (serve) {
      await serveJobs(ctx, common, browser, init);
      return;
    }
    const failures = [];
    for (let n = 0; n < jobs.length; n++) {
      const meta = await runJob(jobs[n], ctx, common);
      meta.browser_launch_ms = browser.launchMs;
      meta.init_ms = init.init_ms;
      // The first job pays for WebGPU device creation inside its compile.
      meta.first_in_browser = n === 0;
      writeMeta(jobs[n], meta);
      if (!meta.ok) failures.push(meta.error);
    }
    if (failures.length) {
      failure = jobs.length === 1 ? failures[0] : `${failures.length} of ${jobs.length} jobs failed; first: ${failures[0]}`;
    }
  } catch (e) {
    failure = e && e.message ? e.message : String(e);
    // Every job gets a meta.json that says why it did not run.
    for (const job of jobs) {
      if (job.out) writeMeta(job, {ok: false, setup_failure: true, model: path.resolve(job.model), error: oneLine(failure)});
    }
  } finally {
    if (browser) {
      await browser.context.close().catch(() => {});
      fs.rmSync(browser.profile, {recursive: true, force: true});
    }
    if (srv) srv.server.close();
  }
  if (failure !== null) fail(failure);
}

main().then(
  () => process.exit(0),
  (e) => fail(`error: ${e && e.message ? e.message : e}`),
);
