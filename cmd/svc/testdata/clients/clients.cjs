// The third-party clients of cmd/svc's TestTextClients, run against a
// real svc: the OpenAI SDK's embeddings.create (its default base64
// encoding, float, dimensions), LangChain's OpenAIEmbeddings with
// configuration.baseURL, and Cohere's SDK rerank. It prints one JSON
// object of what each client returned, as the client returned it.
//
//   NODE_PATH=build/node/clients/node_modules node clients.cjs SPEC
//
// SPEC is JSON: {"embed": {"url", "model", "texts", "dimensions"},
// "rerank": {"url", "model", "query", "documents", "top_n"}}.
'use strict';
const OpenAI = require('openai').default;
const { OpenAIEmbeddings } = require('@langchain/openai');
const { CohereClient } = require('cohere-ai');

async function main() {
  const spec = JSON.parse(process.argv[2]);
  const out = {};
  const e = spec.embed;
  if (e) {
    const client = new OpenAI({ apiKey: 'none', baseURL: e.url + '/v1', maxRetries: 0 });
    const vectors = (res) => res.data.map((d) => Array.from(d.embedding));
    const base64 = await client.embeddings.create({ model: e.model, input: e.texts });
    out.openai_base64 = vectors(base64);
    out.openai_usage = base64.usage;
    out.openai_float = vectors(await client.embeddings.create({ model: e.model, input: e.texts, encoding_format: 'float' }));
    out.openai_single = vectors(await client.embeddings.create({ model: e.model, input: e.texts[0] }));
    out.openai_dimensions = vectors(await client.embeddings.create({ model: e.model, input: e.texts, dimensions: e.dimensions }));
    try {
      await client.embeddings.create({ model: 'no-such-model', input: 'a' });
      out.openai_wrong_model = 'no error';
    } catch (err) {
      out.openai_wrong_model = { status: err.status, code: err.code, type: err.type, param: err.param };
    }
    const lc = new OpenAIEmbeddings({ model: e.model, apiKey: 'none', configuration: { baseURL: e.url + '/v1' }, maxRetries: 0 });
    out.langchain_documents = await lc.embedDocuments(e.texts);
    out.langchain_query = await lc.embedQuery(e.texts[0]);
  }
  const r = spec.rerank;
  if (r) {
    const co = new CohereClient({ token: 'none', environment: r.url });
    const res = await co.rerank({ model: r.model, query: r.query, documents: r.documents, topN: r.top_n, returnDocuments: true });
    out.cohere = res.results.map((x) => ({ index: x.index, relevance_score: x.relevanceScore, text: x.document && x.document.text }));
    const all = await co.rerank({ query: r.query, documents: r.documents.map((text) => ({ text })) });
    out.cohere_all = all.results.map((x) => ({ index: x.index, relevance_score: x.relevanceScore }));
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
