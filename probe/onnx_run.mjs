#!/usr/bin/env node
// onnxruntime oracle: describe or run an .onnx model on onnxruntime-node (the
// CPU execution provider) under plain Node, with .npy inputs and outputs.
// Same conventions as litert_run.mjs; see probe/README.md.
// Exit codes: 0 ok, 2 any error (one line on stderr).

import fs from 'node:fs';
import path from 'node:path';
import {createRequire} from 'node:module';
import {fileURLToPath} from 'node:url';
import {writeNpy} from './npy.mjs';
import {HarnessError, median, prepareFeeds} from './inputs.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const ORT_DIR = path.join(ROOT, 'node_modules', 'onnxruntime-node');

const HELP = `usage: node probe/onnx_run.mjs MODEL.onnx [options]
       node probe/onnx_run.mjs --batch JOBS.json [--threads N] [--no-optimize] [--repeat N]

Runs MODEL on onnxruntime (onnxruntime-node, CPU execution provider) under
plain Node.

  --describe            print {"inputs":[...],"outputs":[...]} (name, dtype,
                        shape; a dynamic dimension is -1 and its symbol is in
                        dim_params) as JSON and exit
  --input KEY=FILE.npy  feed FILE to input KEY (input index or input name);
                        repeatable. .npy v1/v2/v3, little-endian, C order;
                        dtype must match, shape must match except where the
                        model's dimension is dynamic
  --dim NAME=SIZE       give the symbolic input dimension NAME (a dim_param
                        of --describe) this size; repeatable. Only needed for
                        generated inputs: given .npy files set their own sizes
  --outputs A,B,...     fetch only these outputs, by name, in this order
                        (default: every model output, in model order)
  --out DIR             write DIR/out0.npy, out1.npy, ... (the fetched
                        outputs in order), DIR/inN.npy for generated inputs,
                        and DIR/meta.json
  --seed N              seed for inputs that are not given (default 0)
  --repeat N            run N times (default 1); run_ms is the median of runs
                        2..N (the first one is warm-up), run_ms_first the
                        first; outputs of all runs must be bit-identical
  --threads N           intra-op threads (default 1); inter-op is always 1
  --no-optimize         graphOptimizationLevel 'disabled' (default 'all')
  --batch JOBS.json     run a JSON array of jobs in this one process:
                        {model, out, inputs?: {KEY: FILE} or [{key, file}],
                        seed?, repeat?, outputs?: [names], dims?: {NAME: SIZE}}. One session per
                        model file. Each job writes its own meta.json (ok
                        false and error when it failed); the others go on.
  --verbose             let onnxruntime log at INFO level to stderr
  --help                this text

Inputs not given are generated per input i from mulberry32 seeded with
(seed + i * 0x9E3779B9) mod 2^32, exactly as litert_run.mjs does: float32
gets (r >>> 8) / 2^24 in [0,1), uint8 gets r >>> 24, other integers 0, bool
false; float16 gets the float32 value rounded to nearest half, float64 the
float32 value.

Without --out (and without --describe) the meta JSON is printed to stdout.
On any failure (bad arguments, unreadable or invalid model, bad inputs, a
failed run) prints one line on stderr and exits 2; in batch mode, exits 2
when any job failed.`;

// ---------------------------------------------------------------- errors ---

function oneLine(s) {
  return String(s).replace(/\s+/g, ' ').trim().slice(0, 800);
}

function errText(e) {
  return e && e.message ? e.message : String(e);
}

// Set once --out is known (single-model mode); on failure a meta.json with
// ok:false is left there.
let outDir = null;
const logLines = [];

function writeFailureMeta(dir, line, extra = {}) {
  try {
    fs.writeFileSync(path.join(dir, 'meta.json'), JSON.stringify(
      {ok: false, runtime: 'onnxruntime', error: line, ...extra, log: logLines.map((l) => `[${l.phase}] ${l.line}`)},
      null, 2) + '\n');
  } catch {
    // best effort only
  }
}

function die(msg) {
  const line = oneLine(msg);
  if (outDir !== null) writeFailureMeta(outDir, line);
  process.stderr.write(`onnx_run: ${line}\n`);
  process.exit(2);
}

