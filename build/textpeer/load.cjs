// make bench's side by side of svc and its peer (peer.cjs: Transformers.js
// serving the same model): texts per second at concurrency 1 and 8 on the
// same mixed-length corpus, one text per POST /embed (TEI's shape, which
// both answer); the vectors' agreement (cosine); and svc's padding share
// when the corpus comes as one list, beside what batching the list in its
// order would pad, and padding it whole to its longest. It prints the
// markdown section, and with --md FILE writes it into FILE between
// <!-- textapi:begin --> and <!-- textapi:end -->.
//
//   node load.cjs SVC_URL PEER_URL CORPUS SECONDS [--md FILE]
'use strict';
const fs = require('fs');

const [svc, peer, corpusFile, secondsArg, mdFlag, mdFile] = process.argv.slice(2);
const seconds = Number(secondsArg) || 10;
const corpus = fs.readFileSync(corpusFile, 'utf8').split('\n').filter((l) => l.trim() !== '');

async function post(url, body) {
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text}`);
  return JSON.parse(text);
}

// rate sends the corpus round and round, one text a request, from n
// clients at once for the given time, and returns texts per second.
async function rate(base, n) {
  for (const t of corpus.slice(0, 8)) await post(base + '/embed', { inputs: t });
  let next = 0;
  let done = 0;
  const end = Date.now() + seconds * 1000;
  const start = Date.now();
  const client = async () => {
    while (Date.now() < end) {
      const t = corpus[next++ % corpus.length];
      await post(base + '/embed', { inputs: t });
      done++;
    }
  };
  await Promise.all(Array.from({ length: n }, client));
  return done / ((Date.now() - start) / 1000);
}

function cosine(a, b) {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
  return ab / Math.sqrt(aa * bb);
}

async function metric(kind) {
  const text = await (await fetch(svc + '/metrics', { headers: { Accept: 'text/plain' } })).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('svc_text_tokens_total{') && line.includes(`kind="${kind}"`)) sum += Number(line.split(' ').pop());
  }
  return sum;
}

// padding is the padding share of the corpus as one list: svc's (grouped
// by length, from its metrics), and batches in the list's order within
// the same budget. The corpus is not cut (the tokenizer truncates at 128
// tokens, past its longest text), so /tokenize's lengths are the run's.
async function padding(budget) {
  const toks = await post(svc + '/tokenize', { inputs: corpus });
  const lens = toks.map((t) => t.length);
  const real = lens.reduce((a, b) => a + b, 0);
  let inOrder = 0;
  for (let s = 0; s < lens.length;) {
    let e = s, longest = 0;
    while (e < lens.length && Math.max(longest, lens[e]) * (e - s + 1) <= budget) longest = Math.max(longest, lens[e++]);
    if (e === s) longest = lens[e++];
    inOrder += longest * (e - s);
    s = e;
  }
  const whole = Math.max(...lens) * lens.length;
  const [t0, p0] = [await metric('text'), await metric('padding')];
  await post(svc + '/embed', { inputs: corpus });
  const [t1, p1] = [await metric('text'), await metric('padding')];
  return { texts: lens.length, tokens: real, grouped: (p1 - p0) / (t1 - t0 + p1 - p0), inOrder: 1 - real / inOrder, whole: 1 - real / whole };
}

const pct = (x) => (100 * x).toFixed(1) + ' %';

async function main() {
  const os = require('os');
  const load = os.loadavg()[0].toFixed(1);
  let worst = 1;
  for (const t of corpus) {
    const [a] = await post(svc + '/embed', { inputs: t });
    const [b] = await post(peer + '/embed', { inputs: t });
    worst = Math.min(worst, cosine(a, b));
  }
  const rows = [];
  for (const n of [1, 8]) {
    const [t0, p0] = [await metric('text'), await metric('padding')];
    const s = await rate(svc, n);
    const [t1, p1] = [await metric('text'), await metric('padding')];
    const p = await rate(peer, n);
    rows.push({ n, s, p, pad: (p1 - p0) / (t1 - t0 + p1 - p0) });
  }
  const pad = await padding(Number(process.env.TEXT_BATCH_TOKENS || 16384));
  const md = [
    "## svc's text routes beside Transformers.js (textapi)",
    '',
    `Written by \`make textapi-bench\` (part of \`make bench\`) at \`${process.env.TEXT_BENCH_COMMIT || 'unknown'}\` on ${new Date().toISOString().slice(0, 10)}, ${os.cpus()[0].model.trim()}, ${os.cpus().length} cores, shared: svc, the peer and this load generator on the same cores; load average ${load} as it began, ${os.loadavg()[0].toFixed(1)} as it ended. The peer is Transformers.js (npm \`@huggingface/transformers\`, build/textpeer/package-lock.json) in a plain Node HTTP server (build/textpeer/peer.cjs), the same model from the same local files. Goal: svc ≥ 3× the peer at concurrency 8.`,
    '',
    `Texts per second, one text a request (POST /embed), ${corpus.length} texts of mixed length (core/codec/tokenizer/testdata/bench.txt) round and round for ${seconds} s per row, \`examples/text-embed\` on both:`,
    '',
    '| concurrency | svc | Transformers.js | svc ÷ peer | svc\'s padding share |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.n} | ${r.s.toFixed(0)} | ${r.p.toFixed(0)} | ${(r.s / r.p).toFixed(2)} | ${pct(r.pad)} |`),
    '',
    `Vectors: the lowest cosine of svc's and the peer's over the corpus is ${worst.toFixed(7)}.`,
    '',
    `Padding, the corpus as one list (${pad.texts} texts, ${pad.tokens} tokens, none cut, text.max_batch_tokens 16384): ${pct(pad.grouped)} of the tokens svc ran, grouped by length; ${pct(pad.inOrder)} in batches taken in the list's order within the same budget${pad.inOrder === pad.whole ? ' (one batch here: the list padded whole to its longest, as svc ran a request before it split them)' : ''}; ${pct(pad.whole)} padded whole to its longest.`,
  ].join('\n');
  process.stdout.write(md + '\n');
  if (mdFlag === '--md') {
    const begin = '<!-- textapi:begin -->', end = '<!-- textapi:end -->';
    let s = fs.readFileSync(mdFile, 'utf8');
    const section = `${begin}\n${md}\n${end}`;
    const i = s.indexOf(begin), j = s.indexOf(end);
    s = i >= 0 && j > i ? s.slice(0, i) + section + s.slice(j + end.length) : s.replace(/\n*$/, '\n\n') + section + '\n';
    fs.writeFileSync(mdFile, s);
  }
  if (worst < 0.9999) {
    console.error(`the vectors disagree: cosine ${worst} < 0.9999`);
    process.exit(1);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
