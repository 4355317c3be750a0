package serverchecks

import (
	"os"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/testparallel"
)

func TestMain(m *testing.M) {
	// The fixtures' tests spend their time waiting on what they provoke
	// (a cut stream's resume, an idle session's expiry), not computing.
	testparallel.PerCore(4)
	os.Exit(m.Run())
}
