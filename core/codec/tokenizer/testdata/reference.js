// The reference for package tokenizer: the Hugging Face tokenizers library
// (its Node binding @anush008/tokenizers 0.6.0, tokenizers 0.22.2), which
// build/fetch-tokref.sh puts in build/tokref/node_modules.
//
//   node reference.js fixtures DIR [NAME...]
//                                        trains small tokenizers of each family
//                                        (or those named) and writes their
//                                        tokenizer.json to DIR
//   node reference.js encode DIR OUT     encodes the corpus with every
//                                        DIR/*.json (and decodes each text's
//                                        ids) and writes the results to OUT
//   node reference.js bench FILE         times the corpus on one tokenizer
//   node reference.js sentencepiece SRC VAR STYLE OUT
//                                        writes OUT, the tokenizer.json of a
//                                        SentencePiece Unigram model that SRC
//                                        holds as VAR = "<base64>", configured
//                                        as STYLE (albert or xlmr) configures it
//
// NODE_PATH must name build/tokref/node_modules. The fixtures are committed
// (testdata/fixtures, under 20 KB each): training is not byte-for-byte
// reproducible from run to run, so regenerate them only deliberately; the
// test encodes with the reference every time.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const tk = require('@anush008/tokenizers');

// The training text: a few sentences in several scripts, repeated.
const training = [
  'The quick brown fox jumps over the lazy dog. Hello world, how are you today?',
  "I'm sure they're right: we've seen it, you'll see it and he'd agree.",
  'Tokenizers split text into words, subwords and characters; 12345 and 3.14 are numbers.',
  'Café crème, naïve façade, Ångström, jalapeño, São Paulo, Zürich, Ελληνικά, русский язык.',
  '中文分词很有意思。日本語のテキストも大丈夫です。한국어 문장도 있습니다.',
  'Emoji: 😀 👍🏽 👨‍👩‍👧 ❤️ and symbols like © ® ™ € $ % & @ # are here too!',
  'unbelievable unbelievably believe believer believing relief relieve disbelief',
  'Machine learning models serve predictions over HTTP and gRPC with ONNX Runtime.',
];

function trainText() {
  const file = path.join(os.tmpdir(), `tokref-train-${process.pid}.txt`);
  const lines = [];
  for (let i = 0; i < 40; i++) lines.push(...training);
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

function train(model, preTokenizer, normalizer) {
  const t = new tk.Tokenizer(model);
  if (normalizer) t.setNormalizer(normalizer);
  if (preTokenizer) t.setPreTokenizer(preTokenizer);
  const file = trainText();
  t.train([file]);
  fs.unlinkSync(file);
  const out = path.join(os.tmpdir(), `tokref-${process.pid}.json`);
  t.save(out, false);
  const json = JSON.parse(fs.readFileSync(out, 'utf8'));
  fs.unlinkSync(out);
  return json;
}

// addVocab appends tokens missing from a WordPiece/BPE vocabulary.
function addVocab(model, tokens) {
  let next = Math.max(-1, ...Object.values(model.vocab)) + 1;
  for (const t of tokens) if (!(t in model.vocab)) model.vocab[t] = next++;
}

function added(content, id, special, opts = {}) {
  return Object.assign({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: !special, special }, opts);
}

function byteAlphabet() {
  const out = [];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if ((b >= 33 && b <= 126) || (b >= 0xa1 && b <= 0xac) || b >= 0xae) out.push(String.fromCodePoint(b));
    else out.push(String.fromCodePoint(256 + n++));
  }
  return out;
}

function template(single, pair, specials) {
  const piece = (p) => {
    const [id, type] = p.split(':');
    if (id === '$A' || id === '$B') return { Sequence: { id: id.slice(1), type_id: Number(type) } };
    return { SpecialToken: { id, type_id: Number(type) } };
  };
  const special_tokens = {};
  for (const [tok, id] of specials) special_tokens[tok] = { id: tok, ids: [id], tokens: [tok] };
  return { type: 'TemplateProcessing', single: single.split(' ').map(piece), pair: pair.split(' ').map(piece), special_tokens };
}

