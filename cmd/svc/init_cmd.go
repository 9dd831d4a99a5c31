package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/svc-dev/svc/core/config"
)

func initCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "write a commented starter configuration file",
		ArgsUsage: "[FILE]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing file"},
		},
		Action: func(_ context.Context, cmd *cli.Command) error {
			path := config.DefaultFile
			if cmd.Args().Len() > 1 {
				return usageErr("init takes at most one FILE")
			}
			if cmd.Args().Len() == 1 {
				path = cmd.Args().First()
			}
			flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if cmd.Bool("force") {
				flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			f, err := os.OpenFile(path, flags, 0o644)
			if err != nil {
				if errors.Is(err, fs.ErrExist) {
					return fmt.Errorf("%s already exists; pass --force to overwrite it", path)
				}
				return fmt.Errorf("write %s: %w", path, err)
			}
			if _, err := io.WriteString(f, config.Starter()); err != nil {
				_ = f.Close()
				return fmt.Errorf("write %s: %w", path, err)
			}
			if err := f.Close(); err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
			fmt.Fprintf(stdout, "wrote %s\n", path)
			return nil
		},
	}
}
