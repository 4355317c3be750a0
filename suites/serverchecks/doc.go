// Package serverchecks holds the server checks, a file per catalogue
// section (sessions.go: each check's catalogue entry beside its body),
// and beside each the broken servers that prove the section's checks can
// fail (sessions_fixtures.go, with their raw-HTTP tests), which `mcp-conform
// fixture` serves. ADDING_A_CHECK.md walks through adding one.
package serverchecks