function bert(opts) {
  const j = train(tk.WordPiece.empty(), tk.bertPreTokenizer(), tk.bertNormalizer({ lowercase: opts.lowercase, stripAccents: opts.stripAccents }));
  const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  addVocab(j.model, specials);
  const v = j.model.vocab;
  j.model.max_input_chars_per_word = opts.maxChars;
  j.normalizer = { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: opts.chinese, strip_accents: opts.strip_accents, lowercase: opts.lowercase };
  j.added_tokens = specials.map((s) => added(s, v[s], true));
  j.added_tokens.push(added('machine learning', v['machine learning'] ?? Object.keys(v).length, false, { single_word: true }));
  return { j, v };
}

const fixtures = {
  'bert-uncased': () => {
    const { j, v } = bert({ lowercase: true, strip_accents: null, chinese: true, maxChars: 100 });
    j.post_processor = { type: 'BertProcessing', sep: ['[SEP]', v['[SEP]']], cls: ['[CLS]', v['[CLS]']] };
    j.truncation = { direction: 'Right', max_length: 48, strategy: 'LongestFirst', stride: 0 };
    j.padding = { strategy: 'BatchLongest', direction: 'Right', pad_to_multiple_of: null, pad_id: v['[PAD]'], pad_type_id: 0, pad_token: '[PAD]' };
    return j;
  },
  'bert-cased': () => {
    const { j, v } = bert({ lowercase: false, strip_accents: false, chinese: false, maxChars: 12 });
    j.post_processor = template('[CLS]:0 $A:0 [SEP]:0', '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1', [['[CLS]', v['[CLS]']], ['[SEP]', v['[SEP]']]]);
    j.truncation = { direction: 'Left', max_length: 40, strategy: 'OnlySecond', stride: 0 };
    j.padding = { strategy: { Fixed: 44 }, direction: 'Left', pad_to_multiple_of: null, pad_id: v['[PAD]'], pad_type_id: 3, pad_token: '[PAD]' };
    return j;
  },
  'bert-strip': () => {
    const { j, v } = bert({ lowercase: false, strip_accents: true, chinese: true, maxChars: 100 });
    j.normalizer = { type: 'Sequence', normalizers: [j.normalizer, { type: 'Lowercase' }] };
    j.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, { type: 'Punctuation', behavior: 'Isolated' }, { type: 'Digits', individual_digits: true }] };
    j.post_processor = template('[CLS]:0 $A:0 [SEP]:0', '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1', [['[CLS]', v['[CLS]']], ['[SEP]', v['[SEP]']]]);
    j.truncation = { direction: 'Right', max_length: 30, strategy: 'OnlyFirst', stride: 0 };
    j.padding = { strategy: 'BatchLongest', direction: 'Right', pad_to_multiple_of: 8, pad_id: v['[PAD]'], pad_type_id: 0, pad_token: '[PAD]' };
    return j;
  },
  gpt2: () => {
    const j = train(tk.BPE.empty(), tk.byteLevelPreTokenizer(false, true));
    addVocab(j.model, byteAlphabet());
    addVocab(j.model, ['<|endoftext|>']);
    j.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
    j.post_processor = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true };
    j.added_tokens = [added('<|endoftext|>', j.model.vocab['<|endoftext|>'], true)];
    return j;
  },
  roberta: () => {
    const j = train(tk.BPE.empty(), tk.byteLevelPreTokenizer(false, true));
    const specials = ['<s>', '<pad>', '</s>', '<unk>', '<mask>'];
    addVocab(j.model, byteAlphabet());
    addVocab(j.model, specials);
    const v = j.model.vocab;
    j.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
    j.post_processor = { type: 'RobertaProcessing', sep: ['</s>', v['</s>']], cls: ['<s>', v['<s>']], trim_offsets: true, add_prefix_space: true };
    j.added_tokens = specials.map((s) => added(s, v[s], true, s === '<mask>' ? { lstrip: true } : {}));
    j.truncation = { direction: 'Right', max_length: 40, strategy: 'LongestFirst', stride: 0 };
    j.padding = { strategy: 'BatchLongest', direction: 'Left', pad_to_multiple_of: null, pad_id: v['<pad>'], pad_type_id: 0, pad_token: '<pad>' };
    return j;
  },
  'bpe-split': () => {
    const j = train(tk.BPE.empty(), tk.whitespaceSplitPreTokenizer(), tk.sequenceNormalizer([tk.nfdNormalizer(), tk.stripAccentsNormalizer(), tk.lowercase()]));
    addVocab(j.model, ['<unk>']);
    for (let b = 0; b < 256; b += 1) if (b < 0x80) addVocab(j.model, ['<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>']);
    j.model.unk_token = '<unk>';
    j.model.byte_fallback = true;
    j.normalizer = { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }, { type: 'Lowercase' }, { type: 'Replace', pattern: { String: '  ' }, content: ' ' }] };
    j.pre_tokenizer = { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+" }, behavior: 'Isolated', invert: false },
      { type: 'Whitespace' },
      { type: 'Split', pattern: { String: 'e' }, behavior: 'MergedWithNext', invert: false },
    ] };
    j.added_tokens = [added('hello world', Object.keys(j.model.vocab).length, false, { rstrip: true })];
    j.truncation = { direction: 'Right', max_length: 64, strategy: 'LongestFirst', stride: 0 };
    return j;
  },
  unigram: () => {
    const j = train(tk.Unigram.empty(), tk.metaspacePreTokenizer('▁', 'always'), tk.nfkcNormalizer());
    j.model.vocab.unshift(['<unk>', 0], ['</s>', 0], ['<pad>', 0]);
    j.model.unk_id = 0;
    j.normalizer = { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }, { type: 'Strip', strip_left: true, strip_right: true }] };
    j.pre_tokenizer = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true };
    j.post_processor = template('$A:0 </s>:0', '$A:0 </s>:0 $B:1 </s>:1', [['</s>', 1]]);
    j.added_tokens = [added('<unk>', 0, true), added('</s>', 1, true), added('<pad>', 2, true)];
    j.truncation = { direction: 'Right', max_length: 50, strategy: 'LongestFirst', stride: 0 };
    j.padding = { strategy: 'BatchLongest', direction: 'Right', pad_to_multiple_of: null, pad_id: 2, pad_type_id: 0, pad_token: '<pad>' };
    return j;
  },
  'unigram-precompiled': () => {
    const j = train(tk.Unigram.empty(), tk.metaspacePreTokenizer('▁', 'always'), tk.nfkcNormalizer());
    j.model.vocab.unshift(['<unk>', 0], ['<s>', 0], ['</s>', 0]);
    j.model.unk_id = 0;
    j.normalizer = { type: 'Sequence', normalizers: [
      { type: 'Precompiled', precompiled_charsmap: charsmap(precompiledRules()) },
      { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' },
    ] };
    j.pre_tokenizer = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true };
    j.post_processor = template('<s>:0 $A:0 </s>:0', '<s>:0 $A:0 </s>:0 </s>:0 $B:0 </s>:0', [['<s>', 1], ['</s>', 2]]);
    j.added_tokens = [added('<unk>', 0, true), added('<s>', 1, true), added('</s>', 2, true)];
    j.truncation = { direction: 'Right', max_length: 64, strategy: 'LongestFirst', stride: 0 };
    return j;
  },
  'unigram-bytes': () => {
    const j = train(tk.Unigram.empty(), tk.metaspacePreTokenizer('▁', 'always'));
    const bytes = [];
    for (let b = 0; b < 256; b++) bytes.push(['<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>', 0]);
    j.model.vocab.unshift(['<unk>', 0], ...bytes);
    j.model.unk_id = 0;
    j.model.byte_fallback = true;
    j.normalizer = { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }, { type: 'NFC' }] };
    j.pre_tokenizer = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false };
    j.added_tokens = [added('<unk>', 0, true)];
    return j;
  },
};

