// Package buildinfo is what a memgate binary knows of its own build: the
// module version and the VCS revision Go stamps into every binary built
// from a module (runtime/debug.ReadBuildInfo), so `memgate version`,
// /healthz, the MCP handshake and the startup log line all say the same.
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// Info describes a build.
type Info struct {
	// Version is the module version: a release tag such as v0.3.0, a
	// pseudo-version for a build of a commit from the module proxy, or
	// "(devel)" for a build from a checkout. Version overrides it when a
	// release build stamps one with -ldflags.
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from ("" when the
	// build did not record one, as go test does), with Modified set when
	// the checkout had uncommitted changes.
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// Time is the commit time (RFC 3339), when recorded.
	Time string `json:"time,omitempty"`
	// GoVersion is the toolchain that built the binary.
	GoVersion string `json:"go"`
}

// Version, when set at link time (go build -ldflags "-X
// github.com/memgate/memgate/internal/buildinfo.Version=v0.3.0", as
// scripts/release does), is the version reported instead of the module's.
var Version string

var (
	once sync.Once
	info Info
)

// Get returns the build's Info, read once.
func Get() Info {
	once.Do(func() {
		info = Info{Version: "(devel)"}
		bi, ok := debug.ReadBuildInfo()
		if ok {
			info.GoVersion = bi.GoVersion
			if v := bi.Main.Version; v != "" {
				info.Version = v
			}
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					info.Revision = s.Value
				case "vcs.modified":
					info.Modified = s.Value == "true"
				case "vcs.time":
					info.Time = s.Value
				}
			}
		}
		if Version != "" {
			info.Version = Version
		}
	})
	return info
}

// String is the one-line form: "v0.3.0 (3f2a9c1d0b7e, modified)".
func (i Info) String() string {
	s := i.Version
	if i.Revision != "" {
		rev := i.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if i.Modified {
			rev += ", modified"
		}
		s += " (" + rev + ")"
	}
	return s
}