// Remove results of an earlier call so nothing old is mistaken for this run's
// output (also when this run fails).
function clearOutDir(dir) {
  fs.mkdirSync(dir, {recursive: true});
  for (const f of fs.readdirSync(dir)) {
    if (/^(out|in)\d+\.npy$/.test(f) || f === 'meta.json') fs.rmSync(path.join(dir, f));
  }
}

process.on('uncaughtException', (e) => die(`error: ${errText(e)}`));
process.on('unhandledRejection', (e) => die(`error: ${errText(e)}`));

// --------------------------------------------------------------- logging ---
// Anything printed through console.* (onnxruntime-common warnings) is kept
// for meta.json so that stdout stays clean for our JSON. onnxruntime's own
// C++ logger writes to stderr directly; it runs at ERROR level (INFO with
// --verbose), and errors also come back as exceptions.

let phase = 'load';
let verbose = false;
for (const k of ['log', 'info', 'warn', 'error', 'debug', 'trace']) {
  console[k] = (...args) => {
    for (const line of args.map((a) => (a instanceof Error ? a.message : String(a))).join(' ').split('\n')) {
      if (line.trim() === '') continue;
      logLines.push({phase, stream: k, line});
      if (verbose) process.stderr.write(`[ort ${phase}] ${line}\n`);
    }
  };
}

// ------------------------------------------------------------------ args ---

function parseCount(flag, s, min) {
  if (!/^\d+$/.test(s) || Number(s) < min) throw new HarnessError(`${flag} expects an integer >= ${min}, got '${s}'`);
  return Number(s);
}

function parseSeed(s, label = '--seed') {
  const str = String(s);
  if (!/^\d+$/.test(str) || Number(str) > 0xffffffff) throw new HarnessError(`${label} expects an integer in [0, 2^32), got '${str}'`);
  return Number(str);
}

function parseArgs(argv) {
  const opts = {model: null, inputs: [], out: null, describe: false, seed: 0, repeat: 1, threads: 1,
    optimize: true, outputs: null, batch: null, verbose: false, dims: {}};
  const need = (i, flag) => {
    if (i + 1 >= argv.length) throw new HarnessError(`${flag} needs a value`);
    return argv[i + 1];
  };
  const VALUED = ['--out', '--seed', '--repeat', '--threads', '--outputs', '--batch'];
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let inlineVal = null;
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    if (eq > 0 && VALUED.includes(a.slice(0, eq))) {
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
      case '--no-optimize': opts.optimize = false; break;
      case '--input': {
        const v = need(i++, '--input');
        const k = v.indexOf('=');
        if (k <= 0 || k === v.length - 1) throw new HarnessError(`--input expects KEY=FILE.npy, got '${v}'`);
        opts.inputs.push({key: v.slice(0, k), file: v.slice(k + 1)});
        break;
      }
      case '--dim': {
        const v = need(i++, '--dim');
        const k = v.indexOf('=');
        if (k <= 0) throw new HarnessError(`--dim expects NAME=SIZE, got '${v}'`);
        opts.dims[v.slice(0, k)] = parseCount('--dim', v.slice(k + 1), 0);
        break;
      }
      case '--out': opts.out = val('--out'); break;
      case '--batch': opts.batch = val('--batch'); break;
      case '--seed': opts.seed = parseSeed(val('--seed')); break;
      case '--repeat': opts.repeat = parseCount('--repeat', val('--repeat'), 1); break;
      case '--threads': opts.threads = parseCount('--threads', val('--threads'), 1); break;
      case '--outputs': {
        const names = val('--outputs').split(',').map((s) => s.trim());
        if (names.length === 0 || names.some((n) => n === '')) throw new HarnessError('--outputs expects NAME[,NAME...]');
        opts.outputs = names;
        break;
      }
      default:
        if (a.startsWith('-')) throw new HarnessError(`unknown option '${a}' (see --help)`);
        if (opts.model !== null) throw new HarnessError(`more than one model given ('${opts.model}', '${a}')`);
        opts.model = a;
    }
  }
  if (opts.batch !== null) {
    if (opts.model !== null || opts.inputs.length || opts.out !== null || opts.describe || opts.outputs !== null ||
        Object.keys(opts.dims).length) {
      throw new HarnessError('--batch takes the models, inputs, outputs, dims and folders from JOBS.json; give no MODEL, --input, --outputs, --dim, --out or --describe');
    }
  } else if (opts.model === null) {
    throw new HarnessError('no model given (see --help)');
  }
  return opts;
}