// charsmap compiles rules (key -> replacement) into a SentencePiece
// precompiled_charsmap, base64: the trie's size in bytes (uint32, little
// endian), a double-array trie of uint32 units in Darts-clone's layout
// (label in the low byte, has-leaf bit 8, the offset to the children in
// bits 10 and up; a leaf unit has bit 31 and the value) mapping each key's
// bytes to the offset of its replacement, then the replacements, each
// ended by a NUL byte.
function charsmap(rules) {
  const root = { kids: new Map(), value: null };
  const blob = [];
  for (const [key, repl] of rules) {
    let n = root;
    for (const c of Buffer.from(key, 'utf8')) {
      if (!n.kids.has(c)) n.kids.set(c, { kids: new Map(), value: null });
      n = n.kids.get(c);
    }
    n.value = blob.length;
    blob.push(...Buffer.from(repl, 'utf8'), 0);
  }
  const units = [0];
  const used = new Set([0]);
  const place = (node, index) => {
    const labels = [...node.kids.keys()].sort((a, b) => a - b);
    if (node.value !== null) labels.unshift(0);
    if (labels.length === 0) return;
    let base = 1;
    while (labels.some((c) => used.has(base ^ c))) base++;
    for (const c of labels) used.add(base ^ c);
    const offset = index ^ base;
    if (offset >= 1 << 21) throw new Error('charsmap: offset too large');
    units[index] = (units[index] | (offset << 10) | (node.value !== null ? 1 << 8 : 0)) >>> 0;
    if (node.value !== null) units[base] = (0x80000000 | node.value) >>> 0;
    for (const [c, kid] of node.kids) {
      units[base ^ c] = c;
      place(kid, base ^ c);
    }
  };
  place(root, 0);
  // Whole blocks of 256 units, as Darts-clone builds them: a lookup moves
  // within its block, and the reference does not check bounds.
  while (units.length % 256 !== 0) units.push(0);
  const trie = Buffer.alloc(4 + 4 * units.length);
  trie.writeUInt32LE(4 * units.length, 0);
  for (let i = 0; i < units.length; i++) trie.writeUInt32LE(units[i] || 0, 4 + 4 * i);
  return Buffer.concat([trie, Buffer.from(blob)]).toString('base64');
}

