// The ONNX Runtime side of bench_ort.py: one model, in-process, the same inputs and thread count as msame.
// usage: node ort_run.js ORT_MODULE_DIR MODEL INPUTS_JSON THREADS WARMUP LOOPS
// INPUTS_JSON: [{"name", "dtype": "float32"|"int64", "shape", "file": raw little-endian data}]
// Prints {"median_ms", "times_ms"}; the parent reads the peak RSS from the process's rusage.
const fs = require('fs');
const path = require('path');

const [moduleDir, model, inputsJson, threads, warmup, loops] = process.argv.slice(2);
const ort = require(path.resolve(moduleDir));

function tensorOf(spec) {
  const bytes = fs.readFileSync(spec.file);
  const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const data = spec.dtype === 'int64' ? new BigInt64Array(buf) : new Float32Array(buf);
  return new ort.Tensor(spec.dtype, data, spec.shape);
}

(async () => {
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all'});
  const feeds = {};
  for (const spec of JSON.parse(fs.readFileSync(inputsJson, 'utf8'))) feeds[spec.name] = tensorOf(spec);
  for (let i = 0; i < Number(warmup); ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < Number(loops); ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const sorted = [...times].sort((a, b) => a - b);
  console.log(JSON.stringify({median_ms: sorted[sorted.length >> 1], times_ms: times}));
})().catch((e) => { console.error(e); process.exit(1); });
