#!/usr/bin/env node
// LiteRT.js oracle: describe or run a .tflite model on the LiteRT.js `wasm`
// (XNNPACK) accelerator under plain Node, with .npy inputs and outputs.
// See probe/README.md. Exit codes: 0 ok, 2 any error (one line on stderr).

import fs from 'node:fs';
import path from 'node:path';
import {Module as CjsModule} from 'node:module';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {writeNpy} from './npy.mjs';
import {HarnessError, describeTensor, median, prepareFeeds} from './inputs.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const CORE_DIR = path.join(ROOT, 'node_modules', '@litertjs', 'core');
// Pinned on purpose: the compat (plain SIMD128) build runs without Node flags
// and is the same file whatever relaxed-SIMD support a future Node reports.
const GLUE = path.join(CORE_DIR, 'wasm', 'litert_wasm_compat_internal.js');
const VARIANT = 'litert_wasm_compat_internal';

const HELP = `usage: node probe/litert_run.mjs MODEL.tflite [options]

Runs MODEL on LiteRT.js (@litertjs/core, wasm accelerator = XNNPACK, compat
SIMD128 build, one thread) under plain Node.

  --describe            print {"inputs":[...],"outputs":[...]} (name, dtype,
                        shape as LiteRT.js reports them) as JSON and exit
  --input KEY=FILE.npy  feed FILE to input KEY (input index or input name);
                        repeatable. .npy v1/v2/v3, little-endian, C order;
                        dtype and shape must match the model input exactly
                        (LiteRT.js reports the static shape, so a model with a
                        dynamic dimension still only takes its static size)
  --out DIR             write DIR/out0.npy, out1.npy, ... (model output order),
                        DIR/inN.npy for generated inputs, and DIR/meta.json
  --seed N              seed for inputs that are not given (default 0)
  --repeat N            run N times (default 1); run_ms is the median of runs
                        2..N (the first one is warm-up), run_ms_first the
                        first; outputs of all runs must be bit-identical
  --signature KEY       run this signature instead of the first one
  --verbose             echo the runtime's log lines to stderr
  --help                this text

Inputs not given are generated per input i from mulberry32 seeded with
(seed + i * 0x9E3779B9) mod 2^32: float32 gets (r >>> 8) / 2^24 in [0,1),
uint8 gets r >>> 24, int32 gets 0.

Without --out (and without --describe) the meta JSON is printed to stdout.
On any failure (bad arguments, unreadable model, failed prepare/invoke as
reported in the runtime log, bad inputs) prints one line on stderr and exits 2.`;

// ---------------------------------------------------------------- errors ---

function oneLine(s) {
  return String(s).replace(/\s+/g, ' ').trim().slice(0, 800);
}

// Set once --out is known; on failure a meta.json with ok:false is left there.
let outDir = null;
const logLines = [];

function die(msg) {
  const line = oneLine(msg);
  if (outDir !== null) {
    try {
      fs.writeFileSync(path.join(outDir, 'meta.json'), JSON.stringify(
        {ok: false, error: line, log: logLines.map((l) => `[${l.phase}] ${l.line}`)}, null, 2) + '\n');
    } catch {
      // best effort only
    }
  }
  process.stderr.write(`litert_run: ${line}\n`);
  process.exit(2);
}

// Remove results of an earlier call so nothing old is mistaken for this run's
// output (also when this run fails).
function prepareOutDir(dir) {
  try {
    fs.mkdirSync(dir, {recursive: true});
    for (const f of fs.readdirSync(dir)) {
      if (/^(out|in)\d+\.npy$/.test(f) || f === 'meta.json') fs.rmSync(path.join(dir, f));
    }
  } catch (e) {
    die(`cannot prepare output directory ${dir}: ${e.message}`);
  }
  outDir = dir;
}

process.on('uncaughtException', (e) => die(`error: ${e && e.message ? e.message : e}`));
process.on('unhandledRejection', (e) => die(`error: ${e && e.message ? e.message : e}`));

// ------------------------------------------------------------------ args ---

