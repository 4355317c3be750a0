package kit

import "time"

// SetAbandonGrace shortens the abandon grace for a test; it returns the
// function that restores it.
func SetAbandonGrace(d time.Duration) func() {
	old := abandonGrace
	abandonGrace = d
	return func() { abandonGrace = old }
}
