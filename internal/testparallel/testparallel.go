// Package testparallel sets how many parallel tests of a package run at
// once when its tests mostly wait (on grace periods, restarts, a peer's
// silence) rather than compute: go test's default, GOMAXPROCS, would leave
// the cores idle while that many tests wait.
package testparallel

import (
	"flag"
	"runtime"
	"strconv"
)

// PerCore raises -test.parallel to n per core (GOMAXPROCS), unless the
// command line gave it. Call it from TestMain, before m.Run.
func PerCore(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	raise(flag.CommandLine, n*runtime.GOMAXPROCS(0))
}

// raise sets fs's test.parallel to n unless it was set.
func raise(fs *flag.FlagSet, n int) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && n > 0 {
		_ = fs.Set("test.parallel", strconv.Itoa(n))
	}
}
