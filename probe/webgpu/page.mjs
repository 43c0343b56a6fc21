// Runs inside headless Chromium. litert_webgpu.mjs (Node) calls the functions
// on window.gpucleanProbe through page.evaluate(); bytes travel over the
// harness's local HTTP server (GET /blob/..., POST /upload/...), not through
// evaluate(), whose JSON serialisation would be slow for image-sized tensors.

// Capture every console line ourselves (before LiteRT loads, so Emscripten's
// print/printErr bind to these wrappers). Each call returns the lines logged
// since the previous call, so the Node side can tell which job logged what.
const pending = [];
const STYLE_ARG = /^(background|color|font-weight|padding|border-radius):/;
for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    const text = args
        .filter((a) => !(typeof a === 'string' && STYLE_ARG.test(a)))
        .map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : String(a)))
        .join(' ');
    for (const line of text.split('\n')) {
      // %c is a CSS placeholder in LiteRT's own warnings.
      if (line.trim() !== '') pending.push({stream: level, line: line.replace(/%c/g, '')});
    }
    original(...args);
  };
}
self.Module = {
  print: (s) => console.log(s),
  printErr: (s) => console.warn(s),
};

function takeLog() {
  return pending.splice(0, pending.length);
}

function errorText(e) {
  return e && e.message ? e.message : String(e);
}

let litert = null;
const compiled = new Map();  // job id -> CompiledModel

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

const TYPED = {float32: Float32Array, int32: Int32Array, uint8: Uint8Array};

function details(list) {
  return list.map((d) => ({index: d.index, name: d.name, dtype: d.dtype, shape: Array.from(d.shape)}));
}

async function init() {
  const t0 = performance.now();
  try {
    const adapter = navigator.gpu ? await navigator.gpu.requestAdapter() : null;
    if (!adapter) return {ok: false, error: 'no WebGPU adapter (navigator.gpu.requestAdapter() returned null)', log: takeLog()};
    const info = adapter.info || {};
    litert = await import('/node_modules/@litertjs/core/dist/index.js');
    // jspi: the only wasm build that can run a partially delegated graph
    // (GPU and CPU parts) instead of falling back to CPU entirely.
    await litert.loadLiteRt('/node_modules/@litertjs/core/wasm/', {jspi: true});
    const environment = litert.getDefaultEnvironment ? litert.getDefaultEnvironment() : null;
    if (environment && !environment.webGpuDevice) {
      return {ok: false, error: 'LiteRT.js created no WebGPU device', log: takeLog()};
    }
    return {
      ok: true,
      adapter: {vendor: info.vendor || '', architecture: info.architecture || '', device: info.device || '',
        description: info.description || '', is_fallback_adapter: Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter),
        features: Array.from(adapter.features || []).sort()},
      init_ms: performance.now() - t0,
      log: takeLog(),
    };
  } catch (e) {
    return {ok: false, error: `LiteRT.js WebGPU init failed: ${errorText(e)}`, log: takeLog()};
  }
}

async function compile(job, modelUrl, precision, accelerator = 'webgpu') {
  takeLog();
  try {
    const bytes = await fetchBytes(modelUrl);
    const t0 = performance.now();
    const options = accelerator === 'wasm' ? {accelerator: 'wasm'} : {accelerator: 'webgpu', gpuOptions: {precision}};
    const model = await litert.loadAndCompile(bytes, options);
    const compileMs = performance.now() - t0;
    compiled.set(job, model);
    return {
      ok: true,
      compile_ms: compileMs,
      is_fully_accelerated: model.isFullyAccelerated,
      inputs: details(model.getInputDetails()),
      outputs: details(model.getOutputDetails()),
      log: takeLog(),
    };
  } catch (e) {
    return {ok: false, error: `load/compile failed: ${errorText(e)}`, log: takeLog()};
  }
}

// inputs: [{url, dtype, shape}]; outputs are POSTed to `${uploadPrefix}${i}`.
async function run(job, inputs, repeat, uploadPrefix) {
  const model = compiled.get(job);
  const log = [];
  try {
    const feeds = [];
    for (const f of inputs) {
      const bytes = await fetchBytes(f.url);
      feeds.push({data: new TYPED[f.dtype](bytes.buffer, bytes.byteOffset, bytes.byteLength / TYPED[f.dtype].BYTES_PER_ELEMENT), shape: f.shape});
    }
    const times = [];
    let first = null;
    let identical = true;
    for (let r = 0; r < repeat; r++) {
      const tensors = feeds.map((f) => new litert.Tensor(f.data, f.shape));
      const t0 = performance.now();
      const results = await model.run(tensors);
      // run() only enqueues GPU work: time it together with the readback.
      const got = [];
      for (const t of results) {
        got.push({data: await t.data(), dtype: t.type.dtype, shape: Array.from(t.type.layout.dimensions)});
      }
      times.push(performance.now() - t0);
      for (const t of tensors) t.delete();
      for (const t of results) t.delete();
      log.push(...takeLog().map((l) => ({...l, run: r})));
      if (first === null) {
        first = got;
      } else {
        for (let i = 0; i < got.length; i++) {
          const a = new Uint8Array(first[i].data.buffer, first[i].data.byteOffset, first[i].data.byteLength);
          const b = new Uint8Array(got[i].data.buffer, got[i].data.byteOffset, got[i].data.byteLength);
          if (a.length !== b.length || a.some((x, k) => x !== b[k])) identical = false;
        }
      }
    }
    for (let i = 0; i < first.length; i++) {
      const d = first[i].data;
      const response = await fetch(`${uploadPrefix}${i}`, {method: 'POST', body: new Uint8Array(d.buffer, d.byteOffset, d.byteLength)});
      if (!response.ok) throw new Error(`POST output ${i}: HTTP ${response.status}`);
    }
    return {ok: true, run_ms_all: times, outputs: first.map((o) => ({dtype: o.dtype, shape: o.shape})), identical, log};
  } catch (e) {
    log.push(...takeLog());
    return {ok: false, error: `run failed: ${errorText(e)}`, log};
  }
}

function release(job) {
  const model = compiled.get(job);
  if (model) model.delete();
  compiled.delete(job);
  return takeLog();
}

window.gpucleanProbe = {init, compile, run, release};
window.gpucleanProbeReady = true;
