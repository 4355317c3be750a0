// Package action holds the GitHub Action's script (run.sh, with helpers in
// lib.sh; action.yml is at the repository root) and the tests that run it
// locally.
package action
