// Command benchreport writes the generated part of BENCHMARKS.md: tables
// of what build/bench.sh (make bench) leaves in its artifacts directory.
// It writes tables only, between <!-- bench:begin --> and
// <!-- bench:end --> of the -out file; everything else in that file (the
// dated hand-written analysis, make soak's section) stays as it is. A
// table whose artifacts are missing is left out, and the run table lists
// the steps that failed.
//
// With -section NAME -table FILE it writes FILE, a table another bench
// script made (build/bench-cache.sh), as the section NAME of the -out
// file instead, between <!-- NAME:begin --> and <!-- NAME:end -->.
//
// It is a module of its own, with types of its own for the files it reads
// (svc bench's JSON report, go test -bench's result lines, wrk's summary,
// pprof's text output), so that the product's module carries none of it.
//
//	cd build/benchreport && go run . -dir ../artifacts/bench -out ../../BENCHMARKS.md
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/svc-dev/svc/build/benchreport/mdsection"
)

// section is the name of BENCHMARKS.md's section that this program owns.
const section = "bench"

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	dir := fs.String("dir", "../artifacts/bench", "artifacts directory of build/bench.sh")
	out := fs.String("out", "", "Markdown file whose bench section to replace (default: print the tables)")
	name := fs.String("section", "", "with -table: the section of -out to replace (not bench)")
	table := fs.String("table", "", "with -section: a file whose text becomes the section")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *name != "" || *table != "" {
		return writeTable(*out, *name, *table)
	}
	tables, err := generate(*dir)
	if err != nil {
		return err
	}
	if *out == "" {
		_, err := stdout.Write(tables)
		return err
	}
	return mdsection.WriteFile(*out, section, tables)
}

// data is everything the tables show, read from the artifacts.
type data struct {
	envText  string
	env      map[string]string
	machine  Machine
	served   []servedModel
	protos   []protoModel
	pinned   []pinnedModel
	tail     []tailRun
	profiles []profile
	tuning   tuning
	rawBatch *RawBench
	memory   memory
	sweeps   []sweep
	goBench  string
	commands string
	// preprocess and e2e are build/bench-images.sh's.
	preprocess []preprocessRow
	e2e        []e2eLevel
}

// loaders read the artifacts into data, each one group of files.
var loaders = []func(*artifacts, *data) error{
	loadRun, loadServed, loadProtocols, loadPinned, loadTail, loadProfiles,
	loadTuning, loadMemory, loadSweeps, loadImages,
}

// writers write the tables, in the order they appear.
var writers = []func(*doc, *data){
	writeRun, writeRatios, writeBaseline, writeServed, writeProtocols, writePinned,
	writeImages, writeTail, writeProfiles, writeFocus, writeTopFunctions, writeTuning, writeSide,
	writeRawBatch, writeMemory, writeSweeps, writeGoBench, writeCommands,
}

// generate reads dir and returns the tables.
func generate(dir string) ([]byte, error) {
	a, err := openArtifacts(dir)
	if err != nil {
		return nil, err
	}
	d := &data{}
	for _, load := range loaders {
		if err := load(a, d); err != nil {
			return nil, err
		}
	}
	var w doc
	for _, write := range writers {
		write(&w, d)
	}
	return w.Bytes(), nil
}

// writeTable writes the text of the file table as the section name of out.
func writeTable(out, name, table string) error {
	switch {
	case name == "" || table == "" || out == "":
		return fmt.Errorf("-section, -table and -out go together")
	case name == section:
		return fmt.Errorf("-section %s is the generated tables' own: name another", section)
	}
	body, err := os.ReadFile(table)
	if err != nil {
		return err
	}
	return mdsection.WriteFile(out, name, body)
}