function parseArgs(argv) {
  const opts = {model: null, inputs: [], out: null, describe: false, seed: 0,
    repeat: 1, signature: null, verbose: false};
  const need = (i, flag) => {
    if (i + 1 >= argv.length) throw new HarnessError(`${flag} needs a value`);
    return argv[i + 1];
  };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let inlineVal = null;
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    if (eq > 0 && ['--out', '--seed', '--repeat', '--signature'].includes(a.slice(0, eq))) {
      inlineVal = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    const val = (flag) => (inlineVal !== null ? inlineVal : need(i++, flag));
    switch (a) {
      case '--help': case '-h':
        process.stdout.write(HELP + '\n');
        process.exit(0);
        break;
      case '--describe': opts.describe = true; break;
      case '--verbose': opts.verbose = true; break;
      case '--input': {
        const v = need(i++, '--input');
        const k = v.indexOf('=');
        if (k <= 0 || k === v.length - 1) throw new HarnessError(`--input expects KEY=FILE.npy, got '${v}'`);
        opts.inputs.push({key: v.slice(0, k), file: v.slice(k + 1)});
        break;
      }
      case '--out': opts.out = val('--out'); break;
      case '--signature': opts.signature = val('--signature'); break;
      case '--seed': {
        const s = val('--seed');
        if (!/^\d+$/.test(s) || Number(s) > 0xffffffff) throw new HarnessError(`--seed expects an integer in [0, 2^32), got '${s}'`);
        opts.seed = Number(s);
        break;
      }
      case '--repeat': {
        const s = val('--repeat');
        if (!/^\d+$/.test(s) || Number(s) < 1) throw new HarnessError(`--repeat expects a positive integer, got '${s}'`);
        opts.repeat = Number(s);
        break;
      }
      default:
        if (a.startsWith('-')) throw new HarnessError(`unknown option '${a}' (see --help)`);
        if (opts.model !== null) throw new HarnessError(`more than one model given ('${opts.model}', '${a}')`);
        opts.model = a;
    }
  }
  if (opts.model === null) throw new HarnessError('no model given (see --help)');
  return opts;
}

// --------------------------------------------------------------- logging ---
// Everything the runtime prints (Emscripten stdout/stderr, console.*) is
// captured here so that stdout stays clean for our JSON, and so that failures
// that LiteRT only reports in its log can be detected.

let phase = 'load';
let verbose = false;

function capture(stream, args) {
  const text = args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : String(a))).join(' ');
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    // Drop the CSS colouring placeholders the browser-oriented code uses.
    const clean = line.replace(/%c/g, '');
    logLines.push({phase, stream, line: clean});
    if (verbose) process.stderr.write(`[litert ${phase}] ${clean}\n`);
  }
}

for (const k of ['log', 'info', 'warn', 'error', 'debug', 'trace']) {
  console[k] = (...args) => capture(k, k === 'log' || k === 'info' ? args : args.filter((a) => !/^(background|color|font-weight):/.test(String(a))));
}

