// Model inputs shared by the harnesses (litert_run.mjs for wasm,
// litert_webgpu.mjs for WebGPU, onnx_run.mjs for onnxruntime): one generator
// and one .npy validation path, so that the same seed feeds bit-identical
// inputs to every runtime.
//
// `detail` is a tensor description as LiteRT.js reports it:
// {index, name, dtype, shape}; a dynamic dimension is -1.

import path from 'node:path';
import {readNpy, numElements} from './npy.mjs';

export class HarnessError extends Error {}

export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

// float32 -> IEEE half bits, round to nearest even (as numpy's astype).
const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);
export function float32ToFloat16Bits(value) {
  f32[0] = value;
  const x = f32Bits[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {  // half subnormal (or zero)
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;  // a carry rolls into the exponent
  return sign | h;
}

// Zero-filled arrays for the types that are always generated as 0 / false.
const ZEROS = {
  int8: Int8Array,
  int16: Int16Array,
  int32: Int32Array,
  int64: BigInt64Array,
  uint16: Uint16Array,
  uint32: Uint32Array,
  uint64: BigUint64Array,
  bool: Uint8Array,
};

// Input i uses mulberry32 seeded with (seed + i*0x9E3779B9) mod 2^32.
// float32 gets (r >>> 8) / 2^24 (in [0,1), exact in float32), uint8 r >>> 24,
// every other integer type 0 (index-like inputs are only safe at 0), bool
// false. float16 gets the float32 value rounded to nearest-even half (raw
// bits in a Uint16Array), float64 the float32 value exactly; LiteRT.js has
// neither type, onnxruntime does.
export function generateInput(detail, seed) {
  const shape = Array.from(detail.shape);
  if (shape.some((d) => d < 0)) {
    throw new HarnessError(`input ${detail.index} '${detail.name}' has dynamic shape [${shape}]; pass it with --input`);
  }
  const n = numElements(shape);
  const next = mulberry32((seed + Math.imul(detail.index, 0x9e3779b9)) >>> 0);
  let data;
  if (detail.dtype === 'float32') {
    data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = (next() >>> 8) / 16777216;
  } else if (detail.dtype === 'float16') {
    data = new Uint16Array(n);
    for (let i = 0; i < n; i++) data[i] = float32ToFloat16Bits((next() >>> 8) / 16777216);
  } else if (detail.dtype === 'float64') {
    data = new Float64Array(n);
    for (let i = 0; i < n; i++) data[i] = (next() >>> 8) / 16777216;
  } else if (detail.dtype === 'uint8') {
    data = new Uint8Array(n);
    for (let i = 0; i < n; i++) data[i] = next() >>> 24;
  } else if (detail.dtype in ZEROS) {
    data = new ZEROS[detail.dtype](n);
  } else {
    throw new HarnessError(`input ${detail.index} '${detail.name}': cannot generate dtype ${detail.dtype}`);
  }
  return {data, shape};
}

export function describeTensor(d) {
  return {name: d.name, dtype: d.dtype, shape: Array.from(d.shape)};
}

export function resolveInputKey(key, details) {
  if (/^\d+$/.test(key)) {
    const i = Number(key);
    if (i >= details.length) throw new HarnessError(`--input ${key}: model has ${details.length} input(s)`);
    return i;
  }
  const hits = details.filter((d) => d.name === key);
  if (hits.length === 0) {
    throw new HarnessError(`--input ${key}: no input named '${key}' (inputs: ${details.map((d) => d.name).join(', ')})`);
  }
  return hits[0].index;
}

// Reads FILE and checks it against the model input; nothing is cast.
export function loadInput(file, detail) {
  let arr;
  try {
    arr = readNpy(file);
  } catch (e) {
    throw new HarnessError(e.message);
  }
  const label = `input ${detail.index} '${detail.name}' (${file})`;
  if (arr.dtype !== detail.dtype) {
    throw new HarnessError(`${label}: dtype ${arr.dtype} does not match model dtype ${detail.dtype}`);
  }
  const want = Array.from(detail.shape);
  const ok = arr.shape.length === want.length && want.every((d, i) => d < 0 || d === arr.shape[i]);
  if (!ok) {
    throw new HarnessError(`${label}: shape [${arr.shape}] does not match model shape [${want}]`);
  }
  return {data: arr.data, shape: arr.shape};
}

// Builds the feed list for a signature: given files where the user named
// them (KEY an index or a name), generated data elsewhere. Returns the feeds
// in input order and one meta entry per input (with `file` set to the
// in<i>.npy name under which a generated input should be saved).
export function prepareFeeds(inDetails, givenInputs, seed) {
  const given = new Map();
  for (const {key, file} of givenInputs) {
    const idx = resolveInputKey(key, inDetails);
    if (given.has(idx)) throw new HarnessError(`input ${idx} '${inDetails[idx].name}' given twice`);
    given.set(idx, file);
  }
  const feeds = [];
  const inputMeta = [];
  for (const d of inDetails) {
    let v;
    const m = describeTensor(d);
    m.index = d.index;
    if (given.has(d.index)) {
      v = loadInput(given.get(d.index), d);
      m.source = path.resolve(given.get(d.index));
    } else {
      v = generateInput(d, seed);
      m.source = `generated(seed=${seed})`;
      m.file = `in${d.index}.npy`;
    }
    m.fed_shape = Array.from(v.shape);
    feeds.push(v);
    inputMeta.push(m);
  }
  return {feeds, inputMeta};
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