// The rules of the unigram-precompiled fixture: the kinds of rule a real
// charsmap (nmt_nfkc) holds, few of each: replacements longer, shorter and
// empty, keys of several characters (some sharing a prefix with a shorter
// key, which the reference prefers), a key of more than one grapheme that
// is never looked up whole.
function precompiledRules() {
  const rules = [];
  for (let c = 1; c <= 8; c++) rules.push([String.fromCharCode(c), '']);
  rules.push(['\t', ' '], ['\n', ' '], ['\r', ' '], ['\u3000', ' '], ['\u00a0', ' ']);
  for (let c = 0x21; c <= 0x7e; c++) rules.push([String.fromCodePoint(0xff00 + c - 0x20), String.fromCharCode(c)]);
  rules.push(['\u00ad', ''], ['\u200b', ''], ['\ufeff', ''], ['\ufe0f', '']);
  rules.push(['ﬁ', 'fi'], ['ﬃ', 'ffi'], ['㍿', '株式会社'], ['①', '1'], ['™', 'TM'], ['½', '1⁄2'], ['ß', 'ss'], ['ǅ', 'Dž'], ['ﷺ', 'صلى الله عليه وسلم']);
  rules.push(['e\u0301', 'é'], ['o\u0308', 'ö'], ['o\u0308\u0304', 'ȫ'], ['A\u030a', 'Å'], ['\u212b', 'Å'], ['\u1100\u1161', '가']);
  rules.push(['``', '"'], ['ｶﾞ', 'ガ'], ['ｶ', 'カ'], ['ﾞ', '\u3099']);
  return rules;
}