// Lines that mean the interpreter could not prepare or invoke the graph. The
// runtime still returns (stale) output buffers in that case.
const FAILURE_RE = /^\s*ERROR\b|failed to prepare|Failed to allocate tensors|Failed to invoke|Invoke failed|Aborted\(|RuntimeError/i;

function failuresIn(ph) {
  return logLines.filter((l) => (ph === undefined || l.phase === ph) && FAILURE_RE.test(l.line));
}

// ----------------------------------------------------------- load runtime ---

async function loadRuntime() {
  if (!fs.existsSync(GLUE)) {
    throw new HarnessError(`LiteRT.js not installed (${path.relative(process.cwd(), GLUE)} missing); run tools/fetch_models.sh or npm ci in ${ROOT}`);
  }
  // @litertjs/wasm-utils loads the Emscripten glue with importScripts() (worker)
  // or a <script> tag, then reads self.ModuleFactory. Provide both names.
  globalThis.self = globalThis;
  globalThis.importScripts = (url) => {
    const file = url.startsWith('file:') ? fileURLToPath(url) : url;
    // The package is "type":"module", so require() would evaluate this UMD
    // file as ESM and the factory would never be exported. Compile it as CJS.
    const m = new CjsModule(file, null);
    m.filename = file;
    m.paths = CjsModule._nodeModulePaths(path.dirname(file));
    m._compile(fs.readFileSync(file, 'utf8'), file);
    globalThis.ModuleFactory = m.exports;
  };
  // The loader passes self.Module to the factory: route Emscripten's stdout
  // and stderr into our log.
  globalThis.Module = {
    print: (s) => capture('stdout', [s]),
    printErr: (s) => capture('stderr', [s]),
  };
  const core = await import(pathToFileURL(path.join(CORE_DIR, 'dist', 'index.js')).href);
  await core.loadLiteRt(GLUE);
  return core;
}

// ------------------------------------------------------------------ main ---

function sameBits(a, b) {
  if (a.length !== b.length) return false;
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  return Buffer.compare(x, y) === 0;
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    die(e.message);
  }
  verbose = opts.verbose;
  if (opts.out && !opts.describe) prepareOutDir(opts.out);

  let modelBytes;
  try {
    modelBytes = new Uint8Array(fs.readFileSync(opts.model));
  } catch (e) {
    die(`${opts.model}: cannot read model: ${e.code || e.message}`);
  }

  const core = await loadRuntime();

  phase = 'compile';
  const tc0 = performance.now();
  let compiled;
  try {
    // fetch() cannot read file:// in Node: hand the bytes over directly.
    compiled = await core.loadAndCompile(modelBytes, {accelerator: 'wasm', cpuOptions: {numThreads: 1}});
  } catch (e) {
    const logged = failuresIn('compile').map((l) => l.line);
    die(`${opts.model}: load/compile failed: ${e && e.message ? e.message : e}${logged.length ? ' | ' + logged.join(' | ') : ''}`);
  }
  const compileMs = performance.now() - tc0;

  let runner = compiled;
  if (opts.signature !== null) {
    const sigs = compiled.signatures;
    if (!(opts.signature in sigs)) {
      die(`--signature ${opts.signature}: not in model (signatures: ${Object.keys(sigs).join(', ')})`);
    }
    runner = sigs[opts.signature];
  }
  const inDetails = runner.getInputDetails();
  const outDetails = runner.getOutputDetails();

  const compileFailures = failuresIn('compile');
  if (compileFailures.length) {
    die(`${opts.model}: compile reported errors: ${compileFailures.map((l) => l.line).join(' | ')}`);
  }

  if (opts.describe) {
    process.stdout.write(JSON.stringify({inputs: inDetails.map(describeTensor), outputs: outDetails.map(describeTensor)}) + '\n');
    return;
  }

  // Inputs: the same generator and checks as the WebGPU harness (inputs.mjs).
  phase = 'inputs';
  let feeds;
  let inputMeta;
  try {
    ({feeds, inputMeta} = prepareFeeds(inDetails, opts.inputs, opts.seed));
  } catch (e) {
    die(e.message);
  }

  // Run.
  const times = [];
  let outputs = null;
  for (let r = 0; r < opts.repeat; r++) {
    phase = `run${r}`;
    const tensors = feeds.map((f) => new core.Tensor(f.data, f.shape));
    let results;
    let got;
    const t0 = performance.now();
    try {
      results = await runner.run(tensors);
      // Tensors live on the wasm heap: copy out before deleting.
      got = results.map((t) => ({
        data: t.toTypedArray().slice(),
        dtype: t.type.dtype,
        shape: Array.from(t.type.layout.dimensions),
      }));
    } catch (e) {
      const logged = failuresIn(phase).map((l) => l.line);
      die(`${opts.model}: run failed: ${e && e.message ? e.message : e}${logged.length ? ' | ' + logged.join(' | ') : ''}`);
    }
    times.push(performance.now() - t0);
    for (const t of tensors) t.delete();
    for (const t of results) t.delete();

    const runFailures = failuresIn(phase);
    if (runFailures.length) {
      die(`${opts.model}: invoke failed: ${runFailures.map((l) => l.line).join(' | ')}`);
    }
    if (outputs === null) {
      outputs = got;
    } else {
      for (let i = 0; i < got.length; i++) {
        if (!sameBits(got[i].data, outputs[i].data)) {
          die(`${opts.model}: output ${i} differs between run 0 and run ${r} (non-deterministic)`);
        }
      }
    }
  }

  const meta = {
    ok: true,
    model: path.resolve(opts.model),
    runtime: `@litertjs/core ${JSON.parse(fs.readFileSync(path.join(CORE_DIR, 'package.json'), 'utf8')).version}`,
    variant: VARIANT,
    accelerator: 'wasm',
    threads: 1,
    signature: runner.key,
    seed: opts.seed,
    inputs: inputMeta,
    outputs: outDetails.map((d, i) => ({
      ...describeTensor(d),
      index: d.index,
      file: `out${i}.npy`,
      out_dtype: outputs[i].dtype,
      out_shape: outputs[i].shape,
    })),
    compile_ms: compileMs,
    // Median over the warm runs (all but the first) when there are any.
    run_ms: median(times.length > 1 ? times.slice(1) : times),
    run_ms_first: times[0],
    run_ms_all: times,
    repeat: opts.repeat,
    // Whole-process peak resident set (Node + wasm heap), for benchmarks.
    peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
    log: logLines.map((l) => `[${l.phase}] ${l.line}`),
  };

  if (opts.out) {
    try {
      for (let i = 0; i < outputs.length; i++) {
        writeNpy(path.join(opts.out, `out${i}.npy`), outputs[i].data, outputs[i].shape);
      }
      for (let i = 0; i < feeds.length; i++) {
        if (inputMeta[i].file) writeNpy(path.join(opts.out, inputMeta[i].file), feeds[i].data, feeds[i].shape);
      }
      fs.writeFileSync(path.join(opts.out, 'meta.json'), JSON.stringify(meta, null, 2) + '\n');
    } catch (e) {
      die(`cannot write results to ${opts.out}: ${e.message}`);
    }
  } else {
    process.stdout.write(JSON.stringify(meta) + '\n');
  }
}

main().then(
  () => process.exit(0),
  (e) => die(`error: ${e && e.message ? e.message : e}`),
);
