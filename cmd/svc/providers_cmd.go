package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/core/providercheck"
	"github.com/svc-dev/svc/core/registry"
	"github.com/svc-dev/svc/core/sched"
	"github.com/svc-dev/svc/providers"
	_ "github.com/svc-dev/svc/providers/all"
)

// providersCommand prints, for every provider svc knows, whether it is
// compiled in, offered by the ONNX Runtime library, usable here now, and
// why not.
func providersCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "providers",
		Usage: "list the execution providers: compiled in, offered by ONNX Runtime, usable here",
		Description: "Loads the ONNX Runtime library the way 'svc serve' does and checks every provider\n" +
			"as 'svc serve --provider NAME' would, without loading a model.\n\n" +
			"With --check MODEL it also loads the model on every usable provider, runs it on generated\n" +
			"inputs (dynamic dimensions 1), compares the outputs with the CPU's, reports where ONNX\n" +
			"Runtime placed the nodes and times the runs against the CPU, in one table.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Value: config.DefaultFile, Usage: "configuration file (for runtime.library)"},
			&cli.StringFlag{Name: "check", Usage: "self-check: run `MODEL` (a name as 'svc serve' takes it, or an .onnx file) on every usable provider and compare with the CPU"},
			&cli.IntFlag{Name: "runs", Value: 5, Usage: "with --check: timed runs per provider after the first"},
			// For scripts (ci/check-tags.sh): the build tags, from the
			// providers' own declarations.
			&cli.BoolFlag{Name: "tags", Hidden: true, Usage: "print each provider build tag and the GOOS it builds for (any = every OS), one per line"},
		},
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 0 {
				return usageErr("providers takes no arguments (got %d)", cmd.Args().Len())
			}
			if cmd.Bool("tags") {
				return writeTags(stdout)
			}
			cfg, err := config.Load(cmd.String("config"), cmd.IsSet("config"))
			if err != nil {
				return err
			}
			set := providers.Registered()
			env, loadErr := onnxrt.Load(onnxrt.DefaultSearch(cfg.Runtime.Library), false)
			if loadErr != nil {
				if err := writeProviders(stdout, set.Report(providers.Host{}), nil); err != nil {
					return err
				}
				return loadErr
			}
			defer env.Close()
			avail, err := env.AvailableProviders()
			if err != nil {
				return fmt.Errorf("list the library's execution providers: %w", err)
			}
			host := providers.NewHost(env.LibraryPath(), avail)
			if err := writeProviders(stdout, set.Report(host), &host); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "\nONNX Runtime %s (%s)\n", env.Version(), env.LibraryPath())
			fmt.Fprintf(stdout, "library offers: %s\n", strings.Join(avail, ", "))
			if extra := host.Unsupported(); len(extra) > 0 {
				fmt.Fprintf(stdout, "svc has no provider for: %s\n", strings.Join(extra, ", "))
			}
			if c, err := set.Select("", host); err == nil {
				fmt.Fprintf(stdout, "automatic choice: %s (%s)\n", c.Provider.Name(), c.Provider.ORTName())
			}
			if name := cmd.String("check"); name != "" {
				return checkProviders(stdout, name, cfg, set, host, int(cmd.Int("runs")))
			}
			return nil
		},
	}
}

// checkProviders runs 'svc providers --check MODEL'.
func checkProviders(stdout io.Writer, name string, cfg config.Config, set providers.Set, host providers.Host, runs int) error {
	src, err := registry.Resolve(name, cfg, registry.Open(registry.DefaultRoot()))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\ncheck of %s (%s), %d timed runs per provider after the first:\n", src.Name, src.File, runs)
	rt := cfg.Runtime
	rt.IntraOpThreads, _ = sched.CPUPlan(sched.Cores(), rt.IntraOpThreads) // as 'svc serve' runs one process
	rows, err := providercheck.Run(set, host, providercheck.Options{
		File: src.File, Runtime: rt, ProviderOptions: cfg.ProviderOptions(), Runs: runs,
	})
	if err != nil {
		return fmt.Errorf("check %s: %w", src.Name, err)
	}
	return providercheck.Write(stdout, rows)
}

// writeTags prints "name goos" for every provider that has a build tag
// (all but the builtin one), in --provider list order; goos is "any" for a
// provider that builds everywhere.
func writeTags(w io.Writer) error {
	for _, name := range providers.Names() {
		k, _ := providers.Info(name)
		if k.Builtin {
			continue
		}
		goos := k.GOOS
		if goos == "" {
			goos = "any"
		}
		if _, err := fmt.Fprintf(w, "%s %s\n", k.Name, goos); err != nil {
			return fmt.Errorf("write the provider tags: %w", err)
		}
	}
	return nil
}

// writeProviders prints the table; without a host (the library did not
// load) the library columns read "unknown".
func writeProviders(w io.Writer, rows []providers.Status, host *providers.Host) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tONNX RUNTIME NAME\tCOMPILED IN\tOFFERED BY LIBRARY\tUSABLE NOW\tWHY NOT")
	for _, r := range rows {
		offered, usable, why := yesNo(r.Offered), yesNo(r.Usable), r.WhyNot
		if host == nil {
			offered, usable = "unknown", "no"
			if r.Compiled {
				why = "ONNX Runtime library not loaded"
			}
		}
		if why == "" {
			why = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.ORTName, yesNo(r.Compiled), offered, usable, why)
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
