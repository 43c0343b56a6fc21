// Parses GPU-delegate residency out of runtime log text. Mirrors the C++
// parser (src/probe/delegate_log.cc, gpuclean::probe::ParseDelegateLog); the
// C++ tests check that both agree on every harness log they see.
//
// The log, not LiteRT.js's isFullyAccelerated flag, is the residency truth:
// the flag can read true while the log says no operation runs on the GPU.

// Prefixes a log line can carry before the message: logcat (threadtime,
// brief, tag-only), glog (ML Drift's own lines), our harness's [phase] tags,
// LiteRT.js's [LiteRT] badge, and TFLite's severity with an optional
// [file.cc:line].
const PREFIXES = [
  /^[IWEF]\d{4}\s+\d\d:\d\d:\d\d\.\d+\s+\d+\s+[^\]\s]+:\d+\]\s*/,
  /^\d\d-\d\d\s+\d\d:\d\d:\d\d\.\d+\s+\d+\s+\d+\s+[VDIWEF]\s+[^:]*?\s*:\s?/,
  /^[VDIWEF]\/[^(:]*(?:\(\s*\d+\))?\s*:\s?/,
  /^[VDIWEF]\s+[\w.$-]+\s*:\s?/,
  /^\[[\w .-]*\]\s*/,
  /^(?:INFO|WARNING|ERROR|VERBOSE|DEBUG|FATAL)\s*:\s*(?:\[[^\]]*\]\s*)?/,
];

export function stripLogPrefixes(line) {
  let s = line.replace(/\r$/, '').trim();
  for (let changed = true; changed;) {
    changed = false;
    for (const re of PREFIXES) {
      const m = s.match(re);
      if (m && m[0].length > 0) {
        s = s.slice(m[0].length).trim();
        changed = true;
      }
    }
  }
  return s;
}

const SOME_ON_GPU = /(\d+) operations? will run on the GPU, and the remaining (\d+) operations? will run on the CPU/i;
const NONE_ON_GPU = /No operations will run on the GPU, and all (\d+) operations? will run on the CPU/i;
const ALL_ON_GPU = /All (\d+) operations? will run on the GPU/i;
const REPLACING = /Replacing (\d+) out of (\d+) node\(s\) with delegate \(([^)]*)\) node, yielding (\d+) partitions?/i;
const UNSUPPORTED_HEADER = /Following operations are not supported by GPU delegate:?/i;
const UNSUPPORTED_ENTRY = /^([A-Za-z_][A-Za-z0-9_]*(?:\s*\([^)]*\))?):\s*(.*)$/;
const PARTIAL = /Model not fully compiled for (\w+)(?: on [^.]*)?\.\s*(Partially delegating to WASM execution|Falling back to WASM execution)/i;
// The GPU delegate kernel came up. ML Drift prints no count when it takes the
// whole graph, so this line plus the absence of any CPU report is what full
// delegation looks like in its log.
const DELEGATE_INITIALIZED = /Initializing (?:WebGPU|OpenCL|OpenGL|Metal|Vulkan)-based API|Created TensorFlow Lite delegate for GPU|Initialized (?:OpenCL|OpenGL)-based API/i;
const COMPILE_ERROR = /failed to (?:prepare|compile|apply|create|initialize|build|allocate)|Failed to allocate tensors|Failed to invoke|Invoke failed|compilation failed|unresolved custom op|Aborted\(|RuntimeError|could not compile/i;

// -> {gpu_ops, cpu_ops, total_ops, partitions, fully_delegated, unsupported,
//     compile_errors, delegations, fallback, delegate_initialized}. Counts
//     are null when the log does not say (ML Drift gives none when it takes
//     every op: then fully_delegated is true and the counts stay null).
export function parseResidency(text) {
  const lines = Array.isArray(text) ? text : String(text).split('\n');
  const opCounts = [];     // {gpu, cpu} per "operations will run" line
  const delegations = [];  // per "Replacing N out of M" line
  const unsupported = [];
  const compileErrors = [];
  let fallback = null;
  let delegateInitialized = false;
  let inUnsupportedList = false;
  for (const raw of lines) {
    const line = stripLogPrefixes(raw);
    if (line === '') continue;
    let m;
    if (UNSUPPORTED_HEADER.test(line)) {
      inUnsupportedList = true;
      continue;
    }
    if ((m = line.match(SOME_ON_GPU))) {
      opCounts.push({gpu: Number(m[1]), cpu: Number(m[2])});
    } else if ((m = line.match(NONE_ON_GPU))) {
      opCounts.push({gpu: 0, cpu: Number(m[1])});
    } else if ((m = line.match(ALL_ON_GPU))) {
      opCounts.push({gpu: Number(m[1]), cpu: 0});
    } else if ((m = line.match(REPLACING))) {
      delegations.push({delegate: m[3], replaced: Number(m[1]), total: Number(m[2]), partitions: Number(m[4])});
    } else if (DELEGATE_INITIALIZED.test(line)) {
      delegateInitialized = true;
    } else if ((m = line.match(PARTIAL))) {
      fallback = m[2].startsWith('Partially') ? 'partial' : 'wasm';
    } else if (inUnsupportedList && (m = line.match(UNSUPPORTED_ENTRY))) {
      unsupported.push({op: m[1], reason: m[2].trim()});
      continue;
    } else if (COMPILE_ERROR.test(line)) {
      compileErrors.push(line);
    }
    inUnsupportedList = false;
  }

  // XNNPACK reports its own "Replacing" line; it is the CPU path, not the GPU.
  const gpuDelegations = delegations.filter((d) => !/xnnpack/i.test(d.delegate));
  let gpuOps = null;
  let cpuOps = null;
  let partitions = null;
  if (opCounts.length) {
    gpuOps = opCounts.reduce((s, c) => s + c.gpu, 0);
    cpuOps = opCounts.reduce((s, c) => s + c.cpu, 0);
  } else if (gpuDelegations.length) {
    gpuOps = gpuDelegations.reduce((s, d) => s + d.replaced, 0);
    cpuOps = gpuDelegations.reduce((s, d) => s + d.total - d.replaced, 0);
  }
  if (gpuDelegations.length) partitions = gpuDelegations.reduce((s, d) => s + d.partitions, 0);
  else if (gpuOps === 0) partitions = 0;

  let fullyDelegated = null;
  if (fallback !== null || compileErrors.length || unsupported.length || (cpuOps !== null && cpuOps > 0) || gpuOps === 0) {
    fullyDelegated = false;
  } else if (gpuOps !== null) {
    fullyDelegated = partitions === null || partitions <= 1;
  } else if (delegateInitialized) {
    fullyDelegated = true;
  }
  return {
    gpu_ops: gpuOps,
    cpu_ops: cpuOps,
    total_ops: gpuOps === null ? null : gpuOps + cpuOps,
    partitions,
    fully_delegated: fullyDelegated,
    fallback,
    delegate_initialized: delegateInitialized,
    unsupported,
    compile_errors: compileErrors,
    delegations,
  };
}
