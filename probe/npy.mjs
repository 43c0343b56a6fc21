// Minimal NumPy .npy reader/writer (format versions 1.0, 2.0 and 3.0).
//
// Only what the LiteRT oracle needs: little-endian (or 1-byte) numeric dtypes,
// C order. Anything else is rejected with an Error whose message is one line.
//
//   readNpy(path)                    -> {dtype, descr, shape, data}
//   parseNpy(bytes, label)           -> same, from a Uint8Array/Buffer
//   writeNpy(path, typedArray, shape[, dtype])
//   encodeNpy(typedArray, shape[, dtype]) -> Buffer
//
// dtype names follow LiteRT.js / NumPy: float16, float32, float64, int8,
// int16, int32, int64, uint8, uint16, uint32, uint64, bool. float16 data is
// held raw in a Uint16Array (Node 20 has no Float16Array) and bool in a
// Uint8Array; pass the dtype to the writer for those two, since their array
// types alone would be written as <u2 and |u1.

import fs from 'node:fs';

const MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY

// kind+size (without byte-order char) -> dtype name and TypedArray.
const BY_CODE = {
  f2: {dtype: 'float16', Ctor: Uint16Array},
  f4: {dtype: 'float32', Ctor: Float32Array},
  f8: {dtype: 'float64', Ctor: Float64Array},
  i1: {dtype: 'int8', Ctor: Int8Array},
  i2: {dtype: 'int16', Ctor: Int16Array},
  i4: {dtype: 'int32', Ctor: Int32Array},
  i8: {dtype: 'int64', Ctor: BigInt64Array},
  u1: {dtype: 'uint8', Ctor: Uint8Array},
  u2: {dtype: 'uint16', Ctor: Uint16Array},
  u4: {dtype: 'uint32', Ctor: Uint32Array},
  u8: {dtype: 'uint64', Ctor: BigUint64Array},
  b1: {dtype: 'bool', Ctor: Uint8Array},
};

// TypedArray constructor -> descr written to disk.
const DESCR_FOR = new Map([
  [Float32Array, '<f4'],
  [Float64Array, '<f8'],
  [Int8Array, '|i1'],
  [Int16Array, '<i2'],
  [Int32Array, '<i4'],
  [BigInt64Array, '<i8'],
  [Uint8Array, '|u1'],
  [Uint16Array, '<u2'],
  [Uint32Array, '<u4'],
  [BigUint64Array, '<u8'],
]);

// dtype name -> {descr, Ctor}: for arrays whose type alone is ambiguous.
const DESCR_FOR_DTYPE = {
  float16: {descr: '<f2', Ctor: Uint16Array},
  bool: {descr: '|b1', Ctor: Uint8Array},
};

export function numElements(shape) {
  return shape.reduce((a, b) => a * b, 1);
}

