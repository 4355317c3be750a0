package serverchecks

import "sync"

// atOnce runs send(0) … send(n-1), each on its own goroutine released at
// the same instant, and returns when all have returned: requests that a
// server handles wrongly only when they arrive together (ids handed out
// by a read and a later write, two re-initializes racing) go out so.
// send must not end the check (no Expect, no Fail): it records what it
// got, which the caller judges after.
func atOnce(n int, send func(i int)) {
	release := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-release
			send(i)
		})
	}
	close(release)
	wg.Wait()
}
