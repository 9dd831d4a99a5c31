#!/bin/sh
# Installs files without ever writing into one that is there, so that a
# server running from the destination is never corrupted: 'make build'
# installs build/bin with it, and the release archives ship it as
# install.sh.
#
# Usage: install-files.sh DIR SRC...
#   Each SRC goes into the directory DIR (made when missing), in the order
#   given, under its own name:
#   - a regular file is copied beside its destination under a temporary
#     name, then renamed over it;
#   - a symlink is made anew the same way, with the same target (it stays
#     a symlink);
#   - a directory is installed as DIR/NAME, its entries the same way.
#
# A rename replaces the name in one step: a process that has the old file
# open or mapped (a running svc and its ONNX Runtime library) keeps the old
# file, untouched, until it exits, and the next start finds the new one
# whole. Writing over the file in place instead (cp, tar --overwrite)
# changes the pages under the running process, which dies with SIGBUS,
# SIGSEGV or SIGILL inside ONNX Runtime.
set -eu

die() { echo "install-files: $*" >&2; exit 1; }

# install_one SRC DIR: installs SRC into DIR. It runs in a subshell of
# its own, so that recursion keeps each call's variables and trap.
install_one() (
  src=$1
  dir=$2
  name=$(basename "$src")
  target=$dir/$name
  if [ -d "$src" ] && [ ! -L "$src" ]; then
    if [ -L "$target" ] || { [ -e "$target" ] && [ ! -d "$target" ]; }; then
      die "$target is in the way of the directory $src: remove it first"
    fi
    mkdir -p "$target"
    for entry in "$src"/* "$src"/.[!.]* "$src"/..?*; do
      if [ -e "$entry" ] || [ -L "$entry" ]; then
        install_one "$entry" "$target"
      fi
    done
    exit 0
  fi
  if [ -d "$target" ] && [ ! -L "$target" ]; then
    die "$target is a directory: remove it first"
  fi
  if [ -L "$target" ] && [ -d "$target" ]; then
    die "$target is a link to a directory: remove it first"
  fi
  tmp=$dir/.$name.install.$$
  trap 'rm -f "$tmp"' EXIT
  rm -f "$tmp"
  if [ -L "$src" ]; then
    ln -s "$(readlink "$src")" "$tmp"
  elif [ -f "$src" ]; then
    cp -p "$src" "$tmp"
  else
    die "$src is no file, link or directory"
  fi
  # The same directory, so the same file system: mv renames.
  mv -f "$tmp" "$target"
  trap - EXIT
)

[ $# -ge 2 ] || { echo "usage: install-files.sh DIR SRC..." >&2; exit 2; }
dest=$1
shift
for src in "$@"; do
  [ -e "$src" ] || [ -L "$src" ] || die "$src: no such file"
done
mkdir -p "$dest"
for src in "$@"; do
  install_one "$src" "$dest"
done