function parseHeaderDict(text, label) {
  const descr = /['"]descr['"]\s*:\s*['"]([^'"]*)['"]/.exec(text);
  const fortran = /['"]fortran_order['"]\s*:\s*(True|False)/.exec(text);
  const shape = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(text);
  if (!descr || !fortran || !shape) {
    throw new Error(`${label}: malformed .npy header: ${JSON.stringify(text.trim())}`);
  }
  const dims = shape[1]
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((s) => {
      const v = Number(s.replace(/L$/, ''));
      if (!Number.isInteger(v) || v < 0) {
        throw new Error(`${label}: bad dimension '${s}' in .npy shape`);
      }
      return v;
    });
  return {descr: descr[1], fortran: fortran[1] === 'True', shape: dims};
}

export function parseNpy(bytes, label = '<npy>') {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 10 || !buf.subarray(0, 6).equals(MAGIC)) {
    throw new Error(`${label}: not a .npy file (bad magic)`);
  }
  const major = buf[6];
  let headerLen;
  let headerStart;
  if (major === 1) {
    headerLen = buf.readUInt16LE(8);
    headerStart = 10;
  } else if (major === 2 || major === 3) {
    if (buf.length < 12) throw new Error(`${label}: truncated .npy header`);
    headerLen = buf.readUInt32LE(8);
    headerStart = 12;
  } else {
    throw new Error(`${label}: unsupported .npy format version ${major}.${buf[7]}`);
  }
  const dataStart = headerStart + headerLen;
  if (dataStart > buf.length) throw new Error(`${label}: truncated .npy header`);
  const header = buf.toString(major === 3 ? 'utf8' : 'latin1', headerStart, dataStart);
  const {descr, fortran, shape} = parseHeaderDict(header, label);

  const m = /^([<>|=])([a-z])(\d+)$/.exec(descr);
  if (!m) throw new Error(`${label}: unsupported .npy dtype '${descr}'`);
  const [, order, kind, size] = m;
  const entry = BY_CODE[kind + size];
  if (!entry) throw new Error(`${label}: unsupported .npy dtype '${descr}'`);
  if (order === '>' && Number(size) > 1) {
    throw new Error(`${label}: big-endian .npy dtype '${descr}' is not supported`);
  }
  const n = numElements(shape);
  if (fortran && shape.filter((d) => d > 1).length > 1) {
    throw new Error(`${label}: Fortran-order .npy arrays are not supported (save with C order)`);
  }
  const itemSize = Number(size);
  const nbytes = n * itemSize;
  if (buf.length - dataStart < nbytes) {
    throw new Error(`${label}: .npy data truncated: need ${nbytes} bytes, have ${buf.length - dataStart}`);
  }
  // Copy into a fresh, aligned ArrayBuffer.
  const ab = new ArrayBuffer(nbytes);
  new Uint8Array(ab).set(buf.subarray(dataStart, dataStart + nbytes));
  const data = new entry.Ctor(ab);
  return {dtype: entry.dtype, descr, shape, data};
}

export function readNpy(path) {
  let bytes;
  try {
    bytes = fs.readFileSync(path);
  } catch (e) {
    throw new Error(`${path}: cannot read: ${e.code || e.message}`);
  }
  return parseNpy(bytes, path);
}

export function encodeNpy(data, shape, dtype = undefined) {
  let descr = DESCR_FOR.get(data.constructor);
  const special = dtype === undefined ? undefined : DESCR_FOR_DTYPE[dtype];
  if (special) {
    if (!(data instanceof special.Ctor)) {
      throw new Error(`encodeNpy: ${dtype} data must be a ${special.Ctor.name}, got ${data.constructor.name}`);
    }
    descr = special.descr;
  }
  if (!descr) throw new Error(`encodeNpy: unsupported array type ${data.constructor.name}`);
  shape = Array.from(shape, Number);
  if (numElements(shape) !== data.length) {
    throw new Error(`encodeNpy: shape [${shape}] does not match ${data.length} elements`);
  }
  const shapeStr = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeStr}, }`;
  // Pad so that magic + version + len + header is a multiple of 64; end in \n.
  let major = 1;
  let prefix = 10;
  let total = Math.ceil((prefix + dict.length + 1) / 64) * 64;
  if (total - prefix > 0xffff) {
    major = 2;
    prefix = 12;
    total = Math.ceil((prefix + dict.length + 1) / 64) * 64;
  }
  const headerLen = total - prefix;
  dict = dict + ' '.repeat(headerLen - dict.length - 1) + '\n';
  const head = Buffer.alloc(prefix);
  MAGIC.copy(head, 0);
  head[6] = major;
  head[7] = 0;
  if (major === 1) head.writeUInt16LE(headerLen, 8);
  else head.writeUInt32LE(headerLen, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.concat([head, Buffer.from(dict, 'latin1'), body]);
}

export function writeNpy(path, data, shape, dtype = undefined) {
  fs.writeFileSync(path, encodeNpy(data, shape, dtype));
}