// The corpus: what the Go test compares on.
function corpus() {
  const long = [];
  for (let i = 0; i < 30; i++) long.push(training[i % training.length]);
  const single = [
    '', ' ', 'Hello world!', 'hello world', 'HELLO WORLD', 'The quick brown fox jumps over the lazy dog.',
    'Café Ångström naïve jalapeño São Paulo', 'Cafe\u0301 e\u0301te\u0301 n\u0303 A\u030a', 'ǖǘǚǜ ḗ ệ ṩ',
    '中文分词 日本語のテキスト 한국어 문장', '你好，世界！', 'ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ ﬁ ﬂ ½ ²',
    'Emoji 😀👍🏽 👨‍👩‍👧 ❤️ 🇫🇷 🫠', 'supercalifragilisticexpialidocious antidisestablishmentarianism',
    'a' + 'b'.repeat(150), '   leading and trailing   ', 'tabs\tand\nnewlines\r\nand   many    spaces',
    'control \u0000 bell \u0007 zero\u200bwidth bom\ufeff end', 'nbsp\u00a0here and\u3000ideographic\u2003em',
    'MiXeD CaSe TeXt With İstanbul', 'Numbers 12345 3.14159 1,000,000 ٣٤٥ ⅻ', '!!! ??? ... --- *** ((()))',
    "I'm, you're, we've, they'll, he'd, it's", '[CLS] [SEP] [MASK] inside text', '<s> roberta </s> <mask> tokens <pad>',
    'before <|endoftext|> after', 'machine learning and machinelearning machine learnings', 'hello world  hello worldly',
    '  <mask>  spaced mask', 'x\u0301\u0323 combining order', 'Ελληνικά κείμενα και русский язык',
    'e-mail: someone@example.com, https://example.com/path?q=1&r=2', long.join(' '),
    // What SentencePiece's compiled character maps (Precompiled) rewrite:
    // graphemes looked up whole or character by character, replacements
    // longer, shorter and empty, at the start, the middle and the end.
    "``quoted'' and ''twice``", 'e\u0301 a\u0300\u0301 o\u0308\u0304 A\u030a\u0323 q\u0307\u0323',
    '\u1100\u1161\u11a8 \u1112\u1161\u11ab\uae00 한국', 'ｶﾞｷﾞ ﾊﾟﾋﾟ ｱｲｳ ﾞ', '㍿ ㈱ ① ⑳ ™ ℃ ㎏ ﬃ ǅ ﷺ ﻻ ㌀',
    '\u0001\u0002start removed', 'end removed\u0003\u0004', 'mid\u0005\u0006dle \u00ad soft \u2060 joiner',
    'crlf\r\n\r\nlines\r\rand\n\ncr', 'x\u0000y\u0000', 'Å Ω K ℌ ℍ ⅷ Ⅻ ¼ ³ µ ſ',
    'क्षि हिन्दी ไทย กำลัง ພາສາ ລາວ', '\u200b\u200c\u200d\ufeff\u00a0\u2028\u2029 spaces', '🇯🇵🇺🇸 👩🏽‍💻 ✌︎ ☺️',
  ];
  const pairs = [
    ['What is this?', 'This is a test of the tokenizer.'], ['', 'empty first'], ['empty second', ''],
    ['Café?', '中文 😀 text'], [long.join(' '), 'short'], ['short', long.join(' ')], [long.join(' '), long.slice(0, 12).join(' ')],
  ];
  const batches = [
    ['short', 'a much longer sentence than the first one', ''],
    ['Café', '中文 日本語', 'emoji 👍🏽 and more emoji 👨‍👩‍👧', long.slice(0, 5).join(' ')],
  ];
  return { single, pairs, batches };
}

function dump(e) {
  return {
    ids: e.getIds(), type_ids: e.getTypeIds(), attention_mask: e.getAttentionMask(),
    special_tokens_mask: e.getSpecialTokensMask(), offsets: e.getOffsets(), tokens: e.getTokens(),
  };
}

async function encodeAll(dir, out) {
  const c = corpus();
  const result = {};
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const t = tk.Tokenizer.fromFile(path.join(dir, f));
    const cases = [];
    for (const add of [true, false]) {
      const run = async (kind, texts, f) => {
        try {
          const encodings = (await f()).map(dump);
          const c = { kind, add, texts, encodings };
          if (kind === 'single') {
            // The ids back to text, special tokens skipped and kept.
            const ids = encodings[0].ids;
            c.decoded = [await t.decode(ids, true), await t.decode(ids, false)];
          }
          cases.push(c);
        } catch (err) {
          cases.push({ kind, add, texts, error: String(err) });
        }
      };
      for (const text of c.single) await run('single', [text], async () => [await t.encode(text, null, { addSpecialTokens: add })]);
      for (const [a, b] of c.pairs) await run('pair', [a, b], async () => [await t.encode(a, b, { addSpecialTokens: add })]);
      for (const batch of c.batches) await run('batch', batch, () => t.encodeBatch(batch, { addSpecialTokens: add }));
    }
    result[f] = cases;
  }
  fs.writeFileSync(out, JSON.stringify(result));
}