// Jobs file -> [{model, out, inputs: [{key, file}], seed, repeat, outputs}].
function parseJobs(file, defaults) {
  let jobs;
  try {
    jobs = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new HarnessError(`--batch ${file}: ${e.code || e.message}`);
  }
  if (!Array.isArray(jobs)) throw new HarnessError(`--batch ${file}: expected a JSON array of jobs`);
  const outs = new Set();
  return jobs.map((j, n) => {
    const where = `--batch ${file}: job ${n}`;
    if (j === null || typeof j !== 'object') throw new HarnessError(`${where}: not an object`);
    if (typeof j.model !== 'string' || !j.model) throw new HarnessError(`${where}: needs "model"`);
    if (typeof j.out !== 'string' || !j.out) throw new HarnessError(`${where}: needs "out"`);
    const out = path.resolve(j.out);
    if (outs.has(out)) throw new HarnessError(`${where}: output folder ${j.out} is used by another job`);
    outs.add(out);
    let inputs = [];
    if (Array.isArray(j.inputs)) {
      inputs = j.inputs.map((x) => ({key: String(x.key), file: String(x.file)}));
    } else if (j.inputs && typeof j.inputs === 'object') {
      inputs = Object.entries(j.inputs).map(([key, f]) => ({key, file: String(f)}));
    } else if (j.inputs !== undefined && j.inputs !== null) {
      throw new HarnessError(`${where}: "inputs" must be an object {KEY: FILE} or an array of {key, file}`);
    }
    let outputs = null;
    if (j.outputs !== undefined && j.outputs !== null) {
      if (!Array.isArray(j.outputs) || j.outputs.length === 0 || j.outputs.some((s) => typeof s !== 'string' || !s)) {
        throw new HarnessError(`${where}: "outputs" must be a non-empty array of output names`);
      }
      outputs = j.outputs;
    }
    const dims = {};
    if (j.dims !== undefined && j.dims !== null) {
      if (typeof j.dims !== 'object' || Array.isArray(j.dims)) throw new HarnessError(`${where}: "dims" must be an object {NAME: SIZE}`);
      for (const [name, size] of Object.entries(j.dims)) dims[name] = parseCount(`${where}: dims.${name}`, String(size), 0);
    }
    return {
      model: j.model,
      out,
      inputs,
      seed: j.seed === undefined ? defaults.seed : parseSeed(j.seed, `${where}: seed`),
      repeat: j.repeat === undefined ? defaults.repeat : parseCount(`${where}: repeat`, String(j.repeat), 1),
      outputs,
      dims,
    };
  });
}

// ----------------------------------------------------------- load runtime ---

function loadRuntime() {
  if (!fs.existsSync(path.join(ORT_DIR, 'package.json'))) {
    throw new HarnessError(`onnxruntime-node not installed (${path.relative(process.cwd(), ORT_DIR) || ORT_DIR} missing); run tools/fetch_models.sh in ${ROOT}`);
  }
  const require = createRequire(path.join(ROOT, 'package.json'));
  let ort;
  try {
    ort = require(ORT_DIR);
  } catch (e) {
    throw new HarnessError(`onnxruntime-node not installed correctly (cannot load it: ${errText(e)}); run tools/fetch_models.sh in ${ROOT}`);
  }
  // The process-wide logger (session creation, graph optimisers): as quiet
  // as the session loggers, see sessionOptions().
  ort.env.logLevel = verbose ? 'info' : 'fatal';
  const version = JSON.parse(fs.readFileSync(path.join(ORT_DIR, 'package.json'), 'utf8')).version;
  return {ort, version};
}

