// Runs ONNX models on ONNX Runtime (the npm package onnxruntime-node, CPU) for
// test_onnx_export.py:  node onnxruntime_run.js <onnxruntime-node dir> <jobs.json>
// jobs.json: [{"model": path, "inputs": [{"name", "type", "dims", "file"}], "out": dir}]
// Each input file holds the tensor's raw little-endian bytes; each output is written
// to <out>/<i>.bin with its type and dims in <out>/outputs.json.
const fs = require('fs');
const path = require('path');
const ort = require(process.argv[2]);

const arrays = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  int64: BigInt64Array,
  bool: Uint8Array,
};

function load(input) {
  const bytes = fs.readFileSync(input.file);
  const TypedArray = arrays[input.type];
  const data = new TypedArray(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  return new ort.Tensor(input.type, data, input.dims);
}

async function main() {
  const jobs = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
  for (const job of jobs) {
    const session = await ort.InferenceSession.create(job.model);
    const feeds = {};
    for (const input of job.inputs) feeds[input.name] = load(input);
    const results = await session.run(feeds);
    const meta = [];
    session.outputNames.forEach((name, i) => {
      const t = results[name];
      const data = t.data;
      fs.writeFileSync(
          path.join(job.out, `${i}.bin`), Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      meta.push({name, type: t.type, dims: Array.from(t.dims)});
    });
    fs.writeFileSync(path.join(job.out, 'outputs.json'), JSON.stringify(meta));
  }
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
