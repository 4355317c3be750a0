package tools

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// TestPacer: each wait takes the interval on the clock, reusing one timer;
// a cancelled context or an ended session stops a wait at once.
func TestPacer(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	p := pacer{clock: clk, interval: time.Second}
	defer p.stop()
	for step := range 3 {
		done := make(chan error, 1)
		go func() { done <- p.wait(context.Background(), nil) }()
		deadline := time.Now().Add(10 * time.Second)
		for !clk.HasWaiters() {
			if time.Now().After(deadline) {
				t.Fatalf("step %d: no timer armed", step)
			}
			time.Sleep(time.Millisecond)
		}
		clk.Step(999 * time.Millisecond)
		select {
		case err := <-done:
			t.Fatalf("step %d: returned %v before the interval", step, err)
		case <-time.After(20 * time.Millisecond):
		}
		clk.Step(time.Millisecond)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("step %d: did not return after the interval", step)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.wait(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
	ended := make(chan struct{})
	close(ended)
	if err := p.wait(context.Background(), ended); !errors.Is(err, errSessionEnded) {
		t.Fatalf("ended session: %v", err)
	}
	if err := (&pacer{clock: clk}).wait(ctx, nil); err != nil {
		t.Fatalf("no interval: %v", err)
	}
}