function sessionOptions(opts) {
  return {
    executionProviders: ['cpu'],
    intraOpNumThreads: opts.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: opts.optimize ? 'all' : 'disabled',
    // 0 verbose, 1 info, 2 warning, 3 error, 4 fatal. Errors come back as
    // exceptions too, so keep the logger quiet enough for one-line stderr.
    logSeverityLevel: opts.verbose ? 1 : 4,
  };
}

// Session metadata -> the {index, name, dtype, shape} details inputs.mjs takes.
function details(metadata) {
  return metadata.map((m, index) => {
    if (!m.isTensor) return {index, name: m.name, dtype: null, shape: [], nonTensor: true};
    const shape = m.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : -1));
    const d = {index, name: m.name, dtype: m.type, shape};
    if (m.shape.some((x) => typeof x !== 'number')) d.dim_params = m.shape.map((x) => (typeof x === 'number' ? null : String(x)));
    return d;
  });
}

function describe(d) {
  const r = {name: d.name, dtype: d.nonTensor ? 'non-tensor' : d.dtype, shape: Array.from(d.shape)};
  if (d.dim_params) r.dim_params = d.dim_params;
  return r;
}

async function createSession(rt, model, opts) {
  let st;
  try {
    st = fs.statSync(model);
  } catch (e) {
    throw new HarnessError(`${model}: cannot read model: ${e.code || e.message}`);
  }
  if (!st.isFile()) throw new HarnessError(`${model}: cannot read model: not a file`);
  const t0 = performance.now();
  let session;
  try {
    // A path, not bytes: onnxruntime then finds external data files beside it.
    session = await rt.ort.InferenceSession.create(path.resolve(model), sessionOptions(opts));
  } catch (e) {
    throw new HarnessError(`${model}: load failed: ${errText(e)}`);
  }
  const compileMs = performance.now() - t0;
  return {session, compileMs, inDetails: details(session.inputMetadata), outDetails: details(session.outputMetadata)};
}

// ------------------------------------------------------------------- run ---

function sameBits(a, b) {
  if (a.length !== b.length) return false;
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  return Buffer.compare(x, y) === 0;
}

// onnxruntime tensor data -> what writeNpy takes for that dtype.
function npyData(t, name) {
  const d = t.data;
  switch (t.type) {
    case 'float16':
      // Uint16Array on Node 20; a Float16Array where the runtime has one.
      return d instanceof Uint16Array ? d : new Uint16Array(d.buffer, d.byteOffset, d.length);
    case 'bool':
      return d instanceof Uint8Array ? d : Uint8Array.from(d, (v) => (v ? 1 : 0));
    case 'float32': case 'float64': case 'int8': case 'int16': case 'int32': case 'int64':
    case 'uint8': case 'uint16': case 'uint32': case 'uint64':
      return d;
    default:
      throw new HarnessError(`output '${name}' has type ${t.type}, which .npy output does not support`);
  }
}

// onnxruntime-node 1.22.0 (microsoft/onnxruntime#26865, fixed later by
// #26939) keys the results of a run with fetches by position: the i-th
// fetched output, counted in model output order, comes back under the name
// of the model's i-th output. `fetched` is in model output order, so the
// buggy keys are exactly the first fetched.length output names, and the
// correct keys are `fetched` itself; the two sets are the same only when
// `fetched` is that prefix, where both mappings agree.
function fetchedOutputs(results, fetched, allNames) {
  const keys = Object.keys(results);
  const has = (names) => names.length === keys.length && names.every((n) => n in results);
  if (has(fetched)) return results;
  const prefix = allNames.slice(0, fetched.length);
  if (has(prefix)) return Object.fromEntries(fetched.map((name, i) => [name, results[prefix[i]]]));
  throw new Error(`outputs [${keys.join(', ')}] came back for fetches [${fetched.join(', ')}]`);
}

