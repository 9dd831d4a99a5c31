// make bench's peer: Transformers.js (npm @huggingface/transformers)
// serving a sentence-embedding model from local files only, from a plain
// Node HTTP server, in TEI's /embed shape: POST /embed {"inputs": text or
// texts} answers [[...], ...], mean pooled and normalised, as svc's /embed
// answers the same folder.
//
//   NODE_PATH=build/node/textpeer/node_modules node peer.cjs MODELS NAME PORT
//
// MODELS/NAME holds config.json, tokenizer.json, tokenizer_config.json and
// onnx/model.onnx. It prints "ready" once the model has loaded.
'use strict';
const http = require('http');

async function main() {
  const [models, name, port] = process.argv.slice(2);
  const { pipeline, env } = require('@huggingface/transformers');
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = models;
  const extract = await pipeline('feature-extraction', name, { local_files_only: true, dtype: 'fp32', device: 'cpu' });
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/embed') {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      try {
        const { inputs } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const out = await extract(inputs, { pooling: 'mean', normalize: true });
        const rows = out.tolist();
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(rows));
      } catch (err) {
        res.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: String(err) }));
      }
    });
  });
  server.listen(Number(port), '127.0.0.1', () => console.log('ready'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