// bench times testdata/bench.txt (the corpus of BenchmarkTokenize) on one
// tokenizer, special tokens added: one text per encode call (awaited, so
// one at a time), and the whole file per encodeBatch call (on one core when
// TOKENIZERS_PARALLELISM=false).
async function bench(file) {
  const t = tk.Tokenizer.fromFile(file);
  const data = fs.readFileSync(path.join(__dirname, 'bench.txt'), 'utf8');
  const texts = data.replace(/\n$/, '').split('\n');
  const bytes = Buffer.byteLength(data);
  // Each figure by wall-clock time and by the process's CPU time (every
  // thread's: the binding encodes on a worker thread), steadier when
  // other processes share the cores.
  const time = async (f) => {
    for (let i = 0; i < 5; i++) await f();
    let rounds = 0;
    const start = process.hrtime.bigint();
    const cpu0 = process.cpuUsage();
    let ns = 0;
    while (ns < 2e9) {
      await f();
      rounds++;
      ns = Number(process.hrtime.bigint() - start);
    }
    const cpu = process.cpuUsage(cpu0);
    const cpuNs = (cpu.user + cpu.system) * 1e3;
    return [(bytes * rounds) / ns * 1e3, (bytes * rounds) / cpuNs * 1e3];
  };
  // A refused text (bert-cased's only_second truncation of a single text)
  // fails its encode call, and a whole encodeBatch call: counted, so that
  // a figure of refusals is not read as one of encodings.
  let refused = 0;
  const refuse = () => { refused++; return null; };
  const single = await time(async () => {
    for (const s of texts) await t.encode(s, null, { addSpecialTokens: true }).catch(refuse);
  });
  const batch = await time(() => t.encodeBatch(texts, { addSpecialTokens: true }).catch(refuse));
  console.log(`${path.basename(file)}\treference encode ${single[0].toFixed(2)} MB/s\tencodeBatch ${batch[0].toFixed(2)} MB/s\tencode ${single[1].toFixed(2)} cpu-MB/s\tencodeBatch ${batch[1].toFixed(2)} cpu-MB/s\trefused ${refused}`);
}

// A SentencePiece .model is a protobuf ModelProto: pieces (1: piece,
// score, type), trainer_spec (2) and normalizer_spec (3), whose
// precompiled_charsmap (2) is what a Precompiled normalizer carries.
function protoFields(buf) {
  const out = [];
  let i = 0;
  const varint = () => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      const c = buf[i++];
      v += (c & 0x7f) * 2 ** shift;
      if (!(c & 0x80)) return v;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    let value;
    if (wire === 0) value = varint();
    else if (wire === 2) { const n = varint(); value = buf.subarray(i, i + n); i += n; }
    else if (wire === 5) { value = buf.readFloatLE(i); i += 4; }
    else if (wire === 1) { value = buf.readDoubleLE(i); i += 8; }
    else throw new Error(`protobuf wire type ${wire} at ${i}`);
    out.push({ field, wire, value });
  }
  return out;
}

function readSentencePiece(model) {
  const top = protoFields(model);
  const pieces = top.filter((f) => f.field === 1).map((f) => {
    const p = { piece: '', score: 0, type: 1 };
    for (const g of protoFields(f.value)) {
      if (g.field === 1) p.piece = g.value.toString('utf8');
      else if (g.field === 2) p.score = g.value;
      else if (g.field === 3) p.type = g.value;
    }
    return p;
  });
  const trainer = { model_type: 1, unk_id: 0 };
  const ts = top.find((f) => f.field === 2);
  for (const g of ts ? protoFields(ts.value) : []) {
    if (g.field === 3) trainer.model_type = g.value;
    else if (g.field === 40) trainer.unk_id = g.value;
  }
  const ns = top.find((f) => f.field === 3);
  const charsmap = (ns ? protoFields(ns.value) : []).find((g) => g.field === 2);
  if (trainer.model_type !== 1) throw new Error(`model_type ${trainer.model_type}: not a Unigram model`);
  if (!charsmap || charsmap.value.length === 0) throw new Error('no precompiled_charsmap');
  return { pieces, unkId: trainer.unk_id, charsmap: Buffer.from(charsmap.value).toString('base64') };
}

