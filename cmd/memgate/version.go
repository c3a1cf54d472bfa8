package main

import "github.com/memgate/memgate/internal/buildinfo"

// cmdVersion prints the build's version: the module version (a release
// build's stamp, or "(devel)" for a build from a checkout), the VCS
// revision Go recorded and the toolchain. memgate --version is the same.
func cmdVersion(e env, args []string) error {
	var asJSON bool
	fs := newFlagSet("version", e.stderr, "[--json]")
	fs.BoolVar(&asJSON, "json", false, "print the build info as JSON")
	return runCommand(args, e, command[any, buildinfo.Info]{fs: fs, json: &asJSON,
		check: noArgs("version takes no arguments"),
		call:  func(any) (buildinfo.Info, error) { return buildinfo.Get(), nil },
		text: func(info buildinfo.Info) error {
			if info.Revision == "" {
				// Say so rather than print nothing: GOFLAGS=-buildvcs=false,
				// a build outside a git checkout and go run record none.
				return printLine(e.stdout, "memgate %s (commit not recorded: built with -buildvcs=false or outside a git checkout) %s", info, info.GoVersion)
			}
			return printLine(e.stdout, "memgate %s %s", info, info.GoVersion)
		},
	})
}