// Runs one job on a session; returns {meta, outputs, feeds, inputMeta}.
// Throws HarnessError with a one-line reason.
async function runJob(rt, s, job, opts) {
  for (const d of s.inDetails) {
    if (d.nonTensor) throw new HarnessError(`input ${d.index} '${d.name}' is not a tensor (sequences and maps are not supported)`);
  }
  let fetchDetails = s.outDetails;
  if (job.outputs) {
    fetchDetails = job.outputs.map((name) => {
      const hit = s.outDetails.find((d) => d.name === name);
      if (!hit) throw new HarnessError(`--outputs ${name}: not an output of the model (outputs: ${s.outDetails.map((d) => d.name).join(', ')})`);
      return hit;
    });
    if (new Set(job.outputs).size !== job.outputs.length) throw new HarnessError(`--outputs names an output twice (${job.outputs.join(',')})`);
  }
  for (const d of fetchDetails) {
    if (d.nonTensor) throw new HarnessError(`output ${d.index} '${d.name}' is not a tensor (sequences and maps are not supported)`);
  }

  // Symbolic dimensions the caller sized (--dim) become static for the
  // generator and the .npy shape check.
  const inDetails = s.inDetails.map((d) => (d.dim_params
    ? {...d, shape: d.shape.map((x, k) => (x < 0 && d.dim_params[k] !== null && d.dim_params[k] in job.dims ? job.dims[d.dim_params[k]] : x))}
    : d));
  for (const name of Object.keys(job.dims)) {
    if (!s.inDetails.some((d) => d.dim_params && d.dim_params.includes(name))) {
      throw new HarnessError(`--dim ${name}: no input has a dimension named '${name}'`);
    }
  }

  phase = 'inputs';
  const {feeds, inputMeta} = prepareFeeds(inDetails, job.inputs, job.seed);
  const feedMap = {};
  for (let i = 0; i < feeds.length; i++) {
    const d = inDetails[i];
    try {
      feedMap[d.name] = new rt.ort.Tensor(d.dtype, feeds[i].data, feeds[i].shape);
    } catch (e) {
      throw new HarnessError(`input ${i} '${d.name}': ${errText(e)}`);
    }
  }
  const fetchNames = fetchDetails.map((d) => d.name);
  // Fetched in model output order: see fetchedOutputs().
  const modelOrder = [...fetchDetails].sort((a, b) => a.index - b.index).map((d) => d.name);
  const allNames = s.outDetails.map((d) => d.name);

  const times = [];
  let outputs = null;
  for (let r = 0; r < job.repeat; r++) {
    phase = `run${r}`;
    let results;
    const t0 = performance.now();
    try {
      results = fetchedOutputs(await s.session.run(feedMap, modelOrder), modelOrder, allNames);
    } catch (e) {
      throw new HarnessError(`${job.model}: run failed: ${errText(e)}`);
    }
    const got = fetchNames.map((name, i) => {
      const t = results[name];
      if (!t) throw new HarnessError(`${job.model}: run returned no output '${name}'`);
      if (t.type !== fetchDetails[i].dtype) {
        throw new HarnessError(`${job.model}: output '${name}' came back as ${t.type}, the model declares ${fetchDetails[i].dtype}`);
      }
      return {data: npyData(t, name), dtype: t.type, shape: Array.from(t.dims, Number)};
    });
    times.push(performance.now() - t0);
    if (outputs === null) {
      outputs = got;
    } else {
      for (let i = 0; i < got.length; i++) {
        if (!sameBits(got[i].data, outputs[i].data)) {
          throw new HarnessError(`${job.model}: output '${fetchNames[i]}' differs between run 0 and run ${r} (non-deterministic)`);
        }
      }
    }
  }

  const meta = {
    ok: true,
    model: path.resolve(job.model),
    runtime: 'onnxruntime',
    version: rt.version,
    package: `onnxruntime-node ${rt.version}`,
    execution_provider: 'cpu',
    threads: opts.threads,
    inter_op_threads: 1,
    graph_optimization: opts.optimize ? 'all' : 'disabled',
    seed: job.seed,
    inputs: inputMeta,
    outputs: fetchDetails.map((d, i) => ({
      name: d.name,
      dtype: outputs[i].dtype,
      shape: outputs[i].shape,
      model_shape: Array.from(d.shape),
      index: d.index,
      file: `out${i}.npy`,
    })),
    compile_ms: s.compileMs,
    session_reused: Boolean(s.reused),
    // Median over the warm runs (all but the first) when there are any.
    run_ms: median(times.length > 1 ? times.slice(1) : times),
    run_ms_first: times[0],
    run_ms_all: times,
    repeat: job.repeat,
    peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
    log: logLines.map((l) => `[${l.phase}] ${l.line}`),
  };
  return {meta, outputs, feeds, inputMeta, inDetails};
}