// sentencePiece builds a tokenizer.json around a published SentencePiece
// Unigram model, configured as the model's tokenizer is: ALBERT's
// (quotes, NFKD, no accents, lower case, then the charsmap; [CLS] and
// [SEP]) or XLM-R's (the charsmap alone; <s> and </s>).
function sentencePiece(src, name, style) {
  const text = fs.readFileSync(src, 'utf8');
  const m = text.match(new RegExp(`\\b${name}\\s*=\\s*"([A-Za-z0-9+/=]+)"`));
  if (!m) throw new Error(`${src}: no ${name} = "<base64>"`);
  const spm = readSentencePiece(Buffer.from(m[1], 'base64'));
  const id = (piece) => {
    const i = spm.pieces.findIndex((p) => p.piece === piece);
    if (i < 0) throw new Error(`no piece ${piece}`);
    return i;
  };
  const precompiled = { type: 'Precompiled', precompiled_charsmap: spm.charsmap };
  const spaces = { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' };
  const j = {
    version: '1.0', truncation: null, padding: null, added_tokens: [],
    normalizer: null,
    pre_tokenizer: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true },
    post_processor: null,
    decoder: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: spm.unkId, vocab: spm.pieces.map((p) => [p.piece, p.score]), byte_fallback: false },
  };
  if (style === 'albert') {
    j.normalizer = { type: 'Sequence', normalizers: [
      { type: 'Replace', pattern: { String: '``' }, content: '"' },
      { type: 'Replace', pattern: { String: "''" }, content: '"' },
      { type: 'NFKD' }, { type: 'StripAccents' }, { type: 'Lowercase' }, precompiled, spaces,
    ] };
    const specials = ['<pad>', '<unk>', '[CLS]', '[SEP]', '[MASK]'];
    j.added_tokens = specials.map((s) => added(s, id(s), true, s === '[MASK]' ? { lstrip: true } : {}));
    j.post_processor = template('[CLS]:0 $A:0 [SEP]:0', '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1', [['[CLS]', id('[CLS]')], ['[SEP]', id('[SEP]')]]);
    j.truncation = { direction: 'Right', max_length: 96, strategy: 'LongestFirst', stride: 0 };
    j.padding = { strategy: 'BatchLongest', direction: 'Right', pad_to_multiple_of: null, pad_id: id('<pad>'), pad_type_id: 0, pad_token: '<pad>' };
  } else if (style === 'xlmr') {
    j.normalizer = { type: 'Sequence', normalizers: [precompiled, spaces] };
    const specials = ['<unk>', '<s>', '</s>'];
    j.added_tokens = specials.map((s) => added(s, id(s), true));
    j.post_processor = template('<s>:0 $A:0 </s>:0', '<s>:0 $A:0 </s>:0 </s>:0 $B:0 </s>:0', [['<s>', id('<s>')], ['</s>', id('</s>')]]);
    j.truncation = { direction: 'Left', max_length: 128, strategy: 'LongestFirst', stride: 0 };
  } else {
    throw new Error(`style ${style}: albert or xlmr`);
  }
  return j;
}

async function main() {
  const [mode, a, b] = process.argv.slice(2);
  if (mode === 'fixtures') {
    fs.mkdirSync(a, { recursive: true });
    const only = process.argv.slice(4);
    for (const [name, make] of Object.entries(fixtures)) {
      if (only.length > 0 && !only.includes(name)) continue;
      const j = make();
      const file = path.join(a, name + '.json');
      fs.writeFileSync(file, JSON.stringify(j));
      tk.Tokenizer.fromFile(file); // the reference must load what it will be compared on
    }
  } else if (mode === 'encode') {
    await encodeAll(a, b);
  } else if (mode === 'bench') {
    await bench(a);
  } else if (mode === 'sentencepiece') {
    const [, , , style, out] = process.argv.slice(2);
    fs.writeFileSync(out, JSON.stringify(sentencePiece(a, b, style)));
    tk.Tokenizer.fromFile(out);
  } else {
    throw new Error('usage: reference.js fixtures DIR | encode DIR OUT | bench FILE | sentencepiece SRC VAR STYLE OUT');
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
