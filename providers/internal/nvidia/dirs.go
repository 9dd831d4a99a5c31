package nvidia

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// LibraryPathVar names the environment variable with extra directories
// (colon-separated) that hold CUDA, cuDNN or TensorRT libraries; they are
// searched first.
const LibraryPathVar = "SVC_CUDA_LIBRARY_PATH"

// Env is what LibraryDirs looks at: the environment and the home
// directory. Tests give their own.
type Env struct {
	Getenv func(string) string
	Home   string
}

// DefaultEnv is this process's environment.
func DefaultEnv() Env {
	home, _ := os.UserHomeDir()
	return Env{Getenv: os.Getenv, Home: home}
}

// LibraryDirs lists the directories, besides the loader's own path, where
// the NVIDIA libraries the provider libraries need may be, in the order
// they are searched:
//
//  1. $SVC_CUDA_LIBRARY_PATH, as given;
//  2. the active Python environment ($VIRTUAL_ENV, else $CONDA_PREFIX):
//     lib/python3.*/site-packages/nvidia/*/lib, where PyTorch and NVIDIA's
//     wheels (nvidia-cuda-runtime, nvidia-cublas, nvidia-curand,
//     nvidia-cudnn-cu13, …) put CUDA and cuDNN, and
//     site-packages/tensorrt_libs (TensorRT's wheel);
//  3. the user's site-packages: ~/.local/lib/python3.*/site-packages, the
//     same subdirectories.
//
// Only directories that exist are listed, each once; within one
// site-packages they are sorted by name.
func LibraryDirs(e Env) []string {
	var out []string
	seen := map[string]bool{}
	add := func(dirs ...string) {
		for _, d := range dirs {
			if d == "" || seen[d] {
				continue
			}
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	for _, d := range strings.Split(e.Getenv(LibraryPathVar), ":") {
		add(strings.TrimSpace(d))
	}
	prefix := e.Getenv("VIRTUAL_ENV")
	if prefix == "" {
		prefix = e.Getenv("CONDA_PREFIX")
	}
	if prefix != "" {
		add(sitePackageDirs(filepath.Join(prefix, "lib"))...)
	}
	if e.Home != "" {
		add(sitePackageDirs(filepath.Join(e.Home, ".local", "lib"))...)
	}
	return out
}

// sitePackageDirs lists the library directories of NVIDIA's wheels under
// lib/python3.*/site-packages, newest Python first.
func sitePackageDirs(lib string) []string {
	sites, _ := filepath.Glob(filepath.Join(lib, "python3.*", "site-packages"))
	minor := func(site string) int {
		v := strings.TrimPrefix(filepath.Base(filepath.Dir(site)), "python3.")
		n, _ := strconv.Atoi(v)
		return n
	}
	sort.Slice(sites, func(i, j int) bool { return minor(sites[i]) > minor(sites[j]) })
	var out []string
	for _, site := range sites {
		dirs, _ := filepath.Glob(filepath.Join(site, "nvidia", "*", "lib"))
		sort.Strings(dirs)
		out = append(out, dirs...)
		out = append(out, filepath.Join(site, "tensorrt_libs"))
	}
	return out
}