function writeResults(dir, res) {
  try {
    for (let i = 0; i < res.outputs.length; i++) {
      const o = res.outputs[i];
      writeNpy(path.join(dir, `out${i}.npy`), o.data, o.shape, o.dtype);
    }
    for (let i = 0; i < res.feeds.length; i++) {
      if (res.inputMeta[i].file) {
        writeNpy(path.join(dir, res.inputMeta[i].file), res.feeds[i].data, res.feeds[i].shape, res.inDetails[i].dtype);
      }
    }
    fs.writeFileSync(path.join(dir, 'meta.json'), JSON.stringify(res.meta, null, 2) + '\n');
  } catch (e) {
    throw new HarnessError(`cannot write results to ${dir}: ${errText(e)}`);
  }
}

// ------------------------------------------------------------------ main ---

async function single(opts) {
  if (opts.out && !opts.describe) {
    try {
      clearOutDir(opts.out);
    } catch (e) {
      die(`cannot prepare output directory ${opts.out}: ${errText(e)}`);
    }
    outDir = opts.out;
  }
  const rt = loadRuntime();
  phase = 'compile';
  const s = await createSession(rt, opts.model, opts);
  if (opts.describe) {
    process.stdout.write(JSON.stringify({inputs: s.inDetails.map(describe), outputs: s.outDetails.map(describe)}) + '\n');
    return 0;
  }
  const res = await runJob(rt, s, {model: opts.model, inputs: opts.inputs, seed: opts.seed, repeat: opts.repeat,
    outputs: opts.outputs, dims: opts.dims}, opts);
  if (opts.out) writeResults(opts.out, res);
  else process.stdout.write(JSON.stringify(res.meta) + '\n');
  return 0;
}

async function batch(opts) {
  const jobs = parseJobs(opts.batch, opts);
  for (const job of jobs) {
    try {
      clearOutDir(job.out);
    } catch (e) {
      throw new HarnessError(`cannot prepare output directory ${job.out}: ${errText(e)}`);
    }
  }
  let rt;
  try {
    rt = loadRuntime();
  } catch (e) {
    // Nothing can run: mark every job, so that a caller reading meta.json
    // files sees why.
    for (const job of jobs) writeFailureMeta(job.out, oneLine(errText(e)), {model: path.resolve(job.model), setup_failure: true});
    throw e;
  }
  const sessions = new Map();  // resolved model path -> Promise<session>
  const failures = [];
  for (const [n, job] of jobs.entries()) {
    const key = path.resolve(job.model);
    try {
      let created = false;
      if (!sessions.has(key)) {
        phase = 'compile';
        sessions.set(key, createSession(rt, job.model, opts));
        created = true;
      }
      const s = await sessions.get(key);
      const res = await runJob(rt, {...s, reused: !created}, job, opts);
      writeResults(job.out, res);
    } catch (e) {
      const line = oneLine(errText(e));
      failures.push(`job ${n}: ${line}`);
      writeFailureMeta(job.out, line, {model: key});
    }
    // Keep each job's log to itself.
    logLines.length = 0;
  }
  process.stdout.write(JSON.stringify({jobs: jobs.length, failed: failures.length}) + '\n');
  if (failures.length) {
    throw new HarnessError(`${failures.length} of ${jobs.length} job(s) failed; first: ${failures[0]}`);
  }
  return 0;
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    die(e.message);
  }
  verbose = opts.verbose;
  return opts.batch !== null ? batch(opts) : single(opts);
}

main().then(
  (code) => process.exit(code),
  (e) => die(e instanceof HarnessError ? e.message : `error: ${errText(e)}`),
);
