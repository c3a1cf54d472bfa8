package main

import (
	"fmt"

	"github.com/memgate/memgate/internal/buildinfo"
)

// cmdVersion prints the build's version: the module version (a release
// build's stamp, or "(devel)" for a build from a checkout), the VCS
// revision Go recorded and the toolchain. memgate --version is the same.
func cmdVersion(e env, args []string) error {
	var asJSON bool
	fs := newFlagSet("version", e.stderr, "[--json]")
	fs.BoolVar(&asJSON, "json", false, "print the build info as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"version takes no arguments"}
	}
	info := buildinfo.Get()
	if asJSON {
		return writeJSON(e.stdout, info)
	}
	fmt.Fprintf(e.stdout, "memgate %s %s\n", info, info.GoVersion)
	return nil
}
