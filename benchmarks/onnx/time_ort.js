// SPDX-License-Identifier: Apache-2.0
// Times ONNX Runtime (onnxruntime-node, CPU) inference of the benchmark models.
// Usage: node time_ort.js --threads N --iters N --warmup N [--input NAME=D1xD2...] MODEL.onnx...
// Input dims come from --input (repeatable, as `tscope bench --input`), else from the JSON file
// next to each model (MODEL.dims.json: {"NAME": [D1, D2, ...]}).
// Run with NODE_PATH pointing at the node_modules that holds onnxruntime-node.
// Prints one line per model: `bench runtime=ort model=NAME threads=N iters=N min_ms=X median_ms=Y`.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function parse(argv) {
  const args = {threads: 1, iters: 20, warmup: 3, dims: null, models: []};
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i];
    if (flag === '--threads' || flag === '--iters' || flag === '--warmup') {
      args[flag.slice(2)] = parseInt(argv[++i], 10);
    } else if (flag === '--input') {
      const [name, dims] = argv[++i].split('=');
      args.dims = args.dims || {};
      args.dims[name] = dims.split('x').map((d) => parseInt(d, 10));
    } else {
      args.models.push(flag);
    }
  }
  return args;
}

// Random float32 data for every input, with the given dims.
function randomFeeds(session, dimsByName) {
  const feeds = {};
  for (const name of session.inputNames) {
    const dims = dimsByName[name];
    const count = dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(count);
    for (let i = 0; i < count; ++i) data[i] = Math.random() * 2 - 1;
    feeds[name] = new ort.Tensor('float32', data, dims);
  }
  return feeds;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main() {
  const args = parse(process.argv.slice(2));
  for (const file of args.models) {
    const session = await ort.InferenceSession.create(file, {
      intraOpNumThreads: args.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
    // onnxruntime-node does not expose input dims in every version: without --input they come
    // from the JSON file export_models.py writes next to the model ({"input": [d1, d2, ...]}).
    const dimsByName =
        args.dims || JSON.parse(fs.readFileSync(file.replace(/\.onnx$/, '.dims.json')));
    const feeds = randomFeeds(session, dimsByName);
    for (let i = 0; i < args.warmup; ++i) await session.run(feeds);
    const times = [];
    for (let i = 0; i < args.iters; ++i) {
      const start = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    const name = path.basename(file, '.onnx');
    console.log(`bench runtime=ort model=${name} threads=${args.threads} iters=${args.iters} ` +
                `min_ms=${Math.min(...times).toFixed(3)} median_ms=${median(times).toFixed(3)}`);
    await session.release();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
